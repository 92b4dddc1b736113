"""Every sample transcript (sample-data and the vendored Claude Code sessions) through the
engine: report, follow, pruning plan, compaction preview and the flight recorder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.context.compaction import compact_session, record_agent_compactions
from memtui.context.follow import ContextFollower
from memtui.context.pruning import plan_pruning
from memtui.context.report import context_report
from memtui.context.summary import SECTIONS
from memtui.context.window import account
from memtui.home import Home
from tests.context.conftest import CLAUDE, SAMPLES, configure, lines

FILES = sorted([*SAMPLES.rglob("*.jsonl"), *CLAUDE.glob("*.jsonl")])


def last_usage(path: Path) -> int | None:
    """The last reported usage in the file, read straight from the JSON (either format)."""
    found = None
    for entry in lines(path):
        if entry.get("type") == "compaction" or entry.get("isCompactSummary"):
            found = None
        msg = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        u = msg.get("usage")
        if not isinstance(u, dict):
            continue
        if "input_tokens" in u:
            found = (u["input_tokens"] + u.get("cache_read_input_tokens", 0)
                     + u.get("cache_creation_input_tokens", 0) + u.get("output_tokens", 0))
        else:
            found = u["input"] + u["cacheRead"] + u["cacheWrite"] + u["output"]
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:12])
def test_every_sample_transcript(home: Home, path: Path) -> None:
    report = context_report(home, "main", path)
    assert report.problems == 0 and report.messages > 0
    assert report.model and report.window == 200_000
    assert report.exact_tokens == (last_usage(path) or 0)
    assert report.used == report.exact_tokens + report.estimated_tokens
    fresh, _ = account(path)  # an independent whole read, outside the process cache
    assert dict(report.by_kind).items() >= fresh.by_kind().items()
    follower = ContextFollower(home, "main", path)
    followed = follower.poll()
    assert followed is not None and followed.used == report.used
    plan = plan_pruning(home, "main", path)
    assert plan.tokens_after <= plan.tokens_before
    configure(home, "[context]\nkeep_recent_tokens = 1000")
    preview = compact_session(home, path, agent="main")
    if preview.status == "preview":
        assert [ln for ln in preview.summary.splitlines() if ln.startswith("## ")] == [
            f"## {s}" for s in SECTIONS]
        assert preview.first_kept is not None
    compactions = sum(1 for e in lines(path) if e.get("type") == "compaction"
                      or e.get("isCompactSummary"))
    assert report.compactions == compactions
    assert record_agent_compactions(home, "main", path) == compactions
    assert json.dumps(report.as_dict())  # the console and --json can serialise it
