"""The stenographer's sections of the daily log: queued with the memory, then appended.

The markdown is written after the database commit, from rows queued in
``daily_log_pending`` inside the same transaction as the memory they describe. Each
appended section ends with an HTML comment naming its queue id, so a crash between
writing the file and clearing the queue never appends a section twice, and a crash
before writing leaves the section queued for the next run. The file is named by the
day rule and written by the one writer (``memtui.workspace.layout``, ``.writer``).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from memtui import timeutil
from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.redact import scrub
from memtui.workspace import writer
from memtui.workspace.layout import daily_header, daily_log_path

log = logging.getLogger(__name__)


def marker(pending_id: int) -> str:
    return f"<!-- memtui:extract {pending_id} -->"


def queue(db: Database, agent: str, day: str, lines: list[str], heading: str) -> None:
    """Queue a section for ``day``'s file (a ``layout.local_day``); call inside the
    extraction's transaction."""
    if not lines:
        return
    text = scrub(f"## {heading}\n\n" + "\n".join(lines) + "\n")  # the markdown's way in
    db.execute("INSERT INTO daily_log_pending(agent, day, text, created_at) VALUES (?,?,?,?)",
               (agent, day, text, timeutil.iso(timeutil.now())))


def path_for(home: Home, agent: str, day: str) -> Path:
    return daily_log_path(home, agent, day)


def flush(home: Home, db: Database) -> list[Path]:
    """Append every queued section to its file (atomically), then clear the queue.

    Sections whose file could not be written (it kept changing, or it is a symbolic
    link) stay queued for the next run; the markers make a retry safe.
    """
    rows = db.query("SELECT id, agent, day, text FROM daily_log_pending ORDER BY id")
    if not rows:
        return []
    by_file: dict[tuple[str, str], list[dict[str, object]]] = defaultdict(list)
    for row in rows:
        by_file[(str(row["agent"]), str(row["day"]))].append(row)
    written: list[Path] = []
    done: list[int] = []
    for (agent, day), sections in by_file.items():
        path = path_for(home, agent, day)
        try:
            with writer.memory_lock(home, agent):
                if append_sections(path, daily_header(day),
                                   [(int(str(r["id"])), str(r["text"])) for r in sections]):
                    written.append(path)
        except MemtuiError as exc:
            log.warning("%s; its sections stay queued for the next run", exc)
            continue
        done += [int(str(r["id"])) for r in sections]
    if done:
        with db.write():
            db.executemany("DELETE FROM daily_log_pending WHERE id = ?", [(i,) for i in done])
    return written


def append_sections(path: Path, header: str, sections: Sequence[tuple[int, str]]) -> bool:
    """Add the sections (queue id, text) not yet in ``path``; True when the file changed."""
    return writer.append(path, header, lambda current: _merge(current, sections))


def _merge(current: str, sections: Sequence[tuple[int, str]]) -> str:
    for pending_id, text in sections:
        tag = marker(pending_id)
        if tag in current:
            continue
        if current and not current.endswith("\n"):
            current += "\n"
        if current and not current.endswith("\n\n"):
            current += "\n"  # one blank line before each section
        current += f"{text}{tag}\n"
    return current
