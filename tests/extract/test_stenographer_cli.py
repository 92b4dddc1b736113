"""The stenographer's commands as users run them: extract, policy test, sources discover."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from memtui.home import Home
from tests.conftest import run_cli

REPO = Path(__file__).resolve().parents[2]
SHORT = REPO.parent / "shared" / "samples" / "transcripts" / "claude-code" / "short.jsonl"


def test_extract_prints_a_summary_then_nothing_new(home: Home) -> None:
    assert run_cli("sources", "add", str(SHORT), home=home).returncode == 0
    dry = run_cli("extract", "--dry-run", home=home)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("Would extract 5 of 5 new turns from 1 file(s)")
    first = run_cli("extract", home=home)
    assert first.returncode == 0, first.stderr
    assert "Extracted 5 of 5 new turns" in first.stdout
    assert "2 rejected" in first.stdout and "1 task" in first.stdout
    assert "progress lines" in first.stdout  # what was skipped, and why
    assert "text refused by policy (self_narration)" in first.stdout
    assert "daily log" in first.stdout
    again = run_cli("extract", "--json", home=home)
    data = json.loads(again.stdout)
    assert data["turns_read"] == 0 and data["files"] == {"unchanged": 1}


def test_extract_llm_without_a_key_is_an_error(home: Home) -> None:
    result = run_cli("extract", "--extractor", "llm", home=home,
                     env={"ANTHROPIC_API_KEY": ""})
    assert result.returncode == 1 and "ANTHROPIC_API_KEY" in result.stderr


def test_extract_unknown_source_names_the_fix(home: Home) -> None:
    result = run_cli("extract", "--source", "/nope/x.jsonl", home=home)
    assert result.returncode == 2 and "memtui sources add" in result.stderr


def test_policy_test_shows_each_turn(home: Home) -> None:
    result = run_cli("policy", "test", str(SHORT), home=home)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "REFUSED    forbidden.self_narration" in out
    assert "→ state/rejected [infra]: Refused tool use: Bash: mix phx.server" in out
    assert "→ episode/tool_call: Glob: mix.exs" in out
    assert out.rstrip().endswith("5 turns: 4 capture something, 1 refused")
    as_json = json.loads(run_cli("policy", "test", "--json", str(SHORT), home=home).stdout)
    assert [t["role"] for t in as_json] == ["user", "assistant", "tool", "tool", "user"]


def test_sources_discover_finds_the_default_layouts(home: Home, tmp_path: Path) -> None:
    oc = tmp_path / "oc" / "agents" / "ops" / "sessions"
    cc = tmp_path / "cc" / "projects" / "-home-dana-src"
    oc.mkdir(parents=True)
    cc.mkdir(parents=True)
    shutil.copy(SHORT, cc / "s.jsonl")
    (oc / "a.jsonl").write_text('{"type":"session","version":3,"id":"x","timestamp":"t"}\n')
    args = ("sources", "discover", "--openclaw", str(tmp_path / "oc"), "--claude",
            str(tmp_path / "cc"))
    listed = run_cli(*args, home=home)
    assert listed.returncode == 0, listed.stderr
    assert "found: " in listed.stdout and "run again with --yes" in listed.stdout
    added = run_cli(*args, "--yes", home=home)
    assert "added source 1" in added.stdout and "added source 2" in added.stdout
    sources = json.loads(run_cli("sources", "list", "--json", home=home).stdout)
    assert {(s["source"]["agent"], s["source"]["format"]) for s in sources} == {
        ("ops", "openclaw"), ("main", "claude-code")}
    assert "already a source" in run_cli(*args, home=home).stdout
