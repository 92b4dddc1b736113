"""The dry run's scratch copy of memory.db: a real run's work, thrown away afterwards.

A dry run (``extract --dry-run``, ``backtest --dry-run``) writes into a copy taken with
SQLite's backup API under one read snapshot, so it never holds the real database's write
lock and reports exactly what a real run would do.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memtui.db import Database
from memtui.home import Home

SCRATCH_PREFIX = ".dry-run-"
"""Folder (in the home, ``.dry-run-<pid>-<random>``) of a dry run's scratch copy of
memory.db; removed afterwards, or by a later dry run once that process is gone."""


def _alive(pid: str) -> bool:
    """Whether the process that made a scratch folder still runs."""
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def scratch_copy(home: Home, db: Database) -> Iterator[Database]:
    """A throwaway copy of memory.db, taken with the backup API under one read snapshot
    (readers never block writers in WAL mode), removed afterwards."""
    home.root.mkdir(parents=True, exist_ok=True)
    for stale in home.root.glob(SCRATCH_PREFIX + "*"):
        if not _alive(stale.name[len(SCRATCH_PREFIX):].split("-", 1)[0]):
            shutil.rmtree(stale, ignore_errors=True)  # left behind by a killed dry run
    folder = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=home.root)
    try:
        copy = Database(Path(folder) / "memory.db")
        try:
            with copy.conn.backup("main", db.conn, "main") as backup:
                backup.step(-1)
            yield copy
        finally:
            copy.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
