"""Policy enforcement on extractor output: what policy.yaml forbids or switches off is dropped.

The stenographer asks the policy about each turn's text before any extractor sees it: a
``forbidden`` hit removes the text (the turn's tool calls stay, they are not text). After
extraction, ``enforce`` applies the rest of the policy to the candidates:

- ``episodic.tool_calls.capture``: ``all`` keeps every tool-call episode, ``errors`` only
  calls whose result was an error (and the incidents), ``none`` drops both.
- A capture section that is switched off (``enabled: false`` or deleted) drops what it
  stands for: ``decisions`` → decision entries and episodes, ``preferences`` →
  "Preference:" context entries, ``facts`` → facts, ``corrections`` → rejections read
  from the human's words (a refused tool use is an action, not words, and stays) and
  "Correction:" context entries.
- What the policy captured in a turn and no extractor produced is added, so the policy
  can widen capture too: a decision, a preference, a correction (as a rejection), and
  an incident (the human's reaction to a tool error, as an episode). A phrase hit is a
  hint, not a reading: a decision, preference or rejection it adds waits for review
  (``proposed``), and none is added to a turn a learned reader judged (the classifier,
  the language model: ``Extraction.read``), whose reading stands. The default policy's
  phrases ("actually", "I said", "let's", "I like") hit far more turns than say what
  they stand for: on the corpus's non-held-out turns they added 161 rejections behind
  the classifier's back, 6 of them right.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memtui.extract.candidates import (
    EpisodeCandidate,
    Extraction,
    PreparedTurn,
    StateCandidate,
)
from memtui.extract.capture import Policy
from memtui.text import domain_of, sentences, shorten


def enabled_kinds(policy: Policy) -> frozenset[str]:
    """The capture kinds the policy has a section for that is switched on."""
    return frozenset(s.kind for s in policy.sections if s.enabled)


def _sentence_with(text: str, match: str) -> str:
    match = match.strip(" .,!?;:-—")
    for s in sentences(text):
        if match and match.lower() in s.lower():
            return s
    return shorten(text)


def enforce(policy: Policy, extraction: Extraction, turns: Sequence[PreparedTurn]
            ) -> Extraction:
    """The candidates the policy allows, plus what it captured that the extractor missed."""
    kinds = enabled_kinds(policy)
    mode = policy.tool_calls
    errored = {ref for ref, outcome in extraction.outcomes if outcome == "error"}
    out = Extraction(outcomes=list(extraction.outcomes), read=set(extraction.read))
    # Only the person rejects or decides (whatever extractor proposed it); a refused tool
    # use is the person's action on a tool result, and stays.
    aside = {pt.id for pt in turns if not pt.in_conversation}
    for st in extraction.state:
        if st.category in ("rejected", "decision") and st.source_entry in aside and (
                not st.summary.startswith("Refused tool use")):
            continue
        if st.category == "decision" and "decision" not in kinds:
            continue
        if st.category == "context" and st.summary.startswith("Preference:") and (
                "preference" not in kinds):
            continue
        if ((st.category == "rejected" and not st.summary.startswith("Refused tool use")
                or st.category == "context" and st.summary.startswith("Correction:"))
                and "correction" not in kinds):
            continue
        out.state.append(st)
    for ep in extraction.episodes:
        if ep.kind == "tool_call" and (mode == "none" or mode == "errors"
                                       and ep.ref not in errored):
            continue
        if ep.kind == "incident" and mode == "none":
            continue
        if ep.kind == "decision" and "decision" not in kinds:
            continue
        if ep.kind in ("rejection", "decision") and ep.source_entry in aside and ep.ref is None:
            continue
        out.episodes.append(ep)
    if "fact" in kinds:
        out.facts = list(extraction.facts)
    _widen(out, turns)
    return out


_KIND_TO_CATEGORY = {"decision": "decision", "preference": "context", "correction": "rejected"}
_COVERED_BY = {
    "decision": ("decision", "learning"),
    "context": ("context", "learning", "rejected", "decision"),
    "rejected": ("rejected",),
}
"""An extractor entry of these categories already covers what the policy captured."""


def _widen(out: Extraction, turns: Sequence[PreparedTurn]) -> None:
    have = {(s.source_entry, s.category) for s in out.state}
    incidents = {e.source_entry for e in out.episodes if e.kind == "incident"}
    for pt in turns:
        for capture in pt.captures:
            kind = capture.kind
            if kind == "incident" and pt.id not in incidents and pt.text.strip():
                out.episodes.append(EpisodeCandidate(
                    kind="incident", summary=f"Reaction to a tool error: {shorten(pt.text, 160)}",
                    source_entry=pt.id, at=pt.at, session=pt.turn.session))
                incidents.add(pt.id)
                continue
            category = _KIND_TO_CATEGORY.get(kind)
            if category is None or any((pt.id, c) in have for c in _COVERED_BY[category]):
                continue
            if pt.id in out.read:
                continue  # a reader judged the person's words; a phrase does not overrule it
            if not pt.in_conversation or category == "rejected" and pt.role != "user":
                continue
            sentence = _sentence_with(pt.text, capture.match)
            if len(sentence.split()) < 3:
                continue
            summary = f"Preference: {sentence}" if kind == "preference" else sentence
            summary = re.sub(r"\s+", " ", summary).strip()
            out.state.append(StateCandidate(
                category=category, summary=shorten(summary), source_entry=pt.id,
                domain=domain_of(summary), detail=f"captured by policy: {capture.reason}",
                confidence=0.6, at=pt.at, session=pt.turn.session, status="proposed"))
            if category == "decision":
                out.episodes.append(EpisodeCandidate(
                    kind="decision", summary=shorten(sentence), source_entry=pt.id, at=pt.at,
                    session=pt.turn.session))
            have.add((pt.id, category))
