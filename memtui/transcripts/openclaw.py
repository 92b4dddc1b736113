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

What real files add (issue 12):

- **Version 1** files (pi's own, before the tree): a header without ``version`` and
  entries without ``id``/``parentId``. They are read as pi's session manager upgrades
  them (``migrateV1ToV2``): every entry after the header gets an id and is linked to
  the entry before it. pi draws random ids; ours are ``L<line>`` so that a resumed read
  names an entry as a full read does. A file without any header is read the same way.
- **Replayed history**: OpenClaw can append an earlier stretch again as a new branch,
  with new ids but the same messages (role, timestamp and content). A message equal to
  one earlier in the file is skipped (``skipped["message (replayed)"]``), so each is
  remembered once. A resumed read learns the earlier messages from the state the last
  read carried (``ReadState``), else by reading the file up to the watermark once
  (``_Tree.before``).
- **Failures**: a tool result failed when ``isError`` says so, or its ``details`` do
  (``status`` "error"/"failed"/"timeout", a non-zero ``exitCode``, an ``error``); an
  assistant message with ``stopReason`` "error" carries its ``errorMessage`` in
  ``Turn.error``.
- **Machine-written prompts**: heartbeat polls, system event lines and channel
  wrappers are taken off user messages (``harness.unwrap``); what is left is the
  person's, with the channel's ``sender``; a message with nothing left is the
  machine's (role "system", author "machine"), and so is a cron job's prompt or a
  sub-agent's result handed back (their text kept). An assistant reply that is only a
  protocol token (``HEARTBEAT_OK``, ``NO_REPLY``) has no text.
- **Sub-agent sessions**: OpenClaw runs a sub-agent in a session of its own, whose task
  (``[Subagent Context] ... [Subagent Task]: ...``) the orchestrating agent wrote
  (author "agent"); the assistant turns after it are the sub-agent's (author
  "subagent", ``subagent_id`` the session).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memtui.transcripts.harness import is_ack, unwrap
from memtui.transcripts.jsonl import (
    Line,
    Sink,
    as_int,
    block_text,
    first_object,
    parse_timestamp,
    result_text,
)
from memtui.transcripts.turn import Author, Role, ToolCall, ToolResult, Turn, Usage

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


# What a tool's ``details`` say when it failed although ``isError`` is false.
FAILED_STATUSES = frozenset({"error", "failed", "failure", "timeout", "timed_out", "killed"})


@dataclass
class _Tree:
    """What the entries read so far say: the file's version, the last entry, the messages.

    A resumed read gets the same answers as a full one by first reading the lines before
    its watermark (``before``), lazily: only a read that meets a message or a version-1
    entry needs them.
    """

    path: Path | None = None
    start: int = 0
    version: int = 1
    last_id: str | None = None
    seen: set[bytes] = field(default_factory=set)
    loaded: bool = False
    subagent: bool = False
    """The session is a sub-agent's: its task came from the orchestrating agent."""

    @classmethod
    def before(cls, path: Path, start: int) -> _Tree:
        header = first_object(path)
        version = 1
        if header is not None and header.get("type") == "session":
            raw = header.get("version")
            version = raw if isinstance(raw, int) and not isinstance(raw, bool) else 1
        return cls(path=path, start=start, version=version, loaded=start == 0)

    def copy(self) -> _Tree:
        """A copy to read on with; the original (carried in a ReadState) stays as it is."""
        return replace(self, seen=set(self.seen))

    def load(self) -> None:
        if self.loaded:
            return
        self.loaded = True
        if self.path is None:
            return
        with self.path.open("rb") as fh:
            offset, number = 0, 1
            for raw in fh:
                if offset >= self.start:
                    break
                offset += len(raw)
                try:
                    data = json.loads(raw)
                except (ValueError, RecursionError):
                    data = None
                if isinstance(data, dict):
                    self.note(data, number)
                number += 1

    def note(self, data: dict[str, Any], number: int) -> tuple[str | None, str | None, bool]:
        """Record an entry; return its id, its parent's id and whether it is a replay."""
        kind = data.get("type")
        if kind == "session":
            return None, None, False
        entry_id = data.get("id")
        parent: str | None
        if isinstance(entry_id, str) and entry_id:
            raw_parent = data.get("parentId")
            parent = raw_parent if isinstance(raw_parent, str) and raw_parent else None
        elif self.version < 2 and isinstance(kind, str):
            entry_id, parent = f"L{number}", self.last_id
        else:
            return None, None, False
        self.last_id = entry_id
        replay = False
        if kind == "message":
            message = data.get("message")
            if isinstance(message, dict) and message.get("role") == "user" and (
                    unwrap(block_text(message.get("content"))).by_agent):
                self.subagent = True
            key = _fingerprint(data)
            if key is not None:
                replay = key in self.seen
                self.seen.add(key)
        return entry_id, parent, replay


