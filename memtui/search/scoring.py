"""Scoring a search's candidates: keyword scores from bm25, fusion, context, snippets.

Pure functions over numbers and texts, no database: what ``hybrid.Searcher`` does with
the scores each side found.

- vector score: ``1 - cosine distance``, clamped to [0, 1];
- keyword score: FTS5's bm25 is negative, better matches more negative; with
  ``s = -bm25`` the score is ``s / (1 + s)``, monotone in relevance and in [0, 1). (The
  seed system's ``1 / (1 + max(0, rank))`` gives every hit 1.0, since rank < 0.)
- fusion "weighted": ``(wv * vector + wt * keyword) / (wv + wt)``, the weights
  renormalised over the sides that ran; "rrf": reciprocal-rank fusion (k = 60)
  scaled so that first on both sides is 1.0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from operator import itemgetter

SNIPPET_CHARS = 700
RRF_K = 60
FUSIONS = ("weighted", "rrf")

Place = tuple[str, str, str, int]
"""Where a chunk sits: (file, session or '', source, position in its file)."""


def unit(x: float) -> float:
    """``x`` clamped to [0, 1] (NaN to 1, as ``max(0, min(1, x))``)."""
    return x if 0.0 <= x <= 1.0 else (0.0 if x < 0.0 else 1.0)


def best_first(scored: list[tuple[int, float]]) -> list[tuple[int, float]]:
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


def fuse(ids: Sequence[int], vec: dict[int, float] | None, bm25: dict[int, float] | None,
         weights: dict[str, float], fusion: str) -> list[tuple[int, float]]:
    """The candidates' fused scores, best first; a side that did not run is None."""
    if not ids:
        return []
    vscore = ({c: unit(vec.get(c, 0.0)) for c in ids} if vec is not None else {})
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
    return best_first(out)


def smooth(scored: list[tuple[int, float]], where: dict[int, Place],
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
    return best_first(out)


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
