# -*- test-case-name: tests.storage.test_sqlite -*-
"""The embedded SQLite storage backend (a kine-like MVCC log); see L{store}."""

from kubetwist.storage.sqlite.store import SQLiteStorage

__all__ = ["SQLiteStorage"]
