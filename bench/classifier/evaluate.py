"""Reading corpus turns with the rules, the classifier and both; per-label scores."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench.classifier.corpus import LABELS, Example
from memtui.extract.asked import OpenOffer
from memtui.extract.candidates import Extraction, PreparedTurn
from memtui.extract.capture import Policy
from memtui.extract.classify.apply import asks, decides_nothing, picks
from memtui.extract.classify.combine import combine
from memtui.extract.classify.features import proposes
from memtui.extract.classify.head import Verdict
from memtui.extract.enforce import enforce
from memtui.extract.local import LocalExtractor
from memtui.extract.prepare import FileContext, Preparer
from memtui.text import clean
from memtui.transcripts import Turn

# Which label a turn gets from what the rules extracted from it, strongest first.
_ORDER = ("rejected", "decision", "learning", "task", "preference", "correction", "fact",
          "discovery")


def prepared(ex: Example) -> PreparedTurn:
    turn = Turn(id=ex.id, session=ex.conv, timestamp=None, role="user", text=ex.text,
                source="corpus", line=0, offset=0, end_offset=0, format="corpus",
                author="person")
    return PreparedTurn(turn=turn, text=ex.text, previous_assistant=ex.prev,
                        previous_assistant_id=f"{ex.id}/before" if ex.prev else None,
                        open_offer=ex.offer,
                        open_offer_id=f"{ex.id}/offer" if ex.offer else None)


def piped(ex: Example, extractor: LocalExtractor, policy: Policy | None) -> Extraction:
    """What the stenographer records from ``ex``: the turn prepared as in a run (redacted,
    the capture policy's verdict: refused as noise, or its phrase hits), extracted, and
    the policy enforced on the candidates (what it switches off dropped, what its phrases
    widen added). Without a policy, the extractor's reading alone."""
    if policy is None:
        return extractor.extract([prepared(ex)])
    ctx = FileContext(previous_assistant=ex.prev,
                      previous_assistant_id=f"{ex.id}/before" if ex.prev else "",
                      offer=OpenOffer(ex.offer, f"{ex.id}/offer" if ex.offer else "",
                                      asking=bool(ex.offer)))
    prep = Preparer(policy).prepare(prepared(ex).turn, ctx)
    if prep.turn is None:
        return Extraction()
    return enforce(policy, extractor.extract([prep.turn]), [prep.turn])


def rules_reading(ex: Example, extractor: LocalExtractor | None = None, *,
                  served: bool = False, policy: Policy | None = None
                  ) -> tuple[str, float, bool]:
    """(label, confidence of it, whether anything at all was extracted). ``served``: read
    only the entries that land active (what agents are given), not those for review.
    ``policy``: through the stenographer's whole pipeline (``piped``), not the extractor
    alone."""
    return label_of(piped(ex, extractor or LocalExtractor(), policy), served=served)


def label_of(out: Extraction, *, served: bool = False) -> tuple[str, float, bool]:
    """The label a turn gets from what was extracted from it (``rules_reading``)."""
    state = [s for s in out.state if s.status == "active"] if served else out.state
    found: dict[str, float] = {}
    standing = {s.summary for s in state if s.category == "learning"} & {
        s.summary for s in state if s.category == "decision"}
    for s in state:
        if s.category == "decision" and s.summary in standing:
            continue  # a standing instruction, filed as both: the corpus labels it learning
        cat = s.category
        if s.category == "context":
            cat = {"Preference:": "preference", "Correction:": "correction"}.get(
                s.summary.split(" ", 1)[0], "fact")
        found[cat] = max(found.get(cat, 0.0), s.confidence)
    if out.facts:
        found.setdefault("fact", out.facts[0].confidence)
    for label in _ORDER:
        if label in found:
            return label, found[label], True
    return "none", 0.0, bool(state or out.facts)


def both_label(rule: str, rule_conf: float, verdict: Verdict,
               thresholds: dict[str, float], ex: Example,
               offered: bool | None = None) -> tuple[str, float]:
    """The combined reading of ``ex``, as the extractor combines (``apply.refine``):
    rejection/decision from ``combine``, the rest from the rules. ``offered``: whether
    the preceding turn proposes anything, if already known."""
    key = rule if rule in ("rejected", "decision") else None
    if key is not None and picks(ex.text, ex.answering):
        return rule, rule_conf
    if offered is None:
        offered = proposes(ex.answering)
    text = clean(ex.text)
    outcome = combine(key, rule_conf, verdict, thresholds, offered, asks(text),
                      bool(ex.prev), decides_nothing(text, ex.answering))
    if outcome.label is not None:
        return outcome.label, outcome.confidence
    return ("none", 0.0) if key is not None else (rule, rule_conf)


def citations(examples: Sequence[Example], extractor: LocalExtractor,
              policy: Policy | None = None) -> tuple[int, int, int]:
    """(entries, entries citing their own turn, rejections and decisions read against a
    preceding turn or an open offer that also cite it). ``policy``: through the whole
    pipeline (``piped``)."""
    entries = own = answering = 0
    for ex in examples:
        for s in piped(ex, extractor, policy).state:
            entries += 1
            own += s.source_entry == ex.id
            answering += s.category in ("rejected", "decision") and \
                s.answers_entry in (f"{ex.id}/before", f"{ex.id}/offer")
    return entries, own, answering


@dataclass(frozen=True)
class Score:
    precision: float
    recall: float
    f1: float
    support: int


def scores(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, Score]:
    out = {}
    for label in LABELS:
        tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g == p == label)
        n_pred = sum(1 for p in predicted if p == label)
        n_gold = sum(1 for g in gold if g == label)
        precision = tp / n_pred if n_pred else 0.0
        recall = tp / n_gold if n_gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if tp else 0.0
        out[label] = Score(precision, recall, f1, n_gold)
    return out
