"""What the classifier's reading does to the rules' entries: which wait for review."""

from __future__ import annotations

from memtui.extract.candidates import Extraction, PreparedTurn
from memtui.extract.choose import make_extractor
from memtui.extract.classify.apply import ALONE_ACTIVE, refine
from memtui.extract.classify.head import Verdict
from memtui.extract.local import LocalExtractor
from memtui.home import Home
from memtui.transcripts import Turn

TH = {"rejected": 0.6, "veto": 0.15, "decision": 0.6}
ASK = "I can add Redis as a cache for the funnel queries. Should I set it up?"


def said(text: str, previous: str = ASK, tid: str = "u2") -> PreparedTurn:
    turn = Turn(id=tid, session="s", timestamp=None, role="user", text=text, source="t.jsonl",
                line=2, offset=0, end_offset=1, format="claude-code", author="person")
    return PreparedTurn(turn=turn, text=text, previous_assistant=previous)


def rejections_after(pt: PreparedTurn, verdict: Verdict, review_below: float) -> list[str]:
    one = Extraction()
    LocalExtractor().extract_turn(pt, one)
    refine(pt, one, verdict, TH, review_below)
    return [s.status for s in one.state if s.category == "rejected"]


def read_as(pt: PreparedTurn, verdict: Verdict,
            thresholds: dict[str, float] = TH) -> list[tuple[str, str]]:
    """The rejections and decisions of one turn, and their status, after ``refine``."""
    one = Extraction()
    LocalExtractor().extract_turn(pt, one)
    refine(pt, one, verdict, thresholds, 0.7)
    return [(s.category, s.status) for s in one.state if s.category in ("rejected", "decision")]


def with_threshold(home: Home, value: float) -> Home:
    with home.config_path.open("a") as fh:  # as a person sets it, in the home's memtui.toml
        fh.write(f"\n[maintenance]\npromote_min_confidence = {value}\n")
    return Home(home.root)


def test_the_review_cutoff_is_the_homes_promotion_threshold(home: Home) -> None:
    # "No." to a proposal: the rules are unsure (0.55), the classifier agrees at 0.62.
    pt, verdict = said("No."), Verdict("rejected", 0.62, 0.62, 0.01)
    default = make_extractor(home, "local")
    assert isinstance(default, LocalExtractor) and default.review_below == 0.7
    assert rejections_after(pt, verdict, default.review_below) == ["proposed"]
    lenient = make_extractor(with_threshold(home, 0.6), "local")
    assert isinstance(lenient, LocalExtractor) and lenient.review_below == 0.6
    assert rejections_after(pt, verdict, lenient.review_below) == ["active"]


def test_a_strict_home_sends_even_sure_rejections_to_review(home: Home) -> None:
    default = make_extractor(home, "local")
    strict = make_extractor(with_threshold(home, 0.95), "local")
    assert isinstance(default, LocalExtractor) and isinstance(strict, LocalExtractor)
    # A clear rejection the classifier confirms at 0.9 waits too under a strict home.
    sure = Verdict("rejected", 0.9, 0.9, 0.01)
    assert rejections_after(said("Don't add Redis to the stack."), sure,
                            strict.review_below) == ["proposed"]
    assert rejections_after(said("Don't add Redis to the stack."), sure,
                            default.review_below) == ["active"]


def test_what_only_the_classifier_read_is_served_only_when_very_sure() -> None:
    """A refusal no phrase rule knows: at 0.8 it waits for a person, at 0.95 it is served;
    a strict home's threshold above ``ALONE_ACTIVE`` still wins."""
    pt = said("that's a hard pass from me")

    def read_at(p: float, review_below: float = 0.7) -> list[tuple[str, str]]:
        one = Extraction()
        LocalExtractor().extract_turn(pt, one)
        assert not [s for s in one.state if s.category == "rejected"]  # the rules miss it
        refine(pt, one, Verdict("rejected", p, p, 0.01), TH, review_below)
        return [(s.category, s.status) for s in one.state]

    assert ALONE_ACTIVE == 0.9
    assert read_at(0.8) == [("rejected", "proposed")]
    assert read_at(0.95) == [("rejected", "active")]
    assert read_at(0.95, review_below=0.97) == [("rejected", "proposed")]


def test_a_refusal_of_no_visible_offer_is_never_served() -> None:
    """"email no, ppl dont read them" after "thx for the report" refuses an offer made
    earlier or only implied; however sure the head is, a refusal the classifier alone
    reads after a turn that offers nothing waits in review (an instruction after a report
    reads much like one). A decision there is served as any."""
    pt = said("email no, ppl dont read them", previous="thx for the report")
    th = {**TH, "unoffered": 0.6}
    assert read_as(pt, Verdict("rejected", 0.98, 0.98, 0.01), th) == [("rejected", "proposed")]
    assert read_as(pt, Verdict("decision", 0.98, 0.01, 0.98), th) == [("decision", "active")]
    assert read_as(pt, Verdict("rejected", 0.5, 0.5, 0.01), th) == []


