"""Pane 3, rules: score as a bar, band, domain, the boot set marked; the highest first."""

from __future__ import annotations

from rich.text import Text

from memtui import timeutil
from memtui.stores.rules import Rule
from memtui.tui.actions import RULE_BINDINGS, ActsOnRows
from memtui.tui.data import Snapshot
from memtui.tui.glyphs import age, bar, sep
from memtui.tui.panes.base import Pane
from memtui.tui.render import lit
from memtui.tui.rowlist import Column, Row


def band_label(rule: Rule, boot: bool) -> Text:
    if rule.status == "critical":
        return Text("CRIT", style="bold reverse")
    if boot:
        return Text("boot", style="bold")
    return Text({"active": "on", "dormant": "dorm", "retired": "ret"}.get(rule.status,
                                                                          rule.status))


def rule_cells(rule: Rule, boot: bool, now: str, *, ascii_only: bool) -> list[Text]:
    return [Text(bar(rule.score / 10, 10, ascii_only=ascii_only)), Text(f"{rule.score:4.1f}"),
            band_label(rule, boot), lit(rule.domain[:8]), lit(rule.rule),
            Text(str(rule.violations) if rule.violations else "-"),
            Text(age(rule.last_reinforced, timeutil.parse(now)))]


RULE_COLUMNS = [Column("score", 10), Column("", 4, right=True), Column("band", 4),
                Column("domain", 8), Column("rule"), Column("viol", 4, right=True, min_width=1),
                Column("rein", 4, right=True, min_width=1)]


class RulesPane(ActsOnRows, Pane):
    BINDINGS = RULE_BINDINGS
    number = 3
    title = "Rules"
    columns = RULE_COLUMNS
    empty = "no live rules"

    def data_of(self, snapshot: Snapshot) -> tuple[object, ...]:
        return (snapshot.rules, snapshot.boot_ids, snapshot.read_at[:13])

    def make_rows(self, snapshot: Snapshot) -> list[Row]:
        return [(str(r.id), rule_cells(r, r.id in snapshot.boot_ids, snapshot.read_at,
                                       ascii_only=self.ascii_only)) for r in snapshot.rules]

    def subtitle(self, snapshot: Snapshot) -> str:
        return (f"{snapshot.rules_total:,}{sep(ascii_only=self.ascii_only)}"
                f"boot set {len(snapshot.boot_ids)}")

    def current_item(self) -> tuple[str, str, bool, str | None] | None:
        key = self.rows.key
        found = [r for r in (self.snapshot.rules if self.snapshot else ()) if str(r.id) == key]
        if not key or not found:
            return None
        return key, found[0].rule, found[0].status == "critical", found[0].agent
