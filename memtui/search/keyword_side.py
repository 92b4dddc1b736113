"""The keyword side of a search: FTS5 bm25 over the index, with the words a query can afford.

Any query text is accepted: ``query.fts_query`` turns it into quoted FTS5 terms, and a
failing MATCH degrades to "no keyword matches" instead of raising.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import apsw

from memtui.db import has_table, in_batches, match_expression
from memtui.search import schema
from memtui.search.cache import PerGeneration
from memtui.search.index import DAMAGE, SearchIndex
from memtui.search.query import MAX_TERMS, content_terms, fts_query
from memtui.search.results import Row, SearchOptions, filters, read_rows

log = logging.getLogger(__name__)

KEYWORD_DEPTH = 200
"""Keyword matches scored per query: enough to give most vector candidates their bm25."""
PRUNE_ABOVE = 5_000
"""Chunks above which very common query words are left out of the keyword query."""
COMMON_SHARE = 0.1
"""A word in more than this share of the chunks is "very common" (its idf is about 0)."""


class Keywords(NamedTuple):
    """What the keyword side found."""

    ran: bool
    """False when it could not run (no FTS5, or no word to match)."""
    bm25: dict[int, float]
    """bm25 of the best ``KEYWORD_DEPTH`` matches, best first."""
    top: list[int]
    """The best k of them: the keyword side's candidates."""
    rows: dict[int, Row]
    """The candidates' rows (those passing the filters)."""


