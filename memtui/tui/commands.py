"""The command palette (ctrl+p or :): every screen, job, agent and theme by name."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

SCREEN_COMMANDS = [
    ("Open: active state", "state", "Every active state entry, paged, filter and sort"),
    ("Open: rejections", "rejections", "What humans refused, newest first"),
    ("Open: rules", "rules", "Every rule, paged; sort and filter"),
    ("Open: flows", "flows", "Flows with their runs"),
    ("Open: context", "context", "The agent's context window in detail"),
    ("Open: search", "search", "Hybrid search over the agent's memory"),
    ("Open: facts", "facts", "Current values and their history"),
    ("Open: review", "review", "The daily review: since the review mark, and proposals"),
    ("Open: jobs", "jobs", "Extraction, maintenance, flush and heartbeat runs"),
    ("Open: audit", "audit", "Who changed what, newest first"),
]


class MemtuiCommands(Provider):
    """Screens, jobs (each with its binding's key), agents and themes."""

    def _commands(self) -> list[tuple[str, Callable[[], Any], str]]:
        from memtui.tui.runs import RUNS

        app: Any = self.app
        out: list[tuple[str, Callable[[], Any], str]] = []
        for title, name, help_text in SCREEN_COMMANDS:
            out.append((title, partial(app.action_open, name), help_text))
        for kind, help_text in RUNS.items():
            out.append((f"Run: {kind}", partial(app.run_job, kind), help_text))
        out.append(("Run: heartbeat and deliver it", partial(app.run_job, "heartbeat", True),
                    "The heartbeat for real: its messages are delivered"))
        out.append(("Agent: all agents", partial(app.set_agent, None), "Show every agent"))
        for agent in app.store.home.agents():
            out.append((f"Agent: {agent}", partial(app.set_agent, agent),
                        f"Show only {agent}'s memory"))
        for theme in sorted(app.available_themes):
            if theme.startswith("memtui-"):
                out.append((f"Theme: {theme}", partial(setattr, app, "theme", theme),
                            "A theme file from themes/"))
        return out

    async def discover(self) -> Hits:
        for title, callback, help_text in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback, help_text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
