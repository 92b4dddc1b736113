"""Telling transcript formats apart from the first meaningful lines of a file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memtui.errors import MemtuiError
from memtui.transcripts import claude_code, openclaw

# Lines of a known kind that prove no format (a file may open with hundreds of Claude
# Code ``summary`` lines) are read past, up to these limits.
_MAX_LINES = 2000
_MAX_BYTES = 8 << 20
# Unknown lines tolerated before the file is judged to be no transcript.
_MAX_UNKNOWN = 25

CLAUDE_CODE_TYPES = frozenset({"user", "assistant"}) | claude_code.SKIPPED_TYPES
# OpenClaw (pi) entry types besides ``message``; with the tree's ``parentId`` they are
# OpenClaw's even without the session header.
OPENCLAW_TYPES = (openclaw.SKIPPED_TYPES - {"session"}) | {"compaction"}
# Known types that may not prove a format on their own line; they never count as unknown.
KNOWN_TYPES = CLAUDE_CODE_TYPES | OPENCLAW_TYPES


class UnknownFormat(MemtuiError, ValueError):
    """A non-empty transcript whose first lines match none of the known formats."""

    def __init__(self, path: object, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(
            f"{self.path}: not a transcript memtui can read ({reason}); "
            "expected OpenClaw, Claude Code or generic JSONL"
        )


def classify(data: dict[str, Any]) -> str | None:
    """The format one parsed line proves, or None if the line is not decisive."""
    kind = data.get("type")
    if kind == "session" and ("version" in data or "cwd" in data):
        # pi's version-1 header has no "version", but the session's working directory.
        return "openclaw"
    if kind == "message" and isinstance(data.get("message"), dict):
        # An OpenClaw entry seen without its header (v1 files, or a header-less copy).
        return "openclaw"
    if kind in CLAUDE_CODE_TYPES and ("sessionId" in data or "uuid" in data):
        return "claude-code"
    if kind == "file-history-snapshot" and "snapshot" in data:
        return "claude-code"
    if kind in OPENCLAW_TYPES and "parentId" in data:
        return "openclaw"
    if kind == "summary" and "leafUuid" in data:
        # Only Claude Code writes these (a title pointing at the last message it covers).
        return "claude-code"
    if (
        kind == "message"
        and "role" in data
        and ("content" in data or "tool_calls" in data)
        and "uuid" not in data
    ):
        return "generic"
    return None


def detect_format(path: str | os.PathLike[str]) -> str:
    """Return "openclaw", "claude-code" or "generic" for a transcript file.

    Returns "unknown" for a file with nothing to judge yet (empty, blank, or only a
    torn first line being written) and raises UnknownFormat when the first
    meaningful lines match no format.
    """
    path = Path(path)
    seen: list[str] = []
    read = 0
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            read += len(raw)
            if number > _MAX_LINES or read > _MAX_BYTES or len(seen) >= _MAX_UNKNOWN:
                break
            if not raw.strip():
                continue
            try:
                data = json.loads(raw)
            except (ValueError, RecursionError):
                if not raw.endswith(b"\n"):
                    # The agent is still writing this line; judge it next time.
                    break
                seen.append(f"line {number} is not JSON")
                continue
            if not isinstance(data, dict):
                seen.append(f"line {number} is a JSON {type(data).__name__}, not an object")
                continue
            fmt = classify(data)
            if fmt is not None:
                return fmt
            if data.get("type") in KNOWN_TYPES:
                continue
            keys = ", ".join(sorted(data)[:6])
            seen.append(f"line {number} has type {data.get('type')!r} and keys {keys}")
    if not seen:
        return "unknown"
    reason = "; ".join(seen[:3]) + (f"; and {len(seen) - 3} more" if len(seen) > 3 else "")
    raise UnknownFormat(path, reason)