class KeywordSide:
    """FTS5 search over one index, with what it derives from the index cached per
    generation (``generation`` is the searcher's reading of it)."""

    def __init__(self, index: SearchIndex, generation: Callable[[], int]) -> None:
        self.index = index
        self._fts5: bool | None = None
        self._tokenizer: Any = None
        self.size = PerGeneration(generation, self._count)
        self._doc_freqs: PerGeneration[dict[str, int]] = PerGeneration(generation, dict)
        self._layout = PerGeneration(generation, self._read_layout)

    def available(self) -> bool:
        """True when SQLite has FTS5 (asked once: it does not change)."""
        if self._fts5 is None:
            self._fts5 = schema.fts5_available(self.index.db)
        return self._fts5

    def _count(self) -> int:
        return int(self.index.db.scalar("SELECT count(*) FROM chunks") or 0)

    def doc_freq(self, word: str) -> int:
        """Chunks holding ``word`` (its most frequent stem), from fts5vocab; cached until
        the index changes (a lookup walks the term's doclist)."""
        cache = self._doc_freqs.get()
        if word not in cache:
            db = self.index.db
            if self._tokenizer is None:
                self._tokenizer = db.conn.fts5_tokenizer("porter", ["unicode61"])
            stems = self._tokenizer(word.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None,
                                    include_offsets=False, include_colocated=False)
            cache[word] = max((int(db.scalar("SELECT doc FROM chunks_vocab WHERE term = ?",
                                             (str(t),)) or 0) for t in stems), default=0)
        return cache[word]

    def match(self, query: str) -> str | None:
        """The FTS5 expression for ``query`` (``query.fts_query``, narrowed on big indexes
        by ``affordable``)."""
        return fts_query(query, self.affordable)

    def affordable(self, words: list[str]) -> list[str]:
        """The words worth matching. On big indexes (``PRUNE_ABOVE``), words in over
        ``COMMON_SHARE`` of the chunks are dropped (idf about 0, yet bm25 would score every
        row holding them), and the remaining words are kept rarest first while the rows
        they match stay within ``keyword_budget``: bm25's cost grows with every matching
        row, and the commonest words weigh least in it. The rarest word always stays."""
        total = self.size.get()
        if (total < PRUNE_ABOVE or len(words) < 2
                or not has_table(self.index.db, "chunks_vocab")):
            return words
        try:
            df = {w: self.doc_freq(w) for w in words}
        except apsw.Error as exc:
            log.warning("term pruning failed for %r: %s", words, exc)
            return words
        budget = max(0, self.index.settings.keyword_budget) or total
        by_rarity = sorted(words, key=lambda w: (df[w], words.index(w)))
        kept, used = [by_rarity[0]], df[by_rarity[0]]
        for w in by_rarity[1:]:
            if df[w] > COMMON_SHARE * total or used + df[w] > budget:
                break
            kept.append(w)
            used += df[w]
        return [w for w in words if w in kept]

    def _read_layout(self) -> tuple[frozenset[str], bool]:
        db = self.index.db
        present = frozenset(str(r[0]) for r in db.rows(
            "SELECT DISTINCT source FROM files WHERE chunks > 0"))
        superseded = bool(db.scalar(
            "SELECT 1 FROM chunks WHERE file IN (SELECT key FROM files WHERE source = "
            "'facts') AND current = 0 LIMIT 1"))
        return present, superseded

    def post_filtered(self, opts: SearchOptions) -> bool:
        """True when a filter other than the source may drop chunks of this index: a
        ``since``, or superseded facts that are not wanted."""
        return bool(opts.since) or (not opts.include_superseded and self._layout.get()[1])

    def unfiltered(self, opts: SearchOptions) -> bool:
        """True when the options' filters cannot drop any chunk of this index: no
        ``since``, every source present is allowed, and no superseded fact (or they are
        wanted). Then the keyword side reads FTS5 alone, without a join per matching row.
        Which sources are present comes from the ``files`` table, cached per generation."""
        if opts.since:
            return False
        present, superseded = self._layout.get()
        return present <= set(opts.sources) and (opts.include_superseded or not superseded)

    def bm25(self, match: str, k: int, opts: SearchOptions) -> dict[int, float]:
        """bm25 of the best ``k`` matches of ``match`` passing the filters, best first."""
        if self.unfiltered(opts):
            # No join per matching row (bm25() sorted by SQLite measured faster than
            # FTS5's own ORDER BY rank; docs/search.md).
            sql = ("SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? "
                   "ORDER BY bm25(chunks_fts) LIMIT ?")
            params: list[Any] = []
        else:
            where, params = filters(opts)
            sql = (f"SELECT f.rowid, bm25(chunks_fts) FROM chunks_fts f JOIN chunks c "
                   f"ON c.id = f.rowid WHERE chunks_fts MATCH ? {where} "
                   f"ORDER BY bm25(chunks_fts) LIMIT ?")
        try:
            rows = self.index.db.rows(sql, (match, *params, k))
        except DAMAGE:
            raise  # a damaged index file: it is set aside, not searched around
        except apsw.Error as exc:  # a query the sanitiser let through: degrade, never raise
            log.warning("keyword search failed for %r: %s", match, exc)
            return {}
        return {int(cid): float(rank) for cid, rank in rows}

    def holding_all(self, query: str, ids: Sequence[int]) -> set[int]:
        """The chunks among ``ids`` that hold every content word of ``query`` (as FTS5
        tokenises and stems them), whatever their scores."""
        words = content_terms(query)[:MAX_TERMS]
        match = match_expression(words, "AND") if self.available() else None
        if match is None or not ids:
            return set()
        out: set[int] = set()
        db = self.index.db
        try:
            for marks, part in in_batches(sorted(set(ids))):
                out.update(int(r[0]) for r in db.rows(
                    f"SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? "
                    f"AND rowid IN ({marks})", (match, *part)))
        except DAMAGE:
            raise
        except apsw.Error as exc:
            log.warning("exact keyword check failed for %r: %s", match, exc)
            return set()
        return out

    def find(self, query: str, k: int, opts: SearchOptions) -> Keywords:
        """The keyword side of one search. Matches below the top k only lend their bm25
        to vector candidates; a chunk below ``KEYWORD_DEPTH`` (or not matching) gets
        keyword score 0."""
        match = self.match(query) if self.available() else None
        if match is None:
            return Keywords(False, {}, [], {})
        bm25 = self.bm25(match, max(k, KEYWORD_DEPTH), opts)
        top = list(bm25)[:k]
        return Keywords(True, bm25, top, read_rows(self.index.db, top, opts))
