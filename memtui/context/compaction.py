"""Compaction by memtui, and the flight recorder of every compaction (the agent's and ours).

``compact_session`` cuts where OpenClaw would (keep ~keep_recent_tokens, never at a tool
result), flushes first, summarises the region, and with ``apply`` appends a ``compaction``
entry to an OpenClaw v3 transcript after a backup. Formats memtui cannot safely write get
the compacted context in a file instead.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memtui import timeutil
from memtui.context.accounting import Accountant
from memtui.context.flush import Captured, FlushReport, flush, region_check
from memtui.context.pruning import render_items
from memtui.context.region import Region, region
from memtui.context.report import inspect
from memtui.context.sessions import agent_transcripts
from memtui.context.summary import api_summary, local_summary
from memtui.errors import MemtuiError
from memtui.home import Home, atomic_write
from memtui.stores import context_log
from memtui.text import estimate_tokens
from memtui.transcripts.jsonl import first_object


@dataclass(frozen=True)
class CompactionResult:
    agent: str
    session: Path
    status: str
    """preview, applied (entry appended), written (compacted context in a file), or
    nothing-to-compact."""
    message: str
    tokens_before: int
    tokens_after: int
    first_kept: str | None
    summary: str
    flush: FlushReport | None
    entry: str | None = None
    backup: Path | None = None
    output: Path | None = None
    summarised_messages: int = 0


def agent_of(home: Home, path: Path) -> str:
    """The agent whose sources name this transcript, else the default agent."""
    for agent in home.agents():
        if path in agent_transcripts(home, agent):
            return agent
    return home.settings.default_agent()


def _writable_version(path: Path) -> bool:
    """A v3 session file (the version whose compaction entry memtui writes)."""
    header = first_object(path)
    return header is not None and header.get("type") == "session" \
        and header.get("version") == 3


def _last_entry_id(path: Path) -> str | None:
    """The id of the last entry in the file: the parent a new entry hangs from."""
    last = None
    with path.open("rb") as fh:
        for raw in fh:
            try:
                data = json.loads(raw)
            except ValueError:
                continue
            if isinstance(data, dict) and isinstance(data.get("id"), str) \
                    and data.get("type") != "session":
                last = data["id"]
    return last


def _append_entry(path: Path, entry: dict[str, Any], expected_size: int) -> Path:
    """Back the file up, then append one line; refuse if the agent wrote meanwhile."""
    stamp = timeutil.now().strftime("%Y%m%dT%H%M%SZ")
    backup = path.with_name(f"{path.name}.bak-{stamp}")
    shutil.copy2(path, backup)
    line = json.dumps(entry, ensure_ascii=False) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        if os.fstat(fd).st_size != expected_size:
            raise MemtuiError(f"{path} grew while it was being compacted; nothing was "
                              "appended (the backup is at " + str(backup) + "); try again")
        with open(path, "rb") as check:
            check.seek(max(0, expected_size - 1))
            if expected_size and check.read(1) != b"\n":
                line = "\n" + line
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return backup


def _summary(home: Home, agent: str, acct: Accountant, cut: Region,
             captured: list[Captured], client: Any) -> str:
    previous = next((t.text for t in acct.turns.values() if t.kind == "compaction"), None)
    local = local_summary(home, agent, cut.turns, captured, previous)
    if home.settings.context.summarizer == "anthropic":
        return api_summary(home, cut.turns, local, client)
    return local


def compact_session(home: Home, path: Path, *, apply: bool = False, agent: str | None = None,
                    client: Any = None, extractor: Any = None,
                    actor: str = "cli") -> CompactionResult:
    """Compact a session: flush first, summarise the region, and with ``apply`` write it."""
    path = Path(path).expanduser().absolute()
    agent = agent or agent_of(home, path)
    size = path.stat().st_size
    report, acct = inspect(home, agent, path)
    cfg = home.settings.context
    cut = region(acct, cfg.keep_recent_tokens)
    if not cut.turns or cut.first_kept is None:
        return CompactionResult(agent, path, "nothing-to-compact",
                                f"the window (~{report.used:,} tokens) fits in the kept "
                                f"~{cfg.keep_recent_tokens:,} tokens", report.used,
                                report.used, None, "", None)
    flushed = flush(home, agent, path, force=True, actor=actor, extractor=extractor) \
        if apply else None
    _, captured, _ = region_check(home, agent, path, list(cut.turns))
    summary = _summary(home, agent, acct, cut, captured, client)
    after = report.used - cut.tokens + estimate_tokens(summary)
    base = dict(agent=agent, session=path, tokens_before=report.used, tokens_after=after,
                first_kept=cut.first_kept, summary=summary, flush=flushed,
                summarised_messages=len(cut.turns))
    if not apply:
        return CompactionResult(**base, status="preview",  # type: ignore[arg-type]
                                message=f"would summarise {len(cut.turns)} messages")
    entry_id, backup, output = secrets.token_hex(4), None, None
    if report.format == "openclaw" and _writable_version(path):
        entry = {"type": "compaction", "id": entry_id, "parentId": _last_entry_id(path),
                 "timestamp": timeutil.now().isoformat().replace("+00:00", "Z"),
                 "summary": summary, "firstKeptEntryId": cut.first_kept,
                 "tokensBefore": report.used, "details": {"by": "memtui"}}
        backup = _append_entry(path, entry, size)
        status = "applied"
        message = f"appended compaction entry {entry_id} (backup: {backup})"
    else:
        output = home.root / "compactions" / f"{path.stem}-{entry_id}.md"
        kept = Accountant(items=acct.items[cut.cut:], texts=acct.texts[cut.cut:])
        atomic_write(output, f"# Compacted context of {path.name}\n\n{summary}\n"
                             f"# Kept messages\n\n{render_items(kept)}")
        status = "written"
        message = (f"{report.format} transcripts are not written by memtui: the compacted "
                   f"context is in {output}")
    _record(home, agent, path, entry_id, "memtui", None, report.used, after, cut.first_kept,
            status == "applied", str(output) if output else None, flushed, captured, actor)
    return CompactionResult(**base, status=status, message=message,  # type: ignore[arg-type]
                            entry=entry_id, backup=backup, output=output)


def _record(home: Home, agent: str, path: Path, entry: str, by: str, at: str | None,
            before: int | None, after: int | None, first_kept: str | None, applied: bool,
            output: str | None, flushed: FlushReport | None, captured: list[Captured],
            actor: str, cycle: int = 0) -> bool:
    items = [{"ref": c.ref, "category": c.category, "summary": c.summary,
              "source_entry": c.source_entry, "in_memory": c.in_memory, "status": c.status}
             for c in captured]
    flushed_info = {"status": flushed.status, "reason": flushed.reason,
                    "turns_extracted": flushed.extraction.get("turns_extracted", 0)} \
        if flushed else {}
    db = home.open_db()
    try:
        if not flushed_info:
            with db.read():
                done = context_log.flush_for_cycle(db, agent, str(path), cycle)
            flushed_info = {"status": done.status, **done.captured} if done else {}
        _, added = context_log.record_compaction(
            db, agent=agent, session=str(path), entry=entry, by=by, at=at,
            tokens_before=before, tokens_after=after, first_kept=first_kept, applied=applied,
            output=output, flushed=flushed_info, items=items, actor=actor)
    finally:
        db.close()
    return added


def record_agent_compactions(home: Home, agent: str, path: Path, *,
                             actor: str = "cli") -> int:
    """Add the compactions found in a transcript to the flight recorder; returns how many
    were new. Tokens before: the entry's tokensBefore, else the last usage before it."""
    from memtui.context.window import read_window

    path = Path(path).expanduser().absolute()
    read = read_window(path)
    turns = read.result.turns
    added = cycle = 0
    start = 0
    last_usage: int | None = None
    for index, turn in enumerate(turns):
        if turn.role == "assistant" and turn.usage is not None:
            u = turn.usage
            last_usage = u.input_tokens + u.cache_read_tokens + u.cache_creation_tokens \
                + u.output_tokens
        if turn.kind != "compaction":
            continue
        kept = read.first_kept.get(turn.id)
        ids = [t.id for t in turns[start:index]]
        end = ids.index(kept) if kept in ids else len(ids)
        region_turns = [t for t in turns[start:start + end] if t.kind != "compaction"]
        _, captured, _ = region_check(home, agent, path, region_turns)
        before = _tokens_before(path, turn) or last_usage
        kept_turns = turns[start + end:index]
        after = estimate_tokens(turn.text) + sum(
            estimate_tokens(t.text) + sum(estimate_tokens(r.content) for r in t.tool_results)
            for t in kept_turns)
        if _record(home, agent, path, turn.id, "agent",
                   timeutil.iso(turn.timestamp) if turn.timestamp else None, before, after,
                   kept, True, None, None, captured, actor, cycle):
            added += 1
        cycle += 1
        start = start + end
    return added


def _tokens_before(path: Path, turn: Any) -> int | None:
    with path.open("rb") as fh:
        fh.seek(turn.offset)
        try:
            data = json.loads(fh.read(turn.end_offset - turn.offset))
        except ValueError:
            return None
    value = data.get("tokensBefore") if isinstance(data, dict) else None
    return value if isinstance(value, int) else None


def flight_recorder(home: Home, agent: str, *, limit: int = 50,
                    actor: str = "cli") -> list[context_log.CompactionRecord]:
    """Every compaction of the agent, after adding the ones its transcripts hold."""
    from memtui.context.sessions import agent_transcripts as files

    for path in files(home, agent):
        record_agent_compactions(home, agent, path, actor=actor)
    db = home.open_db()
    try:
        with db.read():
            return context_log.compactions(db, agent, limit)
    finally:
        db.close()
