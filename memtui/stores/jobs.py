"""Job runs: each extraction, maintenance cycle, heartbeat or health check, with its counts."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from memtui import timeutil
from memtui.db import Database


@dataclass(frozen=True)
class Job:
    id: int
    kind: str
    name: str
    started_at: str
    finished_at: str | None
    status: str
    dry_run: bool
    counts: dict[str, Any]
    message: str


def row_to_job(row: dict[str, Any]) -> Job:
    """A job run from its row (a dict keyed by column)."""
    return Job(row["id"], row["kind"], row["name"], row["started_at"], row["finished_at"],
               row["status"], bool(row["dry_run"]), json.loads(row["counts"]), row["message"])


def start(db: Database, kind: str, name: str = "", *, dry_run: bool = False) -> int:
    with db.write():
        return db.execute(
            "INSERT INTO jobs(kind, name, started_at, status, dry_run) VALUES (?,?,?,?,?)",
            (kind, name, timeutil.iso(timeutil.now()), "running", int(dry_run)),
        )


def finish(
    db: Database, job_id: int, status: str, counts: dict[str, Any] | None = None,
    message: str = "",
) -> None:
    with db.write():
        db.execute(
            "UPDATE jobs SET finished_at = ?, status = ?, counts = ?, message = ? WHERE id = ?",
            (timeutil.iso(timeutil.now()), status, json.dumps(counts or {}, sort_keys=True),
             message, job_id),
        )


def last(db: Database, kind: str, name: str | None = None) -> Job | None:
    """The latest finished run of a kind (and name)."""
    sql = "SELECT * FROM jobs WHERE kind = ? AND status != 'running'"
    params: list[Any] = [kind]
    if name is not None:
        sql += " AND name = ?"
        params.append(name)
    row = db.one(sql + " ORDER BY id DESC LIMIT 1", params)
    return row_to_job(row) if row else None


def recent(db: Database, kind: str | None = None, limit: int = 20) -> list[Job]:
    where, params = ("WHERE kind = ?", [kind]) if kind else ("", [])
    return [row_to_job(r) for r in
            db.query(f"SELECT * FROM jobs {where} ORDER BY id DESC LIMIT ?", [*params, limit])]
