"""Transcript readers: OpenClaw v3, Claude Code and generic JSONL, all yielding Turns.

Use ``read_transcript(path, start_offset=..., start_line=...)`` from a stored
watermark; store the result's ``end_offset``/``end_line`` with whatever was made of
its turns, in the same transaction, and every turn is seen exactly once. A process that
reads the same file again and again (a follower) passes ``state=result.state`` too, so a
resumed read costs only the appended bytes.
"""

from __future__ import annotations

from memtui.transcripts.detect import UnknownFormat, detect_format
from memtui.transcripts.jsonl import StaleOffset
from memtui.transcripts.reader import read_transcript
from memtui.transcripts.turn import (
    AUTHORS,
    FORMATS,
    Author,
    Problem,
    ReadResult,
    ReadState,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
)

__all__ = [
    "AUTHORS",
    "FORMATS",
    "Author",
    "Problem",
    "ReadResult",
    "ReadState",
    "StaleOffset",
    "ToolCall",
    "ToolResult",
    "Turn",
    "UnknownFormat",
    "Usage",
    "detect_format",
    "read_transcript",
]
