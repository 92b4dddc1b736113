"""Reader for Claude Code session transcripts (~/.claude/projects/<project>/<session>.jsonl).

What the files hold (checked against real Claude Code 2.1.x sessions in
shared/samples/transcripts/claude-code): one JSON object per line with a ``type``.
``user`` and ``assistant`` lines carry ``uuid``, ``sessionId``, ``timestamp`` and
``message{role, content}``; content is a string or a list of ``text``, ``thinking``,
``tool_use`` and ``tool_result`` blocks. ``progress``, ``file-history-snapshot``,
``queue-operation``, ``system`` and a few other bookkeeping types are counted in
``skipped``; other types in ``unknown_types``.

One API message is written as several lines, one per content block, all sharing
``message.id``; with streamed tool execution the ``tool_result`` lines of its first
tool calls are interleaved before its later blocks (see subagent-a2898e3.jsonl). So
a message is merged into ONE assistant turn (id = ``message.id``) across those
lines, and it is *closed* only by a later assistant line with another id, a user
line that is not purely tool results (the human spoke), or a ``system`` line that
ends the turn (``turn_duration``, ``stop_hook_summary``, ``compact_boundary``).

Exactly once across resumes: a message still open at the end of what is written may
get more blocks, so it is not consumed. The read stops (``end_offset``/``end_line``)
at the message's first line and gives back everything from there on (including
the tool results interleaved with it); the next read sees the whole message again.
Pass ``final=True`` when the session is over (the agent exited, or the file has
been idle long enough) to consume the last message as it stands. No state besides
the watermark (offset, line) is needed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.transcripts.harness import is_heartbeat
from memtui.transcripts.jsonl import (
    Line,
    Sink,
    as_int,
    block_text,
    last_line_with,
    parse_timestamp,
    result_text,
)
from memtui.transcripts.turn import Author, Kind, Role, ToolCall, ToolResult, Turn, Usage

FORMAT = "claude-code"

SKIPPED_TYPES = frozenset(
    {
        "progress",
        "file-history-snapshot",
        "file-history-delta",
        "queue-operation",
        "system",
        "summary",
        "attachment",
        "permission-mode",
        "custom-title",
        "last-prompt",
        # Seen in 2.1.x files; titles and cost are also kept (ReadResult.title, cost_usd).
        "mode",
        "ai-title",
        "cost-state",
        "atis-latch",
        "agent-name",
        "tag",
        "relocated",
        "pr-link",
    }
)
# Where a title line keeps its title, by type.
TITLE_KEYS = {"summary": "summary", "ai-title": "aiTitle", "custom-title": "customTitle"}
COST_KEYS = ("totalCostUSD", "totalCostUsd", "costUSD", "costUsd", "totalCost")
# System lines Claude Code writes once a turn is over: no block can follow them.
TURN_ENDING_SUBTYPES = frozenset({"turn_duration", "stop_hook_summary", "compact_boundary"})


@dataclass
class _Message:
    """An assistant message being assembled from its lines."""

    id: str
    session: str
    first: Line
    last: Line
    texts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    usage: Usage | None = None
    subagent: str | None = None
    """The sub-agent that wrote it ("" when it is one but its id is unknown)."""
    error: str | None = None

    def turn(self, source: str) -> Turn:
        return Turn(
            id=self.id,
            session=self.session,
            timestamp=parse_timestamp(self.first.data.get("timestamp")),
            role="assistant",
            text="\n\n".join(self.texts),
            thinking="\n\n".join(self.thinking),
            tool_calls=tuple(self.calls),
            usage=self.usage,
            source=source,
            line=self.first.number,
            offset=self.first.offset,
            end_offset=self.last.end,
            format=FORMAT,
            author="agent" if self.subagent is None else "subagent",
            subagent_id=self.subagent or None,
            parent_id=_parent(self.first.data),
            error=self.error,
        )


def read(lines: Iterable[Line], sink: Sink, *, session: str, final: bool) -> Line | None:
    """Turn Claude Code lines into the sink; return the first line it holds back, if any."""
    # ``session`` is the file stem here; a sub-agent's own file is agent-<id>.jsonl.
    reader = _Reader(sink, session, session[6:] if session.startswith("agent-") else None)
    for line in lines:
        reader.feed(line)
    if reader.open is None:
        return None
    if final:
        reader.close()
        return None
    return reader.open.first


class _Reader:
    """Assembles turns line by line, keeping the assistant message that may still grow."""

    def __init__(self, sink: Sink, session: str, subagent: str | None = None) -> None:
        self.sink = sink
        self.session = session
        # The sub-agent a file belongs to, from its name (agent-<id>.jsonl), for
        # sidechain lines that do not carry their ``agentId``.
        self.subagent = subagent
        self.open: _Message | None = None
        # Tool names by call id, so results can say which tool they answer.
        self.tool_names: dict[str, str | None] = {}
        self.path = Path(sink.source) if sink.source else None

    def close(self) -> None:
        if self.open is not None:
            self.sink.add(self.open.turn(self.sink.source))
            self.open = None

    def feed(self, line: Line) -> None:
        data = line.data
        kind = data.get("type")
        if kind == "assistant":
            self.assistant(line)
        elif kind == "user":
            self.user(line)
        elif kind in SKIPPED_TYPES:
            if kind == "system" and data.get("subtype") in TURN_ENDING_SUBTYPES:
                self.close()
            self.sink.skip(line.number, str(kind))
            self.keep(line)
        elif not isinstance(kind, str):
            self.sink.problem(line.number, "no string 'type' field")
        else:
            self.sink.unknown(line.number, kind)

    def keep(self, line: Line) -> None:
        """Note a bookkeeping line's title or cost."""
        data = line.data
        kind = str(data.get("type"))
        title = data.get(TITLE_KEYS.get(kind, ""))
        if isinstance(title, str) and title.strip():
            self.sink.note(line.number, kind, title.strip())
        elif kind == "cost-state":
            for key in COST_KEYS:
                value = data.get(key)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    self.sink.note(line.number, "cost", float(value))
                    break

    def assistant(self, line: Line) -> None:
        data = line.data
        message = data.get("message")
        if not isinstance(message, dict):
            self.sink.problem(line.number, "assistant line without a 'message' object")
            return
        msg_id = message.get("id") or data.get("uuid")
        if not isinstance(msg_id, str) or not msg_id:
            self.sink.problem(line.number, "assistant line with neither message.id nor uuid")
            return
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            self.sink.problem(line.number, "assistant message.content is not a string or list")
            return
        if self.open is None or self.open.id != msg_id:
            self.close()
            self.open = _Message(msg_id, self._session(data), line, line,
                                 subagent=self._subagent(data))
        msg = self.open
        msg.last = line
        if data.get("isApiErrorMessage"):
            # Claude Code's own line for a failed model call ("API Error: 529 ...").
            msg.error = block_text(content) or "model call failed"
            return
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str):
                if block["text"].strip():
                    msg.texts.append(block["text"].strip())
            elif btype == "thinking" and isinstance(block.get("thinking"), str):
                if block["thinking"].strip():
                    msg.thinking.append(block["thinking"].strip())
            elif btype in ("tool_use", "server_tool_use"):
                call = _tool_call(block)
                if call is not None:
                    msg.calls.append(call)
                    self.tool_names[call.id] = call.name
        usage = message.get("usage")
        if isinstance(usage, dict):
            # Every line repeats the message's usage; the last one is the most complete.
            msg.usage = Usage(
                input_tokens=as_int(usage.get("input_tokens")),
                output_tokens=as_int(usage.get("output_tokens")),
                cache_read_tokens=as_int(usage.get("cache_read_input_tokens")),
                cache_creation_tokens=as_int(usage.get("cache_creation_input_tokens")),
            )

    def user(self, line: Line) -> None:
        data = line.data
        message = data.get("message")
        uuid = data.get("uuid")
        if not isinstance(message, dict) or not isinstance(uuid, str) or not uuid:
            self.sink.problem(line.number, "user line without 'uuid' and a 'message' object")
            return
        content = message.get("content")
        if not isinstance(content, str | list):
            self.sink.problem(line.number, "user message.content is not a string or list")
            return
        results = tuple(self._results(content, line)) if isinstance(content, list) else ()
        text = block_text(content)
        only_results = bool(results) and not text
        if not only_results:
            # The human (or the harness on their behalf) spoke: the message is over.
            self.close()
        role: Role = "tool" if only_results else "user"
        kind: Kind = "message"
        subagent = self._subagent(data)
        # In a sidechain the "user" is the orchestrating agent (the Task prompt).
        author: Author = "machine" if only_results else (
            "person" if subagent is None else "agent")
        if data.get("isCompactSummary"):
            role, kind, author = "system", "compaction", "machine"
        elif data.get("isMeta") and not only_results or _harness_text(text) or (
                text and is_heartbeat(text)):
            # Caveats and command echoes Claude Code injects, and a heartbeat piped to
            # `claude -p` (memtui's command delivery): not the human's words.
            role, author = "system", "machine"
        self.sink.add(
            Turn(
                id=uuid,
                session=self._session(data),
                timestamp=parse_timestamp(data.get("timestamp")),
                role=role,
                text=text,
                tool_results=results,
                source=self.sink.source,
                line=line.number,
                offset=line.offset,
                end_offset=line.end,
                format=FORMAT,
                kind=kind,
                author=author,
                subagent_id=subagent or None,
                parent_id=_parent(data),
            )
        )

    def _results(self, content: list[Any], line: Line) -> list[ToolResult]:
        results = []
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            call_id = str(block.get("tool_use_id") or "")
            results.append(
                ToolResult(
                    tool_call_id=call_id,
                    name=self._tool_name(call_id, line),
                    content=result_text(block.get("content")),
                    is_error=bool(block.get("is_error")),
                )
            )
        return results

    def _tool_name(self, call_id: str, line: Line) -> str | None:
        """The name of the tool a result answers, also when its call came before this read."""
        if not call_id or call_id in self.tool_names:
            return self.tool_names.get(call_id)
        name: str | None = None
        if self.path is not None and line.offset > 0:
            # A resumed read starts past the call: find it where a full read saw it.
            try:
                found = last_line_with(self.path, line.offset, call_id.encode(),
                                       lambda d: _call_named(d, call_id) is not None)
            except OSError:
                found = None
            name = _call_named(found, call_id) if found is not None else None
        self.tool_names[call_id] = name
        return name

    def _subagent(self, data: dict[str, Any]) -> str | None:
        """The sub-agent id of a sidechain line ("" if unknown), None on the main thread."""
        if not data.get("isSidechain"):
            return None
        agent_id = data.get("agentId")
        if isinstance(agent_id, str) and agent_id:
            return agent_id
        return self.subagent or ""

    def _session(self, data: dict[str, Any]) -> str:
        value = data.get("sessionId")
        return value if isinstance(value, str) and value else self.session


# Output of a local command (``!ls``, ``/cost``) that Claude Code echoes as a user line.
_HARNESS_PREFIXES = ("<local-command-stdout>", "<local-command-stderr>", "<bash-stdout>",
                     "<bash-stderr>", "<local-command-caveat>")


def _call_named(data: dict[str, Any], call_id: str) -> str | None:
    """The tool name of call ``call_id`` on an assistant line, if it is there."""
    message = data.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if data.get("type") != "assistant" or not isinstance(content, list):
        return None
    for block in content:
        if isinstance(block, dict) and block.get("id") == call_id:
            name = block.get("name")
            return name if isinstance(name, str) else None
    return None


def _parent(data: dict[str, Any]) -> str | None:
    parent = data.get("parentUuid")
    return parent if isinstance(parent, str) and parent else None


def _harness_text(text: str) -> bool:
    return text.startswith(_HARNESS_PREFIXES)


def _tool_call(block: dict[str, Any]) -> ToolCall | None:
    call_id, name = block.get("id"), block.get("name")
    if not isinstance(call_id, str) or not isinstance(name, str):
        return None
    args = block.get("input")
    return ToolCall(call_id, name, args if isinstance(args, dict) else {"input": args})
