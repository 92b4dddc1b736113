"""Session pruning plans: soft trim, hard clear oldest first, protections, never a rewrite."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from memtui.context.pruning import plan_pruning, pruned_context, tool_prunable, trimmed_text
from memtui.context.report import inspect
from memtui.home import Home
from tests.conftest import run_cli
from tests.context import synth
from tests.context.conftest import OPS_PLAIN, configure, register


@pytest.fixture
def big(tmp_path: Path) -> Path:
    return synth.write(tmp_path / "big.jsonl", 200_000)


def test_over_the_hard_ratio_results_are_trimmed_then_cleared_oldest_first(
        home: Home, big: Path) -> None:
    plan = plan_pruning(home, "main", big)
    cfg = home.settings.context
    assert plan.due and plan.tokens_before > 0.9 * plan.window
    assert plan.trimmed and plan.cleared
    cleared = [a.index for a in plan.cleared]
    assert cleared == sorted(cleared)
    report, acct = inspect(home, "main", big)
    candidates = [i for i, it in enumerate(acct.items) if it.kind == "tool results"]
    # Oldest first: every result before the last cleared one is cleared or was never large.
    assert cleared == candidates[: len(cleared)]
    assert plan.tokens_after / plan.window < cfg.hard_clear_ratio
    for action in plan.trimmed:
        assert len(acct.texts[action.index]) > cfg.soft_trim_max_chars
        assert action.tokens_after < action.tokens_before


def test_results_of_the_last_assistant_turns_are_never_touched(home: Home, big: Path) -> None:
    plan = plan_pruning(home, "main", big)
    _, acct = inspect(home, "main", big)
    third_last = acct.assistant_positions()[-3]
    touched = [a.index for a in [*plan.trimmed, *plan.cleared]]
    assert touched and max(touched) < third_last
    assert plan.protected == sum(1 for it in acct.items[third_last:]
                                 if it.kind == "tool results")


def test_the_soft_trim_keeps_head_and_tail_with_a_note(home: Home) -> None:
    cfg = home.settings.context
    text = "H" * 2000 + "M" * 5000 + "T" * 2000
    cut = trimmed_text(text, cfg)
    assert cut is not None
    assert cut.startswith("H" * 1500) and "T" * 1500 in cut and "M" not in cut
    assert "kept the first 1,500 and the last 1,500 of 9,000 chars" in cut
    assert trimmed_text("x" * 4000, cfg) is None


def test_below_the_soft_ratio_nothing_changes(home: Home) -> None:
    plan = plan_pruning(home, "ops", OPS_PLAIN)
    assert not plan.trimmed and not plan.cleared
    assert plan.tokens_after == plan.tokens_before


def test_mode_off_plans_nothing(home: Home, big: Path) -> None:
    configure(home, '[context]\nprune_mode = "off"')
    plan = plan_pruning(home, "main", big)
    assert not plan.due and not plan.trimmed and not plan.cleared
    assert "off" in plan.reason


def test_deny_and_allow_globs(home: Home, big: Path) -> None:
    cfg = home.settings.context
    cfg.prune_tools_deny = ["web_*"]
    cfg.prune_tools_allow = ["EXEC", "web_fetch"]
    assert tool_prunable("exec", cfg) and not tool_prunable("web_fetch", cfg)
    assert not tool_prunable("read", cfg)
    configure(home, '[context]\nprune_tools_deny = ["read", "web_*"]')
    plan = plan_pruning(home, "main", big)
    assert plan.excluded > 0
    assert {a.tool for a in [*plan.trimmed, *plan.cleared]} == {"exec"}


def test_images_are_never_pruned(home: Home, tmp_path: Path) -> None:
    path = synth.write(tmp_path / "img.jsonl", 200_000)
    lines = path.read_text().splitlines()
    for n, line in enumerate(lines):
        entry = json.loads(line)
        msg = entry.get("message", {})
        if msg.get("role") == "toolResult":
            msg["content"].append({"type": "image", "data": "AAAA", "mimeType": "image/png"})
            lines[n] = json.dumps(entry)
            break
    path.write_text("\n".join(lines) + "\n")
    plan = plan_pruning(home, "main", path)
    _, acct = inspect(home, "main", path)
    [image] = [i for i, it in enumerate(acct.items) if it.images]
    assert plan.images == 1
    assert image not in {a.index for a in [*plan.trimmed, *plan.cleared]}


def test_out_writes_the_pruned_context_and_the_transcript_is_untouched(
        home: Home, tmp_path: Path) -> None:
    [copy] = register(home, "main", synth.write(tmp_path / "s.jsonl", 200_000))
    before = hashlib.sha256(copy.read_bytes()).hexdigest()
    out = tmp_path / "pruned.txt"
    result = run_cli("prune", "--agent", "main", "--preview", "--out", str(out), home=home)
    assert result.returncode == 0, result.stderr
    assert "trimmed" in result.stdout and "cleared" in result.stdout
    text = out.read_text()
    cfg = home.settings.context
    plan, rendered = pruned_context(home, "main")
    assert text == rendered and text.count(cfg.hard_clear_placeholder) == len(plan.cleared)
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == before
    data = json.loads(run_cli("prune", "--agent", "main", "--json", home=home).stdout)
    assert data["tokens_after"] == plan.tokens_after and data["saved"] == plan.saved
