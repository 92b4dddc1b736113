"""The per-agent search index (``index/<agent>.sqlite``): open, fingerprint, sync, status.

The index is derived: chunks of the agent's memory files, registered transcripts,
episodes and facts; an FTS5 table over their text (porter unicode61); a sqlite-vec
``vec0`` table of their embeddings with cosine distance (or a plain table read into
numpy when sqlite-vec cannot load); and an embedding cache keyed by the hash of the
embedded text and the model, so nothing is embedded twice. The tables are in ``schema``,
the diff of inputs in ``sync``, the vectors in ``embedding``.

The fingerprint (provider, model, dimensions, chunk parameters, redaction, vector store,
schema) decides between the two kinds of sync. When it changed, the whole index is built
into a temporary database (reusing cached embeddings) and copied over the live one with
SQLite's backup API, in one transaction: readers see the old index or the new one. When
it did not, sync is incremental and only new chunks are embedded.

Being derived, a damaged index file (not a database, or corrupt) is never a dead end:
it is set aside beside the live path (``<agent>.sqlite.damaged-<time>``, never deleted),
a fresh index takes its place and the next sync rebuilds it; ``notices`` says so.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import apsw

from memtui import timeutil
from memtui.config import SearchSettings
from memtui.db import Database
from memtui.errors import Broken
from memtui.home import Home
from memtui.redact import REDACTION_VERSION
from memtui.search import embedding, schema
from memtui.search.documents import SourceFile, database_sources, memory_sources, transcript_sources
from memtui.search.embedding import Progress
from memtui.search.encoders.embedder import Embedder, EmbeddingUnavailable, get_embedder
from memtui.search.schema import SOURCES
from memtui.search.sync import SyncReport, copy_over, sync_inputs

T = TypeVar("T")

DAMAGE = (apsw.NotADBError, apsw.CorruptError)
"""What SQLite raises for a file that is not (or no longer) a sound database."""

_KEEP_WITHOUT_MODEL = ("schema", "chunker", "redaction", "chunk_tokens", "chunk_overlap",
                       "session_chunking", "context_chars", "tool_output_chars")
"""The fingerprint entries that must match when this process cannot load the model."""


@dataclass
class IndexStatus:
    """`memtui index status`: what the index holds and how it is doing."""

    agent: str
    path: str
    exists: bool
    files: dict[str, int]
    chunks: dict[str, int]
    pending_vectors: int
    dirty: bool
    stale_fingerprint: bool
    fingerprint: dict[str, Any]
    provider: str
    model: str
    query_encoder: str
    vector_store: str
    fallbacks: list[str]
    last_sync: str | None
    size_bytes: int
    notices: list[str] = field(default_factory=list)
    """A damaged index file set aside while reading the status, one line each."""


class SearchIndex:
    """One agent's index: open it, sync it, report on it. Searching is in ``hybrid``."""

    get_meta = staticmethod(schema.get_meta)
    set_meta = staticmethod(schema.set_meta)

    def __init__(self, home: Home, agent: str, *,
                 embedder: Embedder | None | str = "auto",
                 settings: SearchSettings | None = None) -> None:
        self.home = home
        self.agent = agent
        self.settings = settings or home.settings.search
        self.path = home.index_path(agent)
        self.embedder_error: str | None = None
        self.notices: list[str] = []
        """One line per damaged index file set aside by this object."""
        self._embedder: Embedder | None
        if embedder == "auto":
            try:
                self._embedder = get_embedder(self.settings.provider, self.settings.model,
                                              batch_size=self.settings.embed_batch_size,
                                              query_precision=self.settings.query_precision)
            except EmbeddingUnavailable as exc:
                self._embedder, self.embedder_error = None, str(exc)
        elif isinstance(embedder, str):
            raise ValueError(f"embedder must be 'auto', None or an Embedder, not {embedder!r}")
        else:
            self._embedder = embedder
            if embedder is None:
                self.embedder_error = "no embedder"
        self._db: Database | None = None

    # -- connections --------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder | None:
        return self._embedder

    def disable_embedder(self, reason: str) -> None:
        """Stop using the embedder in this process (it failed); searches go keyword-only."""
        self._embedder, self.embedder_error = None, reason

    @property
    def db(self) -> Database:
        """The live index, opened (and created with its schema) on first use; a damaged
        file is set aside and a fresh index created in its place."""
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._db = self._open(self.path)
            except DAMAGE as exc:
                self.set_aside(exc)
                self._db = self._open(self.path)
        return self._db

    def _open(self, path: Path) -> Database:
        db = Database(path)
        try:
            schema.ensure_schema(db, self._embedder.dims if self._embedder else None)
        except DAMAGE:
            db.close()
            raise
        except apsw.Error as exc:
            db.close()
            raise Broken(f"search index {path} is unusable ({type(exc).__name__}: {exc}); "
                         f"run: memtui index --agent {self.agent} --rebuild") from exc
        return db

    def set_aside(self, damage: Exception) -> Path:
        """Move a damaged index file (and its -wal and -shm) aside, never deleting it, so
        that a fresh index can be built; records a notice. Returns the new name."""
        self.close()
        stamp = timeutil.now().strftime("%Y%m%dT%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        n = 1
        while aside.exists():
            n += 1
            aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{n}")
        try:
            for suffix in ("", "-wal", "-shm"):
                part = Path(f"{self.path}{suffix}")
                if part.exists():
                    os.replace(part, Path(f"{aside}{suffix}"))
        except OSError as exc:
            raise Broken(f"search index {self.path} is damaged ({damage}) and could not be "
                         f"moved aside: {exc}") from exc
        self.notices.append(f"search index {self.path} was damaged ({damage}); moved aside "
                            f"to {aside.name} and rebuilt")
        return aside

    def repairing(self, work: Callable[[], T]) -> T:
        """``work()``, run once more on a fresh index when the file turns out damaged
        half-way (a truncated file can open fine and fail on its first deep read)."""
        try:
            return work()
        except DAMAGE as exc:
            self.set_aside(exc)
            return work()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def vector_store(self, db: Database | None = None) -> str:
        """Where vectors live: sqlite-vec, numpy (sqlite-vec missing) or none (no model)."""
        db = db or self.db
        if self._embedder is None:
            return "none"
        return "sqlite-vec" if schema.vec_available(db) else "numpy"

    # -- fingerprint and meta -----------------------------------------------------------

    def fingerprint(self, db: Database | None = None) -> dict[str, Any]:
        """What the index content depends on; any change means a full rebuild."""
        s = self.settings
        emb = self._embedder
        return {
            "schema": schema.SCHEMA_VERSION,
            "chunker": schema.CHUNKER_VERSION,
            "redaction": REDACTION_VERSION,
            "provider": emb.provider if emb else s.provider,
            "model": emb.model if emb else s.model,
            "dims": emb.dims if emb else None,
            "max_tokens": emb.max_tokens if emb else None,
            "chunk_tokens": s.chunk_tokens,
            "chunk_overlap": s.chunk_overlap,
            "session_chunking": s.session_chunking,
            "context_chars": s.context_chars,
            "tool_output_chars": s.tool_output_chars,
            "vector_store": self.vector_store(db) if emb else None,
        }

    def stored_fingerprint(self, db: Database | None = None) -> dict[str, Any] | None:
        raw = schema.get_meta(db or self.db, "fingerprint")
        return json.loads(raw) if raw else None

    def _matches(self, stored: dict[str, Any] | None, db: Database) -> bool:
        """The stored fingerprint fits this process: equal, or only missing the model.

        An index built with vectors stays valid when this process cannot load the model:
        it is searched keyword-only and new chunks wait for their vectors.
        """
        if stored is None:
            return False
        current = self.fingerprint(db)
        if self._embedder is None:
            return all(stored.get(k) == current.get(k) for k in _KEEP_WITHOUT_MODEL)
        return stored == current

    def generation(self) -> int:
        """Bumped by every sync that changed chunks: warm searchers reload on a change."""
        return int(schema.get_meta(self.db, "generation") or 0)

    def mark_dirty(self) -> None:
        """Flag the index for a sync (set by file watchers and by `remember`)."""
        with self.db.write():
            schema.set_meta(self.db, "dirty", "1")

    # -- inputs -------------------------------------------------------------------------

    @contextlib.contextmanager
    def _memory_db(self) -> Iterator[Database | None]:
        if not self.home.db_path.exists():
            yield None
            return
        db = Database(self.home.db_path, load_vec=False)
        try:
            yield db
        finally:
            db.close()

    def inputs(self, memory_db: Database | None) -> list[SourceFile]:
        """Every input of the index as it is on disk now."""
        workspace = self.home.workspace(self.agent)
        return (memory_sources(workspace, self.settings)
                + transcript_sources(memory_db, self.agent, self.settings)
                + database_sources(memory_db, self.agent))

    def check(self) -> bool:
        """The cheap check before a search: True when a sync has work to do."""
        db = self.db
        if (schema.get_meta(db, "dirty") == "1"
                or not self._matches(self.stored_fingerprint(db), db)):
            return True
        stored = dict(db.rows("SELECT key, signature FROM files"))
        with self._memory_db() as mdb:
            inputs = self.inputs(mdb)
        if len(inputs) != len(stored):
            return True
        if any(stored.get(f.key) != f.signature for f in inputs):
            return True
        return bool(self._embedder is not None
                    and db.scalar("SELECT 1 FROM chunks WHERE embedded = 0 LIMIT 1"))

    # -- sync ---------------------------------------------------------------------------

    def sync(self, *, rebuild: bool = False, progress: Progress | None = None) -> SyncReport:
        """Bring the index up to date: rebuilt when asked or stale, else incrementally.
        A damaged index file is set aside and rebuilt (``report.notices`` says so)."""
        import time

        started = time.perf_counter()
        seen = len(self.notices)

        def run() -> SyncReport:
            db = self.db
            if rebuild or not self._matches(self.stored_fingerprint(db), db):
                return self._rebuild(progress)
            report = SyncReport()
            self._sync_into(db, report, progress)
            return report

        report = self.repairing(run)
        report.notices = self.notices[seen:]
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    def _sync_into(self, db: Database, report: SyncReport, progress: Progress | None) -> None:
        with self._memory_db() as mdb:
            sync_inputs(db, self.inputs(mdb), report, progress)
        emb = self._embedder
        if emb is not None:
            report.embedded, report.cached, failure = embedding.embed_pending(db, emb, progress)
            if failure is not None:
                self.disable_embedder(failure)
                report.problems.append(f"embedding stopped: {failure}")
        if self._embedder is None:  # no model, or it failed half-way
            report.pending_vectors = embedding.pending_count(db)
        with db.write():
            if schema.get_meta(db, "fingerprint") is None:
                schema.set_meta(db, "fingerprint",
                                json.dumps(self.fingerprint(db), sort_keys=True))
            schema.set_meta(db, "dirty", "0")
            schema.set_meta(db, "last_sync", timeutil.iso(timeutil.now()))
        report.fallback = self.fallbacks(db)

    def _rebuild(self, progress: Progress | None) -> SyncReport:
        """Build a fresh index beside the live one, then copy it over in one transaction."""
        report = SyncReport(rebuilt=True)
        tmp = self.path.with_name(f".{self.path.stem}.rebuild-{os.getpid()}.sqlite")
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            leftover.unlink(missing_ok=True)
        fresh = Database(tmp)
        try:
            fresh.conn.execute("PRAGMA journal_mode=DELETE").fetchall()
            schema.ensure_schema(fresh, self._embedder.dims if self._embedder else None)
            if self._embedder is not None:
                embedding.carry_cache(self.db, fresh, self._embedder.model)
            with fresh.write():
                schema.set_meta(fresh, "fingerprint",
                                json.dumps(self.fingerprint(fresh), sort_keys=True))
                schema.set_meta(fresh, "built_at", timeutil.iso(timeutil.now()))
                schema.set_meta(fresh, "generation", str(self.generation() + 1))
            self._sync_into(fresh, report, progress)
            copy_over(self.db, fresh)
        finally:
            fresh.close()
            for leftover in (tmp, Path(f"{tmp}-journal")):
                leftover.unlink(missing_ok=True)
        # The copied schema may differ from what this connection cached: reopen.
        self.close()
        report.fallback = self.fallbacks(self.db)
        return report

    # -- status -------------------------------------------------------------------------

    def fallbacks(self, db: Database | None = None) -> list[str]:
        """What search cannot do here, as the words results report in ``fallback``."""
        db = db or self.db
        out = []
        has_chunks = db.scalar("SELECT 1 FROM chunks LIMIT 1")
        has_vectors = db.scalar("SELECT 1 FROM chunks WHERE embedded = 1 LIMIT 1")
        if self._embedder is None or (has_chunks and not has_vectors):
            out.append("no-vector")
        elif not schema.vec_available(db):
            out.append("no-sqlite-vec")
        if not schema.fts5_available(db):
            out.append("no-fts5")
        return out

    def status(self) -> IndexStatus:
        exists = self.path.exists()
        db = self.db
        files: dict[str, int] = {s: 0 for s in SOURCES}
        for source, n in db.rows("SELECT source, count(*) FROM files GROUP BY source"):
            files[str(source)] = int(n)
        chunks: dict[str, int] = {s: 0 for s in SOURCES}
        for source, n in db.rows("SELECT source, count(*) FROM chunks GROUP BY source"):
            chunks[str(source)] = int(n)
        stored = self.stored_fingerprint(db)
        size = sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal"))
                   if p.exists())
        emb = self._embedder
        return IndexStatus(
            agent=self.agent, path=str(self.path), exists=exists, files=files, chunks=chunks,
            pending_vectors=embedding.pending_count(db),
            dirty=self.check(), stale_fingerprint=not self._matches(stored, db),
            fingerprint=stored or self.fingerprint(db),
            provider=emb.provider if emb else "none",
            model=emb.model if emb else (self.embedder_error or "none"),
            query_encoder=(describe() if (describe := getattr(emb, "describe_query_encoder",
                                                               None)) else
                           "the embedder" if emb else "none"),
            vector_store=self.vector_store(db), fallbacks=self.fallbacks(db),
            last_sync=schema.get_meta(db, "last_sync"), size_bytes=size)


def status_dict(status: IndexStatus) -> dict[str, Any]:
    return asdict(status)
