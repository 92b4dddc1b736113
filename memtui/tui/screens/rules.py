"""Full screen 3: every rule, paged; sort by score, reinforcement, violations or domain."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType

from memtui.db import Database
from memtui.stores import audit, pages
from memtui.stores import rules as rule_store
from memtui.stores.rules import Rule
from memtui.tui.actions import RULE_BINDINGS, ActsOnRows
from memtui.tui.data import boot_set
from memtui.tui.glyphs import age, bar
from memtui.tui.panes.rules import band_label
from memtui.tui.render import block, clean, lit
from memtui.tui.rowlist import Column
from memtui.tui.screens.paged import PagedScreen


class RulesScreen(ActsOnRows, PagedScreen[Rule]):
    TITLE = "3 Rules · + - score · ! critical · x retire · u revive · e edit · M merge"
    SORTS = tuple(pages.RULE_SORTS)
    COLUMNS = [Column("id", 5, right=True), Column("score", 10), Column("", 4, right=True),
               Column("band", 4), Column("domain", 10, min_width=1),
               Column("agent", 11, min_width=1), Column("rule"),
               Column("viol", 4, right=True, min_width=1),
               Column("reinforced", 10, right=True, min_width=1)]
    BINDINGS: ClassVar[list[BindingType]] = [
        *RULE_BINDINGS,
        Binding("t", "toggle_retired", "all/live", id="rules.toggle_retired",
                tooltip="Show retired rules too, or only live ones"),
    ]

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self.statuses: tuple[str, ...] = pages.LIVE_RULES
        self.boot: frozenset[int] = frozenset()

    def fetch(self, db: Database, anchor: pages.Key | None, forward: bool, limit: int,
              inclusive: bool) -> pages.Page[Rule]:
        self.boot = boot_set(db, tuple(self.store.home.agents()), self.agent)
        return pages.rule_page(db, agent=self.agent, statuses=self.statuses,
                               text=self.text or None, sort=self.sort, anchor=anchor,
                               forward=forward, limit=limit, inclusive=inclusive)

    def count(self, db: Database) -> int:
        return pages.rule_count(db, agent=self.agent, statuses=self.statuses,
                                text=self.text or None)

    def cells(self, r: Rule) -> list[Text]:
        app = self.app
        ascii_only = bool(getattr(app, "ascii_only", False))
        return [Text(str(r.id)), Text(bar(r.score / 10, 10, ascii_only=ascii_only)),
                Text(f"{r.score:4.1f}"), band_label(r, r.id in self.boot), lit(r.domain),
                lit(r.agent or "all"), lit(r.rule),
                Text(str(r.violations) if r.violations else "-"),
                Text(age(r.last_reinforced, self.now()) + " ago")]

    def details(self, r: Rule) -> tuple[str, Text]:
        with self.store.reading() as db:
            rule = rule_store.get(db, r.id)
            trail = audit.recent(db, target=f"rule:{r.id}", limit=30)
        lines = [f"{k:>16}  {clean(v)}" for k, v in rule.as_dict().items()]
        lines += ["", "audit trail (newest first):"]
        lines += [f"  {a.at}  {a.actor:<11} {a.action:<16} {clean(a.before)} -> {clean(a.after)}"
                  for a in trail]
        return f"rule {r.id}", block("\n".join(lines))

    def action_toggle_retired(self) -> None:
        self.statuses = (rule_store.STATUSES if self.statuses == pages.LIVE_RULES
                         else pages.LIVE_RULES)
        self.notify("showing every rule" if self.statuses == rule_store.STATUSES
                    else "showing live rules")
        self.load("reset")

    def current_item(self) -> tuple[str, str, bool, str | None] | None:
        r = self.current()
        return None if r is None else (str(r.id), r.rule, r.status == "critical", r.agent)
