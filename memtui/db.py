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
import urllib.parse
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import apsw

from memtui.errors import Broken, NewerSchema, ReadOnly

BUSY_TIMEOUT_MS = 30_000
"""How long one statement waits for a lock held by another process before giving up."""

BEGIN_RETRY_SECONDS = 120.0
"""How long a writer keeps retrying BEGIN IMMEDIATE after the busy timeout ran out."""

Params = Sequence[Any] | dict[str, Any]
T = TypeVar("T")


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

    def __init__(self, path: str | os.PathLike[str], *, load_vec: bool = True,
                 max_version: int | None = None) -> None:
        self.path = str(path)
        try:
            self.conn, self.readonly = _connect(self.path)
        except apsw.CantOpenError as exc:
            raise Broken(f"cannot open database {self.path}: {exc}") from exc
        self.conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        if max_version is not None:
            self._refuse_newer(max_version)
        self.vec_version: str | None = None
        self.vec_error: str | None = None
        try:
            if load_vec:
                self._load_vec()
            if self.path != ":memory:" and not self.readonly:
                self._retry_busy(lambda: self.conn.execute("PRAGMA journal_mode=WAL").fetchall())
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
        except BaseException:
            self.conn.close()  # a file that is not a database: hold no handle on it
            raise

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
        return Capabilities(apsw.sqlite_lib_version(), fts5_available(self), self.vec_version,
                            self.vec_error)

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

        A nested ``write()`` joins the transaction already open. On a file this user may
        only read, the block runs as a read; its first change raises :class:`ReadOnly`.
        """
        if self.conn.in_transaction:
            yield self
            return
        if self.readonly:
            with self._read_only_write():
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

    def data_version(self) -> int:
        """``PRAGMA data_version``: changes whenever another connection commits to the file,
        so a poller learns of a write without reading any table."""
        return int(self.scalar("PRAGMA data_version"))

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

    # -- refusals: a newer schema, a read-only file ---------------------------------------

    def _refuse_newer(self, supported: int) -> None:
        """Close and raise before anything is written when the schema is newer than ours."""
        try:
            found = self.schema_version()
        except apsw.Error:
            return  # not a database: the caller's first query reports it
        if found > supported:
            self.conn.close()
            raise newer_schema(self.path, found, supported)

    @contextmanager
    def _read_only_write(self) -> Iterator[None]:
        self.conn.execute("BEGIN")
        try:
            yield
        except (apsw.ReadOnlyError, apsw.CantOpenError) as exc:
            self.conn.execute("ROLLBACK")
            raise ReadOnly(read_only_message(self.path)) from exc
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")


def newer_schema(path: str | os.PathLike[str], found: int, supported: int) -> NewerSchema:
    """The refusal of a database written by a newer memtui, with the fix."""
    return NewerSchema(f"{path} has schema version {found}, newer than this memtui "
                       f"supports ({supported}); nothing was changed: upgrade memtui "
                       "(pip install --upgrade memtui) to use this home")


def header_user_version(path: str | os.PathLike[str]) -> int | None:
    """``PRAGMA user_version`` read from the file's header without opening it in SQLite.

    None when the file is missing or not a SQLite database. A change still in the WAL is
    not seen here; the check when the database is opened sees it.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return None
    if len(head) < 64 or not head.startswith(b"SQLite format 3\x00"):
        return None
    return int.from_bytes(head[60:64], "big", signed=True)


def writable(path: str | os.PathLike[str]) -> bool:
    """Whether this process may change a database file: the file and its folder, which
    holds the journal and the WAL. (Root passes unless the file system is read-only.)"""
    folder = os.path.dirname(os.path.abspath(path))
    return os.access(folder, os.W_OK) and (not os.path.exists(path)
                                           or os.access(path, os.W_OK))


def read_only_message(path: str | os.PathLike[str]) -> str:
    """One line naming the file, the user and the permission a write needs."""
    try:
        import pwd

        user = pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        user = f"uid {os.geteuid()}"
    folder = os.path.dirname(os.path.abspath(path))
    return (f"{path} is read-only for {user}: changing it needs write permission on the file "
            f"and on its folder {folder} (reading commands still work)")


