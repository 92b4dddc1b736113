"""The search screen: hybrid search with scores and citations; enter opens the cited lines."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.search.hybrid import Hit
from memtui.tui.glyphs import ascii_text
from memtui.tui.render import block, clean, lit
from memtui.tui.rowlist import Column, RowList
from memtui.tui.store import Store

MAX_LINE = 2000
"""Characters of one cited transcript line shown (a JSONL line can be megabytes)."""


def citation(hit: Hit) -> str:
    return hit.path if not hit.start_line else f"{hit.path}:{hit.start_line}-{hit.end_line}"


def cited_lines(home: Home, agent: str, hit: Hit, context: int = 3) -> Text:
    """The lines a hit cites, numbered, with a little context around them."""
    if hit.source == "memory":
        from memtui.workspace.memoryfiles import get

        start = max(1, hit.start_line - context)
        got = get(home, agent, hit.path, start=start,
                  lines=hit.end_line - start + 1 + context)
        numbered = [f"{n:>5}{'>' if hit.start_line <= n <= hit.end_line else ' '} {line}"
                    for n, line in enumerate(got.text.split("\n"), got.start_line)]
        return block("\n".join(numbered))
    if hit.source == "sessions" and hit.start_line:
        out = []
        with open(hit.path, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                if n > hit.end_line + context:
                    break
                if n >= hit.start_line - context:
                    mark = ">" if hit.start_line <= n <= hit.end_line else " "
                    out.append(f"{n:>6}{mark} {line.rstrip()[:MAX_LINE]}")
        return block("\n".join(out))
    return block(f"{hit.path}\n\n{hit.snippet}")


class SearchScreen(Screen[None]):
    """Type a question; results come from a worker (the first search may index first)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.go_back", "back", id="search.back"),
        Binding("slash", "focus_query", "new search", id="search.query"),
    ]

    def __init__(self, store: Store, agent: str | None, key: str | None = None) -> None:
        super().__init__()
        self.store = store
        self.agent = agent
        self.hits: list[Hit] = []

    @property
    def search_agent(self) -> str:
        return self.agent or self.store.home.settings.default_agent()

    def compose(self) -> ComposeResult:
        yield Static(Text(ascii_text(self.app, f" Search · {self.search_agent}'s memory "
                                     "(hybrid: vectors + keywords)"), style="bold"),
                     classes="full-title")
        box = Input(placeholder="what to look for; enter searches", id="query")
        box.cursor_blink = False  # a blinking cursor makes every screenshot differ
        yield box
        yield RowList([Column("score", 5, right=True), Column("source", 8),
                       Column("cited", 30, min_width=1), Column("snippet")], id="table",
                      empty="no results yet")
        yield Static("", classes="full-status", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#query", Input).focus()

    def action_focus_query(self) -> None:
        self.query_one("#query", Input).focus()

    @on(Input.Submitted, "#query")
    def _submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.query_one("#status", Static).update(
                " searching… (the first search loads the model and may index the home)")
            self.run_search(event.value.strip())

    @work(thread=True, exclusive=True, exit_on_error=False, group="search")
    def run_search(self, query: str) -> None:
        from memtui.search import engine

        try:
            response = engine.search(self.store.home, self.search_agent, query)
        except (MemtuiError, OSError) as exc:
            self.app.call_from_thread(self.query_one("#status", Static).update,
                                      Text(f" search failed: {clean(exc)}"))
            return
        self.app.call_from_thread(self._show, response.results, response.fallback)

    def _show(self, hits: list[Hit], fallback: str | None) -> None:
        self.hits = hits
        rows = [(str(i), [Text(f"{h.score:.2f}"), lit(h.source), lit(citation(h), "dim"),
                          lit(h.snippet)]) for i, h in enumerate(hits)]
        table = self.query_one(RowList)
        table.set_rows(rows, keep="0")
        table.focus()
        note = f" {len(hits)} results · enter opens the cited lines"
        if fallback:
            note += f" · {clean(fallback)}"
        self.query_one("#status", Static).update(Text(ascii_text(self.app, note)))

    @on(RowList.Selected, "#table")
    def _open(self, event: RowList.Selected) -> None:
        event.stop()
        self._open_hit(self.hits[int(event.key)])

    @work(thread=True, exit_on_error=False, group="cite")
    def _open_hit(self, hit: Hit) -> None:
        try:
            body = cited_lines(self.store.home, self.search_agent, hit)
        except (MemtuiError, OSError) as exc:
            body = Text(f"cannot read {hit.path}: {exc}")
        app: Any = self.app
        app.call_from_thread(app.show_text, citation(hit), body)
