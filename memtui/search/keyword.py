"""Keyword recall for short-lived processes: FTS5 bm25 and state keywords, no numpy, no model.

A hook command must answer in a few hundred milliseconds, and importing numpy alone
costs over 100 ms; loading the embedding model, seconds. When the warm search service
does not answer, hooks recall with this: the index's FTS5 table ranked by bm25 (as the
keyword side of hybrid search, without its vector side, fusion or context blend) and
the active state entries matched by keywords (as ``recall`` does). The index is read as
it is, without a sync: the daemon and the index watcher keep it fresh.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from memtui.db import Database, has_table
from memtui.home import Home
from memtui.search.query import fts_query
from memtui.search.recall import (
    LAYER_SOURCES,
    LAYERS,
    RecallHit,
    RecallResponse,
    _cite,
    _state_hits,
)

FALLBACK = "keyword"
"""What ``RecallResponse.fallback`` says: keyword search, no vectors."""


def recall(home: Home, agent: str, query: str, *, limit: int = 5) -> RecallResponse:
    """The best ``limit`` hits of index keywords and state keywords, best first."""
    hits = _index_hits(home, agent, query, limit) + _state_hits(
        home, agent, query, since=None, limit=limit, history=False)
    hits.sort(key=lambda h: -h.score)
    return RecallResponse(query=query, layers=LAYERS, hits=hits[:limit], fallback=FALLBACK)


def _index_hits(home: Home, agent: str, query: str, limit: int) -> list[RecallHit]:
    path = home.index_path(agent)
    match = fts_query(query)
    if match is None or not path.exists():
        return []
    db = Database(path, load_vec=False)
    try:
        if not has_table(db, "chunks_fts"):
            return []
        rows = db.query(
            "SELECT c.path, c.source, c.start_line, c.end_line, c.text, c.message_ids, "
            "c.ts, c.ref, c.meta, bm25(chunks_fts) AS rank FROM chunks_fts "
            "JOIN chunks c ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ? "
            "AND c.current = 1 ORDER BY rank LIMIT ?", (match, limit))
    finally:
        db.close()
    best = max((-float(r["rank"]) for r in rows), default=0.0)
    out = []
    for r in rows:
        hit = SimpleNamespace(**{**r, "message_ids": _list(r["message_ids"]),
                                 "meta": _dict(r["meta"])})
        layer = "episodic" if r["source"] in LAYER_SOURCES["episodic"] else "semantic"
        # Scaled like hybrid's keyword side: the best match scores s / (1 + s).
        score = -float(r["rank"]) / (1.0 + best) if best > 0 else 0.0
        out.append(RecallHit(layer=layer, source=r["source"], text=r["text"], score=score,
                             when=r["ts"], cite=_cite(hit),  # type: ignore[arg-type]
                             message_ids=hit.message_ids, ref=r["ref"]))
    return out


def _list(raw: object) -> list[str]:
    try:
        value = json.loads(str(raw or "[]"))
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def _dict(raw: object) -> dict[str, str]:
    try:
        value = json.loads(str(raw or "{}"))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
