"""The sample transcripts of the demo home read cleanly and hold what the demo relies on."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.transcripts import Turn, read_transcript

SAMPLES = Path(__file__).resolve().parents[2] / "sample-data" / "transcripts"
OPENCLAW = sorted((SAMPLES / "openclaw").rglob("*.jsonl"))
CLAUDE_CODE = sorted((SAMPLES / "claude-code").rglob("*.jsonl"))


def all_turns(paths: list[Path]) -> list[Turn]:
    return [t for p in paths for t in read_transcript(p, final=True).turns]


def said_by(role: str, paths: list[Path]) -> str:
    return "\n".join(t.text for t in all_turns(paths) if t.role == role)


@pytest.mark.parametrize(
    "path", OPENCLAW + CLAUDE_CODE, ids=lambda p: f"{p.parent.name}/{p.stem[:8]}"
)
def test_sample_reads_with_zero_problems(path: Path) -> None:
    result = read_transcript(path)
    assert result.problems == [] and result.unknown_types == {}
    assert result.end_offset == path.stat().st_size and result.pending_bytes == 0
    assert result.turns and all(t.timestamp is not None for t in result.turns)
    start, end = datetime(2026, 11, 11, tzinfo=UTC), datetime(2026, 11, 25, tzinfo=UTC)
    assert all(start <= t.timestamp <= end for t in result.turns if t.timestamp)


def test_openclaw_layout_and_sizes() -> None:
    assert Counter(p.parent.name for p in OPENCLAW) == {"coordinator": 2, "content": 2, "ops": 2}
    for path in OPENCLAW:
        header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        assert (header["type"], header["version"], header["id"]) == ("session", 3, path.stem)
        entries = len(path.read_text(encoding="utf-8").splitlines()) - 1
        assert 25 <= entries <= 60, path


def test_openclaw_samples_cover_the_demo_stories() -> None:
    turns = all_turns(OPENCLAW)
    human = said_by("user", OPENCLAW)
    for phrase in (
        "no wait, we decided to stay on nginx",
        "don't restart postgres during business hours",
        "I'd rather not add Redis",
        "I prefer short commit messages",
        "Always run the migrations dry first",
        "Mei's company is Northwind Books, not Northwind Press",
    ):
        assert phrase in human, phrase
    assert "I will now" in said_by("assistant", OPENCLAW)
    assert {"ok", "thanks"} <= {t.text for t in turns if t.role == "user"}
    assert sum(t.kind == "compaction" for t in turns) == 1
    results = [r for t in turns for r in t.tool_results]
    assert sum(r.is_error for r in results) >= 6
    calls = Counter(c.name for t in turns for c in t.tool_calls)
    assert {"exec", "read", "write", "edit", "web_search"} <= set(calls)


def test_claude_code_samples_have_split_messages_and_a_refusal() -> None:
    for path in CLAUDE_CODE:
        ids = [
            json.loads(line)["message"]["id"]
            for line in path.read_text(encoding="utf-8").splitlines()
            if json.loads(line)["type"] == "assistant"
        ]
        turns = read_transcript(path).turns
        assert len(ids) > len(set(ids)) == sum(t.role == "assistant" for t in turns)
    results = [r for t in all_turns(CLAUDE_CODE) for r in t.tool_results]
    refused = [r for r in results if "doesn't want to proceed with this tool use" in r.content]
    assert len(refused) == 1 and refused[0].is_error and refused[0].name == "Bash"
