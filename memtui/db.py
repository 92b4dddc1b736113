"""SQLite connections: apsw with sqlite-vec, WAL, busy timeout, IMMEDIATE writes, migrations.

The stdlib ``sqlite3`` on many boxes cannot load extensions, so memtui uses apsw, which
bundles a current SQLite with FTS5 and can load sqlite-vec. Every write runs inside
``BEGIN IMMEDIATE`` so a writer takes the write lock before reading: in WAL mode that
rules out SQLITE_BUSY_SNAPSHOT, and the busy timeout turns contention into waiting.
"""

from __future__ import annotations

import importlib.util
import os
import random
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from memtui.errors import Broken

BUSY_TIMEOUT_MS = 30_000
"""How long one statement waits for a lock held by another process before giving up."""

BEGIN_RETRY_SECONDS = 120.0
"""How long a writer keeps retrying BEGIN IMMEDIATE after the busy timeout ran out."""

Params = Sequence[Any] | dict[str, Any]


def sqlite_vec_path() -> str | None:
    """Path of the sqlite-vec loadable extension, found without importing the package.

    Importing ``sqlite_vec`` pulls in numpy (~150 ms); the hook commands must start fast.
    """
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        for name in ("vec0.so", "vec0.dylib", "vec0.dll"):
            if os.path.exists(os.path.join(folder, name)):
                return os.path.join(folder, "vec0")
    return None


@dataclass(frozen=True)
class Capabilities:
    """What the SQLite underneath can do, for `memtui doctor` and search fallbacks."""

    sqlite_version: str
    fts5: bool
    sqlite_vec: str | None
    """The sqlite-vec version when it loaded, else None."""
    sqlite_vec_error: str | None


class Database:
    """One connection to a memtui SQLite file.

    Reads return plain dicts (``query``/``one``) or scalars; writes happen inside
    ``with db.write():``, which nests (an inner block joins the outer transaction).
    """

    def __init__(self, path: str | os.PathLike[str], *, load_vec: bool = True) -> None:
        self.path = str(path)
        try:
            self.conn = apsw.Connection(self.path)
        except apsw.CantOpenError as exc:
            raise Broken(f"cannot open database {self.path}: {exc}") from exc
        self.conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        self.vec_version: str | None = None
        self.vec_error: str | None = None
        if load_vec:
            self._load_vec()
        if self.path != ":memory:":
            self._retry_busy(lambda: self.conn.execute("PRAGMA journal_mode=WAL").fetchall())
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA foreign_keys=ON")

    # -- set-up -------------------------------------------------------------------------

    def _load_vec(self) -> None:
        path = sqlite_vec_path()
        if path is None:
            self.vec_error = "the sqlite-vec package is not installed"
            return
        try:
            self.conn.enable_load_extension(True)
            self.conn.load_extension(path)
            self.vec_version = str(self.scalar("SELECT vec_version()"))
        except apsw.Error as exc:
            self.vec_error = f"sqlite-vec failed to load from {path}: {exc}"
        finally:
            self.conn.enable_load_extension(False)

    def capabilities(self) -> Capabilities:
        """SQLite version, FTS5, sqlite-vec: what is there and what falls back."""
        fts5 = bool(self.scalar("SELECT sqlite_compileoption_used('ENABLE_FTS5')"))
        return Capabilities(apsw.sqlite_lib_version(), fts5, self.vec_version, self.vec_error)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ------------------------------------------------------------------------

    def query(self, sql: str, params: Params = ()) -> list[dict[str, Any]]:
        """All rows of a query as dicts keyed by column name."""
        cur = self.conn.execute(sql, params)
        try:
            names = [d[0] for d in cur.description]
        except apsw.ExecutionCompleteError:
            return []  # no rows: the statement already ran to completion
        return [dict(zip(names, row, strict=True)) for row in cur]

    def one(self, sql: str, params: Params = ()) -> dict[str, Any] | None:
        """The first row as a dict, or None."""
        cur = self.conn.execute(sql, params)
        try:
            names = [d[0] for d in cur.description]
        except apsw.ExecutionCompleteError:
            return None
        row = cur.fetchone()
        cur.close()
        return None if row is None else dict(zip(names, row, strict=True))

    def scalar(self, sql: str, params: Params = ()) -> Any:
        """The first column of the first row, or None."""
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """All rows as tuples: the fast path for bulk work."""
        return self.conn.execute(sql, params).fetchall()

    @contextmanager
    def read(self) -> Iterator[Database]:
        """A consistent snapshot across several queries (a deferred read transaction)."""
        if self.conn.in_transaction:
            yield self
            return
        self.conn.execute("BEGIN")
        try:
            yield self
        finally:
            self.conn.execute("COMMIT")

    # -- writing ------------------------------------------------------------------------

    def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; returns the rowid of the last insert."""
        self.conn.execute(sql, params)
        return self.conn.last_insert_rowid()

    def executemany(self, sql: str, seq: Sequence[Params]) -> None:
        self.conn.executemany(sql, seq)

    def changes(self) -> int:
        """Rows changed by the last statement."""
        return self.conn.changes()

    @contextmanager
    def write(self) -> Iterator[Database]:
        """One write transaction, taken with BEGIN IMMEDIATE; commits or rolls back whole.

        A nested ``write()`` joins the transaction already open.
        """
        if self.conn.in_transaction:
            yield self
            return
        self._retry_busy(lambda: self.conn.execute("BEGIN IMMEDIATE"))
        try:
            yield self
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self._retry_busy(lambda: self.conn.execute("COMMIT"))

    def _retry_busy(self, fn: Any) -> Any:
        """Retry an operation that hit SQLITE_BUSY after the busy timeout, with jitter."""
        deadline = time.monotonic() + BEGIN_RETRY_SECONDS
        delay = 0.005
        while True:
            try:
                return fn()
            except apsw.BusyError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.5)

    # -- maintenance --------------------------------------------------------------------

    def integrity_check(self) -> list[str]:
        """``PRAGMA integrity_check``: an empty list when the file is sound."""
        problems = [str(r[0]) for r in self.rows("PRAGMA integrity_check")]
        return [] if problems == ["ok"] else problems

    def wal_size(self) -> int:
        """Size in bytes of the write-ahead log next to the file (0 when absent)."""
        try:
            return os.path.getsize(self.path + "-wal")
        except OSError:
            return 0

    def migrate(self, migrations: Sequence[tuple[int, str]]) -> int:
        """Apply numbered migrations above ``PRAGMA user_version``; returns the new version.

        Each migration runs in the same IMMEDIATE transaction as the version bump, so two
        processes opening a new home at once cannot both apply it.
        """
        latest = max(v for v, _ in migrations)
        if int(self.scalar("PRAGMA user_version")) >= latest:
            return int(self.scalar("PRAGMA user_version"))
        with self.write():
            current = int(self.scalar("PRAGMA user_version"))
            for version, sql in sorted(migrations):
                if version > current:
                    self.conn.execute(sql)
                    self.conn.execute(f"PRAGMA user_version={int(version)}")
            return int(self.scalar("PRAGMA user_version"))

    def schema_version(self) -> int:
        return int(self.scalar("PRAGMA user_version"))


def open_memory_db(path: Path | str) -> Database:
    """Open (and migrate) a home's memory.db."""
    from memtui.schema import MIGRATIONS

    db = Database(path)
    db.migrate(MIGRATIONS)
    return db
