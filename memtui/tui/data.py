"""What the overview shows, read off the UI thread into one frozen Snapshot.

Workers call these; the UI thread only receives the frozen results in messages.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime

from memtui import timeutil
from memtui.db import Database
from memtui.stores import flows as flow_store
from memtui.stores import jobs, pages, review
from memtui.stores import rules as rule_store
from memtui.stores.flows import Flow
from memtui.stores.rules import Rule
from memtui.stores.state import StateEntry
from memtui.tui.contextview import ContextView, read_context
from memtui.tui.store import Store

PANE_ROWS = 60
"""Rows each overview pane holds: more than a 120x40 terminal shows, never a whole table."""
REVIEW_COUNT = 1000
"""The header counts the review queue up to this ("1,000+")."""
REJECTED = ("rejected",)
NOT_REJECTED = ("decision", "task", "agent_state", "context", "discovery", "learning")


@dataclass(frozen=True)
class FlowView:
    """A flow and its recent run outcomes, oldest first (True: pass)."""

    flow: Flow
    recent: tuple[bool, ...]


@dataclass(frozen=True)
class Snapshot:
    """Everything the overview shows, read in one transaction at ``read_at``."""

    read_at: str
    agent: str | None
    agents: tuple[str, ...]
    state: tuple[StateEntry, ...]
    state_total: int
    rejections: tuple[StateEntry, ...]
    rejections_total: int
    rules: tuple[Rule, ...]
    rules_total: int
    boot_ids: frozenset[int]
    flows: tuple[FlowView, ...]
    flows_total: int
    last_extract: str | None
    review_pending: int
    context: ContextView | None = field(default=None)


def boot_set(db: Database, agents: tuple[str, ...], agent: str | None) -> frozenset[int]:
    """Ids of the rules loaded at boot: of one agent, or of any agent when none is chosen."""
    chosen = (agent,) if agent else agents
    return frozenset(r.id for a in chosen for r in rule_store.boot_rules(db, a))


def flow_views(db: Database, agent: str | None, limit: int) -> tuple[tuple[FlowView, ...], int]:
    """The most used live flows with their last 12 outcomes, and how many flows there are."""
    views = tuple(FlowView(f, flow_store.recent_outcomes(db, f.id, 12))
                  for f in flow_store.most_used(db, agent=agent, limit=limit))
    return views, flow_store.live_count(db, agent=agent)


def read_snapshot(store: Store, agent: str | None, *, now: datetime | None = None,
                  with_context: bool = True) -> Snapshot:
    """Read the overview in one consistent transaction (bounded by ``PANE_ROWS`` per pane)."""
    agents = tuple(store.home.agents())
    with store.reading() as db, db.read():
        live = pages.state_page(db, agent=agent, categories=NOT_REJECTED, limit=PANE_ROWS)
        rejected = pages.state_page(db, agent=agent, categories=REJECTED,
                                    statuses=("active", "completed"), limit=PANE_ROWS)
        ranked = pages.rule_page(db, agent=agent, statuses=("critical", "active"),
                                 limit=PANE_ROWS)
        flows, flows_total = flow_views(db, agent, PANE_ROWS)
        last = jobs.last(db, "extraction")
        snap = Snapshot(
            read_at=timeutil.iso(now or timeutil.now()), agent=agent, agents=agents,
            state=live.rows,
            state_total=pages.state_count(db, agent=agent, categories=NOT_REJECTED),
            rejections=rejected.rows,
            rejections_total=pages.state_count(db, agent=agent, categories=REJECTED,
                                               statuses=("active", "completed")),
            rules=ranked.rows,
            rules_total=pages.rule_count(db, agent=agent, statuses=("critical", "active")),
            boot_ids=boot_set(db, agents, agent), flows=flows, flows_total=flows_total,
            last_extract=(last.finished_at or last.started_at) if last else None,
            review_pending=review.pending(db, agent, limit=1, count_limit=REVIEW_COUNT,
                                          agents=agents).total,
        )
    if not with_context:
        return snap
    context_agent = agent or store.home.settings.default_agent()
    return dataclasses.replace(snap, context=read_context(store, context_agent))
