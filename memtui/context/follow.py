"""Following a session as it grows: each poll reads only the bytes appended since the last."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memtui.context.accounting import Accountant
from memtui.context.bootstrap import load_bootstrap
from memtui.context.report import ContextReport, build_report
from memtui.context.sessions import is_group_session, resolve_session
from memtui.context.window import active_branch, branched, read_window
from memtui.home import Home
from memtui.transcripts import StaleOffset


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
        self.acct = Accountant()
        self.offset = 0
        self.line = 1
        self.fmt = "unknown"
        self.model: str | None = None
        self.problems = 0
        self.last_turn: str | None = None
        self._seen: tuple[int, int] | None = None

    def poll(self) -> ContextReport | None:
        self._newest()
        st = self.path.stat()
        seen = (st.st_size, st.st_mtime_ns)
        if seen == self._seen:
            return None
        if st.st_size < self.offset:
            self._reset()
        try:
            read = read_window(self.path, start_offset=self.offset, start_line=self.line,
                               final=False)
        except StaleOffset:
            self._reset()
            read = read_window(self.path, final=False)
        self._seen = seen
        result = read.result
        if result.format != "unknown":
            self.fmt = result.format
        self.model = read.model or self.model
        self.problems += len(result.problems)
        if self.offset and branched(result.turns, self.last_turn, self.acct.turns):
            # The session moved to another branch: the window is rebuilt from the file.
            self._reset()
            return self.poll()
        self.acct.feed(active_branch(result.turns), read.first_kept)
        if result.turns:
            self.last_turn = result.turns[-1].id
        self.offset, self.line = result.end_offset, result.end_line
        view = self.acct
        if result.pending_bytes and self.fmt != "unknown":
            # The held tail (a message still being written): counted now, consumed later.
            view = copy.copy(self.acct)
            view.items, view.texts = list(self.acct.items), list(self.acct.texts)
            view.calls, view._positions = dict(self.acct.calls), dict(self.acct._positions)
            view.turns = dict(self.acct.turns)
            peek = read_window(self.path, start_offset=self.offset, start_line=self.line,
                               final=True)
            view.feed(peek.result.turns, peek.first_kept)
        boot = load_bootstrap(self.home, self.agent, group=self.group)
        messages = len({item.turn_id for item in view.items})
        return build_report(self.home, self.agent, self.path, view, fmt=self.fmt,
                            model=self.model, boot=boot, group=self.group, messages=messages,
                            problems=self.problems, client=self.client)
