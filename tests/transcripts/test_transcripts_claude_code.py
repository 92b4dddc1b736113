"""Claude Code reader: real sessions, message-id merging, tool results and the held tail."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memtui.transcripts import read_transcript

REFUSAL = "The user doesn't want to proceed with this tool use"
SHORT_SESSION = "55604662-cf2a-4331-851a-ec234028f8ca"


def line_starts(path: Path) -> list[int]:
    """Byte offset of the start of each line, plus the file size at the end."""
    starts = [0]
    for raw in path.read_bytes().splitlines(keepends=True):
        starts.append(starts[-1] + len(raw))
    return starts


def raw_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_short_session_turns_ids_and_merging(short_jsonl: Path) -> None:
    result = read_transcript(short_jsonl)

    assert result.format == "claude-code"
    assert result.problems == []
    assert result.unknown_types == {}
    assert result.skipped == {"file-history-snapshot": 1, "progress": 3, "system": 2}
    assert [(t.line, t.role, t.id) for t in result.turns] == [
        (4, "user", "7d48cbd2-6615-4dd8-87f6-38f12b8167d6"),
        (5, "assistant", "msg_01MKH1ccEGrZGNPvu8pYiiQa"),
        (11, "tool", "ff80d82a-4ac1-4945-83dd-1226f98b8cf6"),
        (12, "tool", "2618ef5d-c1c6-4938-b81c-8a3230ccad76"),
        (13, "user", "c06a9fe4-ba05-44f2-b619-a057c18101e5"),
    ]
    # Lines 5-8 and 10 (a progress line sits between) are one API message.
    assert sum(t.role == "assistant" for t in result.turns) == 1
    assert result.end_offset == short_jsonl.stat().st_size
    assert (result.end_line, result.lines_read, result.pending_bytes) == (16, 15, 0)
    assert {t.session for t in result.turns} == {SHORT_SESSION}


def test_short_session_assistant_message_content(short_jsonl: Path) -> None:
    starts = line_starts(short_jsonl)
    turn = read_transcript(short_jsonl).turns[1]

    assert (
        turn.text
        == "Let me check the project structure and try running the server to see the error."
    )
    assert turn.thinking.startswith("The user is having trouble starting their Phoenix server.")
    assert [(c.id, c.name) for c in turn.tool_calls] == [
        ("toolu_0116Hyi5v8ut7Ffb7d8qV1Sc", "Bash"),
        ("toolu_01FdQ8qTyVyZjE3Kw4dguQGx", "Glob"),
    ]
    assert turn.tool_calls[0].input == {
        "command": "mix phx.server 2>&1 | head -80",
        "timeout": 30000,
    }
    assert turn.usage is not None
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (3, 13)
    assert (turn.usage.cache_read_tokens, turn.usage.cache_creation_tokens) == (11515, 13835)
    assert (turn.offset, turn.end_offset) == (starts[4], starts[10])
    assert (
        turn.timestamp is not None
        and turn.timestamp.isoformat() == "2026-02-10T21:11:59.186000+00:00"
    )


def test_refused_tool_use_survives_as_error_result(short_jsonl: Path) -> None:
    tools = [t for t in read_transcript(short_jsonl).turns if t.role == "tool"]

    assert [t.text for t in tools] == ["", ""]
    results = [r for t in tools for r in t.tool_results]
    assert [(r.tool_call_id, r.name, r.is_error) for r in results] == [
        ("toolu_0116Hyi5v8ut7Ffb7d8qV1Sc", "Bash", True),
        ("toolu_01FdQ8qTyVyZjE3Kw4dguQGx", "Glob", True),
    ]
    assert all(r.content.startswith(REFUSAL) for r in results)


def test_subagent_session_counts(subagent_jsonl: Path) -> None:
    raw = raw_lines(subagent_jsonl)
    message_ids = list(dict.fromkeys(r["message"]["id"] for r in raw if r["type"] == "assistant"))
    calls_per_message = Counter(
        r["message"]["id"]
        for r in raw
        if r["type"] == "assistant"
        for b in r["message"]["content"]
        if b["type"] == "tool_use"
    )
    error_results = sum(
        bool(b.get("is_error"))
        for r in raw
        if r["type"] == "user" and isinstance(r["message"]["content"], list)
        for b in r["message"]["content"]
    )

    result = read_transcript(subagent_jsonl, final=True)

    assert result.problems == [] and result.unknown_types == {}
    assert result.skipped == {"progress": 70}
    assert len(result.turns) == 46
    assert Counter(t.role for t in result.turns) == {"assistant": 12, "tool": 33, "user": 1}
    assistants = [t for t in result.turns if t.role == "assistant"]
    assert [t.id for t in assistants] == message_ids
    assert {t.id: len(t.tool_calls) for t in assistants if t.tool_calls} == calls_per_message
    results = [r for t in result.turns for r in t.tool_results]
    assert len(results) == 33 and all(r.name in {"Read", "Bash", "Grep", "Glob"} for r in results)
    assert sum(r.is_error for r in results) == error_results > 0
    assert [t.line for t in result.turns] == sorted(t.line for t in result.turns)


def test_streamed_tool_results_stay_after_their_message(subagent_jsonl: Path) -> None:
    turns = read_transcript(subagent_jsonl, final=True).turns
    first = turns[1]

    assert (first.id, first.line) == ("msg_016xcKQRzQXv2gLKoiSyUZxc", 2)
    assert len(first.tool_calls) == 9
    # Its blocks span lines 2-21, its calls' results are interleaved on lines 6-22.
    assert first.end_offset == line_starts(subagent_jsonl)[21]
    assert [(t.line, t.role) for t in turns[2:12]] == [
        *((n, "tool") for n in range(6, 23, 2)),
        (23, "assistant"),
    ]
    answered = [r.tool_call_id for t in turns[2:11] for r in t.tool_results]
    assert answered == [c.id for c in first.tool_calls]


def test_open_last_message_is_held_until_closed(subagent_jsonl: Path, tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    shutil.copy(subagent_jsonl, path)
    starts = line_starts(path)

    first = read_transcript(path)
    assert len(first.turns) == 45
    assert (first.end_line, first.end_offset) == (144, starts[143])
    assert first.pending_bytes == path.stat().st_size - starts[143]

    again = read_transcript(path, start_offset=first.end_offset, start_line=first.end_line)
    assert again.turns == [] and again.end_offset == first.end_offset

    with path.open("ab") as fh:
        fh.write(b'{"type":"system","subtype":"turn_duration","durationMs":1200}\n')
    closed = read_transcript(path, start_offset=first.end_offset, start_line=first.end_line)
    assert [(t.id, t.line) for t in closed.turns] == [("msg_019oZyzpKzxrUVHy3CXqkJyN", 144)]
    assert closed.turns[0].text.startswith("Perfect! Now I have all the information needed.")
    assert closed.end_offset == path.stat().st_size and closed.skipped == {"system": 1}


def _assistant(msg_id: str, block: dict[str, Any], uuid: str) -> dict[str, Any]:
    return {
        "type": "assistant",
        "uuid": uuid,
        "sessionId": "s1",
        "timestamp": "2026-11-16T10:00:00.000Z",
        "message": {"id": msg_id, "role": "assistant", "content": [block]},
    }


def _user(content: Any, uuid: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": uuid,
        "sessionId": "s1",
        "timestamp": "2026-11-16T10:00:01.000Z",
        "message": {"role": "user", "content": content},
        **extra,
    }


def test_what_closes_an_open_message(write_lines: Callable[..., Path]) -> None:
    text = {"type": "text", "text": "working on it"}
    lines = [
        _user("start", "u1"),
        _assistant("m1", text, "a1"),
        {"type": "system", "subtype": "local_command", "uuid": "x1", "sessionId": "s1"},
        _assistant("m1", {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}, "a2"),
        _user([{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}], "u2"),
    ]
    path = write_lines("open.jsonl", lines)
    # Neither an unrelated system line nor a tool result ends m1: all of it stays unread.
    held = read_transcript(path)
    assert [t.id for t in held.turns] == ["u1"] and held.end_line == 2

    path = write_lines("closed.jsonl", [*lines, _user("next question", "u3")])
    closed = read_transcript(path)
    assert [(t.id, t.role) for t in closed.turns] == [
        ("u1", "user"),
        ("m1", "assistant"),
        ("u2", "tool"),
        ("u3", "user"),
    ]
    assert closed.turns[1].text == "working on it" and closed.turns[1].tool_calls[0].id == "t1"
    assert closed.end_offset == path.stat().st_size


def test_user_line_variants(write_lines: Callable[..., Path]) -> None:
    path = write_lines(
        "variants.jsonl",
        [
            _user([{"type": "text", "text": "Caveat: local commands below"}], "meta", isMeta=True),
            _user("This session is being continued ...", "sum", isCompactSummary=True),
            _user(
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t9",
                        "content": [
                            {"type": "text", "text": "line one"},
                            {"type": "image", "source": {}},
                        ],
                    },
                    {"type": "text", "text": "and also look at this"},
                ],
                "mixed",
            ),
            {"type": "brand-new-type", "uuid": "n1", "sessionId": "s1"},
            {"type": "brand-new-type", "uuid": "n2", "sessionId": "s1"},
        ],
    )
    result = read_transcript(path, fmt="claude-code")
    meta, summary, mixed = result.turns

    assert (meta.role, meta.kind) == ("system", "message")
    assert (summary.role, summary.kind) == ("system", "compaction")
    assert (mixed.role, mixed.text) == ("user", "and also look at this")
    assert mixed.tool_results[0].content == "line one\n[image]"
    assert mixed.tool_results[0].name is None
    assert result.unknown_types == {"brand-new-type": 2}


def test_malformed_claude_code_lines_are_problems(write_lines: Callable[..., Path]) -> None:
    path = write_lines(
        "bad.jsonl",
        [
            _user("hello", "u1"),
            {"type": "assistant", "uuid": "a0", "sessionId": "s1"},
            {"type": "user", "sessionId": "s1", "message": {"content": "no uuid"}},
            {"sessionId": "s1", "uuid": "x"},
            _user("still read", "u2"),
        ],
    )
    result = read_transcript(path, fmt="claude-code")

    assert [t.id for t in result.turns] == ["u1", "u2"]
    assert [(p.line, p.message) for p in result.problems] == [
        (2, "assistant line without a 'message' object"),
        (3, "user line without 'uuid' and a 'message' object"),
        (4, "no string 'type' field"),
    ]
    assert str(result.problems[0]) == f"{path}:2: assistant line without a 'message' object"
