"""Turning any user query into a safe FTS5 expression, and the helpers ranking needs.

A user's query is text, not FTS5 syntax: quotes, ``NEAR``, ``col:``, ``*``, ``AND``,
``NOT``, brackets or a lone ``-`` must never reach FTS5 as operators (they raise
syntax errors or change the meaning). Every word becomes a double-quoted string (with
inner quotes doubled) and the words are OR-ed, so bm25 ranks the rows that match more
and rarer words first. Stopwords are dropped unless nothing else is left.
"""

from __future__ import annotations

import re
import unicodedata

from memtui.text import STOPWORDS

# Letters and digits of any script, joined by inner apostrophes ("don't", "o'neil").
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
MAX_TERMS = 32
"""More words than this add little to bm25 and cost time on big indexes."""

QUESTION_WORDS = frozenset(
    "what when where who whom whose why how which did does do was were is are has have had "
    "ever since about tell know remember".split()
)


def terms(query: str) -> list[str]:
    """The words of a query in order, lowercased and NFKC-normalised, without repeats."""
    text = unicodedata.normalize("NFKC", query.replace("\x00", " "))
    seen: dict[str, None] = {}
    for match in _TOKEN.finditer(text):
        word = match.group(0).replace("’", "'").lower()
        seen.setdefault(word, None)
    return list(seen)


def content_terms(query: str) -> list[str]:
    """The words that carry meaning: stopwords and question words dropped (all kept if
    nothing else is left)."""
    words = terms(query)
    kept = [w for w in words if w not in STOPWORDS and w not in QUESTION_WORDS and len(w) > 1]
    return kept or words


def fts_query(query: str) -> str | None:
    """A safe FTS5 MATCH expression for any text, or None when there is nothing to match."""
    words = content_terms(query)[:MAX_TERMS]
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
