"""Retention: episodes older than policy.yaml allows are deleted (the nightly maintenance).

``policy.yaml`` gives each episodic kind a ``retention_days`` (``Policy.retention_days``):
tool calls, decisions and incidents have their own sections; the other episode kinds
(rejection, fix, compaction, note) use the layer's ``episodic.retention_days``. The
default policy keeps episodes 180 days and incidents forever (``null``).

``apply_retention`` deletes, in one transaction, every episode whose ``at`` is older than
its kind's retention, and writes one audit row per kind (actor ``maintenance``, action
``episode.retention``) listing the deleted ids and the cutoff. The full-text index
follows through the episodes' delete trigger. State entries and facts are semantic
memory, kept until contradicted: retention never touches them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from memtui import timeutil
from memtui.db import Database
from memtui.extract.policy import Policy, default_policy, load_policy
from memtui.home import Home
from memtui.stores import audit
from memtui.stores.episodes import KINDS

ACTOR = "maintenance"
POLICY_KINDS = {"tool_call": "tool_call", "decision": "decision", "incident": "incident"}
"""Episode kind -> the policy's episodic kind; kinds not listed use the layer's value."""


@dataclass
class RetentionReport:
    """What retention deleted (or, in a dry run, would delete)."""

    dry_run: bool
    deleted: dict[str, int] = field(default_factory=dict)
    """Episodes past their retention, per kind (only kinds with any)."""
    ids: dict[str, list[int]] = field(default_factory=dict)
    cutoffs: dict[str, str | None] = field(default_factory=dict)
    """Per kind, the oldest ``at`` kept; None: kept forever."""

    @property
    def total(self) -> int:
        return sum(self.deleted.values())

    def as_dict(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "deleted": self.deleted, "ids": self.ids,
                "cutoffs": self.cutoffs}


def retention_days(policy: Policy, kind: str) -> int | None:
    """Days an episode of ``kind`` is kept under ``policy``; None = forever."""
    mapped = POLICY_KINDS.get(kind)
    if mapped is not None:
        return policy.retention_days("episodic", mapped)
    return policy.layer_retention_days("episodic")


def home_policy(home: Home) -> Policy:
    """The home's policy.yaml, or the default one when the file is missing."""
    if home.policy_path.exists():
        return load_policy(home.policy_path)
    return default_policy()


def apply_retention(home: Home, db: Database, *, now: datetime, dry_run: bool = False,
                    policy: Policy | None = None) -> RetentionReport:
    """Delete the episodes older than their kind's retention; see the module docstring.

    Raises ConfigError when policy.yaml is invalid (nothing is deleted then).
    """
    policy = policy or home_policy(home)
    report = RetentionReport(dry_run=dry_run)
    with db.read() if dry_run else db.write():
        for kind in KINDS:
            days = retention_days(policy, kind)
            if days is None:
                report.cutoffs[kind] = None
                continue
            cutoff = timeutil.iso(now - timedelta(days=days))
            report.cutoffs[kind] = cutoff
            if dry_run:
                ids = [r[0] for r in db.rows(
                    "SELECT id FROM episodes WHERE kind = ? AND at < ? ORDER BY id",
                    (kind, cutoff))]
            else:
                ids = sorted(r[0] for r in db.rows(
                    "DELETE FROM episodes WHERE kind = ? AND at < ? RETURNING id",
                    (kind, cutoff)))
            if not ids:
                continue
            report.deleted[kind] = len(ids)
            report.ids[kind] = ids
            if not dry_run:
                audit.record(db, ACTOR, "episode.retention", "episodes",
                             {"kind": kind, "ids": ids, "older_than": cutoff,
                              "retention_days": days}, None)
    return report
