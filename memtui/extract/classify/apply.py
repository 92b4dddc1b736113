"""The classifier in the local extractor: which turns it reads, and how it edits their
candidates (the rules' reading of a turn is extracted first, then refined here).

A rejection the classifier adds is summarised by what was refused
(``summary.rejection_summary``) and cites the turn and the proposal it answers (the
preceding assistant message, ``answers_entry``), which its detail quotes. A rejection
less sure than the promotion threshold (``review_below``: the home's ``[maintenance]
promote_min_confidence``, below which maintenance never makes a rejection a rule),
whether the rules or the classifier found it, lands with the status ``proposed``: it
waits in the console's review instead of being served. A rejection or decision that only
the classifier found is served only from ``ALONE_ACTIVE`` up (its precision out of fold
is printed by ``bench/train_classifier.py``); below that it waits in review too. A
rule's entry the classifier confirms takes the higher confidence; one it neither
confirms nor vetoes keeps the rule's. Where the rules read nothing at all, a task, lesson,
preference or discovery the classifier is very sure of (``OTHER_SURE``) is recorded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from memtui.extract.asked import answers_only, pick
from memtui.extract.candidates import EpisodeCandidate, Extraction, PreparedTurn, StateCandidate
from memtui.extract.classify.combine import (
    Outcome,
    acknowledges,
    asks_first,
    busy,
    combine,
    undecided,
    unhurried,
)
from memtui.extract.classify.features import context_of, proposes, worth_embedding
from memtui.extract.classify.head import Classifier, Verdict
from memtui.extract.classify.summary import decision_summary, rejection_summary
from memtui.search.encoders.embedder import EmbeddingUnavailable
from memtui.text import clean, domain_of, shorten

log = logging.getLogger(__name__)

ALONE_ACTIVE = 0.9
"""What only the classifier read is served (active) from this confidence up."""
OTHER_SURE = 0.95
"""A task, lesson, preference or discovery in words the rules read nothing in is recorded
from this confidence up (out of fold on the non-held-out corpus, ``bench/
train_classifier.py`` prints how often each is right: 307 of 318)."""
CORRECTION_SURE = 0.8
"""A correction of what the agent said is kept from this confidence up: a context note,
not a rule, so a fact read as one costs little and a correction lost is the mistake made
again. Out of fold on a quarter of the non-held-out corpus (sets 1-20, fold 1; 230
corrections), of the turns the rules read nothing in: at 0.95, 29 of 30 right (13% of
the corrections); at 0.8, 67 of 76 (29%), the rest mostly facts ("it's one. the second
reviewer retired in 2022") and one none-turn."""
OTHERS = {"task": "task", "learning": "learning", "discovery": "discovery",
          "preference": "context", "correction": "context"}
"""The classifier's other labels it records, and the category each is stored as (a
preference is context, labelled as the rules label it; so is a correction of what the
agent just said, "Correction: ..." quoting the words it corrects)."""


def readable(pt: PreparedTurn) -> bool:
    """The person's own prose, short enough to be a reply: what the classifier reads."""
    return (pt.role == "user" and pt.turn.author == "person" and not pt.results
            and pt.turn.kind != "compaction" and worth_embedding(clean(pt.text)))


def read(classifier: Classifier, turns: Sequence[PreparedTurn]) -> dict[str, Verdict]:
    """Verdicts of the readable turns, embedded in one batch."""
    chosen = [pt for pt in turns if readable(pt)]
    verdicts = classifier.verdicts([(pt.answering, clean(pt.text)) for pt in chosen])
    return {pt.id: v for pt, v in zip(chosen, verdicts, strict=True)}


def asks(text: str) -> bool:
    """Whether the (cleaned) turn is a question: it ends with a question mark."""
    return text.rstrip().endswith("?")


def decides_nothing(text: str, answering: str) -> bool:
    """Whether the classifier alone may read no refusal or decision in the (cleaned) turn:
    it answers a question of fact, status or clarification (``asked.answers_only``) or
    says the person has not decided (``combine.undecided``), only acknowledges what they
    heard (``combine.acknowledges``), is busy and will answer soon (``combine.busy``),
    says there is no hurry (``combine.unhurried``) or asks before it answers
    (``combine.asks_first``).
    The bench's reading calls this too, so the thresholds are fitted as the extractor
    reads."""
    return (answers_only(answering) or undecided(text) or acknowledges(text) or busy(text)
            or unhurried(text) or asks_first(text))


def picks(text: str, answering: str) -> bool:
    """Whether the turn picks from choices the agent's words spelled out ("n" to "(y/n)",
    "3 - staging first" to "1. Yes 2. … 3. No"): the rules' reading of it (``asked.pick``)
    stands, the classifier neither vetoes nor replaces it. Out of fold (sets 1-15), of the
    70 such picks the combination changed one, "n, I'll look at it and push myself" to
    "Commit the merge and push? (y/n)", into an approval."""
    return pick(text, answering) is not None


def extract_with(extract_turn: Callable[[PreparedTurn, Extraction], None],
                 classifier: Classifier, turns: Sequence[PreparedTurn],
                 review_below: float) -> Extraction:
    """The rules' reading of the turns (``extract_turn``), refined by the classifier's.

    Without the model or the head file the rules' reading stands alone (logged once per
    batch): extraction never fails for want of the classifier.
    """
    try:
        verdicts = read(classifier, turns)
        thresholds = classifier.thresholds()
    except (EmbeddingUnavailable, OSError, ValueError) as exc:
        log.warning("the extraction classifier is unavailable, rules only: %s", exc)
        verdicts, thresholds = {}, {}
    out = Extraction(read=set(verdicts))
    for pt in turns:
        verdict = verdicts.get(pt.id)
        if verdict is None:
            extract_turn(pt, out)
            continue
        one = Extraction()
        extract_turn(pt, one)
        refine(pt, one, verdict, thresholds, review_below)
        if not one.state and not one.facts:
            add_other(pt, one, verdict)
        out.extend(one)
    return out


def refine(pt: PreparedTurn, one: Extraction, verdict: Verdict,
           thresholds: dict[str, float], review_below: float) -> None:
    """Edit the rules' candidates of one turn by the combined reading; a rejection less
    sure than ``review_below`` is proposed, not active."""
    rule, rule_conf = None, 0.0
    for category in ("rejected", "decision"):
        confs = [s.confidence for s in one.state if s.category == category]
        if confs:
            rule, rule_conf = category, max(confs)
            break
    text = clean(pt.text)
    question = asks(text)
    offered = proposes(pt.answering)
    if rule is not None and picks(pt.text, pt.answering):
        outcome = Outcome(rule, rule_conf, "rules")
    else:
        outcome = combine(rule, rule_conf, verdict, thresholds, offered, question,
                          bool(pt.previous_assistant), decides_nothing(text, pt.answering))
    if outcome.label == "task":
        # the rules' prohibition scopes an instruction ("fix the lint, don't touch the
        # logic"): kept with the work it limits, not made a rule for good
        scoped = [s for s in one.state if s.category == "rejected"]
        _drop(one, {"rejected"})
        for s in scoped:
            s.category, s.summary = "task", shorten(s.detail or s.summary)
            s.detail, s.domain, s.answers_entry = "", domain_of(s.summary), None
        one.state.extend(scoped)
        return
    if outcome.label != rule:
        _drop(one, {"rejected", "decision"})  # a veto, or the other reading won
    if outcome.label is None:
        return
    if outcome.label == rule:  # the rules' entries stand, as sure as the reading says
        unsure = outcome.label == "rejected" and outcome.confidence < review_below
        for s in one.state:
            if s.category == rule:
                s.confidence = round(outcome.confidence, 3)
                s.status = "proposed" if unsure else "active"
        return
    # What only the classifier read is served only when it is very sure (how often each
    # band is right out of fold: bench/train_classifier.py); an active rejection becomes
    # a critical rule overnight. The rest waits in review, and so does a question that
    # objects ("why would we pay for that?"): rare beside the many that only ask, and a
    # refusal of an offer no words of the agent's show (an instruction after a report
    # reads much like one).
    sure = (outcome.confidence >= max(review_below, ALONE_ACTIVE) and not question
            and (offered or outcome.label == "decision"))
    status = "active" if sure else "proposed"
    ask = context_of(pt.answering)
    if outcome.label == "rejected":
        summary, kind = rejection_summary(text, pt.answering), "rejection"
    else:
        summary, kind = decision_summary(text, pt.answering), "decision"
    detail = shorten(f"{text} (re: {ask})" if ask else text, 1000)
    # Read against the preceding turn, it cites that message too: the one its detail quotes.
    answers = pt.answering_id if ask else None
    one.state.append(StateCandidate(
        category=outcome.label, summary=summary, detail=detail, source_entry=pt.id,
        domain=domain_of(summary), confidence=round(outcome.confidence, 3), at=pt.at,
        session=pt.turn.session, status=status, answers_entry=answers))
    one.episodes.append(EpisodeCandidate(kind=kind, summary=summary, detail=detail,
                                         source_entry=pt.id, at=pt.at, session=pt.turn.session,
                                         answers_entry=answers))


def other_category(verdict: Verdict, replying: bool = True) -> str | None:
    """The category a task, lesson, preference, discovery or correction the classifier is
    very sure of is recorded as (where nothing else is recorded from the turn), else None.
    ``replying``: an agent's turn precedes it; with none, there is nothing to correct."""
    if verdict.label == "correction" and not replying:
        return None
    sure = CORRECTION_SURE if verdict.label == "correction" else OTHER_SURE
    return OTHERS.get(verdict.label) if verdict.probability >= sure else None


def add_other(pt: PreparedTurn, one: Extraction, verdict: Verdict) -> None:
    """Where nothing else is recorded from the turn: a task, lesson, preference, discovery
    or correction the classifier is very sure of ("oh so the invoices bounced because the
    VAT id had a space in it" is a discovery no phrase rule names; "it's pin 7, I moved it
    last month" after "The pump relay is on pin 8 as before" puts the agent right, and is
    lost with the session unless it is kept). A correction quotes what it corrects and
    cites that message too."""
    category = other_category(verdict, bool(pt.previous_assistant))
    if category is None:
        return
    words = clean(pt.text)
    text = shorten(words)
    summary = {"preference": f"Preference: {text}",
               "correction": f"Correction: {text}"}.get(verdict.label, text)
    detail, cites = "", None
    if verdict.label == "correction":
        said = context_of(pt.previous_assistant)
        detail = shorten(f"{words} (re: {said})", 1000) if said else ""
        cites = pt.previous_assistant_id if said else None
    one.state.append(StateCandidate(
        category=category, summary=summary, detail=detail, source_entry=pt.id,
        domain=domain_of(summary), confidence=round(verdict.probability, 3), at=pt.at,
        session=pt.turn.session, answers_entry=cites))


def _drop(one: Extraction, categories: set[str]) -> None:
    kinds = {"rejected": "rejection", "decision": "decision"}
    one.state[:] = [s for s in one.state if s.category not in categories]
    one.episodes[:] = [e for e in one.episodes if e.kind not in {kinds[c] for c in categories}]
