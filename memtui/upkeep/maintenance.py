"""The nightly maintenance cycle: decay, band, merge, archive, promote and retention.

One cycle per day: decay happens at most once per calendar day (UTC) however often the
cycle runs; the other steps are idempotent. A dry run does everything in a transaction it
then rolls back, so it reports exactly what a real run would change.

Bulk steps are set-based SQL so a cycle over 100,000 rules and 1,000,000 state rows stays
within a couple of seconds; each step writes one audit row listing the ids it touched.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from memtui import timeutil
from memtui.db import Database
from memtui.home import Home
from memtui.stores import jobs, watermarks
from memtui.stores import rules as rule_store
from memtui.stores import state as state_store
from memtui.stores.rules import Decayed
from memtui.upkeep.retention import apply_retention

ACTOR = "maintenance"
LAST_CYCLE = "maintenance:last_cycle"
PROMOTED_UPTO = "maintenance:promoted_upto:{category}"


@dataclass
class MaintenanceReport:
    """Exactly what one cycle changed (or, in a dry run, would change)."""

    day: str
    dry_run: bool
    decay_ran: bool = False
    decayed: list[Decayed] = field(default_factory=list)
    """Rules that lost score, with their status before and after."""
    merged: list[tuple[int, list[int]]] = field(default_factory=list)
    """(surviving rule, rules merged into it)."""
    archived: list[int] = field(default_factory=list)
    """State entries archived."""
    promoted_rejections: list[int] = field(default_factory=list)
    promoted_learnings: list[int] = field(default_factory=list)
    reinforced_by_promotion: list[int] = field(default_factory=list)
    skipped_low_confidence: list[int] = field(default_factory=list)
    """Rejections not promoted because the extractor was not sure of them."""
    retention: dict[str, int] = field(default_factory=dict)
    """Episodes past their retention, deleted, per kind."""
    job_id: int | None = None

    @property
    def became(self) -> dict[str, int]:
        """Rules whose status changed through decay, by new status."""
        out: dict[str, int] = defaultdict(int)
        for d in self.decayed:
            if d.status != d.was:
                out[d.status] += 1
        return dict(out)

    def counts(self) -> dict[str, Any]:
        return {
            "decay_ran": self.decay_ran, "decayed": len(self.decayed), **{
                f"became_{k}": v for k, v in sorted(self.became.items())},
            "merged_groups": len(self.merged),
            "merged_rules": sum(len(losers) for _, losers in self.merged),
            "archived": len(self.archived),
            "promoted_rejections": len(self.promoted_rejections),
            "promoted_learnings": len(self.promoted_learnings),
            "reinforced_by_promotion": len(self.reinforced_by_promotion),
            "skipped_low_confidence": len(self.skipped_low_confidence),
            "retention_deleted": sum(self.retention.values()),
        }

    def as_dict(self) -> dict[str, Any]:
        return {"day": self.day, "dry_run": self.dry_run, "counts": self.counts(),
                "decayed": [dataclasses.asdict(d) for d in self.decayed],
                "merged": [{"survivor": s, "merged": m} for s, m in self.merged],
                "archived": self.archived,
                "promoted_rejections": self.promoted_rejections,
                "promoted_learnings": self.promoted_learnings,
                "reinforced_by_promotion": self.reinforced_by_promotion,
                "skipped_low_confidence": self.skipped_low_confidence,
                "retention": self.retention, "job_id": self.job_id}


class _RollBack(Exception):
    """Raised inside the cycle's transaction to undo a dry run."""


def _decay(db: Database, report: MaintenanceReport, now: datetime, after_days: int,
           amount: float) -> None:
    report.decayed = rule_store.decay_stale(
        db, cutoff=timeutil.iso(now - timedelta(days=after_days)), amount=amount, actor=ACTOR)


def _promote(db: Database, home: Home, report: MaintenanceReport, category: str) -> None:
    cfg = home.settings.maintenance
    key = PROMOTED_UPTO.format(category=category)
    entries = state_store.new_since(db, category, int(watermarks.get(db, key) or 0))
    for entry in entries:
        summary = entry.summary.strip()
        if category == "rejected":
            if entry.confidence < cfg.promote_min_confidence:
                # A rule that only a human can retire must not come from a guess.
                report.skipped_low_confidence.append(entry.id)
                continue
            body = summary.split(":", 1)[1].strip() if summary.lower().startswith(
                "rejected:") else summary
            # The rejected thing comes first: near-duplicate keys are the first 40
            # characters, so a shared prefix would merge unrelated rejections.
            rule_text = f"{body.rstrip('.')} (rejected by a human: do not re-suggest)"
            score = cfg.rejection_rule_score
        else:
            rule_text, score = summary, cfg.learning_rule_score
        existing = rule_store.find_by_key(db, rule_text, entry.agent)
        if existing:
            rule_store.reinforce(db, existing.id, actor=ACTOR, amount=0.5)
            report.reinforced_by_promotion.append(existing.id)
            continue
        added = rule_store.add(db, rule_text, actor=ACTOR, score=score, domain=entry.domain,
                               agent=entry.agent, source=category if category != "rejected"
                               else "rejection", provenance=[f"state:{entry.id}"])
        (report.promoted_rejections if category == "rejected"
         else report.promoted_learnings).append(added.id)
    if entries:
        watermarks.put(db, key, str(entries[-1].id))


def _archive(db: Database, report: MaintenanceReport, now: datetime, days: int) -> None:
    report.archived = state_store.archive_completed_before(
        db, timeutil.iso(now - timedelta(days=days)), actor=ACTOR)


def run_maintenance(
    home: Home, db: Database, *, dry_run: bool = False, now: datetime | None = None,
) -> MaintenanceReport:
    """Run one maintenance cycle (or, with ``dry_run``, report what it would change)."""
    now = now or timeutil.now()
    day: date = now.date()
    cfg = home.settings.maintenance
    report = MaintenanceReport(day.isoformat(), dry_run)
    try:
        with db.write():
            if watermarks.get(db, LAST_CYCLE) != report.day:
                report.decay_ran = True
                _decay(db, report, now, cfg.decay_after_days, cfg.decay_per_cycle)
                watermarks.put(db, LAST_CYCLE, report.day)
            _promote(db, home, report, "rejected")
            _promote(db, home, report, "learning")
            report.merged = rule_store.merge_duplicates(db, bonus=cfg.merge_bonus, actor=ACTOR)
            _archive(db, report, now, cfg.archive_completed_after_days)
            # Inside this transaction: a dry run rolls the deletions back with the rest.
            report.retention = apply_retention(home, db, now=now).deleted
            if dry_run:
                raise _RollBack
    except _RollBack:
        pass
    report.job_id = jobs.start(db, "maintenance", dry_run=dry_run)
    jobs.finish(db, report.job_id, "ok", report.counts(),
                "dry run: nothing changed" if dry_run else "")
    return report

