"""The audit screen: who changed what, newest first, paged; enter shows before and after."""

from __future__ import annotations

import json

from rich.text import Text

from memtui.db import Database
from memtui.stores import pages
from memtui.stores.audit import AuditEntry
from memtui.tui.render import block, clean, lit
from memtui.tui.rowlist import Column
from memtui.tui.screens.paged import PagedScreen


def _brief(value: object) -> str:
    return "" if value is None else clean(json.dumps(value, default=str, sort_keys=True))


class AuditScreen(PagedScreen[AuditEntry]):
    TITLE = "Audit · every change to memory, with who made it"
    COLUMNS = [Column("id", 7, right=True), Column("at", 20), Column("actor", 11),
               Column("action", 18), Column("target", 16, min_width=1), Column("change")]

    def fetch(self, db: Database, anchor: pages.Key | None, forward: bool, limit: int,
              inclusive: bool) -> pages.Page[AuditEntry]:
        return pages.audit_page(db, text=self.text or None, anchor=anchor, forward=forward,
                                limit=limit, inclusive=inclusive)

    def count(self, db: Database) -> int:
        return pages.audit_count(db, text=self.text or None)

    def cells(self, a: AuditEntry) -> list[Text]:
        return [Text(str(a.id)), Text(a.at), lit(a.actor), lit(a.action), lit(a.target),
                lit(_brief(a.after) or _brief(a.before), "dim")]

    def details(self, a: AuditEntry) -> tuple[str, Text]:
        body = (f"{a.at}  {a.actor}  {a.action}  {a.target}\n\nbefore:\n"
                f"{json.dumps(a.before, indent=2, default=str)}\n\nafter:\n"
                f"{json.dumps(a.after, indent=2, default=str)}")
        return f"audit {a.id}", block(body)
