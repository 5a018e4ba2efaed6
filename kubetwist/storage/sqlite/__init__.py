# -*- test-case-name: tests.storage.test_sqlite,tests.storage.test_compaction -*-
"""The embedded SQLite storage backend (a kine-like MVCC log); see L{store}."""

from kubetwist.storage.sqlite.store import (
    SYNC_MODES,
    DataDirInUseError,
    SQLiteStorage,
    acquire_lock,
    secure_database_files,
    secure_directory,
)

__all__ = ["DataDirInUseError", "SQLiteStorage", "SYNC_MODES", "acquire_lock",
           "secure_database_files", "secure_directory"]
