"""Rules: scored behavioural rules that decay unless reinforced.

Score bands (status follows the band; critical rules never decay):

    9-10  critical   always loaded, never decays, only a human may retire or demote it
    7-8   active     loaded at boot
    5-6   active     loaded on demand
    3-4   dormant
    1-2   retired    kept, can be revived
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec

from memtui import text, timeutil
from memtui.db import Database
from memtui.errors import MemtuiError, NotFound
from memtui.redact import scrub
from memtui.stores import audit

STATUSES = ("active", "dormant", "retired", "critical")
MIN_SCORE, MAX_SCORE = 1.0, 10.0
ACTIVE_CEILING = 8.9
"""Reinforcement never makes a rule critical by itself: that takes a human or a rejection."""
NORM_CHARS = 40
"""Rules whose first 40 characters match after normalising are near-duplicates."""
BAND_STEP = 2.0
"""Promote and demote move a rule one band (two points)."""


BANDS: tuple[tuple[float, str], ...] = ((9.0, "critical"), (5.0, "active"), (3.0, "dormant"))
"""(lowest score, status) from the top band down; below the last band a rule is retired."""
BOOT_MIN_SCORE = 7.0
"""Active rules load at boot from this score; 5-6 are loaded on demand (gates, search)."""


def band(score: float) -> str:
    """The status a score's band gives."""
    for floor, status in BANDS:
        if score >= floor:
            return status
    return "retired"


def band_sql(expr: str, *, critical: bool = True) -> str:
    """``band`` as an SQL CASE over ``expr`` (without the critical band if ``critical`` is
    false: decay never makes a rule critical)."""
    whens = " ".join(f"WHEN {expr} >= {floor} THEN '{status}'" for floor, status in BANDS
                     if critical or status != "critical")
    return f"CASE {whens} ELSE 'retired' END"


P = ParamSpec("P")


