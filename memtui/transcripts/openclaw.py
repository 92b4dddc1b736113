"""Reader for OpenClaw (pi-coding-agent) v3 session transcripts.

Verified against the public sources of the writer, pi-mono
(badlogic/pi-mono ``packages/coding-agent/src/core/session-manager.ts``, whose
``CURRENT_SESSION_VERSION`` is 3, and its ``docs/session.md``) and OpenClaw's
``docs/reference/session-management-compaction.md``, which says OpenClaw writes
transcripts through that SessionManager (``~/.openclaw/agents/<agent>/sessions/
<sessionId>.jsonl``) and does not fix them up:

- line 1 is the header ``{"type":"session","version":3,"id","timestamp","cwd"}``
  (optional ``parentSession``); it has no ``id``/``parentId`` tree fields.
- every other entry has ``type``, ``id`` (8 hex chars), ``parentId`` (null for the
  first) and an ISO ``timestamp``; entries form a tree (branches share a file) and
  are appended one whole line at a time (``appendFileSync``), so no merging is
  needed. We yield every branch, in file order.
- ``message`` entries wrap an AgentMessage: ``user`` (content string or text/image
  blocks), ``assistant`` (``text``/``thinking``/``toolCall{id,name,arguments}``
  blocks, ``usage{input,output,cacheRead,cacheWrite,totalTokens,cost}``,
  ``provider``, ``model``, ``stopReason``), ``toolResult`` (``toolCallId``,
  ``toolName``, content blocks, ``isError``), ``bashExecution`` (a ``!command`` the
  human ran: ``command``, ``output``, ``exitCode``) and ``custom`` (extension
  messages). Messages also carry a numeric ``timestamp`` (epoch ms), used when the
  entry's own is missing.
- ``compaction`` entries (``summary``, ``firstKeptEntryId``, ``tokensBefore``)
  become a system turn of kind "compaction"; ``custom``, ``custom_message``,
  ``model_change``, ``thinking_level_change``, ``branch_summary``, ``label`` and
  ``session_info`` are counted in ``skipped``.

The file is written lazily (nothing until the first assistant message) and is
rewritten in place only when an older version is migrated on load; a watermark
that no longer fits then raises StaleOffset.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memtui.transcripts.jsonl import (
    Line,
    Sink,
    as_int,
    block_text,
    parse_timestamp,
    result_text,
)
from memtui.transcripts.turn import Role, ToolCall, ToolResult, Turn, Usage

FORMAT = "openclaw"

SKIPPED_TYPES = frozenset(
    {
        "session",
        "custom",
        "custom_message",
        "model_change",
        "thinking_level_change",
        "branch_summary",
        "label",
        "session_info",
    }
)


def read(lines: Iterable[Line], sink: Sink, *, session: str, final: bool) -> Line | None:
    """Turn OpenClaw entries into the sink; whole-line entries never hold anything back."""
    for line in lines:
        data = line.data
        kind = data.get("type")
        if kind == "session":
            if isinstance(data.get("id"), str):
                session = data["id"]
            sink.skip(line.number, "session")
        elif kind == "message":
            _message(line, sink, session)
        elif kind == "compaction":
            _compaction(line, sink, session)
        elif kind in SKIPPED_TYPES:
            sink.skip(line.number, str(kind))
        elif not isinstance(kind, str):
            sink.problem(line.number, "no string 'type' field")
        else:
            sink.unknown(line.number, kind)
    return None


def _entry_id(line: Line, sink: Sink) -> str | None:
    entry_id = line.data.get("id")
    if isinstance(entry_id, str) and entry_id:
        return entry_id
    sink.problem(line.number, f"{line.data.get('type')} entry without an 'id'")
    return None


def _message(line: Line, sink: Sink, session: str) -> None:
    entry_id = _entry_id(line, sink)
    if entry_id is None:
        return
    message = line.data.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        sink.problem(line.number, "message entry without a 'message' object with a role")
        return
    role = message["role"]
    content = message.get("content")
    timestamp = parse_timestamp(line.data.get("timestamp")) or parse_timestamp(
        message.get("timestamp")
    )
    text, thinking = "", ""
    calls: tuple[ToolCall, ...] = ()
    results: tuple[ToolResult, ...] = ()
    usage: Usage | None = None
    turn_role: Role
    if role == "user":
        turn_role, text = "user", block_text(content)
    elif role == "assistant":
        turn_role = "assistant"
        text = block_text(content)
        thinking = block_text(content, kind="thinking")
        calls = tuple(_calls(content))
        usage = _usage(message.get("usage"))
    elif role == "toolResult":
        call_id = message.get("toolCallId")
        if not isinstance(call_id, str):
            sink.problem(line.number, "toolResult message without a 'toolCallId'")
            return
        name = message.get("toolName")
        turn_role = "tool"
        results = (
            ToolResult(
                tool_call_id=call_id,
                name=name if isinstance(name, str) else None,
                content=result_text(content),
                is_error=bool(message.get("isError")),
            ),
        )
    elif role == "bashExecution":
        turn_role = "tool"
        results = (_bash(entry_id, message),)
    elif role == "custom":
        sink.skip(line.number, "message/custom")
        return
    else:
        sink.unknown(line.number, f"message/{role}")
        return
    sink.add(
        Turn(
            id=entry_id,
            session=session,
            timestamp=timestamp,
            role=turn_role,
            text=text,
            thinking=thinking,
            tool_calls=calls,
            tool_results=results,
            usage=usage,
            source=sink.source,
            line=line.number,
            offset=line.offset,
            end_offset=line.end,
            format=FORMAT,
        )
    )


def _compaction(line: Line, sink: Sink, session: str) -> None:
    entry_id = _entry_id(line, sink)
    if entry_id is None:
        return
    summary = line.data.get("summary")
    if not isinstance(summary, str):
        sink.problem(line.number, "compaction entry without a 'summary'")
        return
    sink.add(
        Turn(
            id=entry_id,
            session=session,
            timestamp=parse_timestamp(line.data.get("timestamp")),
            role="system",
            text=summary.strip(),
            source=sink.source,
            line=line.number,
            offset=line.offset,
            end_offset=line.end,
            format=FORMAT,
            kind="compaction",
        )
    )


def _calls(content: object) -> list[ToolCall]:
    if not isinstance(content, list):
        return []
    calls = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "toolCall":
            continue
        call_id, name = block.get("id"), block.get("name")
        if isinstance(call_id, str) and isinstance(name, str):
            args = block.get("arguments")
            calls.append(ToolCall(call_id, name, args if isinstance(args, dict) else {}))
    return calls


def _usage(value: object) -> Usage | None:
    if not isinstance(value, dict):
        return None
    return Usage(
        input_tokens=as_int(value.get("input")),
        output_tokens=as_int(value.get("output")),
        cache_read_tokens=as_int(value.get("cacheRead")),
        cache_creation_tokens=as_int(value.get("cacheWrite")),
    )


def _bash(entry_id: str, message: dict[str, Any]) -> ToolResult:
    command = message.get("command") if isinstance(message.get("command"), str) else ""
    output = message.get("output") if isinstance(message.get("output"), str) else ""
    exit_code = message.get("exitCode")
    failed = bool(message.get("cancelled")) or (isinstance(exit_code, int) and exit_code != 0)
    return ToolResult(
        tool_call_id=entry_id, name="bash", content=f"$ {command}\n{output}", is_error=failed
    )
