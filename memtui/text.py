"""Small text tools shared by the engine: normalising, keys, stems, similarity, token estimates."""

from __future__ import annotations

import math
import re
from difflib import SequenceMatcher
from functools import lru_cache

_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_WORD = re.compile(r"[0-9A-Za-z][0-9A-Za-z_'-]*")

STOPWORDS = frozenset(
    """a an and are as at be but by do does for from has have i if in into is it its me my no
    not of on or our so than that the their them then there these this to up us was we were
    what when which who will with you your all any can should would could just now new""".split()
)


def normalise(text: str) -> str:
    """Lowercase, non-alphanumerics to single spaces, trimmed."""
    return _NON_ALNUM.sub(" ", text.lower()).strip()


def norm_key(text: str, chars: int = 40) -> str:
    """The near-duplicate key of a rule: the first ``chars`` characters after normalising."""
    return normalise(text)[:chars].rstrip()


def estimate_tokens(text: str) -> int:
    """Tokens estimated as characters / 4, rounded up (the budget unit everywhere)."""
    return math.ceil(len(text) / 4)


_SUFFIXES = ("ational", "ization", "fulness", "iveness", "ations", "ingly", "ation", "ments",
             "ment", "ness", "ings", "ing", "edly", "ied", "ies", "ed", "ly", "es", "s")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix-stripping stemmer: deploy/deploys/deployed/deploying share a stem."""
    w = word.lower()
    if len(w) <= 3:
        return w
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if suffix in ("ied", "ies"):
                w += "y"
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        w = w[:-1]  # running -> runn -> run
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]  # release/released -> releas
    return w


def words(text: str) -> list[str]:
    """Lowercased words of a text, in order."""
    return [m.group(0).lower().strip("'-") for m in _WORD.finditer(text)]


def keywords(text: str) -> list[str]:
    """Stems of the meaningful words (stopwords dropped), in order, without repeats."""
    seen: dict[str, None] = {}
    for w in words(text):
        if w not in STOPWORDS and len(w) > 1:
            seen.setdefault(stem(w), None)
    return list(seen)


def similarity(a: str, b: str) -> float:
    """Similarity of two texts after normalising, 0..1 (difflib ratio)."""
    na, nb = normalise(a), normalise(b)
    if not na or not nb:
        return 1.0 if na == nb else 0.0
    return SequenceMatcher(None, na, nb, autojunk=False).ratio()


def ratio_at_least(na: str, nb: str, threshold: float) -> float:
    """difflib's ratio of two normalised texts when it reaches ``threshold``, else 0.0.

    The cheap bounds go first (the length bound, then quick_ratio), so scanning many
    candidates for a near-duplicate rarely runs the full comparison.
    """
    n, m = len(na), len(nb)
    if not n or not m or 2 * min(n, m) / (n + m) < threshold:
        return 0.0
    sm = SequenceMatcher(None, na, nb, autojunk=False)
    if sm.quick_ratio() < threshold:
        return 0.0
    score = sm.ratio()
    return score if score >= threshold else 0.0
