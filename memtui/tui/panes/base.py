"""What every overview pane shares: a numbered border, a RowList, a count, a staleness mark."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Vertical

from memtui.tui.data import Snapshot
from memtui.tui.rowlist import Column, Row, RowList


class Pane(Vertical):
    """A numbered pane of the overview; ``update`` gets every new Snapshot."""

    number = 0
    title = ""
    columns: Sequence[Column] = ()
    empty = "nothing here"

    def __init__(self, *, ascii_only: bool = False, id: str | None = None) -> None:
        super().__init__(id=id, classes="pane")
        self.ascii_only = ascii_only
        self._last: tuple[object, ...] | None = None
        self.snapshot: Snapshot | None = None

    def compose(self) -> ComposeResult:
        yield RowList(self.columns, header=False, empty=self.empty, id=f"{self.id}-rows")

    def on_mount(self) -> None:
        self.border_title = f"{self.number} {self.title}"
        # A snapshot may have come before the rows were there: show the newest one then
        # (never one bound now, which could be older than the newest by the time it runs).
        self.call_after_refresh(self._catch_up)

    def _catch_up(self) -> None:
        if self.snapshot is not None:
            self.update(self.snapshot)

    @property
    def rows(self) -> RowList:
        return self.query_one(RowList)

    def focus_rows(self) -> None:
        self.rows.focus()

    def update(self, snapshot: Snapshot) -> None:
        """Show a snapshot; rows are rebuilt only when this pane's data changed."""
        self.snapshot = snapshot
        if not self.query(RowList):
            return
        data = self.data_of(snapshot)
        self.border_subtitle = self.subtitle(snapshot)
        if data == self._last:
            return
        self._last = data
        self.rows.set_rows(self.make_rows(snapshot))

    def refit(self) -> None:
        """Rows drawn to the pane's width are drawn again after a resize."""
        self._last = None

    def data_of(self, snapshot: Snapshot) -> tuple[object, ...]:
        raise NotImplementedError

    def make_rows(self, snapshot: Snapshot) -> list[Row]:
        raise NotImplementedError

    def subtitle(self, snapshot: Snapshot) -> str:
        return ""
