"""Chunking for the search index: markdown by lines with overlap, transcripts by whole messages.

Sizes are in estimated tokens (characters / 4, as everywhere in memtui). Markdown
chunks follow the seed system: line-based, about ``tokens`` per chunk with
``overlap`` tokens carried from the end of one chunk into the next, 1-based start
and end lines, and a content hash. A line longer than a whole chunk is cut into
segments (each keeps its line number), the only place text is split mid-line.

Transcript chunks never split a message: in "window" mode consecutive messages of
one session share a chunk up to the size budget (one oversized message is a chunk of
its own); in "message" mode every message is its own chunk. Each chunk lists the ids
of the messages it covers. ``embed_text`` is what gets embedded: it may add context
(the speaker, the date, the previous message) that the keyword index and the snippet
do not need.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

CHARS_PER_TOKEN = 4
_T = TypeVar("_T")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Chunk:
    """One unit of the index: what is searched, shown, embedded, and where it came from."""

    source: str
    """memory, sessions, episodes or facts."""
    path: str
    """Workspace-relative for memory files, absolute for transcripts, ``memory.db#...`` else."""
    start_line: int
    end_line: int
    text: str
    """What the keyword index holds and the snippet shows."""
    embed_text: str = ""
    """What is embedded (defaults to ``text``)."""
    message_ids: tuple[str, ...] = ()
    session: str | None = None
    ts: str | None = None
    """ISO 8601 time of the chunk's content (a message, an episode, a daily file)."""
    ref: str | None = None
    """The row behind a database chunk (``episode:12``, ``fact:7``)."""
    current: bool = True
    """False for a superseded fact: only ``recall --history`` shows it."""
    meta: dict[str, str] = field(default_factory=dict, hash=False)

    @property
    def embedding_input(self) -> str:
        return self.embed_text or self.text

    @property
    def hash(self) -> str:
        """The content hash of the chunk's text."""
        return sha256(self.text)

    @property
    def key(self) -> str:
        """Identity for incremental sync: equal keys need no rewrite and no re-embedding."""
        parts = [self.source, self.path, str(self.start_line), str(self.end_line), self.text,
                 self.embedding_input, "\x1f".join(self.message_ids), self.session or "",
                 self.ts or "", self.ref or "", "1" if self.current else "0",
                 json.dumps(self.meta, sort_keys=True)]
        return sha256("\x1e".join(parts))


# -- markdown -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Piece:
    text: str
    line: int


def _pieces(lines: Sequence[str], max_chars: int) -> list[_Piece]:
    """Lines, with any line longer than a chunk cut into chunk-sized segments."""
    out: list[_Piece] = []
    for number, line in enumerate(lines, start=1):
        if len(line) <= max_chars:
            out.append(_Piece(line, number))
            continue
        for start in range(0, len(line), max_chars):
            out.append(_Piece(line[start:start + max_chars], number))
    return out


def _pack(items: Iterable[_T], length: Callable[[_T], int], max_chars: int,
          overlap_chars: int) -> Iterator[list[_T]]:
    """Consecutive items joined by newlines up to ``max_chars``; each group after the
    first starts with the trailing items of the previous one, as many as fit in
    ``overlap_chars`` while leaving room for the item that opened the new group."""
    current: list[_T] = []
    size = 0  # characters of "\n".join(current)
    for item in items:
        extra = length(item) + (1 if current else 0)
        if current and size + extra > max_chars:
            yield current
            budget = min(overlap_chars, max_chars - length(item) - 1)
            kept: list[_T] = []
            used = 0
            for old in reversed(current):
                need = length(old) + (1 if kept else 0)
                if used + need > budget:
                    break
                kept.insert(0, old)
                used += need
            current, size = kept, used
            extra = length(item) + (1 if current else 0)
        current.append(item)
        size += extra
    if current:
        yield current


