"""The console app: composes the screens and binds the keys; the work lives in the mixins."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from textual import on
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from memtui import timeutil
from memtui.home import Home
from memtui.tui import terminal
from memtui.tui.changes import ChangesMixin
from memtui.tui.commands import MemtuiCommands
from memtui.tui.data import Snapshot
from memtui.tui.glyphs import unicode_ok
from memtui.tui.live import LiveMixin
from memtui.tui.messages import MemoryChanged, SnapshotReady
from memtui.tui.runs import RunsMixin
from memtui.tui.screens.overview import OverviewScreen
from memtui.tui.store import Store
from memtui.tui.themes import DEFAULT, load_themes

SCREENS = {
    "state": ("memtui.tui.screens.state", "StateScreen"),
    "rejections": ("memtui.tui.screens.state", "RejectionsScreen"),
    "rules": ("memtui.tui.screens.rules", "RulesScreen"),
    "flows": ("memtui.tui.screens.flows", "FlowsScreen"),
    "context": ("memtui.tui.screens.context", "ContextScreen"),
    "search": ("memtui.tui.screens.search", "SearchScreen"),
    "facts": ("memtui.tui.screens.facts", "FactsScreen"),
    "review": ("memtui.tui.screens.review", "ReviewScreen"),
    "jobs": ("memtui.tui.screens.jobs", "JobsScreen"),
    "audit": ("memtui.tui.screens.audit", "AuditScreen"),
}
"""Screen name -> (module, class), imported when first opened."""


class MemtuiApp(LiveMixin, ChangesMixin, RunsMixin, App[None]):
    """memtui's console over one memory home."""

    CSS_PATH = "app.tcss"
    TITLE = "memtui"
    COMMANDS = App.COMMANDS | {MemtuiCommands}
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("q", "quit", "quit", id="app.quit"),
        Binding("question_mark", "help", "help", id="app.help"),
        Binding("colon", "command_palette", "palette", show=False, id="app.palette"),
        Binding("ctrl+c", "cancel_job", "cancel job", show=False, priority=True,
                id="app.cancel"),
        Binding("escape", "go_back", "back", show=False, id="app.back"),
        Binding("a", "switch_agent", "agent", id="app.agent"),
        Binding("slash", "open('search')", "search", id="app.search"),
        Binding("r", "open('review')", "review", id="app.review"),
        Binding("v", "open('facts')", "facts", show=False, id="app.facts"),
        Binding("J", "open('jobs')", "jobs", show=False, id="app.jobs"),
        Binding("A", "open('audit')", "audit", show=False, id="app.audit"),
        Binding("E", "run('extract')", "extract", id="run.extract"),
        Binding("m", "run('maintain')", "maintain", id="run.maintain"),
        Binding("I", "run('index')", "rebuild index", show=False, id="run.index"),
        Binding("P", "run('prune')", "prune preview", show=False, id="run.prune"),
        Binding("F", "run('flush')", "flush", show=False, id="run.flush"),
        Binding("C", "run('compact')", "compact", show=False, id="run.compact"),
        Binding("H", "run('heartbeat')", "heartbeat", show=False, id="run.heartbeat"),
    ]

    def __init__(self, home: Home, *, agent: str | None = None,
                 clock: Callable[[], datetime] = timeutil.now, refresh_seconds: float | None = None,
                 ascii_only: bool | None = None, theme: str | None = None) -> None:
        super().__init__()
        settings = home.settings.console
        self.store = Store(home)
        self.agent = agent
        self.clock = clock
        self.refresh_seconds = (settings.refresh_seconds if refresh_seconds is None
                                else refresh_seconds)
        self.ascii_only = (not unicode_ok(settings.ascii)) if ascii_only is None else ascii_only
        self.last_snapshot: Snapshot | None = None
        self.terminal_lost = False
        for found in load_themes(home.root).values():
            self.register_theme(found)
        wanted = theme or settings.theme or DEFAULT
        self.theme = wanted if wanted in self.available_themes else DEFAULT
        if settings.keymap:
            self.set_keymap(settings.keymap)

    def get_default_screen(self) -> Screen[Any]:
        return OverviewScreen(ascii_only=self.ascii_only)

    def get_key_display(self, binding: Binding) -> str:
        shown = super().get_key_display(binding)
        if self.ascii_only and not shown.isascii():
            return {"⏎": "enter", "↑": "up", "↓": "down", "←": "left", "→": "right"}.get(
                shown, binding.key)
        return shown

    def on_mount(self) -> None:
        self.set_class(self.ascii_only, "-ascii")
        self.start_live(self.refresh_seconds)
        fd = None if self.is_headless else terminal.watched_fd()
        if fd is not None:
            self.set_interval(terminal.CHECK_SECONDS, lambda: self._check_terminal(fd),
                              name="terminal")

    def _check_terminal(self, fd: int) -> None:
        if not self.terminal_lost and not terminal.alive(fd):
            self.terminal_lost = True
            self.exit(return_code=terminal.HANGUP_EXIT)

    def on_unmount(self) -> None:
        self.store.close()

    @on(SnapshotReady)
    def _snapshot_ready(self, message: SnapshotReady) -> None:
        self.last_snapshot = message.snapshot
        for screen in self.screen_stack:
            show = getattr(screen, "show", None)
            if show is not None:
                show(message.snapshot)

    @on(MemoryChanged)
    def _memory_changed(self, message: MemoryChanged) -> None:
        for screen in self.screen_stack:
            reread = getattr(screen, "memory_changed", None)
            if reread is not None:
                reread()

    # -- actions --------------------------------------------------------------------------

    def open_pane(self, name: str | None, key: str | None = None) -> None:
        if name:
            self.action_open(name, key)

    def action_open(self, name: str, key: str | None = None) -> None:
        import importlib

        module, cls = SCREENS[name]
        screen_type = getattr(importlib.import_module(module), cls)
        self.push_screen(screen_type(self.store, self.agent, key=key))

    def action_run(self, kind: str) -> None:
        self.run_job(kind)

    def action_cancel_job(self) -> None:
        if not self.cancel_job():
            self.notify("nothing is running (q quits)", severity="information")

    def action_go_back(self) -> None:
        if len(self.screen_stack) > 1:
            self.pop_screen()

    def action_help(self) -> None:
        from memtui.tui.screens.help import HelpScreen

        self.push_screen(HelpScreen(self.screen.active_bindings))

    def action_switch_agent(self) -> None:
        from memtui.tui.screens.dialogs import ChooseScreen

        agents = self.store.home.agents()
        choices = [("*", f"all agents ({len(agents)})"), *((a, a) for a in agents)]

        def chosen(value: str | None) -> None:
            if value is not None:
                self.set_agent(None if value == "*" else value)

        self.push_screen(ChooseScreen("Whose memory?", choices, self.agent or "*"), chosen)

    def set_agent(self, agent: str | None) -> None:
        self.agent = agent
        for screen in self.screen_stack:
            if hasattr(screen, "agent"):
                screen.agent = agent
        self.read_now()
