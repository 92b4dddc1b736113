"""The search engine's front door: index, search, batch search and status for one agent.

The CLI, the MCP server and the console call these; they never touch the index's SQL.
A search first runs the cheap check (``SearchIndex.check``: the dirty flag, the
fingerprint, a ``stat`` per input) and syncs what changed, unless told not to. A damaged
index file is set aside and rebuilt (``SearchIndex.repairing``); the response's or the
report's ``notices`` say so.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.search.embedding import Progress
from memtui.search.encoders.embedder import Embedder
from memtui.search.hybrid import Searcher
from memtui.search.index import DAMAGE, IndexStatus, SearchIndex
from memtui.search.results import SearchOptions, SearchResponse
from memtui.search.schema import SOURCES
from memtui.search.sync import SyncReport


@dataclass(frozen=True)
class BatchQuery:
    id: str
    query: str


def options(home: Home, *, sources: Iterable[str] | None = None, max_results: int | None = None,
            min_score: float | None = None, since: str | None = None,
            include_superseded: bool = False) -> SearchOptions:
    """Search options with the home's [search] defaults filled in, checked."""
    s = home.settings.search
    chosen = tuple(sources) if sources else SOURCES
    for name in chosen:
        if name not in SOURCES:
            raise MemtuiError(f"unknown source {name!r}: use {', '.join(SOURCES)}")
    n = s.max_results if max_results is None else max_results
    if n < 1:
        raise MemtuiError(f"--max-results must be at least 1, got {n}")
    score = s.min_score if min_score is None else min_score
    if since:
        from memtui import timeutil

        try:
            since = timeutil.iso(timeutil.parse(since)).replace("Z", "+00:00")
        except ValueError as exc:
            raise MemtuiError(f"--since: not a date or ISO 8601 time: {since!r}") from exc
    return SearchOptions(sources=chosen, max_results=n, min_score=score, since=since,
                         include_superseded=include_superseded)


def open_searcher(home: Home, agent: str, *, embedder: Embedder | None | str = "auto",
                  warm: bool = False) -> Searcher:
    """A searcher over the agent's index (created if missing; not yet synced)."""
    return Searcher(SearchIndex(home, agent, embedder=embedder), warm=warm)


def ensure_fresh(searcher: Searcher, progress: Progress | None = None) -> SyncReport | None:
    """Sync the index when the cheap check says something changed, or (whatever
    ``sync_before_search`` says) when a damaged file was just set aside: an empty index
    in its place would find nothing."""
    index = searcher.index
    if index.db.readonly:
        return None  # a read-only home is searched as it was last indexed
    replaced = bool(index.notices) and index.stored_fingerprint() is None
    if replaced or (index.settings.sync_before_search and index.check()):
        return index.sync(progress=progress)
    return None


def search(home: Home, agent: str, query: str, opts: SearchOptions | None = None, *,
           embedder: Embedder | None | str = "auto") -> SearchResponse:
    """One query against an agent's index, synced first when it is stale."""
    searcher = open_searcher(home, agent, embedder=embedder)
    chosen = opts or options(home)
    try:
        try:
            ensure_fresh(searcher)
            response = searcher.search(query, chosen)
        except DAMAGE as exc:
            searcher = _rebuilt(searcher, exc)
            response = searcher.search(query, chosen)
        response.notices = list(searcher.index.notices)
        return response
    finally:
        searcher.index.close()


def search_batch(home: Home, agent: str, queries: Iterable[BatchQuery],
                 opts: SearchOptions | None = None, *,
                 embedder: Embedder | None | str = "auto"
                 ) -> Iterator[tuple[BatchQuery, SearchResponse]]:
    """Many queries, one loaded model and one in-memory copy of the vectors."""
    searcher = open_searcher(home, agent, embedder=embedder, warm=True)
    reported = 0
    try:
        try:
            ensure_fresh(searcher)
        except DAMAGE as exc:
            searcher = _rebuilt(searcher, exc)
        chosen = opts or options(home)
        for item in queries:
            try:
                response = searcher.search(item.query, chosen)
            except DAMAGE as exc:
                searcher = _rebuilt(searcher, exc)
                response = searcher.search(item.query, chosen)
            notices = searcher.index.notices
            response.notices, reported = notices[reported:], len(notices)
            yield item, response
    finally:
        searcher.index.close()


def _rebuilt(searcher: Searcher, damage: Exception) -> Searcher:
    """After a search found the index file damaged: set it aside, rebuild, search anew
    (the old searcher's caches belong to the damaged file)."""
    index = searcher.index
    index.set_aside(damage)
    index.sync()
    return Searcher(index, warm=searcher.warm)


def sync(home: Home, agent: str, *, rebuild: bool = False, progress: Progress | None = None,
         embedder: Embedder | None | str = "auto") -> SyncReport:
    """`memtui index`: bring the agent's index up to date (or rebuild it)."""
    with SearchIndex(home, agent, embedder=embedder) as index:
        return index.sync(rebuild=rebuild, progress=progress)


def status(home: Home, agent: str, *, embedder: Embedder | None | str = "auto"
           ) -> IndexStatus:
    """`memtui index status`."""
    with SearchIndex(home, agent, embedder=embedder) as index:
        found = index.repairing(index.status)
        found.notices = list(index.notices)
        return found
