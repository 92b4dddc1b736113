"""The facts screen: every current value, and the history of the one under the cursor."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from memtui.stores import facts
from memtui.tui.glyphs import age, ascii_text
from memtui.tui.render import block, clean, lit
from memtui.tui.rowlist import Column, Row
from memtui.tui.screens.simple import ListScreen

FACTS_SHOWN = 5000


class FactsScreen(ListScreen):
    TITLE = "Facts · current values; the history of the one under the cursor below"
    COLUMNS = [Column("agent", 11), Column("key", 28), Column("value"),
               Column("conf", 4, right=True, min_width=1), Column("since", 5, right=True)]

    def read(self) -> list[Row]:
        app: Any = self.app
        now = app.clock()
        with self.store.reading() as db:
            found = facts.list_facts(db, self.agent, limit=FACTS_SHOWN)
        return [(f"{f.agent}\n{f.key}", [lit(f.agent), lit(f.key), lit(f.value),
                                         Text(f"{round(f.confidence * 100)}%"),
                                         Text(age(f.created_at, now))]) for f in found]

    def detail(self, key: str) -> Text:
        agent, _, fact_key = key.partition("\n")
        with self.store.reading() as db:
            chain = facts.history(db, agent, fact_key)
        lines = [f"{clean(fact_key)} ({clean(agent)}), oldest first:"]
        for f in chain:
            mark = "now" if f.current else "was"
            source = f" · from {clean(f.source_entry)}" if f.source_entry else ""
            lines.append(f"  {mark} {f.created_at[:16]}  {clean(f.value)}{source}")
        return block(ascii_text(self.app, "\n".join(lines)))
