"""Ranking flows against an intended action by their trigger phrases (stems, word boundaries)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from memtui import text
from memtui.stores.flows import Flow

MIN_SCORE = 0.5
"""A flow matches when at least half of a trigger's meaningful words are in the action."""


@dataclass(frozen=True)
class FlowMatch:
    flow: Flow
    score: float
    """0..1.2: the share of a trigger's stems found in the action; an exact phrase adds 0.2."""
    trigger: str
    matched: tuple[str, ...]


def _phrase_in(phrase: str, action: str) -> bool:
    norm = text.normalise(phrase)
    return bool(norm) and re.search(rf"\b{re.escape(norm)}\b", text.normalise(action)) is not None


def score_flow(flow: Flow, action: str, action_stems: set[str]) -> FlowMatch | None:
    """The best trigger of one flow for the action, or None below MIN_SCORE."""
    best: FlowMatch | None = None
    candidates = [*flow.trigger_phrases, flow.name.replace("-", " ").replace("_", " ")]
    for i, trigger in enumerate(candidates):
        stems = text.keywords(trigger)
        if not stems:
            continue
        hit = tuple(s for s in stems if s in action_stems)
        score = len(hit) / len(stems)
        if _phrase_in(trigger, action):
            score += 0.2
        if i == len(candidates) - 1:
            score *= 0.9  # the name is a weaker signal than a phrase someone wrote as a trigger
        if best is None or score > best.score:
            best = FlowMatch(flow, round(score, 3), trigger, hit)
    return best if best and best.score >= MIN_SCORE else None


def rank_flows(flows: Iterable[Flow], action: str) -> list[FlowMatch]:
    """Flows whose triggers match the action, best first (ties: the more effective flow)."""
    stems = set(text.keywords(action))
    matches = [m for f in flows if (m := score_flow(f, action, stems))]
    matches.sort(key=lambda m: (-m.score, -(m.flow.effectiveness or 0.0), m.flow.name))
    return matches
