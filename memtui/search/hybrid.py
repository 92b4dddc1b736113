"""Hybrid search over one agent's index: vector and keyword candidates, fused and explained.

Each side brings ``min(200, max_results * candidate_multiplier)`` candidates. Every
candidate then gets both scores (a keyword-only hit has its cosine computed, a
vector-only hit its bm25), so fusion never treats "not in the other side's top k" as
zero evidence:

- vector score: ``1 - cosine distance``, clamped to [0, 1];
- keyword score: FTS5's bm25 is negative, better matches more negative; with
  ``s = -bm25`` the score is ``s / (1 + s)``, monotone in relevance and in [0, 1). (The
  seed system's ``1 / (1 + max(0, rank))`` gives every hit 1.0, since rank < 0.)
- fusion "weighted": ``(wv * vector + wt * keyword) / (wv + wt)``, the weights
  renormalised over the sides that ran; "rrf": reciprocal-rank fusion (k = 60)
  scaled so that first on both sides is 1.0.

Any query text is accepted: it is turned into quoted FTS5 terms (``query.fts_query``)
and a failing side degrades to the other one instead of raising.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

import apsw

from memtui.errors import MemtuiError
from memtui.search.index import SOURCE_CODES, SOURCES, SearchIndex, fts5_available, vec_available
from memtui.search.query import MAX_TERMS, content_terms

if TYPE_CHECKING:
    import numpy as np

    from memtui.search.vectors import VectorMatrix

log = logging.getLogger(__name__)

_POOL: tuple[int, ThreadPoolExecutor] | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """Worker threads that embed queries (and scan in-memory vectors) while the calling
    thread runs the keyword side: numpy and SQLite both release the GIL, so on two cores
    the two sides overlap instead of adding up. A forked child gets its own pool (the
    parent's threads do not exist there)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL[0] != os.getpid():
            _POOL = (os.getpid(),
                     ThreadPoolExecutor(max_workers=2, thread_name_prefix="memtui-search"))
        return _POOL[1]

MAX_CANDIDATES = 200
KEYWORD_DEPTH = 200
"""Keyword matches scored per query: enough to give most vector candidates their bm25.
(LoCoMo R@6 and R@10 with max_results 6 / 10 are identical at depths 100, 300 and 1,000;
at 100k chunks 200 rows instead of 1,000 save ~1 ms.)"""
VECTOR_DEPTH = 4
"""The vector side returns this many times the candidates: filters other than the source
apply after it, and its extra candidates lend their scores to their neighbours in the
context blend. LoCoMo R@10 with max_results 10: 0.730 at depth 1, 0.733 at 2, 0.751 at 4,
0.752 at 8 (with max_results 50: 0.757 at 1, 0.761 at 2 and above)."""
PRUNE_ABOVE = 5_000
"""Chunks above which very common query words are left out of the keyword query."""
PARALLEL_ABOVE = 5_000
"""Chunks above which the query is embedded on a worker thread while the keyword side runs."""
COMMON_SHARE = 0.1
"""A word in more than this share of the chunks is "very common" (its idf is about 0)."""
SNIPPET_CHARS = 700
RRF_K = 60
FUSIONS = ("weighted", "rrf")


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

    def as_dict(self, explain: bool = False, id: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {} if id is None else {"id": id}
        out.update({
            "query": self.query,
            "results": [h.as_dict(explain, self.weights) for h in self.results],
            "provider": self.provider, "model": self.model, "fallback": self.fallback,
        })
        if explain:
            out["weights"] = self.weights
            out["fusion"] = self.fusion
        return out


class _Row(NamedTuple):
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


_Keyword = tuple[bool, dict[int, float], list[int], dict[int, "_Row"]]
"""What the keyword side found (see ``Searcher._keyword``)."""

Place = tuple[str, str, str, int]
"""Where a chunk sits: (file, session or '', source, position in its file)."""


@dataclass(frozen=True)
class SearchOptions:
    sources: tuple[str, ...] = SOURCES
    max_results: int = 6
    min_score: float = 0.35
    since: str | None = None
    include_superseded: bool = False


def _unit(x: float) -> float:
    """``x`` clamped to [0, 1] (NaN to 1, as ``max(0, min(1, x))``)."""
    return x if 0.0 <= x <= 1.0 else (0.0 if x < 0.0 else 1.0)


def _best_first(scored: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """Sorted by score, highest first, ties by chunk id (two C-keyed stable sorts instead
    of a tuple-building lambda)."""
    scored.sort(key=itemgetter(0))
    scored.sort(key=itemgetter(1), reverse=True)
    return scored


def keyword_score(bm25: float) -> float:
    """FTS5 bm25 (negative, lower is better) mapped monotonically into [0, 1)."""
    s = max(0.0, -float(bm25))
    return s / (1.0 + s)


def keyword_scores(ids: Sequence[int], bm25: dict[int, float]) -> dict[int, float]:
    """Keyword scores of candidates: ``s / (1 + best)`` with ``s = -bm25`` and ``best`` the
    largest ``s`` among all scored matches, so the query's best match scores
    ``keyword_score(best)`` and the others in proportion to their bm25.

    Monotone in bm25 within a query and in [0, 1). Compared with ``s / (1 + s)``, which
    squeezes every decent match into 0.8-0.95, it keeps the spread between a strong and
    a weak match (R@10 on LoCoMo: +0.03), while a query whose best match is weak (small
    bm25, e.g. words found in half the corpus) still scores low on the keyword side.
    """
    denom = 1.0 + (max(0.0, -min(bm25.values())) if bm25 else 0.0)
    get = bm25.get
    return {c: (-b / denom if b < 0 else 0.0) if (b := get(c)) is not None else 0.0
            for c in ids}


class Searcher:
    """Searches one index; keeps the model and (when warm) the vectors in memory."""

    def __init__(self, index: SearchIndex, *, warm: bool = False) -> None:
        self.index = index
        self.warm = warm
        self._matrix: VectorMatrix | None = None
        self._matrix_generation = -1
        self._has_fts5: bool | None = None
        self._fallback_cache: tuple[int, list[str]] | None = None
        self._size_cache: tuple[int, int] | None = None
        self._df: tuple[int, dict[str, int]] = (-1, {})
        self._tokenizer: Any = None
        self._layout: tuple[int, frozenset[str], bool] | None = None
        self._places: tuple[int, np.ndarray, np.ndarray, list[tuple[str, str]]] | None = None
        self._gen: int | None = None
        fusion = index.settings.fusion
        if fusion not in FUSIONS:
            raise MemtuiError(f"{index.home.config_path}: search.fusion: one of "
                              f"{', '.join(FUSIONS)}, got {fusion!r}")

    # -- vectors ------------------------------------------------------------------------

    def _in_memory(self) -> bool:
        return self.warm or not vec_available(self.index.db)

    def matrix(self) -> VectorMatrix:
        """All vectors of the index as one matrix, reloaded when the index changed."""
        import numpy as np

        from memtui.search.vectors import VectorMatrix

        gen = self._generation()
        if self._matrix is not None and gen == self._matrix_generation:
            return self._matrix
        db = self.index.db
        emb = self.index.embedder
        dims = emb.dims if emb else 0
        if SearchIndex._has_table(db, "chunks_vec"):
            rows = db.rows("SELECT rowid, source, embedding FROM chunks_vec")
        elif SearchIndex._has_table(db, "chunk_vectors"):
            rows = db.rows("SELECT id, source, embedding FROM chunk_vectors")
        else:
            rows = []
        if not rows:
            self._matrix = VectorMatrix.empty(dims)
        else:
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            codes = np.fromiter((SOURCE_CODES.get(str(r[1]), 255) for r in rows),
                                dtype=np.uint8, count=len(rows))
            blob = b"".join(bytes(r[2]) for r in rows)
            vectors = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1)
            self._matrix = self._exact_matrix(ids, vectors, codes) or VectorMatrix(
                ids, vectors, codes).prepare()
        self._matrix_generation = gen
        return self._matrix

    def _exact_matrix(self, ids: np.ndarray, vectors: np.ndarray,
                      codes: np.ndarray) -> VectorMatrix | None:
        """A warm searcher's matrix of up to ``exactscan.EXACT_ROWS`` rows, scanned exactly
        by ONNX Runtime on two threads; None when that does not apply here."""
        from memtui.search import exactscan
        from memtui.search.vectors import VectorMatrix

        if not self.warm or len(ids) > exactscan.EXACT_ROWS or not exactscan.available():
            return None
        try:
            scanner = exactscan.ExactScanner(vectors)
        except ImportError as exc:  # installed but broken
            log.warning("exact scan in onnxruntime unavailable: %s", exc)
            return None
        return VectorMatrix(ids, vectors, codes, quantise_above=exactscan.EXACT_ROWS
                            ).use_exact_scanner(scanner).prepare()

    def _locate(self, ids: Sequence[int]) -> dict[int, Place]:
        """Where in-memory vectors' chunks sit, without SQL.

        A warm searcher keeps, per index generation, the (file, session) group and the
        position of every row of its matrix (8 bytes a row plus the distinct groups):
        locating the ~100 vector candidates of a search then costs no query (0.4 ms at
        10k chunks).
        """
        import numpy as np

        matrix = self.matrix()
        gen = self._matrix_generation
        if self._places is None or self._places[0] != gen:
            keys: dict[tuple[str, str], int] = {}
            group = np.full(len(matrix), -1, dtype=np.int32)
            position = np.zeros(len(matrix), dtype=np.int32)
            for cid, file, session, pos in self.index.db.rows(
                    "SELECT id, file, coalesce(session, ''), pos FROM chunks"):
                row = matrix.row_of(int(cid))
                if row is not None:
                    group[row] = keys.setdefault((str(file), str(session)), len(keys))
                    position[row] = pos
            self._places = (gen, group, position, list(keys))
        _, group, position, names = self._places
        out: dict[int, Place] = {}
        for cid in ids:
            row = matrix.row_of(cid)
            if row is not None and group[row] >= 0:
                file, session = names[group[row]]
                out[cid] = (file, session, SOURCES[int(matrix.sources[row])], int(position[row]))
        return out

    def _vector_side(self, qvec: np.ndarray, k: int, sources: Sequence[str]
                     ) -> dict[int, float]:
        """The k nearest chunks by sqlite-vec KNN (the in-memory case is in _start_vector)."""
        db = self.index.db
        allowed = None if set(sources) >= set(SOURCES) else sources
        if not SearchIndex._has_table(db, "chunks_vec"):
            return {}
        from memtui.search.vectors import to_blob

        blob = to_blob(qvec)
        out: dict[int, float] = {}
        if allowed is None:
            rows = db.rows("SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? "
                           "AND k = ?", (blob, k))
        else:
            marks = ",".join("?" * len(allowed))
            rows = db.rows(f"SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? "
                           f"AND k = ? AND source IN ({marks})", (blob, k, *allowed))
        for cid, distance in rows:
            out[int(cid)] = 1.0 - float(distance)
        return out

    def _vectors_for(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        if not ids:
            return {}
        if self._in_memory():
            return self.matrix().vectors_for(ids)
        import numpy as np

        db = self.index.db
        marks = ",".join("?" * len(ids))
        return {int(cid): np.frombuffer(bytes(blob), dtype=np.float32)
                for cid, blob in db.rows(f"SELECT rowid, embedding FROM chunks_vec "
                                         f"WHERE rowid IN ({marks})", list(ids))}

    # -- keywords -----------------------------------------------------------------------

    def _fts5(self) -> bool:
        if self._has_fts5 is None:
            self._has_fts5 = fts5_available(self.index.db)
        return self._has_fts5

    def _fallbacks(self) -> list[str]:
        """The index's fallbacks, recomputed only when the index changed."""
        gen = self._generation()
        if self._fallback_cache is None or self._fallback_cache[0] != gen:
            self._fallback_cache = (gen, self.index.fallbacks(self.index.db))
        return list(self._fallback_cache[1])

    def _size(self) -> int:
        gen = self._generation()
        if self._size_cache is None or self._size_cache[0] != gen:
            self._size_cache = (gen, int(self.index.db.scalar("SELECT count(*) FROM chunks") or 0))
        return self._size_cache[1]

    def _doc_freq(self, word: str) -> int:
        """Chunks holding ``word`` (its most frequent stem), from fts5vocab; cached until the
        index changes (a lookup walks the term's doclist: ~0.3 ms at 1M chunks)."""
        gen = self._generation()
        if self._df[0] != gen:
            self._df = (gen, {})
        cache = self._df[1]
        if word not in cache:
            db = self.index.db
            if self._tokenizer is None:
                self._tokenizer = db.conn.fts5_tokenizer("porter", ["unicode61"])
            stems = self._tokenizer(word.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None,
                                    include_offsets=False, include_colocated=False)
            cache[word] = max((int(db.scalar("SELECT doc FROM chunks_vocab WHERE term = ?",
                                             (str(t),)) or 0) for t in stems), default=0)
        return cache[word]

    def _match(self, query: str) -> str | None:
        """The FTS5 expression. On big indexes (``PRUNE_ABOVE``), words in over
        ``COMMON_SHARE`` of the chunks are dropped (idf about 0, yet bm25 would score every
        row holding them), and the remaining words are kept rarest first while the rows
        they match stay within ``keyword_budget``: bm25 costs about 1 µs per matching row,
        and the commonest words weigh least in it. The rarest word always stays."""
        words = content_terms(query)[:MAX_TERMS]
        if not words:
            return None
        total = self._size()
        db = self.index.db
        if total >= PRUNE_ABOVE and len(words) > 1 and SearchIndex._has_table(db, "chunks_vocab"):
            try:
                df = {w: self._doc_freq(w) for w in words}
            except apsw.Error as exc:
                log.warning("term pruning failed for %r: %s", query, exc)
            else:
                budget = max(0, self.index.settings.keyword_budget) or total
                by_rarity = sorted(words, key=lambda w: (df[w], words.index(w)))
                kept, used = [by_rarity[0]], df[by_rarity[0]]
                for w in by_rarity[1:]:
                    if df[w] > COMMON_SHARE * total or used + df[w] > budget:
                        break
                    kept.append(w)
                    used += df[w]
                words = [w for w in words if w in kept]
        return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)

    def _post_filtered(self, opts: SearchOptions) -> bool:
        """True when a filter other than the source may drop chunks of this index: a
        ``since``, or superseded facts that are not wanted."""
        return bool(opts.since) or (not opts.include_superseded and self._layout_now()[1])

    def _layout_now(self) -> tuple[frozenset[str], bool]:
        """(sources present, any superseded fact), read once per index generation from
        the ``files`` table."""
        gen = self._generation()
        if self._layout is None or self._layout[0] != gen:
            db = self.index.db
            present = frozenset(str(r[0]) for r in db.rows(
                "SELECT DISTINCT source FROM files WHERE chunks > 0"))
            superseded = bool(db.scalar(
                "SELECT 1 FROM chunks WHERE file IN (SELECT key FROM files WHERE source = "
                "'facts') AND current = 0 LIMIT 1"))
            self._layout = (gen, present, superseded)
        return self._layout[1], self._layout[2]

    def _unfiltered(self, opts: SearchOptions) -> bool:
        """True when the options' filters cannot drop any chunk of this index: no
        ``since``, every source present is allowed, and no superseded fact (or they are
        wanted). Then the keyword side reads FTS5 alone, without a join per matching row.
        Which sources are present comes from the ``files`` table, cached per generation."""
        if opts.since:
            return False
        present, superseded = self._layout_now()
        return present <= set(opts.sources) and (opts.include_superseded or not superseded)

    def _keyword_side(self, match: str, k: int, opts: SearchOptions) -> dict[int, float]:
        """bm25 of the best ``k`` matches, best first."""
        if self._unfiltered(opts):
            # No join per matching row. (bm25() sorted by SQLite measured faster than
            # FTS5's own ORDER BY rank: 4.0 vs 5.7 ms at 100k chunks.)
            sql = ("SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? "
                   "ORDER BY bm25(chunks_fts) LIMIT ?")
            params: list[Any] = []
        else:
            where, params = self._filters(opts)
            sql = (f"SELECT f.rowid, bm25(chunks_fts) FROM chunks_fts f JOIN chunks c "
                   f"ON c.id = f.rowid WHERE chunks_fts MATCH ? {where} "
                   f"ORDER BY bm25(chunks_fts) LIMIT ?")
        try:
            rows = self.index.db.rows(sql, (match, *params, k))
        except apsw.Error as exc:  # a query the sanitiser let through: degrade, never raise
            log.warning("keyword search failed for %r: %s", match, exc)
            return {}
        return {int(cid): float(rank) for cid, rank in rows}

    @staticmethod
    def _filters(opts: SearchOptions) -> tuple[str, list[Any]]:
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

    # -- search -------------------------------------------------------------------------

    def weights(self, vector: bool, keyword: bool) -> dict[str, float]:
        s = self.index.settings
        wv = s.vector_weight if vector else 0.0
        wt = s.text_weight if keyword else 0.0
        total = wv + wt
        if total <= 0:
            return {"vector": 0.5 if vector else 0.0, "text": 0.5 if keyword else 0.0}
        return {"vector": wv / total, "text": wt / total}

    def _generation(self) -> int:
        """The index generation: read once per search (the caches below are keyed by it)."""
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
        fallback = self._fallbacks()
        emb = index.embedder
        fusion = index.settings.fusion
        k = max(1, min(MAX_CANDIDATES,
                       opts.max_results * max(1, index.settings.candidate_multiplier)))
        vk = min(1000, k * VECTOR_DEPTH)
        use_vector = emb is not None and "no-vector" not in fallback and bool(query.strip())
        matrix = self.matrix() if use_vector and self._in_memory() else None
        keyword_job: Future[_Keyword] | None = None
        if matrix is not None and self._fts5() and self._size() >= PARALLEL_ABOVE:
            # The keyword side runs on the worker thread from the start, so waking it
            # costs nothing on the critical path; this thread embeds the query and scans
            # the in-memory vectors, and does not touch the database until it has joined.
            keyword_job = _pool().submit(self._keyword, query, k, opts)
        vec_scores: dict[int, float] = {}
        qvec = None
        failure: MemtuiError | None = None
        if use_vector:
            assert emb is not None
            try:
                qvec = emb.embed_query(query)
            except MemtuiError as exc:
                failure = exc
        if qvec is not None and matrix is not None:
            allowed = (None if set(opts.sources) >= set(SOURCES)
                       else [SOURCE_CODES[s] for s in opts.sources])
            vec_scores = dict(matrix.search(qvec, vk, allowed))
        use_keyword, bm25, keyword_top, rows = (keyword_job.result() if keyword_job is not None
                                                else self._keyword(query, k, opts))
        if failure is not None:
            index.disable_embedder(str(failure))
            use_vector, fallback = False, ["no-vector", *fallback]
        elif qvec is not None and matrix is None:
            vec_scores = self._vector_side(qvec, vk, opts.sources)
        checked = set(keyword_top)
        weights = self.weights(use_vector, use_keyword)

        candidates = {cid: row.place for cid, row in rows.items()}
        vector_only = [c for c in vec_scores if c not in checked]
        if self.warm and self._in_memory() and not self._post_filtered(opts):
            # the vector side applied the source filter; nothing else can drop them
            candidates.update(self._locate(vector_only))
        else:
            rows.update(self._rows(vector_only, opts))
            candidates.update((cid, row.place) for cid, row in rows.items())
        if use_vector and qvec is not None:
            missing = [c for c in candidates if c not in vec_scores]
            for cid, vec in self._vectors_for(missing).items():
                vec_scores[cid] = float(np.dot(vec, qvec))

        scored = self._fuse(list(candidates), vec_scores if use_vector else None,
                            bm25 if use_keyword else None, weights, fusion)
        settings = index.settings
        gammas = (settings.neighbour_weight, settings.second_neighbour_weight)
        if settings.session_weight > 0 or any(g > 0 for g in gammas):
            scored = self._smooth(scored, candidates, settings.session_weight, gammas)
        scored = [(cid, s) for cid, s in scored if s >= opts.min_score][:opts.max_results]
        rows.update(self._rows([c for c, _ in scored if c not in rows], opts))
        hits = self._hits(scored, rows, vec_scores if use_vector else None,
                          bm25 if use_keyword else None, query)
        return SearchResponse(query=query, results=hits,
                              provider=emb.provider if emb and use_vector else None,
                              model=emb.model if emb and use_vector else None,
                              fallback="+".join(dict.fromkeys(fallback)) or None,
                              weights=weights, fusion=fusion)

    def _keyword(self, query: str, k: int, opts: SearchOptions) -> _Keyword:
        """The keyword side: (whether it ran, bm25 of the best KEYWORD_DEPTH matches, the
        top k of them as candidates, their rows). Matches below the top k only lend their
        bm25 to vector candidates; a chunk below that depth (or not matching) gets keyword
        score 0."""
        match = self._match(query) if self._fts5() else None
        if match is None:
            return False, {}, [], {}
        bm25 = self._keyword_side(match, max(k, KEYWORD_DEPTH), opts)
        top = list(bm25)[:k]
        return True, bm25, top, self._rows(top, opts)

    def _rows(self, ids: Sequence[int], opts: SearchOptions) -> dict[int, _Row]:
        """The chunks among ``ids`` that pass the source, time and current filters."""
        if not ids:
            return {}
        where, params = self._filters(opts)
        ordered = sorted(set(ids))
        out: dict[int, _Row] = {}
        for start in range(0, len(ordered), 500):
            part = ordered[start:start + 500]
            marks = ",".join("?" * len(part))
            for r in self.index.db.rows(
                    f"SELECT c.id, c.file, c.source, c.path, "
                    f"c.start_line, c.end_line, c.text, c.message_ids, c.session, c.ts, c.ref, "
                    f"c.current, c.meta, c.pos FROM chunks c WHERE c.id IN ({marks}){where}",
                    (*part, *params)):
                out[int(r[0])] = _Row(*r[1:])
        return out

    @staticmethod
    def _smooth(scored: list[tuple[int, float]], where: dict[int, Place],
                beta: float, gammas: Sequence[float]) -> list[tuple[int, float]]:
        """Blend in context: the best chunks nearby and the top of the same session.

        ``(s + beta * mean(top 3 of its group) + Σ_d gammas[d-1] * best chunk d places away)
        / (1 + beta + gammas[0])``, capped at 1. A group is a transcript session or a
        markdown file; the chunks d places away are the candidates at position ``pos ± d``
        in the same input and group. Episodes and facts stand alone (their group is
        themselves, they have no neighbours), so all sources stay on one scale. On LoCoMo
        the adjacent chunk lifts R@10 by about 0.07 (the answer often sits next to the
        turn that matches the question's words) and the chunks two places away by another
        0.015. Those farther terms are a bonus left out of the normaliser, so a hit
        without context keeps the score the first-order blend gives it (and
        ``min_score`` its meaning).
        """
        group: dict[int, tuple[str, ...]] = {}
        at: dict[tuple[tuple[str, ...], int], float] = {}
        score = dict(scored)
        for cid, (file, session, source, pos) in where.items():
            if source in ("sessions", "memory"):
                key: tuple[str, ...] = (file, session)
                group[cid] = key
                if cid in score:
                    at[(key, pos)] = score[cid]
            else:
                group[cid] = (str(cid),)
        members: dict[tuple[str, ...], list[float]] = {}
        for cid, s in scored:
            members.setdefault(group[cid], []).append(s)
        # scored is best first, so each group's list is too: its top 3 are its head
        top = {g: sum(v[:3]) / 3 for g, v in members.items()}
        weights = [(d, w) for d, w in enumerate(gammas, start=1) if w > 0]
        norm = 1 + beta + (max(0.0, gammas[0]) if gammas else 0.0)
        get = at.get
        out = []
        for cid, s in scored:
            g = group[cid]
            total = s + beta * top[g]
            if len(g) == 2:
                pos = where[cid][3]
                for d, w in weights:
                    total += w * max(get((g, pos - d), 0.0), get((g, pos + d), 0.0))
            out.append((cid, min(1.0, total / norm)))
        return _best_first(out)

    @staticmethod
    def _fuse(ids: Sequence[int], vec: dict[int, float] | None, bm25: dict[int, float] | None,
              weights: dict[str, float], fusion: str) -> list[tuple[int, float]]:
        if not ids:
            return []
        vscore = ({c: _unit(vec.get(c, 0.0)) for c in ids} if vec is not None else {})
        tscore = keyword_scores(ids, bm25) if bm25 is not None else {}
        if fusion == "rrf":
            total: dict[int, float] = dict.fromkeys(ids, 0.0)
            best = 0.0
            for side, scores in (("vector", vscore), ("text", tscore)):
                w = weights[side]
                if not scores or w <= 0:
                    continue
                best += w / (RRF_K + 1)
                ranked = sorted((c for c in ids if scores[c] > 0), key=lambda c: -scores[c])
                for rank, c in enumerate(ranked, start=1):
                    total[c] += w / (RRF_K + rank)
            out = [(c, s / best if best else 0.0) for c, s in total.items()]
        else:
            wv, wt = weights["vector"], weights["text"]
            vget, tget = vscore.get, tscore.get
            out = [(c, wv * vget(c, 0.0) + wt * tget(c, 0.0)) for c in ids]
        return _best_first(out)

    @staticmethod
    def _hits(scored: Sequence[tuple[int, float]], rows: dict[int, _Row],
              vec: dict[int, float] | None, bm25: dict[int, float] | None,
              query: str) -> list[Hit]:
        if not scored:
            return []
        words = content_terms(query)
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


def snippet(text: str, words: Sequence[str], limit: int = SNIPPET_CHARS) -> str:
    """At most ``limit`` characters of ``text``, around the first query word it contains."""
    text = text.strip()
    if len(text) <= limit:
        return text
    lowered = text.lower()
    first = min((i for i in (lowered.find(w) for w in words if w) if i >= 0), default=0)
    start = max(0, first - limit // 4)
    if start:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < first else start
    end = start + limit - (1 if start else 0) - 1
    body = text[start:end]
    if end < len(text):
        cut = body.rfind(" ")
        body = body[:cut] if cut > len(body) // 2 else body
    prefix = "…" if start else ""
    out = prefix + body + "…"
    return re.sub(r"\s+\Z", "", out)[:limit]
