"""The console's connections to memory.db: one reader and one writer, each behind a lock.

A worker never shares a transaction with another, and the reader sees every commit of the
writer (and of other processes) through ``PRAGMA data_version``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from memtui.db import Database
from memtui.home import Home


class Store:
    """The console's two connections to memory.db, opened on first use, each behind a lock."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self._read_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._reader: Database | None = None
        self._writer: Database | None = None

    @contextmanager
    def reading(self) -> Iterator[Database]:
        with self._read_lock:
            if self._reader is None:
                self._reader = self.home.open_db()
            yield self._reader

    @contextmanager
    def writing(self) -> Iterator[Database]:
        with self._write_lock:
            if self._writer is None:
                self._writer = self.home.open_db()
            yield self._writer

    def data_version(self) -> int:
        """Changes when any other connection (process or the console's writer) commits."""
        with self.reading() as db:
            return db.data_version()

    def close(self) -> None:
        for lock, name in ((self._read_lock, "_reader"), (self._write_lock, "_writer")):
            with lock:
                db = getattr(self, name)
                if db is not None:
                    db.close()
                    setattr(self, name, None)
