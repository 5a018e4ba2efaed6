# -*- test-case-name: tests.storage.test_sqlite,tests.storage.test_compaction -*-
"""The embedded SQLite storage backend (a kine-like MVCC log); see L{store}."""

from kubetwist.storage.sqlite.store import DataDirInUseError, SQLiteStorage, acquire_lock

__all__ = ["DataDirInUseError", "SQLiteStorage", "acquire_lock"]
