"""The capture policy around the extractor, as the stenographer runs it: what it refuses
before (a message of acknowledgements alone is noise, unless it answers an offer) and
what its phrases add after (a hint for review, never over a reader's judgement)."""

from __future__ import annotations

import json
from pathlib import Path

from memtui.extract.candidates import Extraction, PreparedTurn
from memtui.extract.classify.head import Verdict
from memtui.extract.enforce import enforce
from memtui.extract.local import LocalExtractor
from memtui.extract.policy import default_policy
from memtui.extract.prepare import FileContext, Preparation, Preparer
from memtui.transcripts import Turn

ASKED = ("Can you describe exactly what doesn't update when you change the theme? Does the "
         "background not change, or the text colour?")
CORRECTION = "actually, it's the bg color of the tool execution that doesn't change"


def prepare(text: str, previous: str = ASKED, *, after_error: bool = False,
            tid: str = "u1") -> Preparation:
    turn = Turn(id=tid, session="s", timestamp=None, role="user", text=text,
                source="t.jsonl", line=2, offset=0, end_offset=1, format="claude-code",
                author="person")
    ctx = FileContext(previous_assistant=previous, previous_assistant_id="a1",
                      fix_window=1 if after_error else 0)
    return Preparer(default_policy()).prepare(turn, ctx)


def prepared(text: str, previous: str = ASKED, *, after_error: bool = False,
             tid: str = "u1") -> PreparedTurn:
    pt = prepare(text, previous, after_error=after_error, tid=tid).turn
    assert pt is not None
    return pt


def test_a_phrase_hit_no_reader_judged_waits_for_review() -> None:
    """Rules only, or a turn the classifier does not read: the default policy's "actually"
    files the correction as a rejection, but one a person must accept before any agent
    is given it."""
    pt = prepared(CORRECTION)
    assert "correction" in [c.kind for c in pt.captures]
    kept = enforce(default_policy(), Extraction(), [pt])
    assert [(s.category, s.status, s.confidence) for s in kept.state] == [
        ("rejected", "proposed", 0.6)]
    assert kept.state[0].detail.startswith("captured by policy: semantic.corrections")


def test_a_phrase_hit_adds_nothing_to_a_turn_a_reader_judged() -> None:
    """The classifier (or the language model) read the person's words and found no
    refusal: a phrase does not overrule it. On the corpus's non-held-out turns the
    default policy's phrases added 161 rejections behind the classifier's back, 6 right."""
    pt = prepared(CORRECTION)
    kept = enforce(default_policy(), Extraction(read={pt.id}), [pt])
    assert kept.state == [] and kept.read == {pt.id}
    # A decision phrase ("let's") likewise, and a preference ("I like").
    for text in ("ok, let's modify the grays in the dark theme, the dim is too dim",
                 "I like the old colours better, but leave them for now"):
        pt = prepared(text)
        assert pt.captures
        assert enforce(default_policy(), Extraction(read={pt.id}), [pt]).state == []
        assert [s.status for s in enforce(default_policy(), Extraction(), [pt]).state] == [
            "proposed"]


def test_the_reaction_to_a_tool_error_is_an_episode_whoever_read_it() -> None:
    pt = prepared("ugh, it broke the build again", after_error=True)
    kept = enforce(default_policy(), Extraction(read={pt.id}), [pt])
    assert [e.kind for e in kept.episodes] == ["incident"]


def test_the_classifier_marks_what_it_read() -> None:
    from memtui.extract.classify.apply import extract_with

    class Reading:
        def verdicts(self, pairs: list[tuple[str, str]]) -> list[Verdict]:
            return [Verdict("correction", 0.9, 0.05, 0.02) for _ in pairs]

        def thresholds(self) -> dict[str, float]:
            return {"rejected": 0.6, "veto": 0.15, "decision": 0.6}

    pt = prepared(CORRECTION)
    long = prepared("actually, it's the bg color. " + "the panel keeps its old shade. " * 20,
                    tid="u2")
    out = extract_with(LocalExtractor().extract_turn, Reading(),  # type: ignore[arg-type]
                       [pt, long], 0.7)
    assert out.read == {pt.id}  # over 80 words: the classifier does not read it
    kept = enforce(default_policy(), out, [pt, long])
    assert [(s.source_entry, s.status) for s in kept.state if s.category == "rejected"] == [
        (long.id, "proposed")]


def test_an_acknowledgement_is_noise_unless_it_answers_an_offer() -> None:
    """"ok" or "perfect" alone settles "Shall I …?"; after a report it says nothing. The
    noise section refused both, and the corpus lost 23 approvals to it."""
    for text in ("ok", "perfect, thanks", "great 👍"):
        after_report = prepare(text, "Done: the tests pass and the branch is pushed.")
        assert after_report.turn is None
        assert after_report.skipped == "text refused by policy (ui_noise)"
        answer = prepare(text, "I can add Redis as a cache for the funnel queries. Shall I?")
        assert answer.turn is not None and answer.turn.text == text
    # a question mark inside a quoted title asks nothing
    quoted = prepare("perfect, thanks",
                     'Scheduled: "Where do your users drop off? Funnels in Lumen" goes out '
                     "Tuesday at 09:00 CET.")
    assert quoted.turn is None


def test_an_approval_that_answers_an_offer_is_recorded_through_the_pipeline() -> None:
    pt = prepared("ok", "I can add Redis as a cache for the funnel queries. Shall I?")
    kept = enforce(default_policy(), LocalExtractor().extract([pt]), [pt])
    assert [s.category for s in kept.state] == ["decision"]


def test_policy_test_says_what_waits_for_review(tmp_path: Path) -> None:
    """`memtui policy test` (rules only) shows a phrase hit as a proposal, not as memory."""
    from memtui.extract.explain import explain

    path = tmp_path / "t.jsonl"
    lines = [{"type": "message", "id": "a1", "session": "s", "role": "assistant",
              "ts": "2026-03-01T10:00:00Z", "content": ASKED},
             {"type": "message", "id": "u1", "session": "s", "role": "user",
              "ts": "2026-03-01T10:01:00Z", "content": CORRECTION}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    [_, said] = explain(str(path), default_policy(), LocalExtractor(), fmt="generic")
    assert said.state == [f"state/rejected [general]: {CORRECTION} (waits for review)"]
