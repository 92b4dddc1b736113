"""The daily log: what each extraction captured, appended to the agent's memory/YYYY-MM-DD.md.

The markdown is written after the database commit, from rows queued in
``daily_log_pending`` inside the same transaction as the memory they describe. Each
appended section ends with an HTML comment naming its queue id, so a crash between
writing the file and clearing the queue never appends a section twice, and a crash
before writing leaves the section queued for the next run.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from memtui import timeutil
from memtui.db import Database
from memtui.home import Home, atomic_write


def marker(pending_id: int) -> str:
    return f"<!-- memtui:extract {pending_id} -->"


def queue(db: Database, agent: str, day: str, lines: list[str], heading: str) -> None:
    """Queue a section for ``day``'s file; call inside the extraction's transaction."""
    if not lines:
        return
    text = f"## {heading}\n\n" + "\n".join(lines) + "\n"
    db.execute("INSERT INTO daily_log_pending(agent, day, text, created_at) VALUES (?,?,?,?)",
               (agent, day, text, timeutil.iso(timeutil.now())))


def path_for(home: Home, agent: str, day: str) -> Path:
    return home.workspace(agent) / "memory" / f"{day}.md"


def flush(home: Home, db: Database) -> list[Path]:
    """Append every queued section to its file (atomically), then clear the queue."""
    rows = db.query("SELECT id, agent, day, text FROM daily_log_pending ORDER BY id")
    if not rows:
        return []
    by_file: dict[tuple[str, str], list[dict[str, object]]] = defaultdict(list)
    for row in rows:
        by_file[(str(row["agent"]), str(row["day"]))].append(row)
    written: list[Path] = []
    for (agent, day), sections in by_file.items():
        path = path_for(home, agent, day)
        current = path.read_text(encoding="utf-8") if path.exists() else f"# {day}\n"
        added = False
        for section in sections:
            tag = marker(int(str(section["id"])))
            if tag in current:
                continue
            if not current.endswith("\n"):
                current += "\n"
            current += f"\n{section['text']}{tag}\n"
            added = True
        if added:
            atomic_write(path, current)
            written.append(path)
    with db.write():
        db.executemany("DELETE FROM daily_log_pending WHERE id = ?", [(r["id"],) for r in rows])
    return written
