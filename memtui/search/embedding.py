"""Giving an index's chunks their vectors: from the embedding cache, else from the model.

Every chunk is stored with ``embedded = 0``; this pass embeds the pending ones in
batches, one transaction each, so an interrupted sync keeps what it embedded and a
search in between sees complete rows only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memtui.db import Database, has_table, in_batches
from memtui.search import schema
from memtui.search.encoders.embedder import Embedder, EmbeddingUnavailable

EMBED_BATCH = 512
"""Chunks embedded and written per transaction while indexing."""

Progress = Callable[[str, int, int], None]
"""Called with (stage, done, total): stages are "read" and "embed"."""


def pending_count(db: Database) -> int:
    """Chunks still without a vector."""
    return int(db.scalar("SELECT count(*) FROM chunks WHERE embedded = 0") or 0)


def embed_pending(db: Database, emb: Embedder, progress: Progress | None
                  ) -> tuple[int, int, str | None]:
    """Give every chunk without a vector one. Returns (embedded by the model, taken from
    the cache, why embedding stopped or None); chunks left pending are embedded by the
    next sync."""
    import numpy as np

    from memtui.search.vectors import to_blob

    with db.write():
        schema.ensure_vectors(db, emb.dims)
    insert = ("INSERT OR REPLACE INTO chunks_vec(rowid, embedding, source) VALUES (?,?,?)"
              if schema.vec_available(db) else
              "INSERT OR REPLACE INTO chunk_vectors(id, embedding, source) VALUES (?,?,?)")
    # Longest first across all pending chunks, not per batch: the model pads every
    # batch to its longest text, and batches cut from a length-sorted list waste
    # least (cutting in id order cost ~7% of the model's CPU time on LoCoMo turns).
    pending = db.rows("SELECT id, source, embed_hash, coalesce(embed_text, text) "
                      "FROM chunks WHERE embedded = 0 "
                      "ORDER BY length(coalesce(embed_text, text)) DESC, id")
    total = len(pending)
    done = embedded = cached_count = 0
    if progress and total:
        progress("embed", 0, total)
    for start in range(0, total, EMBED_BATCH):
        batch = pending[start:start + EMBED_BATCH]
        hashes = sorted({str(r[2]) for r in batch})
        cached = cached_vectors(db, hashes, emb.model)
        missing = [h for h in hashes if h not in cached]
        fresh: dict[str, np.ndarray] = {}
        if missing:
            text_of = {str(r[2]): str(r[3]) for r in batch}

            def step(n: int, _total: int, base: int = done) -> None:
                if progress:
                    progress("embed", min(total, base + n), total)

            try:
                vectors = emb.embed_documents([text_of[h] for h in missing], progress=step)
            except EmbeddingUnavailable as exc:
                return embedded, cached_count, str(exc)
            fresh = {h: np.asarray(v, dtype=np.float32) for h, v in
                     zip(missing, vectors, strict=True)}
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
            schema.bump_generation(db)
        embedded += len(fresh)
        cached_count += len(batch) - sum(1 for r in batch if str(r[2]) in fresh)
        done += len(batch)
        if progress:
            progress("embed", done, total)
    return embedded, cached_count, None


def cached_vectors(db: Database, hashes: Sequence[str], model: str) -> dict[str, bytes]:
    """The cached vectors of ``model`` for these text hashes, as stored blobs."""
    out: dict[str, bytes] = {}
    for marks, part in in_batches(hashes):
        for h, blob in db.rows(f"SELECT hash, embedding FROM embedding_cache "
                               f"WHERE model = ? AND hash IN ({marks})", [model, *part]):
            out[str(h)] = bytes(blob)
    return out


def carry_cache(live: Database, fresh: Database, model: str) -> None:
    """Copy the live index's embedding cache into a rebuild (rows of ``model`` only)."""
    if not has_table(live, "embedding_cache"):
        return
    rows = live.rows("SELECT hash, model, embedding FROM embedding_cache WHERE model = ?",
                     (model,))
    with fresh.write():
        fresh.executemany("INSERT OR IGNORE INTO embedding_cache(hash, model, embedding) "
                          "VALUES (?,?,?)", rows)
