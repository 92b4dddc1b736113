"""The shared real files (tests/data): what other people's agents wrote, read as they are."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from memtui.transcripts import detect_format, read_transcript

DATA = Path(__file__).resolve().parents[1] / "data"
REAL = sorted(DATA.glob("*/*.jsonl"))


@pytest.mark.parametrize("path", REAL, ids=lambda p: f"{p.parent.name}/{p.name[:12]}")
def test_every_real_file_reads_cleanly(path: Path) -> None:
    result = read_transcript(path, final=True)
    assert result.problems == [] and result.unknown_types == {}
    assert result.end_offset == path.stat().st_size and result.turns
    ids = [(t.session, t.id) for t in result.turns]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(("name", "lines", "turns"), [
    ("before-compaction.jsonl", 1003, 992), ("large-session.jsonl", 1019, 914)])
def test_pi_v1_sessions_give_their_turns(name: str, lines: int, turns: int) -> None:
    path = DATA / "pi-mono" / name
    raw = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert len(raw) == lines and not any("id" in d for d in raw[1:])
    result = read_transcript(path, final=True)
    assert len(result.turns) == turns
    # Each entry is linked to the one before it, as pi's upgrade links them.
    by_line = {t.line: t for t in result.turns}
    for turn in result.turns:
        assert turn.parent_id == (f"L{turn.line - 1}" if turn.line > 2 else None)
        assert by_line[turn.line].id == f"L{turn.line}"
    # The real model-call failure in each file is kept, not dropped.
    assert len([t for t in result.turns if t.error]) == 1


def test_pi_session_keeps_user_words_and_compactions() -> None:
    result = read_transcript(DATA / "pi-mono" / "before-compaction.jsonl", final=True)
    authors = Counter((t.role, t.author) for t in result.turns)
    assert authors[("user", "person")] == 55 and authors[("system", "machine")] == 2
    assert sum(t.kind == "compaction" for t in result.turns) == 2


def test_viewer_file_keeps_its_summary_title() -> None:
    result = read_transcript(DATA / "claude-code-viewer" /
                             "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", final=True)
    assert result.title == "Empty Repo Setup: CLAUDE.md Foundation Created"


def test_a_file_opening_with_many_summary_lines_is_claude_code(
        write_lines: Callable[..., Path]) -> None:
    summaries = [{"type": "summary", "summary": f"Title {i}", "leafUuid": f"l{i}"}
                 for i in range(60)]
    newer = [{"type": t, "sessionId": "s"} for t in ("mode", "atis-latch", "cost-state")]
    user = {"type": "user", "uuid": "u1", "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": "hello"}}
    path = write_lines("s.jsonl", summaries + newer + [user])
    assert detect_format(path) == "claude-code"
    result = read_transcript(path, final=True)
    assert [t.text for t in result.turns] == ["hello"] and result.unknown_types == {}
    assert result.title == "Title 59"
    headless = write_lines("n.jsonl", newer * 20 + [user])
    assert detect_format(headless) == "claude-code"


def test_newer_claude_code_types_titles_and_cost(write_lines: Callable[..., Path]) -> None:
    base = {"sessionId": "s", "timestamp": "2026-01-01T00:00:00Z"}
    path = write_lines("s.jsonl", [
        {"type": "summary", "summary": "From a summary", "leafUuid": "x"},
        {"type": "ai-title", "aiTitle": "From the model", **base},
        {"type": "cost-state", "totalCostUSD": 1.5, **base},
        {"type": "atis-latch", **base},
        {"type": "mode", "mode": "plan", **base},
        {"type": "assistant", "uuid": "a1", "isApiErrorMessage": True, **base,
         "message": {"id": "m1", "role": "assistant",
                     "content": [{"type": "text", "text": "API Error: 429 rate limited"}]}},
    ])
    result = read_transcript(path, final=True)
    assert result.unknown_types == {} and result.cost_usd == 1.5
    assert result.title == "From the model"
    assert [(t.text, t.error) for t in result.turns] == [("", "API Error: 429 rate limited")]
    assert {"mode", "ai-title", "cost-state", "atis-latch", "summary"} <= set(result.skipped)
