"""Keyset pages of the big tables (state, rules, audit, jobs): never a whole table, never OFFSET.

A page is asked for relative to an anchor, the sort key of a row already shown: the rows
after it (``forward``) or before it, in display order. Each sort is a column list walked
in one direction over an index, so the cost of a page does not grow with how far into
the table it is. The console scrolls through 100,000 rows this way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from memtui.db import Database, contains_any
from memtui.errors import MemtuiError
from memtui.stores import audit as audit_store
from memtui.stores import jobs as job_store
from memtui.stores import rules as rule_store
from memtui.stores import state as state_store

T = TypeVar("T")
Key = tuple[Any, ...]


@dataclass(frozen=True)
class Sort:
    """A display order: the columns (the last one unique) and whether they run downwards."""

    columns: tuple[str, ...]
    descending: bool


STATE_SORTS: dict[str, Sort] = {
    "newest": Sort(("created_at", "id"), True),
    "oldest": Sort(("created_at", "id"), False),
    "category": Sort(("category", "created_at", "id"), False),
    "agent": Sort(("agent", "created_at", "id"), False),
}
RULE_SORTS: dict[str, Sort] = {
    "score": Sort(("score", "id"), True),
    "reinforced": Sort(("last_reinforced", "id"), True),
    "violations": Sort(("violations", "id"), True),
    "domain": Sort(("domain", "id"), False),
}
ID_DESC = Sort(("id",), True)


@dataclass(frozen=True)
class Page(Generic[T]):
    """Rows in display order, their sort keys, and whether there is more either side."""

    rows: tuple[T, ...]
    keys: tuple[Key, ...]
    more_before: bool
    more_after: bool


def _page(
    db: Database, table: str, where: list[str], params: list[Any], sort: Sort,
    anchor: Key | None, forward: bool, limit: int, make: Callable[[dict[str, Any]], T],
    inclusive: bool = False,
) -> Page[T]:
    if limit < 1:
        raise MemtuiError(f"a page needs at least one row, not {limit}")
    conds = list(where)
    args = list(params)
    cols = ", ".join(sort.columns)
    # Walking forward in a descending sort means smaller keys; backward flips both.
    down = sort.descending == forward
    if anchor is not None:
        if len(anchor) != len(sort.columns):
            raise MemtuiError(f"an anchor of {len(sort.columns)} values is needed, "
                              f"not {len(anchor)}")
        op = ("<" if down else ">") + ("=" if inclusive else "")
        conds.append(f"({cols}) {op} ({', '.join('?' * len(anchor))})")
        args += list(anchor)
    order = ", ".join(f"{c} {'DESC' if down else 'ASC'}" for c in sort.columns)
    sql = (f"SELECT * FROM {table}" + (" WHERE " + " AND ".join(conds) if conds else "")
           + f" ORDER BY {order} LIMIT ?")
    found = db.query(sql, [*args, limit + 1])
    more = len(found) > limit
    found = found[:limit]
    if not forward:
        found.reverse()
    keys = tuple(tuple(r[c] for c in sort.columns) for r in found)
    rows = tuple(make(r) for r in found)
    if forward:
        return Page(rows, keys, more_before=anchor is not None, more_after=more)
    return Page(rows, keys, more_before=more, more_after=anchor is not None)


def _sort(sorts: dict[str, Sort], name: str) -> Sort:
    if name not in sorts:
        raise MemtuiError(f"unknown sort {name!r}; expected one of {', '.join(sorts)}")
    return sorts[name]


def _state_where(agent: str | None, categories: Sequence[str] | None,
                 statuses: Sequence[str], text: str | None) -> tuple[list[str], list[Any]]:
    where = [f"status IN ({', '.join('?' * len(statuses))})"]
    params: list[Any] = list(statuses)
    if agent:
        where.append("agent = ?")
        params.append(agent)
    if categories:
        where.append(f"category IN ({', '.join('?' * len(categories))})")
        params += list(categories)
    if text:
        clause, values = contains_any(("summary", "domain"), text)
        where.append(clause)
        params += values
    return where, params


def state_page(
    db: Database, *, agent: str | None = None, categories: Sequence[str] | None = None,
    statuses: Sequence[str] = ("active",), text: str | None = None, sort: str = "newest",
    anchor: Key | None = None, forward: bool = True, limit: int = 100, inclusive: bool = False,
) -> Page[state_store.StateEntry]:
    """A page of state entries (``categories`` None: every category); ``inclusive`` starts
    at the anchor's own row (re-reading a window in place)."""
    where, params = _state_where(agent, categories, statuses, text)
    return _page(db, "state", where, params, _sort(STATE_SORTS, sort), anchor, forward, limit,
                 lambda r: state_store.StateEntry(**r), inclusive)


