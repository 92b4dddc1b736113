"""What the index is built from: memory files, transcripts, episodes and facts, as chunks.

Each input is a ``SourceFile`` with a cheap ``signature`` (size and mtime for files, a
few aggregates for database tables) so that an unchanged input costs one ``stat`` or
one small query per sync, and a ``load`` that reads it, hashes it and chunks it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtui.config import SearchSettings
from memtui.db import Database
from memtui.db import has_table as _has_table
from memtui.search.chunking import Chunk, Message, chunk_markdown, chunk_messages

if TYPE_CHECKING:
    from memtui.search.forgotten import Exclusions

MEMORY_FILE = "MEMORY.md"
MEMORY_DIR = "memory"
DAILY = re.compile(r"(\d{4}-\d{2}-\d{2})\.md$")
SETTLED_SECONDS = 30.0
"""A transcript untouched this long is read to its very end, even a last line without
its newline; a younger one may still be being written."""


@dataclass
class Loaded:
    """An input read and chunked."""

    hash: str
    chunks: list[Chunk]


@dataclass
class SourceFile:
    """One input of the index and how to read it."""

    key: str
    """Unique within the index: a workspace-relative path, a transcript path, or a table."""
    source: str
    signature: str
    loader: Callable[[], Loaded]

    def load(self) -> Loaded:
        return self.loader()


def file_signature(path: Path) -> str | None:
    """size:mtime_ns:inode of a regular file (not followed if a symlink), else None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


# -- memory files ---------------------------------------------------------------------------


def memory_files(workspace: Path) -> list[Path]:
    """MEMORY.md and memory/**/*.md: regular files only, never through a symlink."""
    found: list[Path] = []
    top = workspace / MEMORY_FILE
    if file_signature(top) is not None:
        found.append(top)
    daily = workspace / MEMORY_DIR
    if daily.is_dir() and not daily.is_symlink():
        for root, dirs, files in os.walk(daily, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                             and not os.path.islink(os.path.join(root, d)))
            for name in sorted(files):
                if name.endswith(".md") and not name.startswith("."):
                    path = Path(root) / name
                    if file_signature(path) is not None:
                        found.append(path)
    return found


def memory_sources(workspace: Path, settings: SearchSettings) -> list[SourceFile]:
    out: list[SourceFile] = []
    for path in memory_files(workspace):
        rel = path.relative_to(workspace).as_posix()
        sig = file_signature(path)
        if sig is None:
            continue
        out.append(SourceFile(rel, "memory", sig, partial(_load_markdown, path, rel, settings)))
    return out


def _load_markdown(path: Path, rel: str, settings: SearchSettings) -> Loaded:
    data = path.read_bytes()
    text = data.decode("utf-8", errors="replace")
    match = DAILY.search(rel)
    ts = f"{match.group(1)}T00:00:00+00:00" if match else None
    chunks = chunk_markdown(text, tokens=settings.chunk_tokens, overlap=settings.chunk_overlap,
                            path=rel, source="memory", ts=ts)
    return Loaded(hashlib.sha256(data).hexdigest(), chunks)


# -- transcripts ----------------------------------------------------------------------------


def transcript_sources(memory_db: Database | None, agent: str,
                       settings: SearchSettings) -> list[SourceFile]:
    """Every file of every transcript source registered for the agent."""
    if memory_db is None or not _has_table(memory_db, "sources"):
        return []
    from memtui.search.forgotten import Exclusions
    from memtui.stores.sources import list_sources

    hidden = Exclusions.load(memory_db, agent)
    out: list[SourceFile] = []
    seen: set[str] = set()
    for source in list_sources(memory_db, agent):
        for path in source.files():
            key = str(path)
            sig = file_signature(path)
            if sig is None or key in seen:
                continue
            seen.add(key)
            out.append(SourceFile(key, "sessions", sig,
                                  partial(_load_transcript, path, source.format, settings,
                                          hidden)))
    return out


def _load_transcript(path: Path, fmt: str, settings: SearchSettings,
                     hidden: Exclusions | None = None) -> Loaded:
    from memtui.transcripts import read_transcript

    data = path.read_bytes()
    settled = time.time() - path.stat().st_mtime > SETTLED_SECONDS
    result = read_transcript(path, fmt=fmt, final=settled)
    messages: list[Message] = []
    answers = subagent_answers(result.turns)
    for turn in result.turns:
        text = turn_text(_without(turn, answers), settings.tool_output_chars)
        if not text.strip() or (hidden and hidden.hides(turn.id, text)):
            continue  # forgotten messages stay out of the index (memtui.search.forgotten)
        end_line = turn.line + max(0, data.count(b"\n", turn.offset, turn.end_offset) - 1)
        role = "system" if turn.kind == "compaction" else turn.role
        messages.append(Message(id=turn.id, session=turn.session, role=role, name=turn.name,
                                text=text, line=turn.line, end_line=end_line,
                                timestamp=turn.timestamp))
    chunks = chunk_messages(messages, path=str(path), mode=settings.session_chunking,
                            tokens=settings.chunk_tokens, overlap=settings.chunk_overlap,
                            context_chars=settings.context_chars)
    return Loaded(hashlib.sha256(data).hexdigest(), chunks)


SUBAGENT_ANSWER = "[the sub-agent's answer, indexed with its own turn]"
_MIN_ANSWER_CHARS = 40
"""Shorter answers ("Done.") are only taken out of a tool result that is nothing else."""


