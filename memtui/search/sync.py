"""Bringing an index's chunks in step with its inputs: diff, purge, redact, copy a rebuild.

Inputs whose signature (size, mtime, inode) is unchanged are skipped, changed ones are
re-read and diffed chunk by chunk, inputs that disappeared are purged. Every chunk's
text is redacted (``memtui.redact``) before it is written: the index is a copy
of transcripts and memory, and a credential in them must not reach its tables, its
write-ahead log or a printed snippet.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memtui import timeutil
from memtui.db import Database, has_table
from memtui.errors import MemtuiError
from memtui.redact import redact
from memtui.search import schema
from memtui.search.chunking import Chunk, sha256
from memtui.search.documents import SourceFile

if TYPE_CHECKING:
    from memtui.search.embedding import Progress


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
    notices: list[str] = field(default_factory=list)
    """What the sync did besides syncing, one line each (a damaged index set aside)."""
    seconds: float = 0.0


def sync_inputs(db: Database, inputs: Sequence[SourceFile], report: SyncReport,
                progress: Progress | None) -> None:
    """Re-read the inputs whose signature changed, write their chunks, purge vanished ones."""
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
            added, removed, moved = replace_chunks(db, item, loaded.chunks)
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
                schema.bump_generation(db)
    if progress and changed:
        progress("read", len(changed), len(changed))
    present = {f.key for f in inputs}
    for key in [k for k in stored if k not in present]:
        with db.write():
            report.chunks_removed += delete_chunks(
                db, [r[0] for r in db.rows("SELECT id FROM chunks WHERE file = ?", (key,))])
            db.execute("DELETE FROM files WHERE key = ?", (key,))
            report.files_removed += 1
            schema.bump_generation(db)


def replace_chunks(db: Database, item: SourceFile,
                   chunks: Sequence[Chunk]) -> tuple[int, int, int]:
    """Diff one input's chunks against the index: keep equal ones, add new, drop gone.
    Returns (added, removed, moved).

    Every chunk gets ``pos``, its place in the input: neighbours in the context blend
    are ``pos ± d``, so a transcript that grows across syncs (its new chunks get ids
    after other inputs' chunks) keeps its turns adjacent. Chunks are matched by the key
    of their text as read; only new chunks are redacted, so a growing transcript costs
    redaction of its new turns alone.
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
    removed = delete_chunks(db, gone)
    db.executemany("UPDATE chunks SET pos = ? WHERE id = ?", moved)
    rows = []
    for place, c in fresh:
        text = redact(c.text).text
        embed = redact(c.embed_text).text if c.embed_text else text
        meta = {k: redact(v).text for k, v in c.meta.items()}
        rows.append((item.key, c.source, c.path, c.start_line, c.end_line, sha256(text), c.key,
                     sha256(embed), None if embed == text else embed, text,
                     json.dumps(list(c.message_ids), ensure_ascii=False), c.session, c.ts,
                     c.ref, int(c.current), json.dumps(meta, ensure_ascii=False), place))
    db.executemany(
        "INSERT INTO chunks(file, source, path, start_line, end_line, hash, key, embed_hash, "
        "embed_text, text, message_ids, session, ts, ref, current, meta, pos) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    return len(fresh), removed, len(moved)


def delete_chunks(db: Database, ids: Sequence[int]) -> int:
    """Remove chunks and their vectors; returns how many."""
    if not ids:
        return 0
    params = [(i,) for i in ids]
    for table, key in (("chunks_vec", "rowid"), ("chunk_vectors", "id")):
        if has_table(db, table):
            db.executemany(f"DELETE FROM {table} WHERE {key} = ?", params)
    db.executemany("DELETE FROM chunks WHERE id = ?", params)
    return len(ids)


def copy_over(live: Database, fresh: Database) -> None:
    """Replace the live index with a rebuilt one in one transaction (SQLite's backup API:
    readers see the old index or the new one), then checkpoint, so the old pages leave
    the write-ahead log too."""
    with live.conn.backup("main", fresh.conn, "main") as backup:
        while not backup.done:
            backup.step(-1)
    live.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