def _atomic(fn: Callable[P, Rule]) -> Callable[P, Rule]:
    """Run a read-modify-write of one rule in a single write transaction, so concurrent
    processes never lose each other's updates."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> Rule:
        db = args[0]
        assert isinstance(db, Database)
        with db.write():
            return fn(*args, **kwargs)

    return wrapper


def clamp(score: float) -> float:
    return round(min(MAX_SCORE, max(MIN_SCORE, score)), 2)


@dataclass(frozen=True)
class Rule:
    id: int
    rule: str
    norm_key: str
    domain: str
    agent: str | None
    source: str
    provenance: list[str]
    score: float
    violations: int
    last_reinforced: str
    created_at: str
    updated_at: str
    status: str
    merged_into: int | None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def row_to_rule(row: dict[str, Any]) -> Rule:
    """A rule from its row (a dict keyed by column)."""
    row = dict(row)
    row["provenance"] = json.loads(row["provenance"])
    return Rule(**row)


_rule = row_to_rule


def get(db: Database, rule_id: int) -> Rule:
    row = db.one("SELECT * FROM rules WHERE id = ?", (rule_id,))
    if row is None:
        raise NotFound(f"no rule {rule_id}")
    return _rule(row)


def find_by_key(db: Database, rule_text: str, agent: str | None) -> Rule | None:
    """A live (not retired) rule with the same near-duplicate key for the same agent scope."""
    row = db.one(
        "SELECT * FROM rules WHERE norm_key = ? AND agent IS ? AND status != 'retired' "
        "ORDER BY score DESC, id LIMIT 1", (text.norm_key(rule_text, NORM_CHARS), agent))
    return _rule(row) if row else None


def add(
    db: Database, rule: str, *, actor: str, score: float = 5.0, domain: str = "general",
    agent: str | None = None, source: str = "manual", provenance: Sequence[str] = (),
    violations: int = 0, created_at: str | None = None, last_reinforced: str | None = None,
) -> Rule:
    """Add a rule; its status is the band of its score."""
    rule, domain = scrub(rule), scrub(domain)
    if not rule.strip():
        raise MemtuiError("a rule needs non-empty text")
    if not MIN_SCORE <= score <= MAX_SCORE:
        raise MemtuiError(f"a rule's score must be between 1 and 10, not {score}")
    stamp = timeutil.iso(timeutil.now())
    created = timeutil.iso(timeutil.parse(created_at)) if created_at else stamp
    reinforced = timeutil.iso(timeutil.parse(last_reinforced)) if last_reinforced else created
    with db.write():
        rule_id = db.execute(
            "INSERT INTO rules(rule, norm_key, domain, agent, source, provenance, score, "
            "violations, last_reinforced, created_at, updated_at, status) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (rule.strip(), text.norm_key(rule, NORM_CHARS), domain or "general", agent, source,
             json.dumps(list(provenance)), clamp(score), violations, reinforced, created, stamp,
             band(score)),
        )
        added = get(db, rule_id)
        audit.record(db, actor, "rule.add", f"rule:{rule_id}", None, added.as_dict())
    return added


def _change(db: Database, rule_id: int, actor: str, action: str, **changes: Any) -> Rule:
    with db.write():
        before = get(db, rule_id)
        changes["updated_at"] = timeutil.iso(timeutil.now())
        sets = ", ".join(f"{k} = ?" for k in changes)
        db.execute(f"UPDATE rules SET {sets} WHERE id = ?", (*changes.values(), rule_id))
        after = get(db, rule_id)
        keys = [k for k in changes if k != "updated_at"]
        audit.record(db, actor, action, f"rule:{rule_id}",
                     {k: getattr(before, k) for k in keys}, {k: getattr(after, k) for k in keys})
    return after


def _guard_critical(rule: Rule, human: bool, verb: str) -> None:
    if rule.status == "critical" and not human:
        raise MemtuiError(
            f"rule {rule.id} is critical; only a human may {verb} it "
            f"(say so explicitly: --human on the command line)"
        )


@_atomic
def reinforce(db: Database, rule_id: int, *, actor: str, amount: float = 1.0) -> Rule:
    """The rule proved useful: raise its score (up to 8.9 unless critical already) and
    restart its decay clock."""
    rule = get(db, rule_id)
    if rule.status == "retired":
        raise MemtuiError(f"rule {rule_id} is retired; revive it first")
    if rule.status == "critical":
        score, status = clamp(rule.score + amount), "critical"
    else:
        score = min(ACTIVE_CEILING, clamp(rule.score + amount))
        status = band(score)
    return _change(db, rule_id, actor, "rule.reinforce", score=score, status=status,
                   last_reinforced=timeutil.iso(timeutil.now()))


@_atomic
def violate(db: Database, rule_id: int, *, actor: str) -> Rule:
    """The agent broke the rule: count it. A broken rule is evidently still relevant, so its
    decay clock restarts too (decaying it would make the next violation likelier)."""
    rule = get(db, rule_id)
    return _change(db, rule_id, actor, "rule.violation", violations=rule.violations + 1,
                   last_reinforced=timeutil.iso(timeutil.now()))


@_atomic
def promote(db: Database, rule_id: int, *, actor: str) -> Rule:
    """Up one band (two points)."""
    rule = get(db, rule_id)
    if rule.status == "critical":
        raise MemtuiError(f"rule {rule_id} is already critical")
    score = clamp(max(rule.score, 3.0) + BAND_STEP if rule.status == "retired"
                  else rule.score + BAND_STEP)
    return _change(db, rule_id, actor, "rule.promote", score=score, status=band(score),
                   last_reinforced=timeutil.iso(timeutil.now()))


@_atomic
def demote(db: Database, rule_id: int, *, actor: str, human: bool = False) -> Rule:
    """Down one band; a critical rule only when a human says so."""
    rule = get(db, rule_id)
    _guard_critical(rule, human, "demote")
    if rule.status == "retired":
        raise MemtuiError(f"rule {rule_id} is already retired")
    score = clamp(min(rule.score, 8.9) - BAND_STEP if rule.status == "critical"
                  else rule.score - BAND_STEP)
    return _change(db, rule_id, actor, "rule.demote", score=score, status=band(score))


@_atomic
def make_critical(db: Database, rule_id: int, *, actor: str) -> Rule:
    rule = get(db, rule_id)
    return _change(db, rule_id, actor, "rule.critical", score=max(rule.score, 9.0),
                   status="critical", last_reinforced=timeutil.iso(timeutil.now()))


@_atomic
def retire(db: Database, rule_id: int, *, actor: str, human: bool = False) -> Rule:
    """Retire a rule (kept, can be revived); a critical rule only when a human says so."""
    rule = get(db, rule_id)
    _guard_critical(rule, human, "retire")
    if rule.status == "retired":
        raise MemtuiError(f"rule {rule_id} is already retired")
    return _change(db, rule_id, actor, "rule.retire", score=min(rule.score, 2.0),
                   status="retired")


@_atomic
def revive(db: Database, rule_id: int, *, actor: str, score: float = 5.0) -> Rule:
    """Bring a retired or dormant rule back as active (on demand by default)."""
    rule = get(db, rule_id)
    if rule.status in ("active", "critical"):
        raise MemtuiError(f"rule {rule_id} is {rule.status}; nothing to revive")
    score = clamp(score)
    return _change(db, rule_id, actor, "rule.revive", score=score, status=band(score),
                   merged_into=None, last_reinforced=timeutil.iso(timeutil.now()))


@_atomic
def adjust(db: Database, rule_id: int, delta: float, *, actor: str, human: bool = False) -> Rule:
    """Move a rule's score by ``delta`` by hand (the console's +/-); its status follows the
    band. Lowering a critical rule needs a human; raising never makes a rule critical."""
    rule = get(db, rule_id)
    if rule.status == "retired":
        raise MemtuiError(f"rule {rule_id} is retired; revive it first")
    if delta < 0:
        _guard_critical(rule, human, "demote")
    if rule.status == "critical" and delta > 0:
        score, status = clamp(rule.score + delta), "critical"
    elif rule.status == "critical":
        score = clamp(rule.score + delta)
        status = "critical" if score >= 9.0 else band(score)
    else:
        score = clamp(min(rule.score + delta, ACTIVE_CEILING) if delta > 0
                      else rule.score + delta)
        status = band(score)
    if score == rule.score:
        raise MemtuiError(f"rule {rule_id} is at {rule.score:g} already")
    extra = {"last_reinforced": timeutil.iso(timeutil.now())} if delta > 0 else {}
    return _change(db, rule_id, actor, "rule.adjust", score=score, status=status, **extra)


@_atomic
def edit(db: Database, rule_id: int, rule_text: str, *, actor: str) -> Rule:
    """Correct a rule's words (its near-duplicate key follows)."""
    if not rule_text.strip():
        raise MemtuiError("a rule needs non-empty text")
    get(db, rule_id)
    return _change(db, rule_id, actor, "rule.edit", rule=rule_text.strip(),
                   norm_key=text.norm_key(rule_text, NORM_CHARS))