def chunk_markdown(content: str, *, tokens: int = 400, overlap: int = 80,
                   path: str = "", source: str = "memory", ts: str | None = None) -> list[Chunk]:
    """Split markdown into line-based chunks of at most ``tokens * 4`` characters.

    Each chunk after the first starts with the trailing lines of the previous one, as
    many as fit in ``overlap * 4`` characters (and still leave room for the next line).
    Every line of the file is in at least one chunk; an empty file has no chunks.
    """
    if not content:
        return []
    max_chars = max(32, tokens * CHARS_PER_TOKEN)
    overlap_chars = max(0, min(overlap * CHARS_PER_TOKEN, max_chars - 1))
    lines = content.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()  # the newline that ends the file does not open another line
    return [Chunk(source=source, path=path, start_line=group[0].line, end_line=group[-1].line,
                  text="\n".join(p.text for p in group), ts=ts)
            for group in _pack(_pieces(lines, max_chars), lambda p: len(p.text), max_chars,
                               overlap_chars)]


# -- transcripts ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    """A transcript message reduced to what the index needs."""

    id: str
    session: str
    role: str
    name: str | None
    text: str
    """The searchable text: what was said, tool calls and (capped) tool output."""
    line: int
    end_line: int
    timestamp: datetime | None = None

    @property
    def speaker(self) -> str:
        return self.name or self.role

    @property
    def labelled(self) -> str:
        return f"{self.speaker}: {self.text}"

    @property
    def ts(self) -> str | None:
        return self.timestamp.isoformat() if self.timestamp else None


def _when(message: Message) -> str:
    if message.timestamp is None:
        return ""
    return f"[{message.timestamp.strftime('%-d %B %Y')}] "


def chunk_messages(messages: Sequence[Message], *, path: str, mode: str = "window",
                   tokens: int = 400, overlap: int = 80,
                   context_chars: int = 0) -> list[Chunk]:
    """Chunk a transcript's messages without ever splitting one.

    ``mode="message"``: one chunk per message; the embedded text adds the date and up
    to ``context_chars`` of the previous message of the same session, for context.
    ``mode="window"``: consecutive messages of one session up to ``tokens * 4``
    characters, the last messages of a window (within ``overlap * 4`` characters)
    repeated at the start of the next.
    """
    if mode == "message":
        return [_message_chunk(m, prev, path, context_chars)
                for prev, m in zip([None, *messages[:-1]], messages, strict=True)]
    if mode != "window":
        raise ValueError(f"unknown session chunking {mode!r}: use window or message")
    max_chars = max(32, tokens * CHARS_PER_TOKEN)
    overlap_chars = max(0, overlap * CHARS_PER_TOKEN)
    return [_window_chunk(window, path) for group in _sessions(messages)
            for window in _pack(group, lambda m: len(m.labelled), max_chars, overlap_chars)]


def _sessions(messages: Iterable[Message]) -> list[list[Message]]:
    groups: list[list[Message]] = []
    for message in messages:
        if groups and groups[-1][-1].session == message.session:
            groups[-1].append(message)
        else:
            groups.append([message])
    return groups


def _window_chunk(messages: Sequence[Message], path: str) -> Chunk:
    first = messages[0]
    text = "\n".join(m.labelled for m in messages)
    return Chunk(source="sessions", path=path, start_line=first.line,
                 end_line=max(m.end_line for m in messages), text=text,
                 embed_text=_when(first) + text,
                 message_ids=tuple(m.id for m in messages), session=first.session,
                 ts=first.ts)


def _message_chunk(message: Message, previous: Message | None, path: str,
                   context_chars: int) -> Chunk:
    context = ""
    if previous is not None and context_chars > 0 and previous.session == message.session:
        said = previous.labelled
        if len(said) > context_chars:
            said = said[:context_chars].rsplit(" ", 1)[0] + " …"
        context = f"(after {said})\n"
    return Chunk(source="sessions", path=path, start_line=message.line,
                 end_line=message.end_line, text=message.labelled,
                 embed_text=_when(message) + context + message.labelled,
                 message_ids=(message.id,), session=message.session, ts=message.ts,
                 meta={"role": message.role})
