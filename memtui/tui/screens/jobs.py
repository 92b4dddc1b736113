"""The jobs screen: extraction, maintenance, flush and heartbeat runs; heartbeat cost per day."""

from __future__ import annotations

import json
from collections import defaultdict

from rich.text import Text
from textual.widgets import Static

from memtui import timeutil
from memtui.db import Database
from memtui.stores import jobs as job_store
from memtui.stores import pages
from memtui.stores.jobs import Job
from memtui.tui.glyphs import ascii_text
from memtui.tui.render import block, clean, lit
from memtui.tui.rowlist import Column
from memtui.tui.screens.paged import PagedScreen

TOKEN_KEYS = ("tokens", "input_tokens", "output_tokens", "total_tokens", "tokens_in", "tokens_out")
COST_KEYS = ("cost_usd", "cost")


def tokens_of(job: Job) -> int | None:
    found = [int(job.counts[k]) for k in TOKEN_KEYS if isinstance(job.counts.get(k), int | float)]
    if "tokens" in job.counts or "total_tokens" in job.counts:
        return int(job.counts.get("total_tokens", job.counts.get("tokens", 0)))
    return sum(found) if found else None


def cost_of(job: Job) -> float | None:
    for key in COST_KEYS:
        if isinstance(job.counts.get(key), int | float):
            return float(job.counts[key])
    return None


def duration(job: Job) -> str:
    if not job.finished_at:
        return "running"
    seconds = (timeutil.parse(job.finished_at) - timeutil.parse(job.started_at)).total_seconds()
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.0f}m"


def summary(job: Job) -> str:
    """The counts that are not zero (a nested count is summed), then the message."""
    shown = []
    for k, v in job.counts.items():
        if isinstance(v, dict):
            v = sum(x for x in v.values() if isinstance(x, int | float))
        if isinstance(v, int | float) and not isinstance(v, bool) and v and k != "seconds":
            shown.append(f"{k.replace('_', ' ')} {v:g}")
    return ", ".join(shown[:6]) or clean(job.message)


def heartbeat_cost_per_day(db: Database, days: int = 7) -> list[tuple[str, int, float | None]]:
    """(day, runs, cost) of the heartbeat over the last ``days`` days that had runs."""
    per: dict[str, list[float | None]] = defaultdict(list)
    for job in job_store.recent(db, "heartbeat", limit=2000):
        per[job.started_at[:10]].append(cost_of(job))
    out = []
    for day in sorted(per, reverse=True)[:days]:
        costs = [c for c in per[day] if c is not None]
        out.append((day, len(per[day]), sum(costs) if costs else None))
    return out


class JobsScreen(PagedScreen[Job]):
    TITLE = "Jobs · every run: outcome, counts, duration, tokens, cost"
    COLUMNS = [Column("id", 6, right=True), Column("started", 20), Column("kind", 11),
               Column("status", 7), Column("took", 7, right=True),
               Column("tokens", 8, right=True, min_width=1),
               Column("cost", 8, right=True, min_width=1), Column("counts")]

    def fetch(self, db: Database, anchor: pages.Key | None, forward: bool, limit: int,
              inclusive: bool) -> pages.Page[Job]:
        self.heartbeat = heartbeat_cost_per_day(db)
        return pages.job_page(db, kind=self.text or None, anchor=anchor, forward=forward,
                              limit=limit, inclusive=inclusive)

    def count(self, db: Database) -> int:
        return pages.job_count(db, kind=self.text or None)

    def cells(self, j: Job) -> list[Text]:
        tokens = tokens_of(j)
        cost = cost_of(j)
        status = j.status + (" dry" if j.dry_run else "")
        return [Text(str(j.id)), Text(j.started_at), lit(j.kind),
                Text(status, style="bold" if j.status == "failed" else ""), Text(duration(j)),
                Text("-" if tokens is None else f"{tokens:,}"),
                Text("-" if cost is None else f"${cost:.4f}"), lit(summary(j), "dim")]

    def show_status(self) -> None:
        super().show_status()
        beats = getattr(self, "heartbeat", [])
        line = "heartbeat per day: " + (" · ".join(
            f"{day[5:]} {runs}x " + (f"${cost:.4f}" if cost is not None else "cost -")
            for day, runs, cost in beats) if beats else "no heartbeat runs yet")
        self.query_one("#title", Static).update(
            Text(ascii_text(self.app, f" {self.TITLE}   {line}"), style="bold"))

    def details(self, j: Job) -> tuple[str, Text]:
        body = (f"{j.kind} {j.name} · {j.status}{' (dry run)' if j.dry_run else ''}\n"
                f"started {j.started_at} · finished {j.finished_at or '-'} · {duration(j)}\n"
                f"{j.message}\n\ncounts:\n{json.dumps(j.counts, indent=2, sort_keys=True)}")
        return f"job {j.id}", block(ascii_text(self.app, body))
