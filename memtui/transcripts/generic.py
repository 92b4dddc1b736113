"""Reader for generic JSONL transcripts, the format any custom agent loop can write.

The contract (shared/eval/README.md): one object per line;
``{"type":"message","id","session","ts","role","name","content"}`` with role
user/assistant/tool/system; an assistant message may carry
``tool_calls: [{"id","name","input"}]``; a tool message carries ``tool_call_id``,
``name``, ``content`` and ``is_error``. The contract knows no other line type:
lines of other types are kept for provenance and otherwise ignored, and counted and
reported as unknown types (``unknown_types``). ``content`` may also be a list of
``{"type":"text","text"}`` blocks; ``ts`` may be ISO 8601 or epoch
seconds/milliseconds. ``session`` defaults to the file's name without rotation
suffix and extension plus a short hash of its first line
(``reader.default_session``: ``log#1a2b3c4d``), so a replaced file that reuses the
same message ids is another session while a renamed rotated copy is the same one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memtui.transcripts.jsonl import Line, Sink, block_text, parse_timestamp, result_text
from memtui.transcripts.turn import Role, ToolCall, ToolResult, Turn

FORMAT = "generic"
ROLES: dict[str, Role] = {
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "system": "system",
}


def read(lines: Iterable[Line], sink: Sink, *, session: str, final: bool) -> Line | None:
    """Turn generic lines into the sink; one line is one message, so nothing is held."""
    for line in lines:
        kind = line.data.get("type")
        if kind == "message":
            _message(line, sink, session)
        elif isinstance(kind, str):
            sink.unknown(line.number, kind)
        else:
            sink.problem(line.number, "no string 'type' field")
    return None


def _message(line: Line, sink: Sink, default_session: str) -> None:
    data = line.data
    msg_id = data.get("id")
    if isinstance(msg_id, int) and not isinstance(msg_id, bool):
        msg_id = str(msg_id)
    if not isinstance(msg_id, str) or not msg_id:
        sink.problem(line.number, "message without an 'id'")
        return
    raw_role = data.get("role")
    role = ROLES.get(raw_role) if isinstance(raw_role, str) else None
    if role is None:
        sink.problem(line.number, f"message {msg_id!r} has role {raw_role!r}")
        return
    session = data.get("session")
    name = data.get("name")
    content = data.get("content")
    text = block_text(content)
    calls: tuple[ToolCall, ...] = ()
    results: tuple[ToolResult, ...] = ()
    if role == "tool":
        call_id = data.get("tool_call_id")
        results = (
            ToolResult(
                tool_call_id=str(call_id) if call_id is not None else "",
                name=name if isinstance(name, str) else None,
                content=result_text(content),
                is_error=bool(data.get("is_error")),
            ),
        )
        text = ""
    elif isinstance(data.get("tool_calls"), list):
        calls = tuple(_calls(data["tool_calls"]))
    sink.add(
        Turn(
            id=msg_id,
            session=str(session) if session not in (None, "") else default_session,
            timestamp=parse_timestamp(data.get("ts", data.get("timestamp"))),
            role=role,
            text=text,
            tool_calls=calls,
            tool_results=results,
            source=sink.source,
            line=line.number,
            offset=line.offset,
            end_offset=line.end,
            name=name if isinstance(name, str) and role != "tool" else None,
            format=FORMAT,
        )
    )


def _calls(raw: list[Any]) -> list[ToolCall]:
    calls = []
    for item in raw:
        if isinstance(item, dict) and item.get("name") is not None:
            args = item.get("input")
            calls.append(
                ToolCall(
                    str(item.get("id") or ""),
                    str(item["name"]),
                    args if isinstance(args, dict) else {},
                )
            )
    return calls
