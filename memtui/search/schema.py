"""The index's tables: schema, the optional FTS5 and sqlite-vec parts, meta and generation.

Plain functions over a ``Database``, so that opening, syncing, embedding and searching
an index share one definition of its tables.
"""

from __future__ import annotations

from memtui.db import Database, fts5_available, get_meta, has_table, set_meta

__all__ = ["CHUNKER_VERSION", "SCHEMA_VERSION", "SOURCES", "SOURCE_CODES", "bump_generation",
           "ensure_schema", "ensure_vectors", "fts5_available", "get_meta", "set_meta",
           "vec_available", "vector_table"]

SOURCES = ("memory", "sessions", "episodes", "facts")
SOURCE_CODES = {name: code for code, name in enumerate(SOURCES)}
SCHEMA_VERSION = 1
CHUNKER_VERSION = 1

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


def vec_available(db: Database) -> bool:
    """True when sqlite-vec loaded into ``db`` (else vectors live in a plain table)."""
    return db.vec_version is not None


def ensure_schema(db: Database, dims: int | None) -> None:
    """Create what is missing (FTS5 when SQLite has it; the vector table when ``dims``)."""
    with db.write():
        db.conn.execute(_SCHEMA)
        _add_positions(db)
        if fts5_available(db):
            db.conn.execute(_FTS)
        if dims is not None:
            ensure_vectors(db, dims)


def _add_positions(db: Database) -> None:
    """Indexes made before chunks had ``pos`` get it, in place: each chunk's rank by
    id within its input, which is what neighbours were before (no rebuild needed)."""
    columns = {str(r[1]) for r in db.rows("PRAGMA table_info(chunks)")}
    if "pos" in columns:
        return
    db.execute("ALTER TABLE chunks ADD COLUMN pos INTEGER NOT NULL DEFAULT 0")
    db.execute("WITH r AS (SELECT id, row_number() OVER (PARTITION BY file ORDER BY id) - 1 "
               "AS p FROM chunks) UPDATE chunks SET pos = r.p FROM r WHERE r.id = chunks.id")


def ensure_vectors(db: Database, dims: int) -> None:
    if vec_available(db):
        db.conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vec USING vec0("
                        f"embedding float[{int(dims)}] distance_metric=cosine, source text)")
    else:
        db.conn.execute("CREATE TABLE IF NOT EXISTS chunk_vectors (id INTEGER PRIMARY KEY, "
                        "source TEXT NOT NULL, embedding BLOB NOT NULL)")


def vector_table(db: Database) -> str | None:
    """The table holding vectors, ``chunks_vec`` (sqlite-vec) or ``chunk_vectors``, or
    None when neither exists. Both key a chunk's vector by the chunk id."""
    for name in ("chunks_vec", "chunk_vectors"):
        if has_table(db, name):
            return name
    return None


def bump_generation(db: Database) -> None:
    """Mark a change of chunks or vectors: warm searchers reload what they derived."""
    set_meta(db, "generation", str(int(get_meta(db, "generation") or 0) + 1))
