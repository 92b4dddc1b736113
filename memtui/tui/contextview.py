"""The Context pane's data: the context engine's report of an agent's window, as plain values.

The context engine (``memtui.context``) follows the agent's live transcript. Where this
memtui has no context engine, the pane says so and shows what can be known without it
(the newest transcript and its size as an estimate), never a made-up window.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtui import timeutil

if TYPE_CHECKING:
    from memtui.tui.store import Store


@dataclass(frozen=True)
class ContextView:
    """An agent's context window; ``exact`` False means the numbers are estimates (``~``)."""

    agent: str
    read_at: str
    available: bool
    """False: this memtui has no context engine (``note`` says what is shown instead)."""
    session: str | None = None
    model: str | None = None
    window: int = 0
    used: int = 0
    exact: bool = False
    flush_at: int | None = None
    compact_at: int | None = None
    compactions: int = 0
    by_kind: tuple[tuple[str, int], ...] = ()
    top: tuple[tuple[str, int], ...] = ()
    note: str = ""


def engine_module(name: str) -> Any | None:
    """``memtui.context.<name>`` when this memtui has the context engine, else None."""
    try:
        return importlib.import_module(f"memtui.context.{name}")
    except ImportError:
        return None


def _pairs(items: Any) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    for item in items or ():
        if isinstance(item, tuple | list) and len(item) >= 2:
            out.append((str(item[0]), int(item[1])))
            continue
        label = next((getattr(item, a) for a in ("label", "name", "path", "kind", "tool")
                      if getattr(item, a, None)), str(item))
        out.append((str(label), int(getattr(item, "tokens", 0) or 0)))
    return tuple(out)


def from_report(report: Any) -> ContextView:
    """Map a ``memtui.context`` ContextReport onto the pane's view."""
    read_at = getattr(report, "read_at", None)
    session = getattr(report, "session", None)
    return ContextView(
        agent=str(report.agent),
        read_at=timeutil.iso(read_at) if isinstance(read_at, datetime) else str(read_at or ""),
        available=True, session=Path(session).stem if session else None,
        model=getattr(report, "model", None), window=int(report.window or 0),
        used=int(report.used or 0), exact=bool(getattr(report, "exact", False)),
        flush_at=getattr(report, "flush_at", None),
        compact_at=getattr(report, "compact_at", None),
        compactions=int(getattr(report, "compactions", 0) or 0),
        by_kind=_pairs(getattr(report, "by_kind", ())),
        top=_pairs(getattr(report, "top", ())),
        note="; ".join(str(n) for n in getattr(report, "notes", ()) or ()),
    )


class ContextReader:
    """Follows each agent's live transcript through the engine's follower, one per agent."""

    def __init__(self) -> None:
        self._followers: dict[str, Any] = {}
        self._last: dict[str, ContextView] = {}
        self._lock = threading.Lock()

    def read(self, store: Store, agent: str) -> ContextView:
        with self._lock:
            follow = engine_module("follow")
            if follow is None:
                return fallback(store, agent)
            follower = self._followers.get(agent)
            newest = newest_transcript(store, agent)
            if follower is not None and newest is not None and getattr(
                    follower, "path", newest) != newest:
                follower = None  # a new session started: follow that one
                self._last.pop(agent, None)
            if follower is None:
                follower = follow.ContextFollower(store.home, agent)
                self._followers[agent] = follower
            report = follower.poll()
            if report is not None:
                self._last[agent] = from_report(report)
            if agent not in self._last:
                report_mod = engine_module("report")
                if report_mod is None:
                    return fallback(store, agent)
                self._last[agent] = from_report(report_mod.context_report(store.home, agent))
            return self._last[agent]


_reader = ContextReader()


def read_context(store: Store, agent: str) -> ContextView:
    """The agent's context view; never raises (a failing read becomes the note)."""
    try:
        return _reader.read(store, agent)
    except Exception as exc:  # a broken transcript must not take the overview down
        return ContextView(agent=agent, read_at=timeutil.iso(timeutil.now()), available=False,
                           note=f"context could not be read: {type(exc).__name__}: {exc}")


def newest_transcript(store: Store, agent: str) -> Path | None:
    from memtui.stores import sources

    with store.reading() as db:
        found = sources.list_sources(db, agent)
    files = [p for s in found for p in s.files() if p.is_file()]
    return max(files, key=lambda p: p.stat().st_mtime) if files else None


def fallback(store: Store, agent: str) -> ContextView:
    """Without the context engine: the newest transcript and its size, marked an estimate."""
    path = newest_transcript(store, agent)
    stamp = timeutil.iso(timeutil.now())
    if path is None:
        return ContextView(agent=agent, read_at=stamp, available=False,
                           note="no transcript source for this agent")
    size = path.stat().st_size
    return ContextView(
        agent=agent, read_at=stamp, available=False, session=path.stem,
        used=size // 4, exact=False,
        note=f"context engine not in this memtui; newest transcript {path.name} "
             f"is ~{size // 4:,} tokens (bytes/4)")
