"""The pre-compaction flush, done by memtui itself: the stenographer extracts the region
about to be compacted now, then every message of it is checked against the watermark.

It is due when the window reaches window - reserveTokensFloor - softThresholdTokens, and
runs once per compaction cycle (the cycle is the number of compactions the transcript
holds; a stored record keeps a second flush from running). A read-only workspace skips it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.context.region import region
from memtui.context.report import inspect
from memtui.context.sessions import agent_transcripts
from memtui.home import Home
from memtui.stores import context_log, ledger


@dataclass(frozen=True)
class RegionMessage:
    """One message of the region and what became of it."""

    id: str
    role: str
    line: int
    below_watermark: bool
    captured: tuple[str, ...]
    """Refs of the decisions and rejections made from it (state:N, tombstone:N)."""


@dataclass(frozen=True)
class Captured:
    ref: str
    category: str
    summary: str
    status: str
    source_entry: str

    @property
    def in_memory(self) -> bool:
        return self.status != "forgotten"


@dataclass(frozen=True)
class FlushReport:
    agent: str
    session: Path
    status: str
    """flushed, incomplete (some of the region is above the watermark), not-due,
    already-flushed, read-only or not-a-source."""
    reason: str
    cycle: int
    tokens: int
    flush_at: int
    region: list[RegionMessage] = field(default_factory=list)
    decisions: list[Captured] = field(default_factory=list)
    rejections: list[Captured] = field(default_factory=list)
    extraction: dict[str, Any] = field(default_factory=dict)
    watermark: int | None = None

    @property
    def all_below(self) -> bool:
        return bool(self.region) and all(m.below_watermark for m in self.region)


def region_check(home: Home, agent: str, path: Path, turns: list[Any]
                 ) -> tuple[list[RegionMessage], list[Captured], int | None]:
    """Each region message against the watermark, and what memory holds from them."""
    db = home.open_db()
    try:
        with db.read():
            mark = ledger.offset(db, str(path))
            if mark is None:
                mark = ledger.offset(db, str(path.absolute()))
            found = context_log.region_entries(db, agent, [t.id for t in turns])
    finally:
        db.close()
    by_entry: dict[str, list[str]] = {}
    for entry in found:
        by_entry.setdefault(entry.source_entry, []).append(entry.ref)
    messages = [RegionMessage(t.id, t.role, t.line, mark is not None and t.end_offset <= mark,
                              tuple(by_entry.get(t.id, ()))) for t in turns]
    captured = [Captured(e.ref, e.category, e.summary, e.status, e.source_entry)
                for e in found]
    return messages, captured, mark


def flush(home: Home, agent: str, session: Path | None = None, *, force: bool = False,
          actor: str = "cli", extractor: Any = None) -> FlushReport:
    """Flush the region about to be compacted into memory, if due (or ``force``)."""
    from memtui.extract import stenographer

    report, acct = inspect(home, agent, session)
    path = report.session
    assert path is not None
    cfg = home.settings.context
    cycle = report.compactions

    def result(status: str, reason: str, **found: Any) -> FlushReport:
        assert path is not None
        return FlushReport(agent=agent, session=path, status=status, reason=reason,
                           cycle=cycle, tokens=report.used, flush_at=report.flush_at, **found)

    if not force and report.used < report.flush_at:
        return result("not-due", f"~{report.used:,} tokens, below the flush threshold "
                                 f"{report.flush_at:,}")
    db = home.open_db()
    try:
        with db.read():
            done = context_log.flush_for_cycle(db, agent, str(path), cycle)
    finally:
        db.close()
    if done is not None and not force:
        return result("already-flushed",
                      f"flushed at {done.at} in this compaction cycle ({cycle})")
    workspace = home.workspace(agent)
    if workspace.exists() and not os.access(workspace, os.W_OK):
        return result("read-only", f"the workspace {workspace} is read-only")
    if path not in agent_transcripts(home, agent):
        return result("not-a-source", f"{path} is not a registered source of {agent} (add "
                                      f"it: memtui sources add {path} --agent {agent})")
    region_now = region(acct, cfg.keep_recent_tokens)
    db = home.open_db()
    try:
        run = stenographer.run(home, db, stenographer.Options(
            agent=agent, source=str(path), wait_for_lock=True), extractor=extractor)
    finally:
        db.close()
    messages, captured, mark = region_check(home, agent, path, list(region_now.turns))
    all_below = all(m.below_watermark for m in messages)
    status = "flushed" if all_below else "incomplete"
    counts = run.counts()
    decisions = [c for c in captured if c.category == "decision"]
    rejections = [c for c in captured if c.category == "rejected"]
    summary = {"messages": len(messages), "below": sum(m.below_watermark for m in messages),
               "decisions": [c.ref for c in decisions], "rejections": [c.ref for c in rejections],
               "turns_extracted": counts["turns_extracted"]}
    db = home.open_db()
    try:
        context_log.record_flush(db, agent=agent, session=str(path), cycle=cycle,
                                 tokens=report.used, status=status, captured=summary,
                                 actor=actor)
    finally:
        db.close()
    reason = ("nothing to compact yet: the whole window fits in the kept "
              f"~{cfg.keep_recent_tokens:,} tokens" if not messages else
              f"all {len(messages)} messages of the region are below the watermark"
              if all_below else
              f"{sum(not m.below_watermark for m in messages)} of {len(messages)} messages "
              "of the region are above the watermark")
    return result(status, reason=reason, region=messages,
                       decisions=decisions, rejections=rejections, extraction=counts,
                       watermark=mark)
