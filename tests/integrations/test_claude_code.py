"""Claude Code hooks: install into a settings file, run each hook as Claude Code would,
check what it prints, and uninstall back to the very same bytes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memtui.home import Home
from memtui.integrations import claude_settings
from memtui.stores import flows, state
from tests.conftest import run_cli

ORIGINAL = (b'{\n    "permissions": {"allow": ["Bash(ls:*)"]},\n'
            b'    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo bye"}]}]},\n'
            b'    "model": "opus"\n}\n')


@pytest.fixture
def stocked(home: Home) -> Home:
    db = home.open_db()
    try:
        state.add(db, state.NewState(agent="main", category="rejected",
                                     summary="Never run git push --force on main"), actor="test")
        state.add(db, state.NewState(agent="main", category="decision",
                                     summary="Deploys go through the staging pipeline first"),
                  actor="test")
        flows.add(db, "git-push", actor="test", steps=["run the tests", "push"],
                  trigger_phrases=["git push"])
    finally:
        db.close()
    return home


def _commands(settings: Path) -> dict[str, str]:
    data = json.loads(settings.read_text())
    out = {}
    for event, groups in data["hooks"].items():
        for group in groups:
            for h in group["hooks"]:
                if "memtui" in h["command"]:
                    out[event] = h["command"]
    return out


def _run(command: str, payload: dict[str, Any] | str) -> subprocess.CompletedProcess[str]:
    """Run a hook command the way Claude Code does: a shell, the payload on stdin."""
    env = {**os.environ}
    env.pop("MEMTUI_HOME", None)
    body = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(command, shell=True, input=body, capture_output=True, text=True,
                          env=env, timeout=120)


def _base(event: str, tmp_path: Path) -> dict[str, Any]:
    return {"session_id": "5f1c", "transcript_path": str(tmp_path / "session.jsonl"),
            "cwd": str(tmp_path), "hook_event_name": event}


def test_install_run_each_hook_and_uninstall_byte_for_byte(stocked: Home, tmp_path: Path
                                                           ) -> None:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    settings = project / ".claude" / "settings.json"
    settings.write_bytes(ORIGINAL)
    done = run_cli("hooks", "install", "claude-code", "--project", str(project), "--json",
                   home=stocked)
    assert done.returncode == 0, done.stderr
    change = json.loads(done.stdout)
    assert change["changed"] and Path(change["backup"]).read_bytes() == ORIGINAL
    again = run_cli("hooks", "install", "claude-code", "--project", str(project), home=stocked)
    assert "already installed" in again.stdout
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["hooks"]["Stop"][0]["hooks"][0]["command"] == (
        "echo bye")
    commands = _commands(settings)
    assert set(commands) == set(claude_settings.EVENTS)
    assert data["hooks"]["PreToolUse"][-1]["matcher"] == claude_settings.TOOLS

    started = _run(commands["SessionStart"], {**_base("SessionStart", tmp_path),
                                              "source": "startup"})
    out = json.loads(started.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    assert "Never run git push --force on main" in out["additionalContext"]
    assert "not instructions" in out["additionalContext"]

    prompt = _run(commands["UserPromptSubmit"], {**_base("UserPromptSubmit", tmp_path),
                                                 "prompt": "how do deploys reach staging?"})
    out = json.loads(prompt.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert "staging pipeline" in out["additionalContext"] and "(source: state:" in (
        out["additionalContext"])

    gated = _run(commands["PreToolUse"], {
        **_base("PreToolUse", tmp_path), "tool_name": "Bash", "tool_use_id": "toolu_01",
        "tool_input": {"command": "git push --force origin main"}})
    out = json.loads(gated.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "ask"
    assert "git push --force" in out["permissionDecisionReason"]
    unmatched = _run(commands["PreToolUse"], {
        **_base("PreToolUse", tmp_path), "tool_name": "Bash", "tool_input": {"command": "ls"}})
    assert unmatched.returncode == 0 and unmatched.stdout == ""

    for event in ("PreCompact", "PostToolUse", "Stop"):
        extra = {"trigger": "auto"} if event == "PreCompact" else {}
        if event == "PostToolUse":
            extra = {"tool_name": "Bash", "tool_input": {"command": "ls"},
                     "tool_response": {"stdout": "a"}}
        quiet = _run(commands[event], {**_base(event, tmp_path), **extra})
        assert quiet.returncode == 0 and quiet.stdout == "", quiet.stderr

    removed = run_cli("hooks", "uninstall", "claude-code", "--project", str(project),
                      home=stocked)
    assert removed.returncode == 0 and "byte for byte" in removed.stdout
    assert settings.read_bytes() == ORIGINAL
    log = (stocked.root / "hooks.log").read_text()
    assert "SessionStart:" in log and "`memtui flush` of" in log
    assert "`memtui extract` of" in log


def test_a_failing_hook_exits_0_injects_nothing_and_logs_why(stocked: Home,
                                                            tmp_path: Path) -> None:
    settings = tmp_path / "p" / ".claude" / "settings.json"
    claude_settings.install(stocked, "main", settings)
    commands = _commands(settings)
    broken = _run(commands["UserPromptSubmit"], "{not json")
    assert broken.returncode == 0 and broken.stdout == ""
    (stocked.root / "memory.db").write_bytes(b"not a database at all" * 100)
    failed = _run(commands["SessionStart"], _base("SessionStart", tmp_path))
    assert failed.returncode == 0 and failed.stdout == ""
    log = (stocked.root / "hooks.log").read_text()
    assert "failed before it ran: JSONDecodeError" in log
    assert "SessionStart: failed, nothing injected" in log


def test_uninstall_removes_a_file_memtui_created_and_keeps_later_edits(home: Home,
                                                                      tmp_path: Path) -> None:
    fresh = tmp_path / "new" / ".claude" / "settings.json"
    claude_settings.install(home, "main", fresh)
    assert fresh.exists()
    assert claude_settings.uninstall(home, fresh).removed_file
    assert not fresh.exists() and not fresh.parent.exists()

    edited = tmp_path / "edited.json"
    edited.write_bytes(ORIGINAL)
    claude_settings.install(home, "main", edited)
    data = json.loads(edited.read_text())
    data["theme"] = "dark"  # the user changes something while memtui is installed
    edited.write_text(json.dumps(data))
    change = claude_settings.uninstall(home, edited)
    after = json.loads(edited.read_text())
    assert not change.restored and after["theme"] == "dark"
    assert after["hooks"] == json.loads(ORIGINAL)["hooks"]


def test_a_settings_file_that_is_not_json_is_left_alone(home: Home, tmp_path: Path) -> None:
    bad = tmp_path / ".claude" / "settings.json"
    bad.parent.mkdir()
    bad.write_text('{\n  "hooks": {,\n}\n')
    before = bad.read_bytes()
    result = run_cli("hooks", "install", "claude-code", "--project", str(tmp_path), home=home)
    assert result.returncode == 1 and "settings.json:2: not valid JSON" in result.stderr
    assert bad.read_bytes() == before and list(bad.parent.iterdir()) == [bad]
