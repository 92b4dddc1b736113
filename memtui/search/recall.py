"""`recall`: search memory by layer, with what an agent needs to cite what it remembers.

Layers:

- episodic: what happened, when: episodes and transcript messages, each with its time;
- semantic: what is known: facts (current values only unless ``history``) and the
  markdown memory files, each with where it came from (the source message of a fact,
  the file and lines of a note);
- state: what is going on now: the active entries of memory.db's state table, matched
  by keywords (state is small and changes fast, so it is read directly, not indexed).

Index hits share one hybrid search, so their scores compare; a state entry scores the
fraction of the query's keywords it contains, scaled to sit with strong index hits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memtui import text as textutil
from memtui.errors import MemtuiError
from memtui.home import Home

if TYPE_CHECKING:  # the engine loads numpy: imported where a search runs (hooks need not)
    from memtui.search.encoders.embedder import Embedder
    from memtui.search.hybrid import Searcher
    from memtui.search.results import Hit

LAYERS = ("episodic", "semantic", "state")
LAYER_SOURCES = {"episodic": ("episodes", "sessions"), "semantic": ("facts", "memory")}
STATE_SCALE = 0.9
"""A state entry holding every query keyword scores this (index hits rarely pass it)."""


@dataclass
class RecallHit:
    """One remembered item with its layer, time and citation."""

    layer: str
    source: str
    text: str
    score: float
    when: str | None
    cite: str
    """Where it came from, e.g. ``memory/2025-05-01.md:3-9`` or ``session.jsonl#msg-12``."""
    message_ids: list[str] = field(default_factory=list)
    ref: str | None = None
    current: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {"layer": self.layer, "source": self.source, "text": self.text,
                "score": round(self.score, 6), "when": self.when, "cite": self.cite,
                "message_ids": self.message_ids, "ref": self.ref, "current": self.current}


@dataclass
class RecallResponse:
    query: str
    layers: tuple[str, ...]
    hits: list[RecallHit]
    fallback: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"query": self.query, "layers": list(self.layers),
                "hits": [h.as_dict() for h in self.hits], "fallback": self.fallback}


def _cite(hit: Hit) -> str:
    if hit.source == "memory":
        return f"{hit.path}:{hit.start_line}-{hit.end_line}"
    if hit.source == "sessions":
        ids = ",".join(hit.message_ids[:3]) + ("…" if len(hit.message_ids) > 3 else "")
        return f"{hit.path}#{ids}" if ids else f"{hit.path}:{hit.start_line}"
    origin = hit.meta.get("source_file")
    if hit.message_ids:
        return f"{origin or hit.ref}#{hit.message_ids[0]}"
    return origin or hit.ref or hit.path


def _layer_of(source: str) -> str:
    return "episodic" if source in LAYER_SOURCES["episodic"] else "semantic"


def recall(home: Home, agent: str, query: str, *, layer: str | None = None,
           since: str | None = None, limit: int = 10, history: bool = False,
           embedder: Embedder | None | str = "auto",
           searcher: Searcher | None = None) -> RecallResponse:
    """Search the hinted layer (or all of them) and return citable hits, best first.

    A warm ``searcher`` of the agent's index (the search service's) is used and left open.
    """
    if layer is not None and layer not in LAYERS:
        raise MemtuiError(f"unknown layer {layer!r}: use {', '.join(LAYERS)}")
    if limit < 1:
        raise MemtuiError(f"--limit must be at least 1, got {limit}")
    from memtui.search.engine import ensure_fresh, open_searcher, options

    layers = (layer,) if layer else LAYERS
    sources = tuple(s for name in layers for s in LAYER_SOURCES.get(name, ()))
    hits: list[RecallHit] = []
    fallback: str | None = None
    if sources:
        opts = options(home, sources=sources, max_results=limit, since=since,
                       include_superseded=history)
        if searcher is not None:
            response = searcher.search(query, opts)
        else:
            own = open_searcher(home, agent, embedder=embedder)
            try:
                ensure_fresh(own)
                response = own.search(query, opts)
            finally:
                own.index.close()
        fallback = response.fallback
        for h in response.results:
            hits.append(RecallHit(layer=_layer_of(h.source), source=h.source, text=h.snippet,
                                  score=h.score, when=h.ts, cite=_cite(h),
                                  message_ids=h.message_ids, ref=h.ref, current=h.current))
    if "state" in layers:
        hits.extend(_state_hits(home, agent, query, since=since, limit=limit, history=history))
    # What holds now comes first; with ``history`` the values it replaced follow, so an
    # old value that happens to match the words better never reads as the answer.
    hits.sort(key=lambda h: (not h.current, -h.score))
    return RecallResponse(query=query, layers=layers, hits=hits[:limit], fallback=fallback)


def _state_hits(home: Home, agent: str, query: str, *, since: str | None, limit: int,
                history: bool) -> list[RecallHit]:
    if not home.db_path.exists():
        return []
    from memtui.stores.state import StateFilter, list_entries

    wanted = textutil.keywords(query)
    db = home.open_db()
    try:
        entries = list_entries(db, StateFilter(agent=agent, status=None if history else "active",
                                               since=since, limit=500))
    finally:
        db.close()
    out = []
    for entry in entries:
        have = set(textutil.keywords(f"{entry.summary} {entry.detail} {entry.domain}"))
        matched = sum(1 for w in wanted if w in have) if wanted else 0
        if wanted and not matched:
            continue
        score = STATE_SCALE * (matched / len(wanted)) if wanted else 0.0
        body = entry.summary + (f" — {entry.detail}" if entry.detail else "")
        cite = f"state:{entry.id}" + (f" ({entry.cite})" if entry.source_file else "")
        out.append(RecallHit(layer="state", source="state", text=f"[{entry.category}] {body}",
                             score=score, when=entry.updated_at, cite=cite,
                             message_ids=[m for m in (entry.source_entry, entry.answers_entry)
                                          if m],
                             ref=f"state:{entry.id}", current=entry.status == "active"))
    out.sort(key=lambda h: (-h.score, -(len(h.when or ""))))
    return out[:limit]