def _connect(path: str) -> tuple[apsw.Connection, bool]:
    """A connection and whether it is read-only (the file or its folder is not writable)."""
    if path == ":memory:" or writable(path):
        conn = apsw.Connection(path)
        if not conn.readonly("main"):
            return conn, False
        conn.close()  # a read-only mount: SQLite fell back to reading
    if not os.path.exists(path):
        raise ReadOnly(f"cannot create {path}: " + read_only_message(path))
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    conn = apsw.Connection(uri, flags=flags)
    try:
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchall()
        return conn, True
    except (apsw.ReadOnlyError, apsw.CantOpenError):
        conn.close()
    # A WAL database whose shared-memory file cannot be created here. With no WAL content
    # the file holds every committed change, so it can be read as it is (immutable).
    try:
        wal = os.path.getsize(path + "-wal")
    except OSError:
        wal = 0
    if wal:
        raise ReadOnly(read_only_message(path) + f"; and {path}-wal holds changes that "
                       "only a user who may write there can read (run memtui once as them)")
    return apsw.Connection(uri + "&immutable=1", flags=flags), True


def open_memory_db(path: Path | str) -> Database:
    """Open (and migrate) a home's memory.db."""
    from memtui.schema import MIGRATIONS

    db = Database(path, max_version=supported_version())
    db.migrate(MIGRATIONS)
    return db


def supported_version() -> int:
    """The newest memory.db schema this memtui knows."""
    from memtui.schema import MIGRATIONS

    return max(v for v, _ in MIGRATIONS)


# -- small helpers every store and the search index share -------------------------------

IN_BATCH = 500
"""Values per ``IN (...)`` list: SQLite caps the parameters of one statement (32,766 in
current builds, 999 in old ones), and the statement has a few parameters of its own."""


def has_table(db: Database, name: str) -> bool:
    """True when ``name`` is a table (plain, virtual or fts5vocab) or a view of ``db``."""
    return bool(db.scalar("SELECT 1 FROM sqlite_master WHERE type IN ('table','view') "
                          "AND name = ?", (name,)))


def fts5_available(db: Database) -> bool:
    """True when the SQLite underneath ``db`` has FTS5."""
    return bool(db.scalar("SELECT sqlite_compileoption_used('ENABLE_FTS5')"))


def in_batches(values: Sequence[T]) -> Iterator[tuple[str, list[T]]]:
    """``values`` in slices of at most ``IN_BATCH``, each with its ``?,?,…`` placeholders,
    for ``… IN ({marks})`` queries."""
    for start in range(0, len(values), IN_BATCH):
        part = list(values[start:start + IN_BATCH])
        yield ",".join("?" * len(part)), part


def like(text: str) -> str:
    """A LIKE pattern that matches ``text`` literally anywhere (escape character \\)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def contains_any(columns: Sequence[str], text: str) -> tuple[str, list[str]]:
    """A WHERE clause (and its parameters) true when any of ``columns`` holds ``text``
    literally; the column names are the caller's own, never user input."""
    clause = " OR ".join(f"{column} LIKE ? ESCAPE '\\'" for column in columns)
    return f"({clause})", [like(text)] * len(columns)


def match_expression(words: Iterable[str], operator: str = "OR") -> str | None:
    """A safe FTS5 MATCH expression: every word a double-quoted string (inner quotes
    doubled), joined by ``operator`` ("OR" or "AND"); None when there is no word.

    A quoted string is never an FTS5 operator (``NEAR``, ``col:``, ``*``, ``NOT``, a
    bracket or a lone ``-``), whatever the user typed.
    """
    if operator not in ("OR", "AND"):
        raise ValueError(f"operator must be OR or AND, not {operator!r}")
    quoted = ['"' + w.replace('"', '""') + '"' for w in words if w]
    return f" {operator} ".join(quoted) if quoted else None


def get_meta(db: Database, key: str) -> str | None:
    """A value of a derived database's ``meta(key, value)`` table."""
    value = db.scalar("SELECT value FROM meta WHERE key = ?", (key,))
    return None if value is None else str(value)


def set_meta(db: Database, key: str, value: str) -> None:
    db.execute("INSERT INTO meta(key, value) VALUES (?, ?) "
               "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))


def mark_dirty(path: Path) -> None:
    """Set the ``dirty`` flag in the ``meta`` table of an existing derived database (a
    search index), loading no extension: whoever writes an index's inputs (``remember``,
    file watchers) tells it to sync without depending on the search package."""
    db = Database(path, load_vec=False)
    try:
        if has_table(db, "meta"):
            with db.write():
                set_meta(db, "dirty", "1")
    finally:
        db.close()
