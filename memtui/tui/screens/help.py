"""`?`: every key bound where you are, with its id (to remap it), each runnable from here."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label

from memtui.tui.glyphs import ascii_text
from memtui.tui.rowlist import Column, RowList


def binding_rows(bindings: dict[str, ActiveBinding]) -> list[tuple[str, ActiveBinding]]:
    """One row per binding id (a binding on several keys shows once), in binding order."""
    seen: dict[str, tuple[str, ActiveBinding]] = {}
    for key, active in bindings.items():
        ident = active.binding.id or active.binding.action
        if ident not in seen:
            seen[ident] = (key, active)
    return list(seen.values())


class HelpScreen(ModalScreen[None]):
    """The keys of the screen below, as a menu: enter runs the one under the cursor."""

    BINDINGS = [Binding("escape,q,question_mark", "close", "close", id="help.close")]

    def __init__(self, bindings: dict[str, ActiveBinding]) -> None:
        super().__init__(classes="dialog")
        self.entries = binding_rows(bindings)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box dialog-wide"):
            yield Label(Text("Keys here (remap by id in memtui.toml [console] keymap)",
                             style="bold"))
            rows = RowList([Column("key", 9), Column("does"), Column("id", 20, min_width=1)],
                           id="help-rows")
            yield rows
            yield Label(Text(ascii_text(self.app, "enter: run it · esc: close"), style="dim"))

    def on_mount(self) -> None:
        rows = self.query_one(RowList)
        out = []
        for i, (key, active) in enumerate(self.entries):
            b = active.binding
            shown = self.app.get_key_display(b) if b.key_display is None else b.key_display
            desc = b.description or b.action
            if b.tooltip:
                desc = f"{desc} — {b.tooltip}"
            out.append((str(i), [Text(shown or key), Text(desc), Text(b.id or "", style="dim")]))
        rows.set_rows(out)
        rows.focus()

    @on(RowList.Selected)
    async def _run(self, event: RowList.Selected) -> None:
        event.stop()
        _key, active = self.entries[int(event.key)]
        self.dismiss(None)
        await self.app.run_action(active.binding.action, active.node)

    def action_close(self) -> None:
        self.dismiss(None)
