"""Generic JSONL reader: the contract in shared/eval/README.md."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from memtui.transcripts import ToolCall, ToolResult, read_transcript

LOCOMO_LINE = {
    "type": "message",
    "id": "D1:3",
    "session": "session_1",
    "ts": "2023-05-08T13:56:02+00:00",
    "role": "user",
    "name": "Caroline",
    "content": "I went to a LGBTQ support group yesterday and it was so powerful.",
}


def test_generic_contract(write_lines: Callable[..., Path]) -> None:
    path = write_lines(
        "conv.jsonl",
        [
            LOCOMO_LINE,
            {"type": "meta", "source": "locomo", "conversation": "conv-26"},
            {
                "type": "message",
                "id": "a1",
                "session": "session_1",
                "ts": "2023-05-08T13:57:00Z",
                "role": "assistant",
                "name": "Melanie",
                "content": "Let me check the calendar.",
                "tool_calls": [{"id": "c1", "name": "calendar", "input": {"day": "friday"}}],
            },
            {
                "type": "message",
                "id": "t1",
                "session": "session_1",
                "role": "tool",
                "tool_call_id": "c1",
                "name": "calendar",
                "content": "busy",
                "is_error": False,
            },
            {
                "type": "message",
                "id": 7,
                "role": "system",
                "content": [{"type": "text", "text": "x"}],
            },
        ],
    )
    result = read_transcript(path)

    assert result.format == "generic"
    # The contract knows only "message": other types are counted as unknown (issue 3).
    assert result.problems == [] and result.skipped == {}
    assert result.unknown_types == {"meta": 1}
    user, assistant, tool, system = result.turns
    assert (user.id, user.session, user.role, user.name) == (
        "D1:3",
        "session_1",
        "user",
        "Caroline",
    )
    assert user.text == LOCOMO_LINE["content"]
    assert user.timestamp == datetime(2023, 5, 8, 13, 56, 2, tzinfo=UTC)
    assert assistant.tool_calls == (ToolCall("c1", "calendar", {"day": "friday"}),)
    assert (tool.role, tool.text, tool.name) == ("tool", "", None)
    assert tool.tool_results == (ToolResult("c1", "calendar", "busy", False),)
    assert (system.id, system.text, system.timestamp) == ("7", "x", None)
    assert system.session == "conv#" + hashlib.sha1(
        json.dumps(LOCOMO_LINE).encode()).hexdigest()[:8]
    assert [t.line for t in result.turns] == [1, 3, 4, 5]


def test_generic_bad_messages_are_problems(write_lines: Callable[..., Path]) -> None:
    path = write_lines(
        "bad.jsonl",
        [
            LOCOMO_LINE,
            {"type": "message", "role": "user", "content": "no id"},
            {"type": "message", "id": "x", "role": "narrator", "content": "?"},
            {"id": "y", "role": "user", "content": "no type"},
            {**LOCOMO_LINE, "id": "D1:4"},
        ],
    )
    result = read_transcript(path, fmt="generic")
    assert [t.id for t in result.turns] == ["D1:3", "D1:4"]
    assert [(p.line, p.message) for p in result.problems] == [
        (2, "message without an 'id'"),
        (3, "message 'x' has role 'narrator'"),
        (4, "no string 'type' field"),
    ]


def _log(ids: list[str], words: str) -> list[dict[str, object]]:
    return [{"type": "message", "id": i, "role": "user", "content": f"{words} {i}"} for i in ids]


def test_default_session_tells_replaced_files_apart(
        write_lines: Callable[..., Path]) -> None:
    """log.jsonl rotated to log.jsonl.1 keeps its session; a new log.jsonl reusing the ids
    1, 2 (and no session field) is another session."""
    path = write_lines("log.jsonl", _log(["1", "2"], "first file"))
    before = {t.session for t in read_transcript(path).turns}
    rotated = path.with_name("log.jsonl.1")
    os.rename(path, rotated)
    assert {t.session for t in read_transcript(rotated).turns} == before
    new = write_lines("log.jsonl", _log(["1", "2"], "second file"))
    after = {t.session for t in read_transcript(new).turns}
    assert len(before) == len(after) == 1 and before != after
    assert next(iter(after)).startswith("log#")
    # A session field still wins.
    explicit = write_lines("other.jsonl", [{**_log(["1"], "x")[0], "session": "s9"}])
    assert [t.session for t in read_transcript(explicit).turns] == ["s9"]
