"""The Turn every transcript reader yields, and the ReadResult of one incremental read."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Role = Literal["user", "assistant", "tool", "system"]
Kind = Literal["message", "compaction"]

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


@dataclass(frozen=True)
class Problem:
    """A line that could not be read; it was skipped and the read went on."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


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
