"""Where the secrets in a text are: anchors found, patterns matched, overlaps merged.

Steps 1 to 3 of "How it works" in :mod:`memtui.redact`: anchors are found at memory speed,
each regex is tried only where its anchors occur, values are checked, overlaps merge into
the most specific kind, and verbatim repeats (echoes) of a found secret are added.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from memtui.redact.patterns import PATTERNS, PLACEHOLDER_RE, SecretPattern

MIN_ECHO_LENGTH = 8
"""Found secrets at least this long are also redacted wherever else they occur verbatim."""

MAX_ECHOES = 64
"""How many distinct secrets are searched for again (each costs one scan of the text)."""


@dataclass(frozen=True)
class _Finder:
    """Finds where the anchors of some patterns occur: a literal (``in``/``find``) or, for
    anchors sharing a first character, one alternation (``re`` scans for its literal
    prefix at memory speed and is cheaper than several ``in`` tests)."""

    anchors: tuple[str, ...]
    fold: bool
    users: tuple[tuple[int, SecretPattern], ...]
    regex: re.Pattern[str] | None

    def positions(self, haystack: str) -> list[int]:
        if self.regex is not None:
            return [m.start() for m in self.regex.finditer(haystack)]
        anchor = self.anchors[0]
        found = []
        i = haystack.find(anchor)
        while i != -1:
            found.append(i)
            i = haystack.find(anchor, i + 1)
        return found


def _build_finders() -> tuple[_Finder, ...]:
    groups: dict[tuple[tuple[str, ...], bool], list[tuple[int, SecretPattern]]] = {}
    for rank, pattern in enumerate(PATTERNS):
        by_first: dict[str, list[str]] = {}
        for anchor in pattern.anchors:
            by_first.setdefault(anchor[0], []).append(anchor)
        for anchors in by_first.values():
            groups.setdefault((tuple(anchors), pattern.fold), []).append((rank, pattern))
    return tuple(
        _Finder(
            anchors,
            fold,
            tuple(users),
            re.compile("|".join(map(re.escape, anchors))) if len(anchors) > 1 else None,
        )
        for (anchors, fold), users in groups.items()
    )


# A turn with no anchor at all (most prose) costs one lower() and 16 scans at ~1.5 GB/s.
_FINDERS = _build_finders()
# The same as plain tuples: the presence loop runs for every turn, attribute lookups add up.
_PROBES: tuple[tuple[_Finder, str | None, re.Pattern[str] | None, bool], ...] = tuple(
    (f, f.anchors[0] if f.regex is None else None, f.regex, f.fold) for f in _FINDERS
)


# --- scanning -------------------------------------------------------------------------


class Span(NamedTuple):
    start: int
    end: int
    rank: int  # index into PATTERNS


def _overlaps(intervals: list[tuple[int, int]], starts: list[int], start: int, end: int) -> bool:
    # intervals are sorted and disjoint; look at the one starting at or before ``end``.
    i = bisect_right(starts, end - 1) - 1
    return i >= 0 and intervals[i][1] > start


def merge(spans: list[Span]) -> list[Span]:
    """Union of overlapping spans; each union keeps the most specific (lowest) rank."""
    merged: list[Span] = []
    for span in sorted(spans):
        if merged and span.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = Span(last.start, max(last.end, span.end), min(last.rank, span.rank))
        else:
            merged.append(span)
    return merged


def echoes_of(text: str, spans: list[Span], secrets: dict[str, int]) -> dict[str, int]:
    """Add to ``secrets`` (value: rank) the values of ``spans`` worth searching ``text`` for
    again: at least :data:`MIN_ECHO_LENGTH` long, up to :data:`MAX_ECHOES` in all."""
    for span in spans:
        if len(secrets) >= MAX_ECHOES:
            break
        value = text[span.start : span.end]
        if len(value) >= MIN_ECHO_LENGTH:
            secrets.setdefault(value, span.rank)
    return secrets


def scan(text: str, echoes: dict[str, int]) -> list[Span]:
    """Secret spans in ``text`` (merged), skipping existing placeholders.

    ``echoes`` maps secrets found earlier (in this or a previous pass) to their rank, so
    their verbatim repeats are redacted too.
    """
    lowered = text.lower()
    hits: list[tuple[_Finder, str]] = []
    for finder, literal, regex, fold in _PROBES:
        haystack = lowered if fold else text
        # Presence first: a miss (the usual case) is one C-level scan, no allocation.
        if literal is not None:
            if literal in haystack:
                hits.append((finder, haystack))
        elif regex is not None and regex.search(haystack) is not None:
            hits.append((finder, haystack))
    if not hits and not echoes:
        return []  # the fast path: no pattern can match

    # lower() lengthens a few characters (U+0130 becomes two); then lowered offsets are not
    # text offsets and folded patterns fall back to a full regex search (slow but rare).
    aligned = len(lowered) == len(text)
    occupied: list[tuple[int, int]] = []
    if "[REDACTED:" in text:
        occupied = [m.span() for m in PLACEHOLDER_RE.finditer(text)]
    starts = [s for s, _ in occupied]

    spans: list[Span] = []
    searched: set[int] = set()  # ranks already searched in full (unaligned text only)
    for finder, haystack in hits:
        positions = finder.positions(haystack)
        for rank, pattern in finder.users:
            if pattern.fold and not aligned:
                if rank in searched:
                    continue
                searched.add(rank)
                matches: Iterable[re.Match[str] | None] = pattern.regex.finditer(text)
            else:
                matches = [pattern.regex.match(text, i) for i in positions]
            covered = -1  # end of this pattern's last accepted match
            for m in matches:
                # A hit inside this pattern's previous accepted match can only find a
                # part of it again (e.g. "api_key=api_key=..."); skipping keeps
                # repetitive text linear.
                if m is None or m.start() < covered:
                    continue
                found = pattern.span(m)
                if found is None or (occupied and _overlaps(occupied, starts, *found)):
                    continue
                covered = m.end()
                spans.append(Span(found[0], found[1], rank))
    if not spans and not echoes:
        return []

    spans = merge(spans)
    secrets = echoes_of(text, spans, dict(echoes))
    found_starts = [span.start for span in spans]
    echoed: list[Span] = []
    for value, rank in secrets.items():
        i = text.find(value)
        while i != -1:
            end = i + len(value)
            # Skip repeats inside a found span; and search on from the end of this one:
            # an overlapping repeat is already broken up by this redaction.
            j = bisect_right(found_starts, i) - 1
            inside = j >= 0 and spans[j].end >= end
            if not inside and not (occupied and _overlaps(occupied, starts, i, end)):
                echoed.append(Span(i, end, rank))
            i = text.find(value, end)
    return merge(spans + echoed) if echoed else spans
