"""The Turn every transcript reader yields, and the ReadResult of one incremental read."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Role = Literal["user", "assistant", "tool", "system"]
Kind = Literal["message", "compaction"]
Author = Literal["person", "agent", "subagent", "machine"]

AUTHORS: tuple[Author, ...] = ("person", "agent", "subagent", "machine")
# Who wrote a turn when its reader knows nothing more than the role.
_AUTHOR_OF_ROLE: dict[str, Author] = {
    "user": "person",
    "assistant": "agent",
    "tool": "machine",
    "system": "machine",
}

FORMATS = ("openclaw", "claude-code", "generic")


@dataclass(frozen=True)
class ToolCall:
    """A tool the assistant asked to run."""

    id: str
    name: str
    # hash=False keeps Turn hashable although the arguments are a dict.
    input: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class ToolResult:
    """What a tool returned; a refusal by the human arrives as an error result."""

    tool_call_id: str
    name: str | None
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class Usage:
    """Token counts the model provider reported for one assistant message."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_creation_tokens
        )


@dataclass(frozen=True)
class Turn:
    """One message of a transcript, whatever format it came from.

    ``text`` is what the speaker visibly said; for role ``tool`` it is empty and the
    output lives in ``tool_results``. ``line``/``offset`` locate the first line of the
    turn and ``end_offset`` the byte just after its last line (a Claude Code assistant
    message can span several lines, with tool results interleaved).

    ``author`` says who wrote it, which the role alone does not: ``person`` (the human),
    ``agent`` (the main agent, also when it writes a sub-agent's prompt), ``subagent``
    (a sub-agent's own words; ``subagent_id`` names it where the transcript does) or
    ``machine`` (tool results, harness, hook, heartbeat and wrapper prompts). Only a
    person's turn can carry a rejection or a decision. A reader that cannot tell leaves
    it to the role: user -> person, assistant -> agent, tool/system -> machine.

    ``sender`` is who sent a message that came through a chat channel (its wrapper is
    stripped from ``text``); ``error`` is why a model call failed (the turn then has no
    text of its own); ``parent_id`` is the entry this one follows in the transcript's
    tree (OpenClaw ``parentId``, Claude Code ``parentUuid``), where the format has one.
    """

    id: str
    session: str
    timestamp: datetime | None
    role: Role
    text: str
    source: str
    line: int
    offset: int
    end_offset: int
    format: str
    thinking: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    usage: Usage | None = None
    name: str | None = None
    kind: Kind = "message"
    author: Author | None = None
    subagent_id: str | None = None
    parent_id: str | None = None
    sender: str | None = None
    error: str | None = None

    def __post_init__(self) -> None:
        if self.author is None:
            object.__setattr__(self, "author", _AUTHOR_OF_ROLE[self.role])


@dataclass(frozen=True)
class Problem:
    """A line that could not be read; it was skipped and the read went on."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class ReadState:
    """What a read knew at its end, to carry into the next read of the same file.

    Pass it back as ``read_transcript(..., state=result.state)``: a resumed read then
    costs only the appended bytes instead of re-reading the file up to the watermark.
    It is used only when it fits (the same file, read up to exactly ``start_offset``,
    the bytes before it unchanged), else ignored. Never changed once returned, so one
    state may be passed to several reads.
    """

    device: int
    inode: int
    offset: int
    line: int
    format: str
    session: str
    before: bytes
    """The last bytes before ``offset``: a file rewritten in place no longer has them."""
    carried: object | None = None
    """The format reader's own state (OpenClaw: the entry tree and replay fingerprints)."""


@dataclass
class ReadResult:
    """The outcome of reading a transcript from a watermark.

    Store ``end_offset`` and ``end_line`` together as the watermark and pass them back
    as ``start_offset``/``start_line`` next time: everything before them has been
    turned into ``turns`` (or counted, or reported) exactly once.
    """

    turns: list[Turn]
    end_offset: int
    end_line: int
    format: str
    problems: list[Problem] = field(default_factory=list)
    unknown_types: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    lines_read: int = 0
    # Bytes after end_offset that were seen but deliberately left for the next read
    # (a torn last line, or a Claude Code message that may still be growing).
    pending_bytes: int = 0
    title: str | None = None
    """The session's title as of this read: a name the person gave (Claude Code's
    ``custom-title``, OpenClaw's ``session_info``), else the one the model gave, else a
    ``summary`` line's; None when the read saw none."""
    cost_usd: float | None = None
    """The session's cost so far, as the agent last recorded it in this read."""
    state: ReadState | None = None
    """What to pass as ``state`` to the next read from ``end_offset`` (see ReadState)."""
