"""Byte-exact JSONL line reading and the bookkeeping every transcript reader shares."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memtui.errors import MemtuiError
from memtui.transcripts.turn import Problem, Turn

# Read size when counting the newlines before a watermark.
_CHUNK = 1 << 16


class StaleOffset(MemtuiError, ValueError):
    """The watermark does not fit the file: it shrank or was rewritten in place."""

    def __init__(self, path: object, offset: int, reason: str) -> None:
        self.path = str(path)
        self.offset = offset
        self.reason = reason
        super().__init__(
            f"{self.path}: cannot resume at byte {offset}: {reason}; "
            "the transcript was rewritten, read it again from offset 0"
        )


@dataclass(frozen=True)
class Line:
    """One complete, parsed JSONL line: an object, with where it sits in the file."""

    number: int
    offset: int
    end: int
    data: dict[str, Any]


@dataclass
class Sink:
    """Collects what one read produced, so a reader can later give back a held tail.

    Everything is keyed by line number: ``finish(cut)`` drops whatever came from line
    ``cut`` on, which is how a reader declines to consume lines it may have to see
    again (see ``claude_code``).
    """

    source: str
    turns: list[Turn] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    _skipped: list[tuple[int, str]] = field(default_factory=list)
    _unknown: list[tuple[int, str]] = field(default_factory=list)
    _notes: list[tuple[int, str, Any]] = field(default_factory=list)

    def add(self, turn: Turn) -> None:
        self.turns.append(turn)

    def problem(self, line: int, message: str) -> None:
        self.problems.append(Problem(self.source, line, message))

    def skip(self, line: int, kind: str) -> None:
        self._skipped.append((line, kind))

    def unknown(self, line: int, kind: str) -> None:
        self._unknown.append((line, kind))

    def note(self, line: int, key: str, value: Any) -> None:
        """Something a line says about the session (its title, its cost)."""
        self._notes.append((line, key, value))

    def notes(self, cut: int | None) -> dict[str, Any]:
        """The last value of each note from lines before ``cut``."""
        return {key: value for line, key, value in self._notes if cut is None or line < cut}

    def finish(
        self, cut: int | None
    ) -> tuple[list[Turn], list[Problem], dict[str, int], dict[str, int]]:
        """Turns (in file order), problems and counts from lines before ``cut``."""

        def keep(line: int) -> bool:
            return cut is None or line < cut

        turns = sorted((t for t in self.turns if keep(t.line)), key=lambda t: t.line)
        problems = [p for p in self.problems if keep(p.line)]
        skipped = Counter(kind for line, kind in self._skipped if keep(line))
        unknown = Counter(kind for line, kind in self._unknown if keep(line))
        return turns, problems, dict(skipped), dict(unknown)


class LineReader:
    """Yields the complete lines of a file from a byte offset, tracking the watermark.

    A last line without its newline is an agent mid-write: it is not yielded and
    ``end_offset`` stops before it, unless ``final`` says the file is complete.
    Blank lines are consumed silently; lines that are not JSON objects go to the
    sink as problems. Offsets count raw bytes, never decoded characters.
    """

    def __init__(
        self, path: Path, start_offset: int, start_line: int, sink: Sink, *, final: bool
    ) -> None:
        self.path = path
        self.sink = sink
        self.final = final
        self.end_offset = start_offset
        self.next_line = start_line
        self.pending_bytes = 0

    def __iter__(self) -> Iterator[Line]:
        with self.path.open("rb") as fh:
            fh.seek(self.end_offset)
            offset = self.end_offset
            for raw in fh:
                end = offset + len(raw)
                if not raw.endswith(b"\n") and not self.final:
                    self.pending_bytes = len(raw)
                    return
                number = self.next_line
                self.end_offset = end
                self.next_line += 1
                start, offset = offset, end
                line = self._parse(raw, number, start, end)
                if line is not None:
                    yield line

    def _parse(self, raw: bytes, number: int, start: int, end: int) -> Line | None:
        if not raw.strip():
            return None
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            # ValueError covers both bad JSON and bytes that are not UTF-8.
            self.sink.problem(number, f"not valid JSON: {_short(str(exc))}")
            return None
        if not isinstance(data, dict):
            self.sink.problem(number, f"expected a JSON object, got {type(data).__name__}")
            return None
        return Line(number, start, end, data)


def check_offset(path: Path, offset: int) -> None:
    """Refuse a watermark past the end of the file or in the middle of a line."""
    if offset < 0:
        raise StaleOffset(path, offset, "a negative offset")
    if offset == 0:
        return
    size = path.stat().st_size
    if offset > size:
        raise StaleOffset(path, offset, f"the file is only {size} bytes long")
    with path.open("rb") as fh:
        fh.seek(offset - 1)
        if fh.read(1) != b"\n":
            raise StaleOffset(path, offset, "it is not the start of a line")


def count_lines_before(path: Path, offset: int) -> int:
    """The 1-based number of the line starting at ``offset`` (counts newlines before it)."""
    count = 0
    remaining = offset
    with path.open("rb") as fh:
        while remaining > 0:
            chunk = fh.read(min(_CHUNK, remaining))
            if not chunk:
                break
            count += chunk.count(b"\n")
            remaining -= len(chunk)
    return count + 1


def first_object(path: Path, max_lines: int = 5) -> dict[str, Any] | None:
    """The first JSON object among the first lines of a file (a session header)."""
    with path.open("rb") as fh:
        for _, raw in zip(range(max_lines), fh, strict=False):
            try:
                data = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(data, dict):
                return data
    return None


def last_line_with(path: Path, before: int, needle: bytes,
                   accept: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    """The last JSON object line before byte ``before`` holding ``needle`` that ``accept``s.

    Reads backwards in blocks, so finding a line a little way back costs little; used to
    learn what an earlier read already saw (a resumed read starts past it).
    """
    block = 1 << 18
    with path.open("rb") as fh:
        end = before
        carry = b""
        while end > 0:
            start = max(0, end - block)
            fh.seek(start)
            chunk = fh.read(end - start) + carry
            at = chunk.rfind(needle)
            while at != -1:
                first = chunk.rfind(b"\n", 0, at) + 1
                if first == 0 and start > 0:
                    break  # the line begins in an earlier block
                last = chunk.find(b"\n", at)
                try:
                    data = json.loads(chunk[first:last if last != -1 else len(chunk)])
                except (ValueError, RecursionError):
                    data = None
                if isinstance(data, dict) and accept(data):
                    return data
                at = chunk.rfind(needle, 0, first) if first > 0 else -1
            # Keep the partial first line, so a line spanning two blocks is seen whole.
            cut = chunk.find(b"\n")
            carry = chunk if cut == -1 else chunk[:cut]
            if start == 0:
                break
            end = start
    return None


def parse_timestamp(value: object) -> datetime | None:
    """An aware datetime from ISO 8601 text or epoch seconds/milliseconds; else None.

    Naive times are taken as UTC: every agent we read writes UTC.
    """
    when: datetime
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if abs(value) > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def as_int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def block_text(content: object, *, kind: str = "text") -> str:
    """Join the ``kind`` blocks ("text" or "thinking") of a string or a block list.

    Both block types keep their words under a key named like the type. A plain
    string counts as text.
    """
    if isinstance(content, str):
        return content.strip() if kind == "text" else ""
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, str) and kind == "text":
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == kind:
            value = block.get(kind)
            if isinstance(value, str):
                parts.append(value)
    return "\n\n".join(p.strip() for p in parts if p.strip())


def result_text(content: object) -> str:
    """Tool output as text: strings and text blocks verbatim, images as a placeholder."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False)
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") == "image":
                parts.append("[image]")
    return "\n".join(parts)


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