@_atomic
def merge_into(db: Database, rule_id: int, survivor_id: int, *, actor: str,
               human: bool = False) -> Rule:
    """Merge one rule into another by hand: the survivor keeps the higher score, sums the
    violations and combines provenance; the merged rule is retired pointing at it."""
    if rule_id == survivor_id:
        raise MemtuiError(f"rule {rule_id} cannot merge into itself")
    loser, survivor = get(db, rule_id), get(db, survivor_id)
    _guard_critical(loser, human, "merge away")
    if survivor.status == "retired":
        raise MemtuiError(f"rule {survivor_id} is retired; revive it before merging into it")
    provenance = list(survivor.provenance)
    provenance += [p for p in loser.provenance if p not in provenance] + [f"rule:{rule_id}"]
    score = max(survivor.score, loser.score)
    status = survivor.status if survivor.status == "critical" else band(
        min(score, ACTIVE_CEILING))
    _change(db, rule_id, actor, "rule.merge", status="retired", score=min(loser.score, 2.0),
            merged_into=survivor_id)
    return _change(db, survivor_id, actor, "rule.merge",
                   score=score if status == "critical" else min(score, ACTIVE_CEILING),
                   status=status, violations=survivor.violations + loser.violations,
                   provenance=json.dumps(provenance),
                   last_reinforced=max(survivor.last_reinforced, loser.last_reinforced))


def list_rules(
    db: Database, *, status: str | None = None, agent: str | None = None,
    domain: str | None = None, min_score: float | None = None, limit: int = 100,
) -> list[Rule]:
    """Rules by score, highest first. ``agent`` includes the rules for every agent."""
    where: list[str] = []
    params: list[Any] = []
    if status:
        if status not in STATUSES:
            raise MemtuiError(f"unknown rule status {status!r}; expected {', '.join(STATUSES)}")
        where.append("status = ?")
        params.append(status)
    if agent:
        where.append("(agent IS NULL OR agent = ?)")
        params.append(agent)
    if domain:
        where.append("domain = ?")
        params.append(domain)
    if min_score is not None:
        where.append("score >= ?")
        params.append(min_score)
    sql = "SELECT * FROM rules" + (" WHERE " + " AND ".join(where) if where else "")
    sql += " ORDER BY score DESC, last_reinforced DESC, id LIMIT ?"
    return [_rule(r) for r in db.query(sql, [*params, limit])]