# What a message says, as opposed to how it was delivered (usage, provider, ids).
_CONTENT_KEYS = ("role", "content", "toolCallId", "command", "output", "customType")


def _fingerprint(data: dict[str, Any]) -> bytes | None:
    """Role, time and content of a message: equal for an entry and its replayed copy."""
    message = data.get("message")
    if not isinstance(message, dict):
        return None
    when = message.get("timestamp") or data.get("timestamp")
    if when is None:
        return None
    body = [message.get(k) for k in _CONTENT_KEYS]
    text = json.dumps([when, body], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def tree_before(path: Path, start: int, carried: object | None = None) -> _Tree:
    """The reading state for a read of ``path`` starting at byte ``start``: a copy of
    ``carried`` (the tree a previous read ended with, at ``start``) when there is one,
    else one that reads the file up to ``start`` when it first needs to."""
    if isinstance(carried, _Tree) and carried.loaded:
        return carried.copy()
    return _Tree.before(path, start)


def carry(tree: _Tree) -> _Tree | None:
    """The tree to hand the next read, or None when it never learnt the lines before its
    start (a resumed read that met no message): the next read then builds its own."""
    return tree if tree.loaded else None


def read(lines: Iterable[Line], sink: Sink, *, session: str, final: bool,
         tree: _Tree | None = None) -> Line | None:
    """Turn OpenClaw entries into the sink; whole-line entries never hold anything back."""
    tree = tree or _Tree(version=3, loaded=True)
    for line in lines:
        data = line.data
        kind = data.get("type")
        if kind == "session":
            if isinstance(data.get("id"), str):
                session = data["id"]
            sink.skip(line.number, "session")
            continue
        if kind == "message" or tree.version < 2:
            tree.load()
        entry_id, parent, replay = tree.note(data, line.number)
        if kind == "message":
            if replay:
                sink.skip(line.number, "message (replayed)")
            elif entry_id is not None or _no_id(line, sink):
                _message(line, sink, session, str(entry_id), parent, tree.subagent)
        elif kind == "compaction":
            if entry_id is not None or _no_id(line, sink):
                _compaction(line, sink, session, str(entry_id), parent)
        elif kind in SKIPPED_TYPES:
            sink.skip(line.number, str(kind))
            name = data.get("name")
            if kind == "session_info" and isinstance(name, str) and name.strip():
                # The name the person gave the session (pi's /name): its title.
                sink.note(line.number, "custom-title", name.strip())
        elif not isinstance(kind, str):
            sink.problem(line.number, "no string 'type' field")
        else:
            sink.unknown(line.number, kind)
    return None


def _no_id(line: Line, sink: Sink) -> bool:
    sink.problem(line.number, f"{line.data.get('type')} entry without an 'id'")
    return False


def _message(line: Line, sink: Sink, session: str, entry_id: str, parent: str | None,
             subagent: bool) -> None:
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
    author: Author | None = None
    sender: str | None = None
    error: str | None = None
    turn_role: Role
    if role == "user":
        turn_role, author = "user", "person"
        unwrapped = unwrap(block_text(content))
        text, sender = unwrapped.text, unwrapped.sender
        if unwrapped.machine is not None:
            turn_role, author = "system", "machine"
        elif unwrapped.by_agent:
            author = "agent"
    elif role == "assistant":
        turn_role = "assistant"
        author = "subagent" if subagent else "agent"
        text = block_text(content)
        if is_ack(text):
            text = ""
        thinking = block_text(content, kind="thinking")
        calls = tuple(_calls(content))
        usage = _usage(message.get("usage"))
        error = _model_error(message)
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
                is_error=_failed(message),
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
            author=author,
            subagent_id=session if author == "subagent" else None,
            parent_id=parent,
            sender=sender,
            error=error,
        )
    )


def _failed(message: dict[str, Any]) -> bool:
    """Every signal of a failed tool: ``isError``, or the tool's own ``details``."""
    if message.get("isError"):
        return True
    details = message.get("details")
    if not isinstance(details, dict):
        return False
    status = details.get("status")
    if isinstance(status, str) and status.lower() in FAILED_STATUSES:
        return True
    exit_code = details.get("exitCode")
    if isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0:
        return True
    error = details.get("error")
    return bool(error) and not isinstance(error, int | float)


def _model_error(message: dict[str, Any]) -> str | None:
    """Why the model call behind an assistant message failed, if it did.

    An abort (``stopReason`` "aborted", the person pressed Esc) is not a failure.
    """
    reason = message.get("stopReason")
    detail = message.get("errorMessage")
    if reason == "error":
        return detail.strip() if isinstance(detail, str) and detail.strip() else (
            "model call failed")
    if reason is None and isinstance(detail, str) and detail.strip():
        return detail.strip()
    return None


def _compaction(line: Line, sink: Sink, session: str, entry_id: str, parent: str | None
                ) -> None:
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
            parent_id=parent,
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
