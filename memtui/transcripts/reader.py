"""read_transcript: incremental, exactly-once reading of any supported transcript."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from memtui.transcripts import claude_code, generic, openclaw
from memtui.transcripts.detect import detect_format
from memtui.transcripts.jsonl import (
    Line,
    LineReader,
    Sink,
    check_offset,
    count_lines_before,
    first_object,
)
from memtui.transcripts.names import session_stem
from memtui.transcripts.turn import FORMATS, ReadResult, ReadState


class FormatReader(Protocol):
    """Feeds a sink from parsed lines; returns the first line it holds back, if any."""

    def __call__(
        self, lines: Iterable[Line], sink: Sink, *, session: str, final: bool
    ) -> Line | None: ...


READERS: dict[str, FormatReader] = {
    "openclaw": openclaw.read,
    "claude-code": claude_code.read,
    "generic": generic.read,
}


def read_transcript(
    path: str | os.PathLike[str],
    *,
    start_offset: int = 0,
    start_line: int | None = None,
    fmt: str = "auto",
    final: bool = False,
    state: ReadState | None = None,
) -> ReadResult:
    """Read the turns written to ``path`` since byte ``start_offset``.

    - ``start_line``: the 1-based number of the line at ``start_offset`` (the
      previous result's ``end_line``); when omitted it is counted from the file.
    - ``fmt``: "openclaw", "claude-code", "generic" or "auto" (``detect_format``).
      A file with nothing to judge yet reads as format "unknown", with no turns.
    - ``final``: the writer is done with this file: consume a last line that lacks
      its newline, and a Claude Code message that could otherwise still grow.
    - ``state``: the previous result's ``state``, when the caller still holds it. A
      resumed OpenClaw read then costs only the appended bytes; without it (or when it
      does not fit this read) the file is read up to ``start_offset`` again to learn
      what replays and links depend on. The turns are the same either way.

    The result's ``end_offset``/``end_line`` are the next watermark, and its ``state``
    the next read's. A torn last line is left for the next read; a bad line becomes a
    Problem and the read goes on. Raises StaleOffset when ``start_offset`` is past the
    end of the file or not at a line start (the file was rewritten), UnknownFormat when
    ``fmt="auto"`` and the file matches no format, and ValueError for an unknown ``fmt``.
    """
    path = Path(path)
    if fmt != "auto" and fmt not in READERS:
        raise ValueError(f"unknown transcript format {fmt!r}: use auto or one of {FORMATS}")
    check_offset(path, start_offset)
    stat = path.stat()
    if state is not None and not _fits(state, path, stat, start_offset, start_line, fmt):
        state = None
    if start_line is None:
        start_line = state.line if state else (
            count_lines_before(path, start_offset) if start_offset else 1)
    if fmt == "auto":
        fmt = state.format if state else detect_format(path)
        if fmt == "unknown":
            return ReadResult(turns=[], end_offset=start_offset, end_line=start_line, format=fmt)

    sink = Sink(str(path))
    lines = LineReader(path, start_offset, start_line, sink, final=final)
    session = state.session if state else _session(path, fmt)
    carried: object | None = None
    if fmt == "openclaw":
        # Replays and version-1 links depend on the entries before the watermark.
        tree = openclaw.tree_before(path, start_offset, state.carried if state else None)
        held = openclaw.read(lines, sink, session=session, final=final, tree=tree)
        carried = openclaw.carry(tree)
    else:
        held = READERS[fmt](lines, sink, session=session, final=final)
    cut = None if held is None else held.number
    turns, problems, skipped, unknown = sink.finish(cut)
    notes = sink.notes(cut)
    if held is None:
        end_offset, end_line = lines.end_offset, lines.next_line
    else:
        end_offset, end_line = held.offset, held.number
    return ReadResult(
        turns=turns,
        end_offset=end_offset,
        end_line=end_line,
        format=fmt,
        problems=problems,
        unknown_types=unknown,
        skipped=skipped,
        lines_read=end_line - start_line,
        pending_bytes=lines.end_offset + lines.pending_bytes - end_offset,
        title=notes.get("custom-title") or notes.get("ai-title") or notes.get("summary"),
        cost_usd=notes.get("cost"),
        state=ReadState(stat.st_dev, stat.st_ino, end_offset, end_line, fmt, session,
                        _bytes_before(path, end_offset), carried),
    )


# Enough of the end of the last line read to notice the file was rewritten under it.
_CHECK_BYTES = 64


def _bytes_before(path: Path, offset: int) -> bytes:
    start = max(0, offset - _CHECK_BYTES)
    with path.open("rb") as fh:
        fh.seek(start)
        return fh.read(offset - start)


def _fits(state: ReadState, path: Path, stat: os.stat_result, start_offset: int,
          start_line: int | None, fmt: str) -> bool:
    """Whether ``state`` is where this read starts: the same file, offset, line and
    format, and the same bytes before the offset (not a file rewritten in place)."""
    return ((state.device, state.inode) == (stat.st_dev, stat.st_ino)
            and state.offset == start_offset
            and (start_line is None or start_line == state.line)
            and fmt in ("auto", state.format)
            and state.format in READERS
            and _bytes_before(path, start_offset) == state.before)


def _session(path: Path, fmt: str) -> str:
    """The session id for lines that carry none: the OpenClaw header's; for generic files
    ``default_session``; else the session the file's name gives (``names.session_stem``:
    a reset or deleted copy keeps its session).

    The header is read from the top of the file because a resumed read starts past it.
    """
    if fmt == "openclaw":
        header = first_object(path)
        if header and header.get("type") == "session" and isinstance(header.get("id"), str):
            return str(header["id"])
    if fmt == "generic":
        return default_session(path)
    return session_stem(path)


_ROTATION = re.compile(r"(?:[.-]\d{1,8})+$")
_EXTENSIONS = (".jsonl", ".ndjson", ".json", ".log", ".txt")
FIRST_LINE_BYTES = 64 * 1024
"""At most this much of the first line identifies a file's content."""


def base_name(path: Path) -> str:
    """The file name without rotation numbers and extension: log.jsonl.1 -> log."""
    name = _ROTATION.sub("", path.name) or path.name
    for ext in _EXTENSIONS:
        if name.endswith(ext) and len(name) > len(ext):
            return name[: -len(ext)]
    return name


def default_session(path: Path) -> str:
    """The session of generic lines without a ``session`` field: ``<base>#<hash>``.

    ``base`` is the file name without rotation suffix and extension, ``hash`` the first 8
    hex digits of the SHA-1 of the file's first line. A rotated copy (log.jsonl ->
    log.jsonl.1) keeps its session, so its turns are known to be extracted already; a
    new log.jsonl that reuses the message ids 1, 2, ... starts with another line, so it
    is another session and is extracted.
    """
    with path.open("rb") as fh:
        first = fh.readline(FIRST_LINE_BYTES)
    digest = hashlib.sha1(first.rstrip(b"\r\n")).hexdigest()[:8]
    return f"{base_name(path)}#{digest}"
