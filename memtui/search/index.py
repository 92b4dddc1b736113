"""The per-agent search index (``index/<agent>.sqlite``): schema, fingerprint, sync, status.

The index is derived: chunks of the agent's memory files, registered transcripts,
episodes and facts; an FTS5 table over their text (porter unicode61); a sqlite-vec
``vec0`` table of their embeddings with cosine distance (or a plain table read into
numpy when sqlite-vec cannot load); and an embedding cache keyed by the hash of the
embedded text and the model, so nothing is embedded twice.

The fingerprint (provider, model, dimensions, chunk parameters, vector store, schema)
decides between the two kinds of sync. When it changed, the whole index is built into a
temporary database (reusing cached embeddings) and copied over the live one with
SQLite's backup API, in one transaction: readers see the old index or the new one. When
it did not, sync is incremental: inputs whose signature (size, mtime, inode) is
unchanged are skipped, changed ones are re-read and diffed chunk by chunk, inputs that
disappeared are purged, and only new chunks are embedded.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import apsw

from memtui import timeutil
from memtui.config import SearchSettings
from memtui.db import Database
from memtui.errors import Broken, MemtuiError
from memtui.home import Home
from memtui.search.chunking import Chunk, sha256
from memtui.search.documents import SourceFile, database_sources, memory_sources, transcript_sources
from memtui.search.encoders.embedder import Embedder, EmbeddingUnavailable, get_embedder

SOURCES = ("memory", "sessions", "episodes", "facts")
SOURCE_CODES = {name: code for code, name in enumerate(SOURCES)}
SCHEMA_VERSION = 1
CHUNKER_VERSION = 1
EMBED_BATCH = 512
"""Chunks embedded and written per transaction while indexing."""

Progress = Callable[[str, int, int], None]
"""Called with (stage, done, total): stages are "read" and "embed"."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    key        TEXT PRIMARY KEY,
    source     TEXT NOT NULL,
    signature  TEXT NOT NULL,
    hash       TEXT NOT NULL,
    chunks     INTEGER NOT NULL,
    indexed_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    id          INTEGER PRIMARY KEY,
    file        TEXT NOT NULL,
    source      TEXT NOT NULL,
    path        TEXT NOT NULL,
    start_line  INTEGER NOT NULL,
    end_line    INTEGER NOT NULL,
    hash        TEXT NOT NULL,
    key         TEXT NOT NULL,
    embed_hash  TEXT NOT NULL,
    embed_text  TEXT,
    text        TEXT NOT NULL,
    message_ids TEXT NOT NULL DEFAULT '[]',
    session     TEXT,
    ts          TEXT,
    ref         TEXT,
    current     INTEGER NOT NULL DEFAULT 1,
    meta        TEXT NOT NULL DEFAULT '{}',
    embedded    INTEGER NOT NULL DEFAULT 0,
    pos         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file);
