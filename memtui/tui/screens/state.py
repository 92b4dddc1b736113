"""Full screens 1 and 2: every active state entry, and every rejection, paged from SQLite."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from rich.text import Text

from memtui.db import Database
from memtui.stores import pages
from memtui.stores import state as state_store
from memtui.stores.state import StateEntry
from memtui.tui.actions import REJECTION_BINDINGS, STATE_BINDINGS, ActsOnRows
from memtui.tui.data import NOT_REJECTED, REJECTED
from memtui.tui.glyphs import age
from memtui.tui.panes.state import CATEGORY_STYLE
from memtui.tui.render import block, clean, lit
from memtui.tui.rowlist import Column
from memtui.tui.screens.paged import PagedScreen


def entry_text(entry: StateEntry, chain: list[StateEntry], where: str = "",
               answers: str = "") -> Text:
    """An entry in full, with where it came from (and where the proposal it answers is)
    and its supersede chain."""
    lines = [f"{k:>13}  {clean(v)}" for k, v in entry.as_dict().items() if k != "detail"]
    if where:
        lines.append(f"{'found at':>13}  {clean(where)}")
    if answers:
        lines.append(f"{'answers':>13}  {clean(answers)}")
    if entry.detail:
        lines += ["", "detail:", str(entry.detail)]
    if len(chain) > 1:
        lines += ["", "supersede chain (oldest first):"]
        for e in chain:
            mark = "->" if e.id == entry.id else "  "
            lines.append(f" {mark} {e.id} {e.created_at[:10]} [{e.status}] {clean(e.summary)}")
    return block("\n".join(lines))


def find_line(path: str | None, entry: str | None, root: Path | None = None) -> str:
    """The transcript line a message id is on ("file:line"), or what is known. A relative
    path is taken from the home's folder."""
    if not path or not entry:
        return ""
    if root is not None and not Path(path).is_absolute():
        path = str(root / path)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                if entry in line:
                    return f"{Path(path).name}:{n} (message {entry})"
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    return f"{Path(path).name} (message {entry} not found in it now)"


class StateScreen(ActsOnRows, PagedScreen[StateEntry]):
    TITLE = "1 Active state"
    CATEGORIES: tuple[str, ...] = NOT_REJECTED
    STATUSES: tuple[str, ...] = ("active",)
    SORTS: ClassVar[Sequence[str]] = ("newest", "oldest", "category", "agent")
    COLUMNS = [Column("id", 6, right=True), Column("date", 10, min_width=1),
               Column("agent", 11, min_width=1), Column("category", 11),
               Column("domain", 10, min_width=1), Column("summary"), Column("age", 4, right=True)]
    BINDINGS = STATE_BINDINGS

    def fetch(self, db: Database, anchor: pages.Key | None, forward: bool, limit: int,
              inclusive: bool) -> pages.Page[StateEntry]:
        return pages.state_page(db, agent=self.agent, categories=self.CATEGORIES,
                                statuses=self.STATUSES, text=self.text or None, sort=self.sort,
                                anchor=anchor, forward=forward, limit=limit,
                                inclusive=inclusive)

    def count(self, db: Database) -> int:
        return pages.state_count(db, agent=self.agent, categories=self.CATEGORIES,
                                 statuses=self.STATUSES, text=self.text or None)

    def cells(self, e: StateEntry) -> list[Text]:
        return [Text(str(e.id)), Text(e.created_at[:10]), lit(e.agent),
                lit(e.category, CATEGORY_STYLE.get(e.category, "")), lit(e.domain),
                lit(e.summary), Text(age(e.created_at, self.now()))]

    def details(self, e: StateEntry) -> tuple[str, Text]:
        with self.store.reading() as db:
            chain = state_store.chain(db, e.id)
        root = self.store.home.root
        return f"state {e.id}", entry_text(e, chain, find_line(e.source_file, e.source_entry, root),
                                           find_line(e.source_file, e.answers_entry, root))

    def current_item(self) -> tuple[str, str, bool, str | None] | None:
        e = self.current()
        return None if e is None else (str(e.id), e.summary, False, e.agent)


class RejectionsScreen(StateScreen):
    TITLE = "2 Rejections · where each came from; ! makes it a critical rule"
    CATEGORIES = REJECTED
    STATUSES = ("active", "completed")
    SORTS = ("newest", "oldest", "agent")
    COLUMNS = [Column("id", 6, right=True), Column("date", 10), Column("agent", 11),
               Column("summary"), Column("conf", 4, right=True),
               Column("source", 24, min_width=1)]
    BINDINGS = REJECTION_BINDINGS

    def cells(self, e: StateEntry) -> list[Text]:
        source = f"{Path(e.source_file).name if e.source_file else '-'}"
        return [Text(str(e.id)), Text(e.created_at[:10]), lit(e.agent), lit(e.summary),
                Text(f"{round(e.confidence * 100)}%"), lit(source, "dim")]
