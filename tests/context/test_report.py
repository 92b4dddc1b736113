"""The /context report on the sample transcripts: exact usage, estimates, files, thresholds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memtui.context.accounting import window_for
from memtui.context.bootstrap import truncate_file
from memtui.context.report import context_report, short
from memtui.errors import NotFound
from memtui.home import Home
from memtui.text import estimate_tokens
from tests.conftest import run_cli
from tests.context.conftest import (
    CC_SAMPLE,
    OPS_COMPACTED,
    OPS_PLAIN,
    SHORT,
    SUBAGENT,
    configure,
    lines,
    register,
)


def last_openclaw_usage(path: Path) -> int:
    usages = [e["message"]["usage"] for e in lines(path)
              if e.get("type") == "message" and e["message"].get("usage")]
    u = usages[-1]
    return u["input"] + u["cacheRead"] + u["cacheWrite"] + u["output"]


def last_claude_usage(path: Path) -> tuple[int, str]:
    found = [e["message"] for e in lines(path)
             if e.get("type") == "assistant" and e["message"].get("usage")]
    m = found[-1]
    u = m["usage"]
    return (u["input_tokens"] + u.get("cache_read_input_tokens", 0)
            + u.get("cache_creation_input_tokens", 0) + u["output_tokens"]), m["model"]


def test_openclaw_session_is_exact_up_to_the_last_usage_and_estimated_after(
        ops_home: Home) -> None:
    report = context_report(ops_home, "ops", OPS_PLAIN)
    assert report.model == "claude-sonnet-4-5" and report.window == 200_000
    assert report.exact_tokens == last_openclaw_usage(OPS_PLAIN)
    # Whatever follows the last reported usage is estimated, and marked so.
    assert report.used == report.exact_tokens + report.estimated_tokens
    assert report.exact == (report.estimated_tokens == 0)
    assert report.flush_at == 200_000 - 20_000 - 4_000
    assert report.compact_at == 180_000
    kinds = dict(report.by_kind)
    assert kinds["tool results"] > 0 and kinds["user"] > 0 and kinds["system prompt"] > 0
    assert report.top == sorted(report.top, key=lambda i: -i.tokens)
    assert report.status_line().startswith(f"Context {'' if report.exact else '~'}"
                                           f"{short(report.used)}/200k (")


def test_the_newest_transcript_is_the_default_session(ops_home: Home) -> None:
    files = sorted((ops_home.root / "transcripts" / "ops").glob("*.jsonl"))
    os.utime(files[0], (1_000, 1_000))
    os.utime(files[1], (2_000, 2_000))
    assert context_report(ops_home, "ops").session == files[1]


def test_a_compaction_drops_the_summarised_region_and_keeps_its_summary(
        ops_home: Home) -> None:
    entries = lines(OPS_COMPACTED)
    [compaction] = [e for e in entries if e["type"] == "compaction"]
    report = context_report(ops_home, "ops", OPS_COMPACTED)
    assert report.compactions == 1
    kinds = dict(report.by_kind)
    assert kinds["compaction summary"] == estimate_tokens(compaction["summary"].strip())
    ids = [e.get("id") for e in entries]
    kept = ids.index(compaction["firstKeptEntryId"])
    # Nothing from before the kept region is in the window.
    detail = {k: items for k, items in report.detail}
    before = {e["id"] for e in entries[1:kept] if e["type"] == "message"}
    assert report.messages == len([e for e in entries[kept:] if e["type"] == "message"
                                   and e["message"]["role"] != "custom"]) + 1
    assert "compaction summary" in detail and before


@pytest.mark.parametrize("path", [SUBAGENT, SHORT, CC_SAMPLE])
def test_claude_code_usage_is_exact(home: Home, path: Path) -> None:
    exact, model = last_claude_usage(path)
    report = context_report(home, "ops", path)
    assert report.format == "claude-code" and report.model == model
    assert report.exact_tokens == exact
    assert report.counted_by.startswith("usage")


def test_window_comes_from_the_model_table_then_the_default(home: Home) -> None:
    cfg = home.settings.context
    assert window_for("claude-sonnet-4-5-20250929", cfg) == 200_000
    assert window_for("openai/gpt-4o-mini", cfg) == 128_000
    assert window_for("some-local-model", cfg) == cfg.window_tokens
    configure(home, '[context]\nwindow_tokens = 32000\nmodel_windows = { "claude-sonnet-4-5" '
                    '= 1000000 }')
    cfg = home.settings.context
    assert window_for("claude-sonnet-4-5-20250929", cfg) == 1_000_000
    assert window_for("claude-opus-4-5", cfg) == 32_000


def test_workspace_files_ok_truncated_missing(home: Home) -> None:
    ws = home.workspace("ops")
    (ws / "AGENTS.md").write_text("a" * 30_000 + "THE END", encoding="utf-8")
    (ws / "SOUL.md").write_text("Be terse.\n", encoding="utf-8")
    report = context_report(home, "ops", SHORT)
    files = {f.name: f for f in report.files}
    assert files["SOUL.md"].status == "OK" and files["SOUL.md"].injected_chars == 10
    assert files["TOOLS.md"].status == "MISSING" and files["TOOLS.md"].tokens == 0
    agents = files["AGENTS.md"]
    assert agents.status == "TRUNCATED" and agents.raw_chars == 30_007
    injected = truncate_file("AGENTS.md", "a" * 30_000 + "THE END", 20_000)
    assert injected.startswith("a" * 14_000) and injected.endswith("THE END")
    assert "left out" in injected and agents.injected_chars == len(injected)
    assert agents.tokens == estimate_tokens(injected)


def test_tool_schemas_and_skills_are_counted(home: Home) -> None:
    ws = home.workspace("ops")
    (ws / "tools.json").write_text(json.dumps([
        {"name": "exec", "description": "run a command", "input_schema": {"type": "object"}},
        {"name": "browser", "description": "x" * 4000, "input_schema": {"type": "object"}}]))
    skill = ws / "skills" / "deploy" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: deploy\ndescription: Deploy the app\n---\nSteps...\n")
    configure(home, '[context]\ntools_file = "tools.json"')
    report = context_report(home, "ops", SHORT)
    assert [t.name for t in report.tools] == ["exec", "browser"]
    assert report.tools[1].tokens > 1000
    assert [s.name for s in report.skills] == ["deploy"]
    kinds = dict(report.by_kind)
    assert kinds["tool schemas"] == sum(t.tokens for t in report.tools)


def test_group_session_never_injects_memory_md(home: Home) -> None:
    [copy] = register(home, "ops", OPS_PLAIN)
    (copy.parent / "sessions.json").write_text(json.dumps(
        {"agent:ops:telegram:group:-100123": {"sessionId": copy.stem}}))
    report = context_report(home, "ops")
    files = {f.name: f for f in report.files}
    assert report.group and files["MEMORY.md"].status == "EXCLUDED"
    assert files["MEMORY.md"].tokens == 0


def test_an_agent_without_transcripts_is_not_found(home: Home) -> None:
    with pytest.raises(NotFound, match="no transcripts"):
        context_report(home, "main")


def test_cli_status_list_detail_json(ops_home: Home) -> None:
    out = run_cli("context", "status", "--agent", "ops", "--session", str(OPS_PLAIN),
                  home=ops_home)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Context ") and "Flush at 176k" in out.stdout
    data = json.loads(run_cli("context", "json", "--agent", "ops", home=ops_home).stdout)
    assert data["window"] == 200_000 and data["by_kind"]["user"] > 0
    listing = run_cli("context", "list", "--agent", "ops", home=ops_home)
    assert "Injected workspace files" in listing.stdout and "MEMORY.md" in listing.stdout
    detail = run_cli("context", "detail", "--agent", "ops", home=ops_home)
    assert "Top tool results" in detail.stdout
    missing = run_cli("context", "status", "--agent", "main", home=ops_home)
    assert missing.returncode == 2 and "no transcripts" in missing.stderr


def test_a_bad_model_window_names_the_file_and_key(home: Home) -> None:
    from memtui.errors import ConfigError

    configure(home, '[context]\nmodel_windows = { "my-model" = "big" }')
    with pytest.raises(ConfigError, match="context.model_windows: a table of integers"):
        _ = home.settings


def test_a_user_message_written_by_the_harness_counts_as_a_system_message() -> None:
    from memtui.context.accounting import Accountant
    from memtui.transcripts import Turn
    from memtui.transcripts.turn import Author

    def turn(n: int, author: Author) -> Turn:
        return Turn(id=f"t{n}", session="s", timestamp=None, role="user", text="x" * 40,
                    source="f", line=n, offset=0, end_offset=0, format="generic",
                    author=author)

    acct = Accountant()
    acct.feed([turn(1, "person"), turn(2, "machine")])
    assert acct.by_kind() == {"user": 10, "system messages": 10}
