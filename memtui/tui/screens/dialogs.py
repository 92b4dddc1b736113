"""Small modal screens: confirm, type a line of text, read a text, choose from a list."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from memtui.tui.glyphs import ascii_text
from memtui.tui.render import block, lit


class ConfirmScreen(ModalScreen[bool]):
    """Yes or no; the stored text it is about is shown literally."""

    BINDINGS = [Binding("y", "answer(True)", "yes", id="dialog.yes"),
                Binding("n,escape", "answer(False)", "no", id="dialog.no")]

    def __init__(self, question: str, detail: str = "") -> None:
        super().__init__(classes="dialog")
        self.question = question
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box"):
            yield Label(lit(self.question, "bold"))
            if self.detail:
                with VerticalScroll(classes="dialog-scroll"):
                    yield Static(block(self.detail), classes="dialog-detail")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Yes (y)", id="yes", variant="warning")
                yield Button("No (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class PromptScreen(ModalScreen[str | None]):
    """One line of text (enter accepts, escape cancels)."""

    BINDINGS = [Binding("escape", "cancel", "cancel", id="dialog.cancel")]

    def __init__(self, question: str, detail: str = "", *, value: str = "") -> None:
        super().__init__(classes="dialog")
        self.question = question
        self.detail = detail
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box"):
            yield Label(lit(self.question, "bold"))
            if self.detail and self.detail != self.value:
                yield Static(block(self.detail), classes="dialog-detail")
            yield Input(value=self.value, id="prompt-input")
            yield Label(Text(ascii_text(self.app, "enter: save · esc: cancel"), style="dim"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class TextScreen(ModalScreen[None]):
    """A scrollable text (a diff, cited lines, a report); escape or q closes it."""

    BINDINGS = [Binding("escape,q", "close", "close", id="dialog.close")]

    def __init__(self, title: str, body: Text) -> None:
        super().__init__(classes="dialog")
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box dialog-wide"):
            yield Label(lit(self.title_text, "bold"))
            with VerticalScroll(classes="dialog-scroll"):
                yield Static(self.body)
            yield Label(Text("esc: close", style="dim"))

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)


class ChooseScreen(ModalScreen[str | None]):
    """Pick one of a few named choices (the agent switcher)."""

    BINDINGS = [Binding("escape", "cancel", "cancel", id="dialog.cancel")]

    def __init__(self, title: str, choices: list[tuple[str, str]], current: str = "") -> None:
        super().__init__(classes="dialog")
        self.title_text = title
        self.choices = choices
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box"):
            yield Label(lit(self.title_text, "bold"))
            yield OptionList(*[Option(lit(label), id=value) for value, label in self.choices])

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        ids = [value for value, _ in self.choices]
        if self.current in ids:
            options.highlighted = ids.index(self.current)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
