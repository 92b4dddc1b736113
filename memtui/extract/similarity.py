"""The in-memory similarity index consolidation matches candidates against.

Entries are grouped by a bucket (category and domain) and indexed by their keywords
(stems, stopwords dropped). A candidate is compared character by character only with
entries whose keywords overlap its own with a Dice coefficient of 0.6 or more, whose
word sequences are at least half alike and whose length allows the threshold. A keyword
shared by more than ``COMMON_KEY`` entries only counts for entries found through rarer
keywords (or the most recent ``COMMON_KEY``), so thousands of "add endpoint N" tasks do
not make every candidate walk all of them. Ties are broken by keyword and by the order
entries were added, never by set order: the same input gives the same memory in every
process, whatever ``PYTHONHASHSEED``.

Two similar texts are the same entry only when they name the same things (``marks``,
``same_marks``) and say them in other words (``subject.restates``); with other marks
they are the same entry changed only when about the same subject
(``subject.same_subject``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from memtui import text
from memtui.extract.candidates import StateCandidate
from memtui.extract.subject import restates, same_subject


def keys_of(norm: str) -> frozenset[str]:
    return frozenset(text.keywords(norm)) or frozenset(norm.split())


_TOKEN = re.compile(r"[0-9A-Za-z][\w.:/@+-]*")
_IDENT_INNER = re.compile(r"[._:/@+]|[a-z][A-Z]")


def marks(summary: str) -> frozenset[str]:
    """The tokens that tell one entry from a similar one, lowercased: tokens with a digit
    (15, v2.3, 10:00, 10.0.0.5), identifiers (phx.server, user_id, src/app.py, camelCase)
    and capitalised words after the first (Postgres, GPU, Dana)."""
    out: set[str] = set()
    for i, m in enumerate(_TOKEN.finditer(summary)):
        token = m.group(0).rstrip(".:/@+-")
        if not token:
            continue
        if (any(ch.isdigit() for ch in token) or _IDENT_INNER.search(token)
                or "_" in token[1:] or (i > 0 and len(token) > 1 and token[0].isupper())):
            out.add(token.lower())
    return frozenset(out)


def words_of(summary: str, norm: str | None = None) -> frozenset[str]:
    """Every word of a text, as tokens (``phx.server``) and as normalised words."""
    tokens = {m.group(0).rstrip(".:/@+-").lower() for m in _TOKEN.finditer(summary)}
    return frozenset(tokens | set((norm if norm is not None else text.normalise(summary))
                                  .split()))


def same_marks(marks_a: frozenset[str], words_a: frozenset[str], marks_b: frozenset[str],
               words_b: frozenset[str]) -> bool:
    """True when each text's marks are words of the other: "Postgres 15" and "postgres
    15" name the same things, "Postgres 15" and "Postgres 16" do not."""
    return marks_a <= words_b and marks_b <= words_a


@dataclass(eq=False)
class Item:
    id: int | None
    """None while the entry waits to be inserted at the end of the batch."""
    norm: str
    keys: frozenset[str]
    pending: StateCandidate | None = None
    marks: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()
    supersedes: Item | None = None
    """The entry this one replaces (a changed decision), linked once both have ids."""
    summary: str = ""
    """As written: what ``same_subject`` compares when the marks differ."""
    seq: int = 0
    """Order of addition to the index: breaks ties the same way in every process."""


@dataclass(frozen=True)
class Match:
    item: Item
    same: bool
    """Same marks: a restatement. False: similar words about other numbers or names."""


MAX_COMPARISONS = 12
"""Most entries one candidate is compared with character by character (the best-keyed)."""
MIN_KEYWORD_DICE = 0.6
"""Keyword overlap (Dice) an entry needs before its characters are compared."""
MIN_WORD_RATIO = 0.5
"""difflib ratio over the words an entry needs before its characters are compared."""
COMMON_KEY = 256
"""A keyword shared by more entries than this only counts for entries found otherwise."""