def state_count(
    db: Database, *, agent: str | None = None, categories: Sequence[str] | None = None,
    statuses: Sequence[str] = ("active",), text: str | None = None,
) -> int:
    where, params = _state_where(agent, categories, statuses, text)
    return int(db.scalar("SELECT count(*) FROM state WHERE " + " AND ".join(where), params))


LIVE_RULES = ("critical", "active", "dormant")


def _rule_where(agent: str | None, statuses: Sequence[str],
                text: str | None) -> tuple[list[str], list[Any]]:
    where = [f"status IN ({', '.join('?' * len(statuses))})"]
    params: list[Any] = list(statuses)
    if agent:
        where.append("(agent IS NULL OR agent = ?)")
        params.append(agent)
    if text:
        clause, values = contains_any(("rule", "domain"), text)
        where.append(clause)
        params += values
    return where, params


def rule_page(
    db: Database, *, agent: str | None = None, statuses: Sequence[str] = LIVE_RULES,
    text: str | None = None, sort: str = "score", anchor: Key | None = None,
    forward: bool = True, limit: int = 100, inclusive: bool = False,
) -> Page[rule_store.Rule]:
    """A page of rules; ``agent`` includes the rules for every agent."""
    where, params = _rule_where(agent, statuses, text)
    return _page(db, "rules", where, params, _sort(RULE_SORTS, sort), anchor, forward, limit,
                 rule_store.row_to_rule, inclusive)


def rule_count(db: Database, *, agent: str | None = None,
               statuses: Sequence[str] = LIVE_RULES, text: str | None = None) -> int:
    where, params = _rule_where(agent, statuses, text)
    return int(db.scalar("SELECT count(*) FROM rules WHERE " + " AND ".join(where), params))


def _audit_where(actor: str | None, text: str | None) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    if actor:
        where.append("actor = ?")
        params.append(actor)
    if text:
        clause, values = contains_any(("action", "target"), text)
        where.append(clause)
        params += values
    return where, params


def audit_count(db: Database, *, actor: str | None = None, text: str | None = None) -> int:
    """How many audit rows match; with no filter, the highest id: the log only grows, and
    that answer costs nothing on a million rows where count(*) walks them all."""
    if not actor and not text:
        return int(db.scalar("SELECT coalesce(max(id), 0) FROM audit"))
    where, params = _audit_where(actor, text)
    return int(db.scalar("SELECT count(*) FROM audit WHERE " + " AND ".join(where), params))


def audit_page(
    db: Database, *, actor: str | None = None, text: str | None = None,
    anchor: Key | None = None, forward: bool = True, limit: int = 100, inclusive: bool = False,
) -> Page[audit_store.AuditEntry]:
    """A page of the audit log, newest first."""
    where, params = _audit_where(actor, text)
    return _page(db, "audit", where, params, ID_DESC, anchor, forward, limit,
                 audit_store.row_to_entry, inclusive)


def job_page(
    db: Database, *, kind: str | None = None, anchor: Key | None = None, forward: bool = True,
    limit: int = 100, inclusive: bool = False,
) -> Page[job_store.Job]:
    """A page of job runs, newest first."""
    where, params = (["kind = ?"], [kind]) if kind else ([], [])
    return _page(db, "jobs", where, params, ID_DESC, anchor, forward, limit, job_store.row_to_job,
                 inclusive)


def job_count(db: Database, *, kind: str | None = None) -> int:
    """How many job runs there are, of one kind or of all."""
    if kind:
        return int(db.scalar("SELECT count(*) FROM jobs WHERE kind = ?", (kind,)))
    return int(db.scalar("SELECT count(*) FROM jobs"))
