"""The Anthropic extractor through the real SDK over a mocked HTTP transport (never the network)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

from memtui.db import Database
from memtui.extract import stenographer as steno
from memtui.extract.candidates import ExtractorError, PreparedTurn
from memtui.extract.llm import INSTRUCTIONS, TOOL_NAME, LLMExtractor
from memtui.home import Home
from memtui.stores import sources
from memtui.transcripts import Turn

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2


def turn(i: int, role: str, text: str) -> PreparedTurn:
    t = Turn(id=f"m{i}", session="s1", timestamp=None, role=role,  # type: ignore[arg-type]
             text=text, source="x.jsonl", line=i, offset=i, end_offset=i + 1, format="generic")
    return PreparedTurn(turn=t, text=text)


def message(tool_input: Any, *, stop: str = "tool_use", name: str = TOOL_NAME) -> dict[str, Any]:
    return {
        "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": tool_input}],
        "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 900,
                  "cache_creation_input_tokens": 0},
    }


def good_answer(body: dict[str, Any]) -> dict[str, Any]:
    """Cite the first message id of the request, whatever the batch."""
    text = body["messages"][0]["content"][0]["text"]
    first = re.search(r"\[(m\d+)\]", text)
    assert first is not None
    mid = first.group(1)
    return message({
        "state": [{"category": "rejected", "summary": "Don't use requests; use httpx.",
                   "domain": "dependencies", "confidence": 0.9, "message_id": mid}],
        "facts": [{"key": "http client", "value": "httpx", "message_id": mid}],
        "episodes": [{"kind": "decision", "summary": "Chose httpx over requests",
                      "message_id": mid}],
    })


class Api:
    """A scripted Messages API: each call pops the next response (or exception)."""

    def __init__(self, script: list[Any]) -> None:
        self.script = script
        self.bodies: list[dict[str, Any]] = []
        self.sleeps: list[float] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(step, Exception):
            raise step
        if callable(step):
            step = step(body)
        if isinstance(step, tuple):
            status, payload, headers = step
            return httpx2.Response(status, json=payload, headers=headers)
        return httpx2.Response(200, json=step)

    def extractor(self, **kw: Any) -> LLMExtractor:
        sleeps = self.sleeps

        class Recording(anthropic.Anthropic):
            """The SDK's own retry delays, recorded instead of slept."""

            def _calculate_retry_timeout(self, *args: Any, **kwargs: Any) -> float:
                sleeps.append(super()._calculate_retry_timeout(*args, **kwargs))
                return 0.0

        client = Recording(api_key="test", http_client=httpx2.Client(
            transport=httpx2.MockTransport(self.handler)))
        return LLMExtractor(client=client, **kw)


def error(status: int, kind: str, headers: dict[str, str] | None = None
          ) -> tuple[int, dict[str, Any], dict[str, str]]:
    return status, {"type": "error", "error": {"type": kind, "message": kind}}, headers or {}


TURNS = [turn(1, "user", f"Don't use requests, we use httpx. Token {SECRET} is in the vault."),
         turn(2, "assistant", "Switching to httpx.")]


def test_a_good_answer_becomes_candidates_and_the_request_is_cached_and_forced() -> None:
    api = Api([good_answer])
    ex = api.extractor()
    out = ex.extract([*TURNS[:1], turn(2, "assistant", "Switching to httpx.")])
    assert [(s.category, s.summary, s.source_entry, s.domain) for s in out.state] == [
        ("rejected", "Don't use requests; use httpx.", "m1", "dependencies")]
    assert [(f.key, f.value) for f in out.facts] == [("http client", "httpx")]
    assert [e.kind for e in out.episodes] == ["decision"]
    [body] = api.bodies
    assert body["model"] == "claude-sonnet-4-6"
    assert body["system"] == [{"type": "text", "text": INSTRUCTIONS,
                               "cache_control": {"type": "ephemeral"}}]
    assert body["tools"][0]["name"] == TOOL_NAME
    assert body["tools"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    assert ex.usage["cache_read_input_tokens"] == 900 and ex.requests == 1
    # The model read the person's words: the policy's phrase hits add nothing to them.
    assert out.read == {"m1"}


def test_secrets_never_reach_the_model_through_the_stenographer(
    home: Home, db: Database, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(
        {"type": "message", "id": t.id, "session": "s1", "ts": "2026-03-01T10:00:00Z",
         "role": t.role, "content": t.text}) + "\n" for t in TURNS))
    sources.add(db, str(path), agent="main", fmt="generic", actor="test")
    api = Api([good_answer])
    report = steno.run(home, db, extractor=api.extractor())
    assert report.turns_extracted == 2 and not report.failed
    sent = json.dumps(api.bodies)
    assert SECRET not in sent and "[REDACTED:github_token]" in sent
    row = db.one("SELECT * FROM state WHERE category = 'rejected'")
    assert row is not None and row["source_entry"] == "m1"


@pytest.mark.parametrize("failure", [
    error(429, "rate_limit_error", {"retry-after": "7"}),
    error(500, "api_error"),
    error(529, "overloaded_error"),
    httpx2.ReadTimeout("timed out"),
])
def test_transient_failures_are_retried_with_backoff(failure: Any) -> None:
    api = Api([failure, failure, good_answer])
    out = api.extractor().extract(TURNS)
    assert len(out.state) == 1 and len(api.bodies) == 3
    assert len(api.sleeps) == 2 and all(s > 0 for s in api.sleeps)
    if isinstance(failure, tuple) and failure[0] == 429:
        assert api.sleeps == [7.0, 7.0]  # retry-after honoured
    else:
        assert api.sleeps[1] > api.sleeps[0] * 0.9  # exponential, with jitter