def boot_rules(db: Database, agent: str, limit: int = 20) -> list[Rule]:
    """The rules an agent loads at boot: critical ones first, then active ones scored 7 or
    more, by score; at most ``limit``.

    Two index walks (status, score) that stop at ``limit``, not a sort of every rule.
    """
    found: list[Rule] = []
    for status, floor in (("critical", MIN_SCORE), ("active", BOOT_MIN_SCORE)):
        if len(found) >= limit:
            break
        found += [_rule(r) for r in db.query(
            "SELECT * FROM rules WHERE status = ? AND score >= ? "
            "AND (agent IS NULL OR agent = ?) "
            "ORDER BY score DESC, last_reinforced DESC, id LIMIT ?",
            (status, floor, agent, limit - len(found)))]
    return found


@dataclass(frozen=True)
class Decayed:
    """A rule that lost score in a decay cycle."""

    id: int
    rule: str
    score: float
    """The score after decay."""
    status: str
    """The status after decay."""
    was: str
    """The status before."""


def decay_stale(db: Database, *, cutoff: str, amount: float, actor: str) -> list[Decayed]:
    """Active and dormant rules last reinforced before ``cutoff`` lose ``amount`` (never
    below 1); their status follows the band. Critical rules never decay; retired ones stay.

    One set-based statement (this runs over every rule nightly) and one audit row listing
    the ids and the status changes.
    """
    new_score = f"max({MIN_SCORE}, round(score - {float(amount)}, 2))"
    with db.write():
        rows = db.rows(
            f"UPDATE rules SET score = {new_score}, "
            f"status = {band_sql(new_score, critical=False)}, updated_at = ? "
            "WHERE status IN ('active','dormant') AND last_reinforced < ? "
            "RETURNING id, rule, score, status", (timeutil.iso(timeutil.now()), cutoff))
        # The old status is the band of the old score (score + amount: never clamped above
        # 9, as active rules stay below the critical band).
        decayed = [Decayed(i, rule, score, status, band(score + amount))
                   for i, rule, score, status in rows]
        if decayed:
            moved: dict[str, list[int]] = {}
            for d in decayed:
                if d.was != d.status:
                    moved.setdefault(d.status, []).append(d.id)
            audit.record(db, actor, "rules.decay", "rules", {"ids": [d.id for d in decayed]},
                         {"score_delta": -amount, "status_changes": moved})
    return decayed


def merge_duplicates(db: Database, *, bonus: float, actor: str) -> list[tuple[int, list[int]]]:
    """Merge near-duplicate live rules (same normalised 40-character key, same agent scope).

    The highest-scored rule survives with ``bonus`` added (a rule that is not critical stays
    below the critical band), violations summed and provenance combined; the others are
    retired with ``merged_into`` pointing at it. A critical rule never merges away: only a
    human retires it. Returns (survivor, merged ids) per group.
    """
    merged: list[tuple[int, list[int]]] = []
    with db.write():
        groups = db.rows("SELECT norm_key, agent FROM rules WHERE status != 'retired' "
                         "GROUP BY norm_key, agent HAVING count(*) > 1")
        for norm_key, agent in groups:
            members = [_rule(r) for r in db.query(
                "SELECT * FROM rules WHERE norm_key = ? AND agent IS ? AND status != 'retired' "
                "ORDER BY (status = 'critical') DESC, score DESC, id", (norm_key, agent))]
            survivor = members[0]
            losers = [m for m in members[1:] if m.status != "critical"]
            if not losers:
                continue
            provenance = list(survivor.provenance)
            for m in losers:
                provenance += [p for p in m.provenance if p not in provenance]
                provenance.append(f"rule:{m.id}")
            if survivor.status == "critical":
                score, status = clamp(survivor.score + bonus), "critical"
            else:
                score = min(ACTIVE_CEILING, clamp(survivor.score + bonus))
                status = band(score)
            violations = survivor.violations + sum(m.violations for m in losers)
            reinforced = max([survivor.last_reinforced, *(m.last_reinforced for m in losers)])
            stamp = timeutil.iso(timeutil.now())
            db.execute(
                "UPDATE rules SET score = ?, status = ?, violations = ?, provenance = ?, "
                "last_reinforced = ?, updated_at = ? WHERE id = ?",
                (score, status, violations, json.dumps(provenance), reinforced, stamp,
                 survivor.id))
            loser_ids = [m.id for m in losers]
            db.executemany("UPDATE rules SET status = 'retired', score = min(score, 2.0), "
                           "merged_into = ?, updated_at = ? WHERE id = ?",
                           [(survivor.id, stamp, i) for i in loser_ids])
            audit.record(db, actor, "rules.merge", f"rule:{survivor.id}",
                         {"score": survivor.score, "violations": survivor.violations},
                         {"score": score, "violations": violations, "merged": loser_ids})
            merged.append((survivor.id, loser_ids))
    return merged