def subagent_answers(turns: list[Any]) -> set[str]:
    """What sub-agents said in a transcript: a Task tool result repeats their last answer."""
    return {t.text.strip() for t in turns if t.author == "subagent" and t.text.strip()}


def _without(turn: Any, answers: set[str]) -> Any:
    """The turn with sub-agent answers taken out of its tool results, so search does not
    find them twice.

    The sub-agent's own turn is what stays: it has its author, time and place in the
    file, and it is indexed whole, where a tool result is cut at ``tool_output_chars``.
    """
    if not answers or not turn.tool_results:
        return turn
    results = []
    for res in turn.tool_results:
        content = res.content.strip()
        if content in answers:
            content = SUBAGENT_ANSWER
        else:
            for answer in answers:
                if len(answer) >= _MIN_ANSWER_CHARS and answer in content:
                    content = content.replace(answer, SUBAGENT_ANSWER)
        results.append(res if content == res.content.strip() else
                       dataclasses.replace(res, content=content))
    return dataclasses.replace(turn, tool_results=tuple(results))


def turn_text(turn: Any, tool_output_chars: int) -> str:
    """The searchable text of a turn: words said, tool calls, and tool output up to a cap.

    The cap is explicit (the text says how much was left out), never a silent cut.
    """
    parts = [turn.text] if turn.text else []
    for call in turn.tool_calls:
        args = " ".join(f"{k}={v}" for k, v in call.input.items())[:200]
        parts.append(f"[tool call {call.name}{': ' + args if args else ''}]")
    for res in turn.tool_results:
        content = res.content or ""
        if len(content) > tool_output_chars:
            left = len(content) - tool_output_chars
            content = content[:tool_output_chars] + f" … [{left} more characters not indexed]"
        label = f"tool {res.name}" if res.name else "tool"
        parts.append(f"[{label}{' error' if res.is_error else ''}] {content}")
    return "\n".join(parts)


# -- episodes and facts ---------------------------------------------------------------------


def _columns(db: Database, table: str) -> set[str]:
    return {str(r[1]) for r in db.rows(f"PRAGMA table_info({table})")}


def database_sources(memory_db: Database | None, agent: str) -> list[SourceFile]:
    """Episodes and facts of the agent, when memory.db has those tables."""
    if memory_db is None:
        return []
    out: list[SourceFile] = []
    if _has_table(memory_db, "episodes"):
        cols = _columns(memory_db, "episodes")
        stamp = "max(created_at)" if "created_at" in cols else "''"
        # total(length(...)) notices an episode edited in place, which count/max miss.
        size = ("total(length(summary) + length(detail))"
                if {"summary", "detail"} <= cols else "0")
        row = memory_db.rows(f"SELECT count(*), max(id), {stamp}, {size} FROM episodes "
                             f"WHERE agent = ?", (agent,))[0]
        out.append(SourceFile("memory.db#episodes", "episodes", "episodes:" + ":".join(
            map(str, row)), lambda: _load_episodes(memory_db, agent)))
    if _has_table(memory_db, "facts"):
        cols = _columns(memory_db, "facts")
        extra = ", count(superseded_at), max(superseded_at)" if "superseded_at" in cols else ""
        stamp = "max(created_at)" if "created_at" in cols else "''"
        row = memory_db.rows(
            f"SELECT count(*), max(id), {stamp}{extra} FROM facts WHERE agent = ?", (agent,))[0]
        out.append(SourceFile("memory.db#facts", "facts", "facts:" + ":".join(map(str, row)),
                              lambda: _load_facts(memory_db, agent)))
    return out


def _digest(rows: list[dict[str, Any]]) -> str:
    h = hashlib.sha256()
    for row in rows:
        h.update(repr(sorted(row.items())).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _load_episodes(db: Database, agent: str) -> Loaded:
    rows = db.query("SELECT * FROM episodes WHERE agent = ? ORDER BY id", (agent,))
    chunks = []
    for r in rows:
        when = str(r.get("at") or r.get("created_at") or "")
        kind = r.get("kind") or "episode"
        head = f"[{when[:16].replace('T', ' ')}] {kind}: {r.get('summary') or ''}"
        detail = str(r.get("detail") or "")
        text = head + ("\n" + detail if detail else "")
        entry = r.get("source_entry")
        chunks.append(Chunk(
            source="episodes", path=f"memory.db#episodes/{r['id']}", start_line=0, end_line=0,
            text=text, message_ids=(str(entry),) if entry else (), session=r.get("session"),
            ts=when or None, ref=f"episode:{r['id']}",
            meta={k: str(r[k]) for k in ("kind", "source_file") if r.get(k)}))
    return Loaded(_digest(rows), chunks)


def _load_facts(db: Database, agent: str) -> Loaded:
    rows = db.query("SELECT * FROM facts WHERE agent = ? ORDER BY id", (agent,))
    chunks = []
    for r in rows:
        entry = r.get("source_entry")
        text = f"{r.get('key') or ''}: {r.get('value') or ''}"
        meta = {k: str(r[k]) for k in ("key", "source_file", "superseded_at", "superseded_by",
                                      "confidence") if r.get(k) is not None}
        chunks.append(Chunk(
            source="facts", path=f"memory.db#facts/{r['id']}", start_line=0, end_line=0,
            text=text, message_ids=(str(entry),) if entry else (),
            ts=str(r.get("created_at") or "") or None, ref=f"fact:{r['id']}",
            current=not r.get("superseded_at"), meta=meta))
    return Loaded(_digest(rows), chunks)
