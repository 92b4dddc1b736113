"""Forgetting in the search index: remove chunks that hold forgotten words, keep them out.

``erase`` deletes the chunks of forgotten rows (``episode:12``), the transcript chunks of
their source messages, and every chunk whose text holds a forgotten phrase, with their
vectors, FTS entries and cached embeddings; then it rewrites the index file and truncates
its WAL. Transcripts are the agent's files and are never edited: ``Exclusions`` (read from
the sealed tombstones in memory.db) keeps forgotten messages out when they are indexed
again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memtui import text as textutil
from memtui.db import Database, has_table
from memtui.home import Home


@dataclass(frozen=True)
class IndexErased:
    """What ``erase`` removed from one agent's index."""

    agent: str
    chunks: int
    checkpoint: str


@dataclass
class Exclusions:
    """Transcript messages that must not be indexed: forgotten ones, by id or by words."""

    entries: frozenset[str] = frozenset()
    key: bytes | None = None
    phrases: list[list[str]] = field(default_factory=list)
    """Sealed word sequences of forgotten texts of two words or more."""

    @classmethod
    def load(cls, memory_db: Database | None, agent: str) -> Exclusions:
        if memory_db is None or not has_table(memory_db, "tombstones"):
            return cls()
        from memtui.stores import tombstones

        rows = memory_db.rows("SELECT norm, source_entry FROM tombstones WHERE agent = ? "
                              "AND norm LIKE ?", (agent, tombstones.SEALED + "%"))
        if not rows:
            return cls()
        phrases = [words for norm, _ in rows
                   if len(words := str(norm)[len(tombstones.SEALED):].split()) >= 2]
        return cls(frozenset(str(e) for _, e in rows if e), tombstones.seal_key(memory_db),
                   phrases)

    def __bool__(self) -> bool:
        return bool(self.entries or self.phrases)

    def hides(self, message_id: str | None, text: str) -> bool:
        """True when a message is a forgotten one or holds a forgotten phrase."""
        if message_id and message_id in self.entries:
            return True
        if not self.phrases or self.key is None:
            return False
        from memtui.stores.tombstones import seal_words

        words = seal_words(self.key, textutil.normalise(text))
        joined = f" {' '.join(words)} "
        return any(f" {' '.join(p)} " in joined for p in self.phrases)


def find(db: Database, *, needles: Sequence[str], refs: Sequence[str],
         entries: Sequence[str]) -> list[int]:
    """Ids of the chunks that hold a forgotten phrase, row or source message."""
    ids: set[int] = set()
    for ref in refs:
        ids.update(int(r[0]) for r in db.rows("SELECT id FROM chunks WHERE ref = ?", (ref,)))
    for entry in entries:
        pattern = "%" + entry.replace('"', "") + "%"
        for cid, mids in db.rows("SELECT id, message_ids FROM chunks WHERE source = 'sessions' "
                                 "AND message_ids LIKE ?", (pattern,)):
            if entry in _json_list(mids):
                ids.add(int(cid))
    for needle in needles:
        norm = textutil.normalise(needle)
        if not norm:
            continue
        if has_table(db, "chunks_fts"):
            match = " ".join('"' + w + '"' for w in norm.split())
            rows = db.rows("SELECT c.id, c.text FROM chunks_fts f JOIN chunks c ON c.id = f.rowid "
                           "WHERE chunks_fts MATCH ?", (match,))
        else:
            rows = db.rows("SELECT id, text FROM chunks WHERE text LIKE ?",
                           ("%" + "%".join(norm.split()) + "%",))
        ids.update(int(cid) for cid, body in rows
                   if f" {norm} " in f" {textutil.normalise(str(body))} ")
    return sorted(ids)


def _json_list(raw: object) -> list[str]:
    import json

    try:
        value = json.loads(str(raw))
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def count(home: Home, agent: str, *, needles: Sequence[str], refs: Sequence[str],
          entries: Sequence[str]) -> int:
    """How many chunks ``erase`` would remove (0 without an index)."""
    path = home.index_path(agent)
    if not path.exists():
        return 0
    db = Database(path, load_vec=False)
    try:
        if not has_table(db, "chunks"):
            return 0
        return len(find(db, needles=needles, refs=refs, entries=entries))
    finally:
        db.close()


def erase(home: Home, agent: str, *, needles: Sequence[str], refs: Sequence[str],
          entries: Sequence[str]) -> IndexErased:
    """Delete the matching chunks with their vectors, FTS terms and cached embeddings."""
    path = home.index_path(agent)
    if not path.exists():
        return IndexErased(agent, 0, "no index")
    db = Database(path)
    try:
        if not has_table(db, "chunks"):
            return IndexErased(agent, 0, "no index")
        db.conn.execute("PRAGMA secure_delete=ON")
        with db.write():
            ids = find(db, needles=needles, refs=refs, entries=entries)
            _delete(db, ids)
            if ids:
                from memtui.search.schema import bump_generation

                # Warm searchers reload on a new generation: none keeps the words in memory.
                bump_generation(db)
        db.conn.execute("VACUUM")
        busy = db.scalar("PRAGMA wal_checkpoint(TRUNCATE)")
        return IndexErased(agent, len(ids), "busy" if busy else "done")
    finally:
        db.close()


def _delete(db: Database, ids: Sequence[int]) -> None:
    if not ids:
        return
    params = [(i,) for i in ids]
    hashes = {str(r[0]) for i in ids
              for r in db.rows("SELECT embed_hash FROM chunks WHERE id = ?", (i,))}
    if has_table(db, "chunks_vec"):
        db.executemany("DELETE FROM chunks_vec WHERE rowid = ?", params)
    if has_table(db, "chunk_vectors"):
        db.executemany("DELETE FROM chunk_vectors WHERE id = ?", params)
    db.executemany("DELETE FROM chunks WHERE id = ?", params)
    if has_table(db, "embedding_cache"):
        for h in hashes:
            if db.scalar("SELECT 1 FROM chunks WHERE embed_hash = ? LIMIT 1", (h,)) is None:
                db.execute("DELETE FROM embedding_cache WHERE hash = ?", (h,))
    if has_table(db, "chunks_fts"):
        db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")
