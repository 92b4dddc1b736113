"""Hybrid search over one agent's index: vector and keyword candidates, fused and explained.

Each side brings ``min(200, max_results * candidate_multiplier)`` candidates. Every
candidate then gets both scores (a keyword-only hit has its cosine computed, a
vector-only hit its bm25), so fusion never treats "not in the other side's top k" as
zero evidence. The sides are ``keyword_side`` and ``vector_side``; the arithmetic of
scores, fusion and context is in ``scoring``. Any query text is accepted and a failing
side degrades to the other one instead of raising.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from memtui.errors import MemtuiError
from memtui.search.cache import PerGeneration
from memtui.search.index import SearchIndex
from memtui.search.keyword_side import Keywords, KeywordSide
from memtui.search.query import content_terms
from memtui.search.results import Hit, SearchOptions, SearchResponse, make_hits, read_rows
from memtui.search.schema import SOURCES
from memtui.search.scoring import FUSIONS, fuse, smooth
from memtui.search.vector_side import VectorSide

__all__ = ["Hit", "SearchOptions", "SearchResponse", "Searcher"]

_POOL: tuple[int, ThreadPoolExecutor] | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """Worker threads that run the keyword side while the calling thread embeds the query
    and scans in-memory vectors: numpy and SQLite both release the GIL, so on two cores
    the two sides overlap instead of adding up. A forked child gets its own pool (the
    parent's threads do not exist there)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL[0] != os.getpid():
            _POOL = (os.getpid(),
                     ThreadPoolExecutor(max_workers=2, thread_name_prefix="memtui-search"))
        return _POOL[1]


MAX_CANDIDATES = 200
VECTOR_DEPTH = 4
"""The vector side returns this many times the candidates: filters other than the source
apply after it, and its extra candidates lend their scores to their neighbours in the
context blend (the LoCoMo figures per depth are in docs/search.md)."""
EXACT_MATCH_SCORE = 0.5
"""What a hit holding every content word of the query counts as against ``min_score``
(above the default 0.35: such a hit is always shown by default)."""
PARALLEL_ABOVE = 5_000
"""Chunks above which the keyword side runs on a worker thread while the query is
embedded: below it, waking the worker costs more than the overlap saves."""


class Searcher:
    """Searches one index; keeps the model and (when warm) the vectors in memory."""

    def __init__(self, index: SearchIndex, *, warm: bool = False) -> None:
        self.index = index
        self.warm = warm
        self._gen: int | None = None
        self.keywords = KeywordSide(index, self._generation)
        self.vectors = VectorSide(index, self._generation, warm=warm)
        self._fallbacks = PerGeneration(self._generation, lambda: index.fallbacks(index.db))
        fusion = index.settings.fusion
        if fusion not in FUSIONS:
            raise MemtuiError(f"{index.home.config_path}: search.fusion: one of "
                              f"{', '.join(FUSIONS)}, got {fusion!r}")

    def weights(self, vector: bool, keyword: bool) -> dict[str, float]:
        s = self.index.settings
        wv = s.vector_weight if vector else 0.0
        wt = s.text_weight if keyword else 0.0
        total = wv + wt
        if total <= 0:
            return {"vector": 0.5 if vector else 0.0, "text": 0.5 if keyword else 0.0}
        return {"vector": wv / total, "text": wt / total}

    def _generation(self) -> int:
        """The index generation: read once per search (the caches are keyed by it)."""
        return self._gen if self._gen is not None else self.index.generation()

    def search(self, query: str, opts: SearchOptions | None = None) -> SearchResponse:
        """The best chunks for ``query``; never raises for any query text."""
        opts = opts or SearchOptions()
        bad = [s for s in opts.sources if s not in SOURCES]
        if bad:
            raise MemtuiError(f"unknown source {bad[0]!r}: use {', '.join(SOURCES)}")
        self._gen = self.index.generation()
        try:
            return self._search(query, opts)
        finally:
            self._gen = None

    def _search(self, query: str, opts: SearchOptions) -> SearchResponse:
        import numpy as np

        index = self.index
        fallback = list(self._fallbacks.get())
        emb = index.embedder
        fusion = index.settings.fusion
        k = max(1, min(MAX_CANDIDATES,
                       opts.max_results * max(1, index.settings.candidate_multiplier)))
        vk = min(1000, k * VECTOR_DEPTH)
        use_vector = emb is not None and "no-vector" not in fallback and bool(query.strip())
        in_memory = use_vector and self.vectors.in_memory()
        if in_memory:
            self.vectors.matrix()
        keyword_job: Future[Keywords] | None = None
        if in_memory and self.keywords.available() and self.keywords.size.get() >= PARALLEL_ABOVE:
            # The keyword side runs on the worker thread from the start, so waking it
            # costs nothing on the critical path; this thread embeds the query and scans
            # the in-memory vectors, and does not touch the database until it has joined.
            keyword_job = _pool().submit(self.keywords.find, query, k, opts)
        vec_scores: dict[int, float] = {}
        qvec = None
        failure: MemtuiError | None = None
        if use_vector:
            assert emb is not None
            try:
                qvec = emb.embed_query(query)
            except MemtuiError as exc:
                failure = exc
        if qvec is not None and in_memory:
            vec_scores = self.vectors.search_memory(qvec, vk, opts.sources)
        found = (keyword_job.result() if keyword_job is not None
                 else self.keywords.find(query, k, opts))
        use_keyword, bm25, rows = found.ran, found.bm25, found.rows
        if failure is not None:
            index.disable_embedder(str(failure))
            use_vector, fallback = False, ["no-vector", *fallback]
        elif qvec is not None and not in_memory:
            vec_scores = self.vectors.search_sqlite(qvec, vk, opts.sources)
        checked = set(found.top)
        weights = self.weights(use_vector, use_keyword)

        candidates = {cid: row.place for cid, row in rows.items()}
        vector_only = [c for c in vec_scores if c not in checked]
        if self.warm and self.vectors.in_memory() and not self.keywords.post_filtered(opts):
            # the vector side applied the source filter; nothing else can drop them
            candidates.update(self.vectors.locate(vector_only))
        else:
            rows.update(read_rows(index.db, vector_only, opts))
            candidates.update((cid, row.place) for cid, row in rows.items())
        if use_vector and qvec is not None:
            missing = [c for c in candidates if c not in vec_scores]
            for cid, vec in self.vectors.vectors_for(missing).items():
                vec_scores[cid] = float(np.dot(vec, qvec))

        scored = fuse(list(candidates), vec_scores if use_vector else None,
                      bm25 if use_keyword else None, weights, fusion)
        settings = index.settings
        gammas = (settings.neighbour_weight, settings.second_neighbour_weight)
        if settings.session_weight > 0 or any(g > 0 for g in gammas):
            scored = smooth(scored, candidates, settings.session_weight, gammas)
        scored = self._above_min_score(scored, query, opts, use_keyword)
        rows.update(read_rows(index.db, [c for c, _ in scored if c not in rows], opts))
        hits = make_hits(scored, rows, vec_scores if use_vector else None,
                         bm25 if use_keyword else None, content_terms(query))
        return SearchResponse(query=query, results=hits,
                              provider=emb.provider if emb and use_vector else None,
                              model=emb.model if emb and use_vector else None,
                              fallback="+".join(dict.fromkeys(fallback)) or None,
                              weights=weights, fusion=fusion)

    def _above_min_score(self, scored: list[tuple[int, float]], query: str,
                         opts: SearchOptions, keyword_ran: bool) -> list[tuple[int, float]]:
        """The best ``max_results`` of the hits that reach ``min_score``; a hit holding
        every content word of the query counts as at least ``EXACT_MATCH_SCORE`` there.

        ``min_score`` drops weak similarity, and a chunk holding all the words the user
        typed is not weak, whatever its fused score: a one-word query's vector is far
        from a long chunk's, a word in most chunks has a bm25 near 0, and the context
        blend divides a hit without neighbours by its normaliser, so such hits fell
        below the default threshold. They keep their own score and order (ranking does
        not change), and a ``min_score`` above ``EXACT_MATCH_SCORE`` still asks for more
        than the words. The check runs only when fewer than ``max_results`` hits pass.
        """
        passed = [(cid, s) for cid, s in scored if s >= opts.min_score]
        if (len(passed) >= opts.max_results or len(passed) == len(scored) or not keyword_ran
                or opts.min_score > EXACT_MATCH_SCORE):
            return passed[:opts.max_results]
        below = [cid for cid, s in scored if s < opts.min_score]
        exact = self.keywords.holding_all(query, below)
        return [(cid, s) for cid, s in scored
                if s >= opts.min_score or cid in exact][:opts.max_results]