def test_retries_run_out_and_the_batch_fails() -> None:
    api = Api([error(500, "api_error")])
    with pytest.raises(ExtractorError, match="failed 3 times"):
        api.extractor(max_retries=2).extract(TURNS)
    assert len(api.bodies) == 3


def test_a_client_error_is_not_retried() -> None:
    api = Api([error(401, "authentication_error")])
    with pytest.raises(ExtractorError, match="401"):
        api.extractor().extract(TURNS)
    assert len(api.bodies) == 1 and api.sleeps == []


@pytest.mark.parametrize("answer, complaint", [
    (message({"state": [{"category": "opinion", "summary": "x", "message_id": "m1"}],
              "facts": [], "episodes": []}), "category"),
    (message({"state": [{"category": "task", "summary": "x", "message_id": "m99"}],
              "facts": [], "episodes": []}), "message_id"),
    (message({"state": "nothing", "facts": [], "episodes": []}), "list"),
    (message({"state": [], "facts": [{"key": "", "value": "v", "message_id": "m1"}],
              "episodes": []}), "key"),
    (message({"state": [], "facts": [], "episodes": []}, stop="max_tokens"), "cut off"),
    (message({}, name="other_tool"), "expected one"),
])
def test_invalid_tool_input_rejects_the_batch(answer: dict[str, Any], complaint: str) -> None:
    api = Api([answer])
    with pytest.raises(ExtractorError, match=complaint):
        api.extractor().extract(TURNS)


def test_invalid_output_leaves_the_watermark_and_a_later_run_backfills(
    home: Home, db: Database, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(
        {"type": "message", "id": t.id, "session": "s1", "ts": "2026-03-01T10:00:00Z",
         "role": t.role, "content": t.text}) + "\n" for t in TURNS))
    sources.add(db, str(path), agent="main", fmt="generic", actor="test")
    bad = message({"state": [{"category": "opinion", "summary": "x", "message_id": "m1"}],
                   "facts": [], "episodes": []})
    report = steno.run(home, db, extractor=Api([bad]).extractor())
    assert report.failed and "invalid model output" in report.failed[0].message
    assert db.scalar("SELECT count(*) FROM state") == 0
    assert db.one("SELECT offset, failures FROM source_files") == {"offset": 0, "failures": 1}
    report = steno.run(home, db, extractor=Api([good_answer]).extractor())
    assert report.turns_extracted == 2
    assert db.scalar("SELECT count(*) FROM state") == 1


def test_turns_are_batched_within_the_token_budget() -> None:
    many = [turn(i, "user", f"Please look at item {i}. " + "detail " * 60) for i in range(1, 9)]
    api = Api([good_answer])
    out = api.extractor(batch_tokens=250).extract(many)
    assert len(api.bodies) >= 4
    cited = {s.source_entry for s in out.state}
    assert len(cited) == len(api.bodies)
    for body in api.bodies:
        text = body["messages"][0]["content"][0]["text"]
        assert len(text) / 4 < 250 + 200


def test_turns_without_text_do_not_call_the_model() -> None:
    api = Api([good_answer])
    assert len(api.extractor().extract([turn(1, "assistant", "")])) == 0
    assert api.bodies == []



def answering(proposal: str, reply: str) -> list[PreparedTurn]:
    no = turn(2, "user", reply)
    return [turn(1, "assistant", proposal), dataclasses.replace(
        no, previous_assistant=proposal, previous_assistant_id="m1")]


@pytest.mark.parametrize(("cited", "expected"), [
    ("m1", "m1"),      # the model names the proposal it was shown
    (None, "m1"),      # it says nothing: the reply's own preceding proposal
    ("m2", "m1"),      # it names the reply itself: not a proposal, the structural reading
    ("m99", "m1"),     # it names a message it was never shown: ignored, nothing fails
])
def test_a_rejection_cites_the_proposal_it_answers(cited: str | None, expected: str) -> None:
    item = {"category": "rejected", "summary": "Rejected: signing up for the paid plan",
            "message_id": "m2"}
    episode = {"kind": "decision", "summary": "Stayed on the free plan", "message_id": "m2"}
    if cited:
        item["answers_message_id"] = episode["answers_message_id"] = cited
    api = Api([message({"state": [item, {"category": "task", "summary": "Cancel the trial",
                                          "message_id": "m2", "answers_message_id": "m1"}],
                        "facts": [], "episodes": [episode]})])
    out = api.extractor().extract(answering(
        "Would you like me to sign up for the paid newsletter plan?", "That's a no."))
    assert [(s.category, s.answers_entry) for s in out.state] == [
        ("rejected", expected), ("task", None)]
    assert [(e.kind, e.answers_entry) for e in out.episodes] == [("decision", expected)]


def test_a_rejection_of_nothing_proposed_cites_only_itself() -> None:
    api = Api([message({"state": [{"category": "rejected", "summary": "Never force-push main",
                                   "message_id": "m2"}], "facts": [], "episodes": []})])
    out = api.extractor().extract(answering("Pushed the branch.", "never force-push main"))
    assert [s.answers_entry for s in out.state] == [None]
