"""The heartbeat: skips, the decision, deliveries (a real script, the SDK over a mocked
transport), OK / NO_REPLY suppression, de-duplicated alerts and the cost log."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtui.context import replies
from memtui.context.heartbeat import (
    effectively_empty,
    heartbeat_costs,
    run_heartbeat,
    within_active_hours,
)
from memtui.home import Home
from memtui.stores import jobs
from memtui.stores import state as state_store
from tests.conftest import run_cli
from tests.context.conftest import configure

NOON = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
CHECKLIST = "# Heartbeat\n\n- check disk usage on lumen-prod-1\n"


@pytest.fixture
def hb(home: Home) -> Home:
    (home.workspace("main") / "HEARTBEAT.md").write_text(CHECKLIST)
    return home


def reply_script(tmp_path: Path, text: str) -> str:
    """A small agent CLI: saves the prompt it was piped, answers ``text``."""
    script = tmp_path / "agent.py"
    script.write_text("import sys, pathlib\n"
                      f"pathlib.Path({str(tmp_path / 'prompt.txt')!r}).write_text("
                      "sys.stdin.read())\n"
                      f"sys.stdout.write({text!r})\n")
    return f"{sys.executable} {script}"


def api(text: str, seen: list[dict[str, Any]]) -> anthropic.Anthropic:
    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        return httpx2.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 900, "output_tokens": 12,
                      "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0}})
    return anthropic.Anthropic(api_key="test", max_retries=0, http_client=httpx2.Client(
        transport=httpx2.MockTransport(handler)))


@pytest.mark.parametrize("text,empty", [
    ("", True), ("# Heartbeat\n\n## Checks\n- \n* [ ]\n<!-- later -->\n", True),
    ("# Heartbeat\n- check disk\n", False), ("check the queue", False)])
def test_effectively_empty(text: str, empty: bool) -> None:
    assert effectively_empty(text) is empty


def test_active_hours_wrap_midnight_and_use_the_zone() -> None:
    assert within_active_hours("08:00-22:00", "UTC", NOON)
    assert not within_active_hours("08:00-11:00", "UTC", NOON)
    assert within_active_hours("22:00-13:30", "Europe/Berlin", NOON)  # 13:00 Berlin
    assert not within_active_hours("22:00-12:30", "Europe/Berlin", NOON)
    assert within_active_hours("", "UTC", NOON)


def test_skipped_when_empty_or_outside_hours_and_logged(home: Home) -> None:
    (home.workspace("main") / "HEARTBEAT.md").write_text("# Heartbeat\n\n- \n")
    result = run_heartbeat(home, "main", now=NOON)
    assert result.outcome == "skipped" and "empty" in result.reason
    (home.workspace("main") / "HEARTBEAT.md").write_text(CHECKLIST)
    night = datetime(2026, 11, 25, 3, 0, tzinfo=UTC)
    assert run_heartbeat(home, "main", now=night).outcome == "skipped"
    db = home.open_db()
    try:
        logged = jobs.recent(db, "heartbeat")
    finally:
        db.close()
    assert [j.status for j in logged] == ["skipped", "skipped"]


def test_dry_run_decides_continue_or_ok(hb: Home) -> None:
    quiet = run_heartbeat(hb, "main", now=NOON)
    assert quiet.outcome == "dry-run" and quiet.decision == replies.HEARTBEAT_OK
    assert "check disk usage" in quiet.prompt and quiet.cost_usd == 0
    db = hb.open_db()
    try:
        state_store.add(db, state_store.NewState("main", "task", "Rebuild the events index"),
                        actor="test")
    finally:
        db.close()
    busy = run_heartbeat(hb, "main", now=NOON)
    assert busy.decision == "continue task: Rebuild the events index"
    assert "Open task: Rebuild the events index" in busy.prompt


def test_command_delivery_pipes_the_prompt_and_suppresses_ok(hb: Home, tmp_path: Path) -> None:
    configure(hb, f"[heartbeat]\ncommand = {json.dumps(reply_script(tmp_path, 'HEARTBEAT_OK'))}")
    result = run_heartbeat(hb, "main", "command", now=NOON)
    assert result.outcome == "ok" and result.shown is None
    assert (tmp_path / "prompt.txt").read_text() == result.prompt
    assert result.tokens_out > 0 and result.cost_usd > 0


def test_no_reply_is_suppressed_only_at_the_start(hb: Home, tmp_path: Path) -> None:
    configure(hb, f"[heartbeat]\ncommand = {json.dumps(reply_script(tmp_path, 'NO_REPLY'))}")
    assert run_heartbeat(hb, "main", "command", now=NOON).outcome == "no-reply"
    assert replies.is_no_reply("**NO_REPLY** nothing to add")
    assert not replies.is_no_reply("The disk is at 91%. NO_REPLY was not an option.")


def test_alerts_are_shown_once_a_day(hb: Home, tmp_path: Path) -> None:
    text = "Disk on lumen-prod-1 is at 91% (checked 12:00)."
    configure(hb, f"[heartbeat]\ncommand = {json.dumps(reply_script(tmp_path, text))}")
    first = run_heartbeat(hb, "main", "command", now=NOON)
    assert first.outcome == "alert" and first.shown == text
    second = run_heartbeat(hb, "main", "command", now=NOON)
    assert second.outcome == "duplicate" and second.shown is None


def test_anthropic_delivery_makes_one_call_with_exact_tokens(hb: Home) -> None:
    seen: list[dict[str, Any]] = []
    result = run_heartbeat(hb, "main", "anthropic", now=NOON,
                           client=api("All checks pass. HEARTBEAT_OK", seen))
    assert result.outcome == "ok" and result.exact_tokens
    assert (result.tokens_in, result.tokens_out) == (1000, 12)
    [body] = seen
    assert body["model"] == "claude-haiku-4-5" and "check disk usage" in \
        body["messages"][0]["content"]
    assert result.cost_usd == pytest.approx((1000 * 1.0 + 12 * 5.0) / 1e6)
    [day] = heartbeat_costs(hb, "main")
    assert day.runs == 1 and day.tokens == 1012


def test_a_failed_delivery_is_logged_as_failed(hb: Home) -> None:
    configure(hb, "[heartbeat]\ncommand = \"exit 3\"")
    result = run_heartbeat(hb, "main", "command", now=NOON)
    assert result.outcome == "failed" and "exited 3" in result.reason


@given(st.text(max_size=400), st.booleans())
def test_ok_token_at_either_end_with_a_short_rest(rest: str, at_start: bool) -> None:
    reply = f"HEARTBEAT_OK {rest}" if at_start else f"{rest} HEARTBEAT_OK"
    ok, left = replies.strip_ok(reply, 300)
    assert ok == (len(left) <= 300)
    if len(rest.strip()) <= 250 and "HEARTBEAT_OK" not in rest:
        assert ok


def test_ok_in_the_middle_of_a_long_report_is_an_alert() -> None:
    text = "x" * 200 + " HEARTBEAT_OK " + "y" * 200
    assert replies.strip_ok(text, 300) == (False, text)


def test_cli_heartbeat(hb: Home) -> None:
    configure(hb, '[heartbeat]\nactive_hours = ""')
    out = run_cli("heartbeat", "--agent", "main", home=hb)
    assert out.returncode == 0, out.stderr
    assert "dry-run" in out.stdout and "check disk usage" in out.stdout
    costs = run_cli("heartbeat", "--agent", "main", "--costs", "--json", home=hb)
    assert json.loads(costs.stdout)[0]["runs"] == 1
