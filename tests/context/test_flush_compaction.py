"""The pre-compaction flush, compaction with its cut point, and the flight recorder."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from memtui.context.compaction import compact_session, flight_recorder
from memtui.context.flush import flush
from memtui.context.region import cut_point
from memtui.context.report import context_report, inspect
from memtui.context.summary import SECTIONS
from memtui.home import Home
from memtui.stores import context_log
from tests.conftest import run_cli
from tests.context import synth
from tests.context.conftest import OPS_COMPACTED, OPS_PLAIN, SUBAGENT, configure, lines, register


@pytest.fixture
def ops(home: Home) -> Path:
    configure(home, "[context]\nkeep_recent_tokens = 1500")
    return register(home, "ops", OPS_PLAIN)[0]


def test_the_cut_keeps_recent_tokens_and_never_lands_on_a_tool_result(
        home: Home, tmp_path: Path) -> None:
    path = synth.write(tmp_path / "s.jsonl", 60_000)
    _, acct = inspect(home, "main", path)
    for keep in (500, 3_000, 20_000, 45_000):
        cut = cut_point(acct, keep)
        assert cut > 0
        item = acct.items[cut]
        assert item.kind in ("user", "assistant", "tool calls", "thinking")
        assert acct.items[cut - 1].turn_id != item.turn_id
        assert sum(i.tokens for i in acct.items[cut:]) >= keep


def test_flush_extracts_the_region_and_proves_it_is_below_the_watermark(
        home: Home, ops: Path) -> None:
    report = flush(home, "ops", ops, force=True)
    assert report.status == "flushed" and report.all_below and report.region
    assert report.watermark is not None
    assert report.extraction["turns_extracted"] > 0
    # What the flush captured came from messages of the region, and each says so.
    region_ids = {m.id for m in report.region}
    for c in [*report.decisions, *report.rejections]:
        assert c.source_entry in region_ids and c.in_memory
        assert any(c.ref in m.captured for m in report.region if m.id == c.source_entry)
    assert report.rejections  # the sample has Dana decline applying migrations early


def test_flush_runs_once_per_compaction_cycle(home: Home, ops: Path) -> None:
    configure(home, "window_tokens = 25000\nmodel_windows = {}")
    assert context_report(home, "ops", ops).used >= context_report(home, "ops", ops).flush_at
    first = flush(home, "ops", ops)
    assert first.status == "flushed"
    again = flush(home, "ops", ops)
    assert again.status == "already-flushed" and "cycle (0)" in again.reason
    db = home.open_db()
    try:
        record = context_log.flush_for_cycle(db, "ops", str(ops), 0)
    finally:
        db.close()
    assert record is not None and record.captured["messages"] == len(first.region)


def test_flush_is_not_due_below_the_threshold_and_skipped_when_read_only(
        home: Home, ops: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert flush(home, "ops", ops).status == "not-due"
    workspace = home.workspace("ops")
    real = os.access
    # Tests run as root here, where chmod cannot make a folder unwritable.
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == workspace
                        else real(p, mode))
    report = flush(home, "ops", ops, force=True)
    assert report.status == "read-only" and str(workspace) in report.reason


def test_compaction_preview_changes_nothing(home: Home, ops: Path) -> None:
    before = hashlib.sha256(ops.read_bytes()).hexdigest()
    result = compact_session(home, ops)
    assert result.status == "preview" and result.tokens_after < result.tokens_before
    assert [line for line in result.summary.splitlines() if line.startswith("## ")] == [
        f"## {s}" for s in SECTIONS]
    assert hashlib.sha256(ops.read_bytes()).hexdigest() == before


def test_apply_on_openclaw_appends_a_compaction_entry_after_a_backup(
        home: Home, ops: Path) -> None:
    original = ops.read_bytes()
    result = compact_session(home, ops, apply=True)
    assert result.status == "applied" and result.backup is not None
    assert result.backup.read_bytes() == original
    assert result.flush is not None and result.flush.status == "flushed"
    assert ops.read_bytes().startswith(original)
    entries = lines(ops)
    entry = entries[-1]
    assert entry["type"] == "compaction" and entry["id"] == result.entry
    assert entry["parentId"] == entries[-2]["id"]
    assert entry["firstKeptEntryId"] == result.first_kept
    assert entry["tokensBefore"] == result.tokens_before
    # Captured decisions reach the summary.
    assert "- Rejected: applying them now so Tuesday's deploy" in entry["summary"]
    assert "Rejected: Rejected:" not in entry["summary"]  # marked once
    after = context_report(home, "ops", ops)
    assert after.compactions == 1 and not after.exact
    records = flight_recorder(home, "ops")
    mine = [r for r in records if r.by == "memtui"]
    assert len(mine) == 1 and mine[0].entry == result.entry and mine[0].applied
    assert mine[0].flushed["status"] == "flushed"
    assert any(i["category"] == "rejected" and i["in_memory"] for i in mine[0].items)


def test_other_formats_get_the_compacted_context_in_a_file(home: Home) -> None:
    configure(home, "[context]\nkeep_recent_tokens = 3000")
    [copy] = register(home, "main", SUBAGENT)
    before = copy.read_bytes()
    result = compact_session(home, copy, apply=True)
    assert result.status == "written" and result.output is not None
    assert copy.read_bytes() == before
    text = result.output.read_text()
    assert "## Goal" in text and "# Kept messages" in text
    assert "not written by memtui" in result.message


def test_the_agents_own_compactions_are_in_the_flight_recorder(home: Home) -> None:
    register(home, "ops", OPS_COMPACTED)
    [compaction] = [e for e in lines(OPS_COMPACTED) if e["type"] == "compaction"]
    records = flight_recorder(home, "ops")
    assert [(r.by, r.entry, r.tokens_before) for r in records] == [
        ("agent", compaction["id"], compaction["tokensBefore"])]
    assert len(flight_recorder(home, "ops")) == 1  # found once, recorded once


def test_cli_flush_and_compact_session(home: Home, ops: Path) -> None:
    out = run_cli("flush", "--agent", "ops", "--force", "--json", home=home)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "flushed" and data["all_below"]
    preview = run_cli("compact-session", str(ops), home=home)
    assert preview.returncode == 0 and "Preview only" in preview.stdout
    applied = run_cli("compact-session", str(ops), "--apply", "--json", home=home)
    assert json.loads(applied.stdout)["status"] == "applied"
    listing = run_cli("context", "compactions", "--agent", "ops", home=home)
    assert "memtui" in listing.stdout and "in memory" in listing.stdout


def test_the_anthropic_summarizer_makes_one_call_with_memory_and_the_region(
        home: Home, ops: Path) -> None:
    import anthropic
    import httpx2

    seen: list[dict[str, object]] = []
    answer = "## Goal\nShip 2.3.\n## Constraints\n- none\n"

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        return httpx2.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": answer}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5}})

    client = anthropic.Anthropic(api_key="test", max_retries=0, http_client=httpx2.Client(
        transport=httpx2.MockTransport(handler)))
    configure(home, 'summarizer = "anthropic"')
    result = compact_session(home, ops, client=client)
    assert result.summary == answer
    [body] = seen
    prompt = body["messages"][0]["content"]  # type: ignore[index]
    assert body["model"] == home.settings.context.summary_model
    assert "2.3 goes out Tuesday" in prompt and "## Critical Context" in prompt


def test_an_older_openclaw_version_gets_a_file_not_an_entry(home: Home, tmp_path: Path) -> None:
    configure(home, "[context]\nkeep_recent_tokens = 1500")
    entries = lines(OPS_PLAIN)
    entries[0]["version"] = 2
    path = tmp_path / "v2.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    [copy] = register(home, "ops", path)
    before = copy.read_bytes()
    result = compact_session(home, copy, apply=True)
    assert result.status == "written" and copy.read_bytes() == before
