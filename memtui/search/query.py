"""Turning any user query into a safe FTS5 expression, and the helpers ranking needs.

A user's query is text, not FTS5 syntax: quotes, ``NEAR``, ``col:``, ``*``, ``AND``,
``NOT``, brackets or a lone ``-`` must never reach FTS5 as operators (they raise
syntax errors or change the meaning). Every word becomes a double-quoted string (with
inner quotes doubled, ``db.match_expression``) and the words are OR-ed, so bm25 ranks
the rows that match more and rarer words first. Stopwords are dropped unless nothing
else is left.
"""

from __future__ import annotations

from collections.abc import Callable

from memtui.db import match_expression
from memtui.text import STOPWORDS, terms

__all__ = ["MAX_TERMS", "QUESTION_WORDS", "content_terms", "fts_query", "terms"]

MAX_TERMS = 32
"""More words than this add little to bm25 and cost time on big indexes."""

QUESTION_WORDS = frozenset(
    "what when where who whom whose why how which did does do was were is are has have had "
    "ever since about tell know remember".split()
)


def content_terms(query: str) -> list[str]:
    """The words that carry meaning: stopwords and question words dropped (all kept if
    nothing else is left)."""
    words = terms(query)
    kept = [w for w in words if w not in STOPWORDS and w not in QUESTION_WORDS and len(w) > 1]
    return kept or words


def fts_query(query: str, keep: Callable[[list[str]], list[str]] | None = None) -> str | None:
    """The keyword side's MATCH expression for any text, or None when there is nothing
    to match. ``keep`` may narrow the words (the searcher drops very common ones on big
    indexes); it never adds any."""
    words = content_terms(query)[:MAX_TERMS]
    if words and keep is not None:
        words = keep(words)
    return match_expression(words)