def test_a_question_the_classifier_alone_reads_is_never_served() -> None:
    """'why are there two handlers?' is asked, not refused: however sure the head is, it
    waits in review; a question is never filed as a decision."""
    pt = said("why are there two subscription handlers?")
    assert read_as(pt, Verdict("rejected", 0.98, 0.98, 0.01)) == [("rejected", "proposed")]
    assert read_as(pt, Verdict("decision", 0.98, 0.01, 0.98)) == []


class Reading:
    """A classifier that reads every turn as ``verdict`` (the model is tested elsewhere)."""

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict

    def verdicts(self, pairs: list[tuple[str, str]]) -> list[Verdict]:
        return [self.verdict for _ in pairs]

    def thresholds(self) -> dict[str, float]:
        return TH


def recorded(text: str, verdict: Verdict) -> list[tuple[str, str, float]]:
    from memtui.extract.classify.apply import extract_with

    out = extract_with(LocalExtractor().extract_turn, Reading(verdict),  # type: ignore[arg-type]
                       [said(text, previous="Report sent.")], 0.7)
    return [(s.category, s.summary, s.confidence) for s in out.state]


def test_a_lesson_task_preference_or_discovery_the_rules_miss_is_recorded_when_sure() -> None:
    """Where the rules read nothing, the classifier's very sure reading of the other
    labels is recorded, citing the turn; below ``OTHER_SURE``, or where the rules read
    something, nothing is added."""
    from memtui.extract.classify.apply import OTHER_SURE

    lesson = "the sla clock keeps ticking while a ticket waits on the customer"
    assert recorded(lesson, Verdict("learning", 0.97, 0.01, 0.01)) == [
        ("learning", lesson, 0.97)]
    assert recorded(lesson, Verdict("learning", OTHER_SURE - 0.01, 0.01, 0.01)) == []
    assert recorded(lesson, Verdict("fact", 0.99, 0.01, 0.01)) == []  # no key, no value
    liked = "bullet points work for me, long paragraphs lose me"
    assert recorded(liked, Verdict("preference", 0.96, 0.01, 0.01)) == [
        ("context", f"Preference: {liked}", 0.96)]
    # the rules read a task here: the classifier adds nothing beside it
    assert [c for c, _, _ in recorded("please draft the reply to the landlord",
                                      Verdict("learning", 0.99, 0.01, 0.01))] == ["task"]


def test_a_correction_of_what_the_agent_said_is_kept_quoting_what_it_corrects() -> None:
    """A correction the classifier is very sure of is recorded as context ("Correction:
    ..."), its detail quoting the agent's words it puts right and citing that message; at
    the start of a session there is nothing to correct, and below ``CORRECTION_SURE``, or
    with the policy's corrections switched off, nothing is kept."""
    from dataclasses import replace

    from memtui.extract.classify.apply import CORRECTION_SURE, extract_with
    from memtui.extract.enforce import enforce
    from memtui.extract.policy import default_policy

    agent = "Added a 10-sample average. The pump relay is on pin 8 as before."
    fix = "it's pin 7, I moved it last month when 8 died"
    sure = Verdict("correction", 0.97, 0.01, 0.01)
    pt = replace(said(fix, previous=agent), previous_assistant_id="a1")
    out = extract_with(LocalExtractor().extract_turn, Reading(sure),  # type: ignore[arg-type]
                       [pt], 0.7)
    [entry] = out.state
    assert (entry.category, entry.summary, entry.confidence) == (
        "context", f"Correction: {fix}", 0.97)
    assert entry.detail == f"{fix} (re: {agent})"
    assert (entry.source_entry, entry.answers_entry) == ("u2", "a1")
    unsure = Verdict("correction", CORRECTION_SURE - 0.01, 0.01, 0.01)
    assert extract_with(LocalExtractor().extract_turn, Reading(unsure),  # type: ignore[arg-type]
                        [said(fix, previous=agent)], 0.7).state == []
    opening = extract_with(LocalExtractor().extract_turn, Reading(sure),  # type: ignore[arg-type]
                           [said(fix, previous="")], 0.7)
    assert opening.state == []
    policy = default_policy()
    kept = enforce(policy, out, [pt])
    assert [s.summary for s in kept.state] == [f"Correction: {fix}"]
    off = replace(policy, sections=tuple(s for s in policy.sections if s.kind != "correction"))
    assert enforce(off, out, [pt]).state == []
