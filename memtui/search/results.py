"""What a search takes and gives: options, the chunk rows it reads, hits and the response."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from memtui.db import Database, in_batches
from memtui.search.schema import SOURCES
from memtui.search.scoring import Place, keyword_scores, snippet


@dataclass(frozen=True)
class SearchOptions:
    sources: tuple[str, ...] = SOURCES
    max_results: int = 6
    min_score: float = 0.35
    since: str | None = None
    include_superseded: bool = False


@dataclass
class Hit:
    """One search result; ``message_ids`` are the transcript messages it covers."""

    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    source: str
    message_ids: list[str]
    vector_score: float | None
    text_score: float | None
    chunk_id: int
    session: str | None = None
    ts: str | None = None
    ref: str | None = None
    current: bool = True
    meta: dict[str, str] = field(default_factory=dict)

    def as_dict(self, explain: bool = False, weights: dict[str, float] | None = None
                ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path, "start_line": self.start_line, "end_line": self.end_line,
            "score": round(self.score, 6), "snippet": self.snippet, "source": self.source,
            "message_ids": self.message_ids, "session": self.session, "ts": self.ts,
        }
        if self.ref:
            out["ref"] = self.ref
        if self.source == "facts":
            out["current"] = self.current
        if self.meta:
            out["meta"] = self.meta
        out["vector_score"] = None if self.vector_score is None else round(self.vector_score, 6)
        out["text_score"] = None if self.text_score is None else round(self.text_score, 6)
        if explain and weights is not None:
            out["weights"] = weights
        return out


@dataclass
class SearchResponse:
    """The hits of one query and how they were found."""

    query: str
    results: list[Hit]
    provider: str | None
    model: str | None
    fallback: str | None
    weights: dict[str, float]
    fusion: str
    notices: list[str] = field(default_factory=list)
    """What happened besides the search, one line each (a damaged index set aside)."""

    def as_dict(self, explain: bool = False, id: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {} if id is None else {"id": id}
        out.update({
            "query": self.query,
            "results": [h.as_dict(explain, self.weights) for h in self.results],
            "provider": self.provider, "model": self.model, "fallback": self.fallback,
        })
        if self.notices:
            out["notices"] = self.notices
        if explain:
            out["weights"] = self.weights
            out["fusion"] = self.fusion
        return out


class Row(NamedTuple):
    """What a search reads of a candidate chunk."""

    file: str
    source: str
    path: str
    start_line: int
    end_line: int
    text: str
    message_ids: str
    session: str | None
    ts: str | None
    ref: str | None
    current: int
    meta: str | None
    pos: int

    @property
    def place(self) -> Place:
        return (self.file, self.session or "", self.source, self.pos)


def filters(opts: SearchOptions) -> tuple[str, list[Any]]:
    """The options' filters on ``chunks c`` as `` AND …`` SQL and its parameters."""
    where: list[str] = []
    params: list[Any] = []
    if set(opts.sources) < set(SOURCES):
        where.append(f"c.source IN ({','.join('?' * len(opts.sources))})")
        params.extend(opts.sources)
    if opts.since:
        where.append("c.ts >= ?")
        params.append(opts.since)
    if not opts.include_superseded:
        where.append("c.current = 1")
    return "".join(" AND " + w for w in where), params


def read_rows(db: Database, ids: Sequence[int], opts: SearchOptions) -> dict[int, Row]:
    """The chunks among ``ids`` that pass the source, time and current filters."""
    if not ids:
        return {}
    where, params = filters(opts)
    out: dict[int, Row] = {}
    for marks, part in in_batches(sorted(set(ids))):
        for r in db.rows(
                f"SELECT c.id, c.file, c.source, c.path, "
                f"c.start_line, c.end_line, c.text, c.message_ids, c.session, c.ts, c.ref, "
                f"c.current, c.meta, c.pos FROM chunks c WHERE c.id IN ({marks}){where}",
                (*part, *params)):
            out[int(r[0])] = Row(*r[1:])
    return out


def make_hits(scored: Sequence[tuple[int, float]], rows: dict[int, Row],
              vec: dict[int, float] | None, bm25: dict[int, float] | None,
              words: Sequence[str]) -> list[Hit]:
    """Hits for the scored chunks still in ``rows``, snippets around ``words``."""
    if not scored:
        return []
    tscore = keyword_scores([c for c, _ in scored], bm25) if bm25 is not None else {}
    hits = []
    for cid, score in scored:
        r = rows.get(cid)
        if r is None:  # removed by a sync in another process since it was scored
            continue
        hits.append(Hit(
            path=r.path, start_line=r.start_line, end_line=r.end_line, score=score,
            snippet=snippet(r.text, words), source=r.source,
            message_ids=json.loads(r.message_ids),
            vector_score=None if vec is None else max(0.0, vec.get(cid, 0.0)),
            text_score=None if bm25 is None else tscore.get(cid, 0.0),
            chunk_id=cid, session=r.session, ts=r.ts, ref=r.ref,
            current=bool(r.current), meta=json.loads(r.meta or "{}")))
    return hits
