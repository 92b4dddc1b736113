"""What the classifier's reading does to the rules' entries: which wait for review."""

from __future__ import annotations

from memtui.extract.candidates import Extraction, PreparedTurn
from memtui.extract.choose import make_extractor
from memtui.extract.classify.apply import refine
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