class SimilarityIndex:
    """Normalised summaries grouped by a bucket key, with a keyword index for candidates.

    Only entries whose keyword sets (stems, stopwords dropped) overlap with a Dice
    coefficient of at least ``MIN_KEYWORD_DICE`` and whose word sequences have a difflib
    ratio of at least ``MIN_WORD_RATIO`` are compared character by character, so
    a run stays linear in practice: a near-duplicate above the threshold shares most of
    its words with the entry it repeats.
    """

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self._by_key: dict[object, dict[str, list[Item]]] = defaultdict(
            lambda: defaultdict(list))
        self._seq = 0

    def add(self, bucket: object, item: Item) -> None:
        if not item.seq:
            self._seq += 1
            item.seq = self._seq
        index = self._by_key[bucket]
        for key in item.keys:
            index[key].append(item)

    def remove(self, bucket: object, item: Item) -> None:
        """Forget an item (an entry that was superseded is no longer matched)."""
        index = self._by_key.get(bucket)
        if not index:
            return
        for key in item.keys:
            items = index.get(key)
            if items is not None:
                try:
                    items.remove(item)
                except ValueError:
                    pass

    def best(self, bucket: object, norm: str, marks_: frozenset[str] = frozenset(),
             words: frozenset[str] | None = None) -> Item | None:
        """The most similar item of the bucket at or above the threshold that names the
        same things (same marks), if any."""
        found = self.find(bucket, norm, marks_, words)
        return found.item if found else None

    def find(self, bucket: object, norm: str, marks_: frozenset[str] = frozenset(),
             words: frozenset[str] | None = None, *, changed: bool = False,
             summary: str = "") -> Match | None:
        """The most similar item at or above the threshold: one with the same marks if
        there is one; else, when ``changed``, the most similar one with other marks about
        the same subject as ``summary`` (``subject.same_subject``)."""
        index = self._by_key.get(bucket)
        if not index or not norm:
            return None
        if words is None:
            words = frozenset(norm.split())
        keys = keys_of(norm)
        shared: dict[int, list[Any]] = {}
        # Rare keywords first; a common one only counts for entries already found, or
        # seeds the most recent COMMON_KEY entries when nothing rarer matched.
        # Ties are broken by the key itself, never by set order (which changes with
        # PYTHONHASHSEED): the same input gives the same memory in every process.
        for key in sorted(keys, key=lambda k: (len(index.get(k, ())), k)):
            items = index.get(key)
            if not items:
                continue
            if len(items) > COMMON_KEY:
                if shared:
                    for known in shared.values():
                        if key in known[1].keys:
                            known[0] += 1
                    continue
                items = items[-COMMON_KEY:]
            for item in items:
                slot = shared.get(id(item))
                if slot is None:
                    shared[id(item)] = [1, item]
                else:
                    slot[0] += 1
        if not shared:
            return None
        n = len(norm)
        split = norm.split()
        # Dice coefficient of the keyword sets: a cheap gate before difflib.
        ranked = sorted(
            (slot for slot in shared.values()
             if 2 * slot[0] >= MIN_KEYWORD_DICE * (len(keys) + len(slot[1].keys))),
            key=lambda slot: (-slot[0], slot[1].seq))[:MAX_COMPARISONS]
        best_same: tuple[float, Item] | None = None
        best_changed: tuple[float, Item] | None = None
        for _, item in ranked:
            marks_alike = same_marks(marks_, words, item.marks, item.words)
            same = marks_alike and (not summary or restates(summary, item.summary))
            if not same and (marks_alike or not changed):
                continue  # another thing: never the same entry
            if item.norm == norm and same:
                return Match(item, True)
            m = len(item.norm)
            if 2 * min(n, m) / (n + m) < self.threshold:
                continue  # before the word comparison below, which has no such bound
            if SequenceMatcher(None, split, item.norm.split(), autojunk=False).ratio() < (
                    MIN_WORD_RATIO):
                continue
            score = text.ratio_at_least(norm, item.norm, self.threshold)
            if not score:
                continue
            if same:
                if best_same is None or score > best_same[0]:
                    best_same = (score, item)
            elif (best_changed is None or score > best_changed[0]) and same_subject(
                    summary, item.summary):
                best_changed = (score, item)
        if best_same is not None:
            return Match(best_same[1], True)
        if best_changed is not None:
            return Match(best_changed[1], False)
        return None
