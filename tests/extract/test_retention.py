"""Retention: episodes past policy.yaml's retention_days are deleted, incidents kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memtui import timeutil
from memtui.db import Database
from memtui.home import Home
from memtui.stores import audit, episodes
from memtui.upkeep.retention import apply_retention

NOW = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)


def add(db: Database, kind: str, days_ago: int, summary: str | None = None) -> int:
    at = timeutil.iso(NOW - timedelta(days=days_ago))
    return episodes.add(db, episodes.NewEpisode(
        agent="main", kind=kind, summary=summary or f"{kind} {days_ago} days ago", at=at),
        actor="test").id


def kinds_left(db: Database) -> list[tuple[str, int]]:
    return sorted((r["kind"], r["id"]) for r in db.query("SELECT kind, id FROM episodes"))


def test_default_policy_deletes_after_180_days_and_keeps_incidents(
        home: Home, db: Database) -> None:
    home.policy_path.unlink()  # the default policy applies without policy.yaml too
    old_call = add(db, "tool_call", 181, "deployed the billing service")
    new_call = add(db, "tool_call", 179)
    old_decision = add(db, "decision", 400)
    old_rejection = add(db, "rejection", 200)  # no section: the layer's 180 days
    incident = add(db, "incident", 2000)
    dry = apply_retention(home, db, now=NOW, dry_run=True)
    assert dry.deleted == {"tool_call": 1, "decision": 1, "rejection": 1}
    assert len(kinds_left(db)) == 5  # a dry run deletes nothing
    report = apply_retention(home, db, now=NOW)
    assert report.deleted == dry.deleted and report.ids == dry.ids
    assert report.ids["tool_call"] == [old_call]
    assert report.cutoffs["incident"] is None and report.cutoffs["tool_call"] == (
        "2026-03-05T12:00:00Z")
    assert kinds_left(db) == sorted([("tool_call", new_call), ("incident", incident)])
    assert old_decision not in dict(kinds_left(db)).values()
    assert old_rejection not in dict(kinds_left(db)).values()
    # Audited as maintenance, one row per kind; the full-text index followed.
    rows = [r for r in audit.recent(db, target="episodes") if r.action == "episode.retention"]
    assert {r.before["kind"] for r in rows} == {"tool_call", "decision", "rejection"}
    assert {r.actor for r in rows} == {"maintenance"}
    assert episodes.search(db, "billing") == []
    # Nothing more to do the next night.
    assert apply_retention(home, db, now=NOW).deleted == {}


def test_policy_yaml_sets_retention_per_kind(home: Home, db: Database) -> None:
    text = home.policy_path.read_text()
    text = text.replace("  tool_calls:\n    capture: all\n",
                        "  tool_calls:\n    capture: all\n    retention_days: 7\n")
    text = text.replace("    retention_days: null\n    patterns: []\n",
                        "    retention_days: 30\n    patterns: []\n")
    home.policy_path.write_text(text)
    add(db, "tool_call", 8)
    kept = add(db, "tool_call", 6)
    add(db, "incident", 31)
    kept_decision = add(db, "decision", 100)
    report = apply_retention(home, db, now=NOW)
    assert report.deleted == {"tool_call": 1, "incident": 1}
    assert kinds_left(db) == sorted([("tool_call", kept), ("decision", kept_decision)])
