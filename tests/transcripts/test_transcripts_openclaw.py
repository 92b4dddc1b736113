"""OpenClaw v3 reader: entry types, roles, compaction, usage and resuming past the header."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memtui.transcripts import ToolCall, ToolResult, Usage, read_transcript

SESSION = "0b7f6c1e-52a4-4c1d-9a0e-3f1d2b8e4c77"


def entry(kind: str, entry_id: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "id": entry_id,
        "parentId": None,
        "timestamp": "2026-11-13T09:00:00.000Z",
        **fields,
    }


def message(entry_id: str, **msg: Any) -> dict[str, Any]:
    return entry("message", entry_id, message=msg)


HEADER = {
    "type": "session",
    "version": 3,
    "id": SESSION,
    "timestamp": "2026-11-13T08:59:58.000Z",
    "cwd": "/home/openclaw/.openclaw/workspace-ops",
}
ENTRIES: list[dict[str, Any]] = [
    HEADER,
    entry("model_change", "a0000001", provider="anthropic", modelId="claude-sonnet-4-5"),
    entry("thinking_level_change", "a0000002", thinkingLevel="low"),
    message("a0000003", role="user", content="Is the backup from last night there?", timestamp=1),
    message(
        "a0000004",
        role="assistant",
        content=[
            {"type": "thinking", "thinking": "Check the backup folder."},
            {"type": "text", "text": "I will now list the backups."},
            {"type": "toolCall", "id": "toolu_1", "name": "exec", "arguments": {"command": "ls"}},
        ],
        provider="anthropic",
        model="claude-sonnet-4-5",
        usage={
            "input": 12,
            "output": 40,
            "cacheRead": 9000,
            "cacheWrite": 300,
            "totalTokens": 9352,
        },
        stopReason="toolUse",
    ),
    message(
        "a0000005",
        role="toolResult",
        toolCallId="toolu_1",
        toolName="exec",
        content=[{"type": "text", "text": "ls: cannot access '/var/backups': Permission denied"}],
        isError=True,
    ),
    entry("custom", "a0000006", customType="openclaw.channel", data={"channel": "telegram"}),
    entry(
        "compaction",
        "a0000007",
        summary="## Goal\nCheck last night's backup.\n",
        firstKeptEntryId="a0000004",
        tokensBefore=120000,
    ),
    message(
        "a0000008",
        role="bashExecution",
        command="sudo ls /var/backups",
        output="lumen.dump\n",
        exitCode=0,
        cancelled=False,
        truncated=False,
    ),
    message("a0000009", role="custom", customType="ext", content="hi", display=True),
    message("a0000010", role="hologram", content="?"),
    entry("label", "a0000011", targetId="a0000004", label="checkpoint"),
    entry("session_info", "a0000012", name="backup check"),
    entry("branch_summary", "a0000013", fromId="a0000004", summary="Tried another way."),
    entry("teleport", "a0000014"),
    {"type": "message", "parentId": None, "message": {"role": "user", "content": "no id"}},
    entry("message", "a0000016", message={"content": "no role"}),
    message("a0000017", role="toolResult", content="no call id"),
    message("a0000018", role="user", content=[{"type": "text", "text": "thanks"}]),
]


def test_openclaw_entries_become_turns(write_lines: Callable[..., Path]) -> None:
    path = write_lines("s.jsonl", ENTRIES)
    result = read_transcript(path)

    assert result.format == "openclaw"
    assert [(t.id, t.role, t.kind) for t in result.turns] == [
        ("a0000003", "user", "message"),
        ("a0000004", "assistant", "message"),
        ("a0000005", "tool", "message"),
        ("a0000007", "system", "compaction"),
        ("a0000008", "tool", "message"),
        ("a0000018", "user", "message"),
    ]
    assert {t.session for t in result.turns} == {SESSION}
    assert {t.format for t in result.turns} == {"openclaw"}
    assert result.skipped == {
        "session": 1,
        "model_change": 1,
        "thinking_level_change": 1,
        "custom": 1,
        "message/custom": 1,
        "label": 1,
        "session_info": 1,
        "branch_summary": 1,
    }
    assert result.unknown_types == {"message/hologram": 1, "teleport": 1}
    assert [(p.line, p.message) for p in result.problems] == [
        (16, "message entry without an 'id'"),
        (17, "message entry without a 'message' object with a role"),
        (18, "toolResult message without a 'toolCallId'"),
    ]
    assert result.end_line == len(ENTRIES) + 1 and result.lines_read == len(ENTRIES)


def test_openclaw_message_fields(write_lines: Callable[..., Path]) -> None:
    turns = read_transcript(write_lines("s.jsonl", ENTRIES)).turns
    user, assistant, tool, compaction, bash, thanks = turns

    assert user.text == "Is the backup from last night there?"
    assert user.timestamp == datetime(2026, 11, 13, 9, 0, tzinfo=UTC)
    assert assistant.text == "I will now list the backups."
    assert assistant.thinking == "Check the backup folder."
    assert assistant.tool_calls == (ToolCall("toolu_1", "exec", {"command": "ls"}),)
    assert assistant.usage == Usage(12, 40, 9000, 300)
    assert assistant.usage.total_tokens == 9352
    assert tool.text == ""
    assert tool.tool_results == (
        ToolResult("toolu_1", "exec", "ls: cannot access '/var/backups': Permission denied", True),
    )
    assert compaction.text == "## Goal\nCheck last night's backup."
    assert bash.tool_results == (
        ToolResult("a0000008", "bash", "$ sudo ls /var/backups\nlumen.dump\n", False),
    )
    assert thanks.text == "thanks"
    assert [t.line for t in turns] == [4, 5, 6, 8, 9, 19]


def test_message_timestamp_is_the_fallback(write_lines: Callable[..., Path]) -> None:
    line = message("b1", role="user", content="hi", timestamp=1794650400000)
    del line["timestamp"]
    turn = read_transcript(write_lines("t.jsonl", [HEADER, line])).turns[0]
    assert turn.timestamp == datetime(2026, 11, 14, 10, 0, tzinfo=UTC)


def test_resume_past_the_header_keeps_session_and_line_numbers(
    write_lines: Callable[..., Path],
) -> None:
    path = write_lines("s.jsonl", ENTRIES)
    whole = read_transcript(path)
    head = read_transcript(write_lines("head.jsonl", ENTRIES[:6]))
    assert head.end_line == 7

    # Counting the lines (no start_line) and passing them give the same result.
    for start_line in (None, head.end_line):
        rest = read_transcript(path, start_offset=head.end_offset, start_line=start_line)
        assert head.turns[0].source != rest.turns[0].source
        assert [(t.id, t.session, t.line, t.offset) for t in rest.turns] == [
            (t.id, t.session, t.line, t.offset) for t in whole.turns[3:]
        ]
        assert [p.line for p in rest.problems] == [16, 17, 18]
        assert "session" not in rest.skipped


def test_headerless_file_uses_the_file_stem_as_session(write_lines: Callable[..., Path]) -> None:
    path = write_lines("9f1c.jsonl", [message("c1", role="user", content="hello")])
    result = read_transcript(path)
    assert result.format == "openclaw"
    assert result.turns[0].session == "9f1c"
