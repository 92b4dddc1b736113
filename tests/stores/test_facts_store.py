"""Facts: one current value per key, supersede chains, history, forgetting."""

from __future__ import annotations

import pytest

from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.stores import audit, facts


def test_put_adds_supersedes_and_answers_what_came_before(db: Database) -> None:
    a = facts.put(db, "main", "Package Manager", "npm", actor="cli", source_entry="m1",
                  at="2026-01-01T00:00:00Z")
    assert a.action == "added" and a.fact.key == "package manager"
    assert facts.put(db, "main", "package manager", "NPM.", actor="cli").action == "unchanged"
    b = facts.put(db, "main", "package manager", "pnpm", actor="cli", source_entry="m2",
                  at="2026-02-01T00:00:00Z")
    assert b.action == "superseded" and b.previous is not None
    assert b.previous.superseded_by == b.fact.id
    assert [f.value for f in facts.history(db, "main", "package manager")] == ["npm", "pnpm"]
    prev = facts.previous(db, "main", "package manager")
    assert prev is not None and prev.value == "npm" and prev.source_entry == "m1"
    assert [f.value for f in facts.list_facts(db, "main")] == ["pnpm"]
    assert len(facts.list_facts(db, "main", include_superseded=True)) == 2
    actions = [r.action for r in audit.recent(db)]
    assert actions.count("fact.add") == 2 and actions.count("fact.supersede") == 1


def test_an_older_value_does_not_replace_a_newer_one(db: Database) -> None:
    facts.put(db, "main", "editor", "helix", actor="cli", at="2026-03-01T00:00:00Z")
    change = facts.put(db, "main", "editor", "vim", actor="cli", at="2026-01-01T00:00:00Z")
    assert change.action == "stale"
    current = facts.current(db, "main", "editor")
    assert current is not None and current.value == "helix"


def test_agents_are_separate_and_forget_closes(db: Database) -> None:
    facts.put(db, "main", "tz", "UTC", actor="cli")
    facts.put(db, "ops", "tz", "CET", actor="cli")
    current = facts.current(db, "main", "tz")
    assert current is not None
    facts.forget(db, current.id, actor="cli")
    assert facts.current(db, "main", "tz") is None
    ops = facts.current(db, "ops", "tz")
    assert ops is not None and ops.value == "CET"
    assert facts.put(db, "main", "tz", "UTC", actor="cli").action == "added"


@pytest.mark.parametrize("key, value", [("", "x"), ("k", "  ")])
def test_invalid_facts(db: Database, key: str, value: str) -> None:
    with pytest.raises(MemtuiError):
        facts.put(db, "main", key, value, actor="cli")
