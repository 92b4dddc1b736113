"""Following a session as it grows: each poll reads only the bytes appended since the last."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memtui.context.accounting import Accountant
from memtui.context.bootstrap import load_bootstrap
from memtui.context.live import LiveWindow
from memtui.context.report import ContextReport, build_report
from memtui.context.sessions import is_group_session, resolve_session
from memtui.home import Home


class ContextFollower:
    """Keeps a ContextReport current for ``status --follow`` and the console's live pane.

    ``poll()`` returns a new report when the transcript changed since the last call (the
    first call always returns one), else None. A Claude Code message that may still grow
    is not consumed: it is read again, on top of what was consumed, at every poll until
    it is complete, so its usage counts as soon as it is written.

    Without ``session`` it follows the agent's newest transcript, looking for a newer one
    at most every ``rescan_seconds`` (a new session starts a new window).
    """

    def __init__(self, home: Home, agent: str, session: Path | None = None, *,
                 client: Any = None, rescan_seconds: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.home = home
        self.agent = agent
        self.fixed = session is not None
        self.path = resolve_session(home, agent, session)
        self.client = client
        self.rescan_seconds = rescan_seconds
        self.clock = clock
        self._rescanned = clock()
        self.group = is_group_session(home, self.path)
        self._reset()

    def _newest(self) -> None:
        """Switch to a newer transcript of the agent, if one has appeared."""
        if self.fixed or self.clock() - self._rescanned < self.rescan_seconds:
            return
        self._rescanned = self.clock()
        newest = resolve_session(self.home, self.agent, None)
        if newest != self.path:
            self.path = newest
            self.group = is_group_session(self.home, newest)
            self._reset()

    def _reset(self) -> None:
        self.window = LiveWindow(self.path)

    @property
    def acct(self) -> Accountant:
        return self.window.acct

    @property
    def offset(self) -> int:
        return self.window.offset

    def poll(self) -> ContextReport | None:
        self._newest()
        if not self.window.update():
            return None
        view = self.window.view()
        boot = load_bootstrap(self.home, self.agent, group=self.group)
        messages = len({item.turn_id for item in view.items})
        return build_report(self.home, self.agent, self.path, view, fmt=self.window.fmt,
                            model=self.window.model, boot=boot, group=self.group,
                            messages=messages, problems=self.window.problems,
                            client=self.client)