CREATE INDEX IF NOT EXISTS chunks_pending ON chunks(embedded) WHERE embedded = 0;
CREATE TABLE IF NOT EXISTS embedding_cache (
    hash      TEXT NOT NULL,
    model     TEXT NOT NULL,
    embedding BLOB NOT NULL,
    PRIMARY KEY (hash, model)
) WITHOUT ROWID;
"""

_FTS = """
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, content='chunks', content_rowid='id', tokenize='porter unicode61');
CREATE TRIGGER IF NOT EXISTS chunks_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS chunks_fts_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, 'row');
"""


@dataclass
class SyncReport:
    """What one sync did."""

    rebuilt: bool = False
    files_seen: int = 0
    files_changed: int = 0
    files_removed: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    embedded: int = 0
    cached: int = 0
    pending_vectors: int = 0
    fallback: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


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


def vec_available(db: Database) -> bool:
    return db.vec_version is not None


def fts5_available(db: Database) -> bool:
    return bool(db.scalar("SELECT sqlite_compileoption_used('ENABLE_FTS5')"))


class SearchIndex:
    """One agent's index: open it, sync it, report on it. Searching is in ``hybrid``."""

    def __init__(self, home: Home, agent: str, *,
                 embedder: Embedder | None | str = "auto",
                 settings: SearchSettings | None = None) -> None:
        self.home = home
        self.agent = agent
        self.settings = settings or home.settings.search
        self.path = home.index_path(agent)
        self.embedder_error: str | None = None
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
        """The live index, opened (and created with its schema) on first use."""
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = Database(self.path)
            try:
                self._ensure_schema(db)
            except apsw.Error as exc:
                db.close()
                raise Broken(f"search index {self.path} is unreadable ({exc}); delete it and "
                             f"run: memtui index --agent {self.agent} --rebuild") from exc
            self._db = db
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ensure_schema(self, db: Database) -> None:
        with db.write():
            db.conn.execute(_SCHEMA)
            self._add_positions(db)
            if fts5_available(db):
                db.conn.execute(_FTS)
            if self._embedder is not None:
                self._ensure_vectors(db, self._embedder.dims)

    @staticmethod
    def _add_positions(db: Database) -> None:
        """Indexes made before chunks had ``pos`` get it, in place: each chunk's rank by
        id within its input, which is what neighbours were before (no rebuild needed)."""
        columns = {str(r[1]) for r in db.rows("PRAGMA table_info(chunks)")}
        if "pos" in columns:
            return
        db.execute("ALTER TABLE chunks ADD COLUMN pos INTEGER NOT NULL DEFAULT 0")
        db.execute("WITH r AS (SELECT id, row_number() OVER (PARTITION BY file ORDER BY id) - 1 "
                   "AS p FROM chunks) UPDATE chunks SET pos = r.p FROM r WHERE r.id = chunks.id")

    def _ensure_vectors(self, db: Database, dims: int) -> None:
        if vec_available(db):
            db.conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vec USING vec0("
                            f"embedding float[{int(dims)}] distance_metric=cosine, source text)")
        else:
            db.conn.execute("CREATE TABLE IF NOT EXISTS chunk_vectors (id INTEGER PRIMARY KEY, "
                            "source TEXT NOT NULL, embedding BLOB NOT NULL)")

    def vector_store(self, db: Database | None = None) -> str:
        """Where vectors live: sqlite-vec, numpy (sqlite-vec missing) or none (no model)."""
        db = db or self.db
        if self._embedder is None:
            return "none"
        return "sqlite-vec" if vec_available(db) else "numpy"

    # -- fingerprint and meta -----------------------------------------------------------

    def fingerprint(self, db: Database | None = None) -> dict[str, Any]:
        """What the index content depends on; any change means a full rebuild."""
        s = self.settings
        emb = self._embedder
        return {
            "schema": SCHEMA_VERSION,
            "chunker": CHUNKER_VERSION,
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

    @staticmethod
    def get_meta(db: Database, key: str) -> str | None:
        value = db.scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return None if value is None else str(value)

    @staticmethod
    def set_meta(db: Database, key: str, value: str) -> None:
        db.execute("INSERT INTO meta(key, value) VALUES (?, ?) "
                   "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))

    def stored_fingerprint(self, db: Database | None = None) -> dict[str, Any] | None:
        raw = self.get_meta(db or self.db, "fingerprint")
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
            keys = ("schema", "chunker", "chunk_tokens", "chunk_overlap", "session_chunking",
                    "context_chars", "tool_output_chars")
            return all(stored.get(k) == current.get(k) for k in keys)
        return stored == current

    def generation(self) -> int:
        """Bumped by every sync that changed chunks: warm searchers reload on a change."""
        return int(self.get_meta(self.db, "generation") or 0)

    def mark_dirty(self) -> None:
        """Flag the index for a sync (set by file watchers and by `remember`)."""
        with self.db.write():
            self.set_meta(self.db, "dirty", "1")

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
        if self.get_meta(db, "dirty") == "1" or not self._matches(self.stored_fingerprint(db), db):
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
        """Bring the index up to date: rebuilt when asked or stale, else incrementally."""
        import time

        started = time.perf_counter()
        db = self.db
        if rebuild or not self._matches(self.stored_fingerprint(db), db):
            report = self._rebuild(progress)
        else:
            report = SyncReport()
            self._sync_into(db, report, progress)
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    def _sync_into(self, db: Database, report: SyncReport, progress: Progress | None) -> None:
        with self._memory_db() as mdb:
            inputs = self.inputs(mdb)
            report.files_seen = len(inputs)
            stored = {r[0]: (r[1], r[2]) for r in db.rows("SELECT key, signature, hash FROM files")}
            changed = [f for f in inputs if stored.get(f.key, ("", ""))[0] != f.signature]
            for n, item in enumerate(changed, start=1):
                if progress:
                    progress("read", n - 1, len(changed))
                try:
                    loaded = item.load()
                except (OSError, MemtuiError, ValueError) as exc:
                    report.problems.append(f"{item.key}: {exc}")
                    continue
                old = stored.get(item.key)
                with db.write():
                    if old is not None and old[1] == loaded.hash:
                        db.execute("UPDATE files SET signature = ? WHERE key = ?",
                                   (item.signature, item.key))
                        continue
                    added, removed, moved = self._replace_chunks(db, item, loaded.chunks)
                    db.execute(
                        "INSERT INTO files(key, source, signature, hash, chunks, indexed_at) "
                        "VALUES (?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET "
                        "signature = excluded.signature, hash = excluded.hash, "
                        "chunks = excluded.chunks, indexed_at = excluded.indexed_at",
                        (item.key, item.source, item.signature, loaded.hash, len(loaded.chunks),
                         timeutil.iso(timeutil.now())))
                    report.files_changed += 1
                    report.chunks_added += added
                    report.chunks_removed += removed
                    if added or removed or moved:
                        self._bump(db)
            if progress and changed:
                progress("read", len(changed), len(changed))
        present = {f.key for f in inputs}
        for key in [k for k in stored if k not in present]:
            with db.write():
                report.chunks_removed += self._delete_chunks(
                    db, [r[0] for r in db.rows("SELECT id FROM chunks WHERE file = ?", (key,))])
                db.execute("DELETE FROM files WHERE key = ?", (key,))
                report.files_removed += 1
                self._bump(db)
        self._embed_pending(db, report, progress)
        with db.write():
            if self.get_meta(db, "fingerprint") is None:
                self.set_meta(db, "fingerprint", json.dumps(self.fingerprint(db), sort_keys=True))
            self.set_meta(db, "dirty", "0")
            self.set_meta(db, "last_sync", timeutil.iso(timeutil.now()))
        report.fallback = self.fallbacks(db)

    def _bump(self, db: Database) -> None:
        self.set_meta(db, "generation", str(int(self.get_meta(db, "generation") or 0) + 1))

    def _replace_chunks(self, db: Database, item: SourceFile,
                        chunks: Sequence[Chunk]) -> tuple[int, int, int]:
        """Diff one input's chunks against the index: keep equal ones, add new, drop gone.
        Returns (added, removed, moved).

        Every chunk gets ``pos``, its place in the input: neighbours in the context blend
        are ``pos ± d``, so a transcript that grows across syncs (its new chunks get ids
        after other inputs' chunks) keeps its turns adjacent.
        """
        old: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for cid, key, pos in db.rows("SELECT id, key, pos FROM chunks WHERE file = ? "
                                     "ORDER BY id", (item.key,)):
            old[key].append((int(cid), int(pos)))
        fresh: list[tuple[int, Chunk]] = []
        moved: list[tuple[int, int]] = []
        for place, chunk in enumerate(chunks):
            kept = old.get(chunk.key)
            if kept:
                cid, pos = kept.pop(0)
                if pos != place:
                    moved.append((place, cid))
            else:
                fresh.append((place, chunk))
        gone = [cid for kept in old.values() for cid, _ in kept]
        removed = self._delete_chunks(db, gone)
        db.executemany("UPDATE chunks SET pos = ? WHERE id = ?", moved)
        rows = []
        for place, c in fresh:
            embed = c.embedding_input
            rows.append((item.key, c.source, c.path, c.start_line, c.end_line, c.hash, c.key,
                         sha256(embed), None if embed == c.text else embed, c.text,
                         json.dumps(list(c.message_ids), ensure_ascii=False), c.session, c.ts,
                         c.ref, int(c.current), json.dumps(c.meta, ensure_ascii=False), place))
        db.executemany(
            "INSERT INTO chunks(file, source, path, start_line, end_line, hash, key, embed_hash, "
            "embed_text, text, message_ids, session, ts, ref, current, meta, pos) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        return len(fresh), removed, len(moved)

    def _delete_chunks(self, db: Database, ids: Sequence[int]) -> int:
        if not ids:
            return 0
        params = [(i,) for i in ids]
        if self._has_table(db, "chunks_vec"):
            db.executemany("DELETE FROM chunks_vec WHERE rowid = ?", params)
        if self._has_table(db, "chunk_vectors"):
            db.executemany("DELETE FROM chunk_vectors WHERE id = ?", params)
        db.executemany("DELETE FROM chunks WHERE id = ?", params)
        return len(ids)

    @staticmethod
    def _has_table(db: Database, name: str) -> bool:
        return bool(db.scalar("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)))

    def _embed_pending(self, db: Database, report: SyncReport,
                       progress: Progress | None) -> None:
        """Give every chunk without a vector one: from the cache, else from the model."""
        import numpy as np

        from memtui.search.vectors import to_blob

        emb = self._embedder
        if emb is None:
            report.pending_vectors = int(db.scalar(
                "SELECT count(*) FROM chunks WHERE embedded = 0") or 0)
            return
        with db.write():
            self._ensure_vectors(db, emb.dims)
        table = "chunks_vec" if vec_available(db) else "chunk_vectors"
        insert = (f"INSERT OR REPLACE INTO {table}(rowid, embedding, source) VALUES (?,?,?)"
                  if table == "chunks_vec" else
                  "INSERT OR REPLACE INTO chunk_vectors(id, embedding, source) VALUES (?,?,?)")
        # Longest first across all pending chunks, not per batch: the model pads every
        # batch to its longest text, and batches cut from a length-sorted list waste
        # least (cutting in id order cost ~7% of the model's CPU time on LoCoMo turns).
        pending = db.rows("SELECT id, source, embed_hash, coalesce(embed_text, text) "
                          "FROM chunks WHERE embedded = 0 "
                          "ORDER BY length(coalesce(embed_text, text)) DESC, id")
        total = len(pending)
        done = 0
        if progress and total:
            progress("embed", 0, total)
        for start in range(0, total, EMBED_BATCH):
            batch = pending[start:start + EMBED_BATCH]
            hashes = sorted({str(r[2]) for r in batch})
            cached = self._cached(db, hashes, emb.model)
            missing = [h for h in hashes if h not in cached]
            if missing:
                text_of = {str(r[2]): str(r[3]) for r in batch}
                base = done

                def step(n: int, _total: int, base: int = base) -> None:
                    if progress:
                        progress("embed", min(total, base + n), total)

                try:
                    vectors = emb.embed_documents([text_of[h] for h in missing], progress=step)
                except EmbeddingUnavailable as exc:
                    self.disable_embedder(str(exc))
                    report.problems.append(f"embedding stopped: {exc}")
                    report.pending_vectors = total - done
                    return
                fresh = {h: np.asarray(v, dtype=np.float32) for h, v in
                         zip(missing, vectors, strict=True)}
            else:
                fresh = {}
            with db.write():
                if fresh:
                    db.executemany(
                        "INSERT OR REPLACE INTO embedding_cache(hash, model, embedding) "
                        "VALUES (?,?,?)", [(h, emb.model, to_blob(v)) for h, v in fresh.items()])
                rows = []
                for cid, source, h, _text in batch:
                    vec = fresh.get(str(h))
                    blob = to_blob(vec) if vec is not None else cached[str(h)]
                    rows.append((int(cid), blob, str(source)))
                db.executemany(insert, rows)
                db.executemany("UPDATE chunks SET embedded = 1 WHERE id = ?",
                               [(r[0],) for r in rows])
                self._bump(db)
            report.embedded += len(fresh)
            report.cached += len(batch) - sum(1 for r in batch if str(r[2]) in fresh)
            done += len(batch)
            if progress:
                progress("embed", done, total)

    @staticmethod
    def _cached(db: Database, hashes: Sequence[str], model: str) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for start in range(0, len(hashes), 500):
            part = list(hashes[start:start + 500])
            marks = ",".join("?" * len(part))
            for h, blob in db.rows(f"SELECT hash, embedding FROM embedding_cache "
                                   f"WHERE model = ? AND hash IN ({marks})", [model, *part]):
                out[str(h)] = bytes(blob)
        return out

    # -- rebuild ------------------------------------------------------------------------

    def _rebuild(self, progress: Progress | None) -> SyncReport:
        """Build a fresh index beside the live one, then copy it over in one transaction."""
        report = SyncReport(rebuilt=True)
        tmp = self.path.with_name(f".{self.path.stem}.rebuild-{os.getpid()}.sqlite")
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            leftover.unlink(missing_ok=True)
        fresh = Database(tmp)
        try:
            fresh.conn.execute("PRAGMA journal_mode=DELETE").fetchall()
            self._ensure_schema(fresh)
            self._carry_cache(fresh)
            with fresh.write():
                self.set_meta(fresh, "fingerprint",
                              json.dumps(self.fingerprint(fresh), sort_keys=True))
                self.set_meta(fresh, "built_at", timeutil.iso(timeutil.now()))
                self.set_meta(fresh, "generation", str(self.generation() + 1))
            self._sync_into(fresh, report, progress)
            live = self.db
            with live.conn.backup("main", fresh.conn, "main") as backup:
                while not backup.done:
                    backup.step(-1)
        finally:
            fresh.close()
            for leftover in (tmp, Path(f"{tmp}-journal")):
                leftover.unlink(missing_ok=True)
        # The copied schema may differ from what this connection cached: reopen.
        self.close()
        report.fallback = self.fallbacks(self.db)
        return report

    def _carry_cache(self, fresh: Database) -> None:
        """Copy the live index's embedding cache into a rebuild (same model rows only)."""
        if not self.path.exists():
            return
        emb = self._embedder
        if emb is None:
            return
        live = self.db
        if not self._has_table(live, "embedding_cache"):
            return
        rows = live.rows("SELECT hash, model, embedding FROM embedding_cache WHERE model = ?",
                         (emb.model,))
        with fresh.write():
            fresh.executemany("INSERT OR IGNORE INTO embedding_cache(hash, model, embedding) "
                              "VALUES (?,?,?)", rows)

    # -- status -------------------------------------------------------------------------

    def fallbacks(self, db: Database | None = None) -> list[str]:
        """What search cannot do here, as the words results report in ``fallback``."""
        db = db or self.db
        out = []
        has_chunks = db.scalar("SELECT 1 FROM chunks LIMIT 1")
        has_vectors = db.scalar("SELECT 1 FROM chunks WHERE embedded = 1 LIMIT 1")
        if self._embedder is None or (has_chunks and not has_vectors):
            out.append("no-vector")
        elif not vec_available(db):
            out.append("no-sqlite-vec")
        if not fts5_available(db):
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
            pending_vectors=int(db.scalar("SELECT count(*) FROM chunks WHERE embedded = 0") or 0),
            dirty=self.check(), stale_fingerprint=not self._matches(stored, db),
            fingerprint=stored or self.fingerprint(db),
            provider=emb.provider if emb else "none",
            model=emb.model if emb else (self.embedder_error or "none"),
            query_encoder=(describe() if (describe := getattr(emb, "describe_query_encoder",
                                                               None)) else
                           "the embedder" if emb else "none"),
            vector_store=self.vector_store(db), fallbacks=self.fallbacks(db),
            last_sync=self.get_meta(db, "last_sync"), size_bytes=size)


def status_dict(status: IndexStatus) -> dict[str, Any]:
    return asdict(status)


def mark_dirty(path: Path) -> None:
    """Set the dirty flag of an existing index file without loading any model."""
    db = Database(path, load_vec=False)
    try:
        if SearchIndex._has_table(db, "meta"):
            with db.write():
                SearchIndex.set_meta(db, "dirty", "1")
    finally:
        db.close()
