"""A session's window kept current by reading only what was appended to its transcript,
and a small per-process cache of them (the console reports and plans over and over)."""

from __future__ import annotations

import copy
import os
import threading
from collections import OrderedDict
from pathlib import Path

from memtui.context.accounting import Accountant
from memtui.context.window import Read, active_branch, branched, read_window
from memtui.transcripts import ReadState, StaleOffset

CACHED_WINDOWS = 8


class LiveWindow:
    """The window of one transcript file. ``update()`` reads what was appended (the whole
    file again when it shrank, was replaced, or moved to another OpenClaw branch).

    A Claude Code message that may still grow is not consumed: ``view()`` adds it on top
    of what was consumed, so its usage counts as soon as it is written.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.acct = Accountant()
        self.offset = 0
        self.line = 1
        self.fmt = "unknown"
        self.model: str | None = None
        self.problems = 0
        self.pending = 0
        self.last_turn: str | None = None
        self.state: ReadState | None = None
        self.identity: tuple[int, int, int, int] | None = None

    def update(self) -> bool:
        """Read what changed; False when the file is as it was at the last update."""
        st = os.stat(self.path)
        identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if identity == self.identity:
            return False
        if self.identity and (identity[:2] != self.identity[:2] or st.st_size < self.offset):
            self.reset()
        try:
            read = self._read()
        except StaleOffset:
            self.reset()
            read = self._read()
        result = read.result
        if self.offset and branched(result.turns, self.last_turn, self.acct.turns):
            self.reset()
            return self.update()
        self.identity = identity
        if result.format != "unknown":
            self.fmt = result.format
        self.model = read.model or self.model
        self.problems += len(result.problems)
        self.acct.feed(active_branch(result.turns), read.first_kept)
        if result.turns:
            self.last_turn = result.turns[-1].id
        self.offset, self.line = result.end_offset, result.end_line
        self.state = result.state
        self.pending = result.pending_bytes
        return True

    def _read(self) -> Read:
        # The state the last read ended with: an appended tail costs only its own bytes.
        return read_window(self.path, start_offset=self.offset, start_line=self.line,
                           final=False, state=self.state)

    def view(self) -> Accountant:
        """The window now: what was consumed, plus a held tail still being written."""
        if not self.pending or self.fmt == "unknown":
            return self.acct
        view = copy.copy(self.acct)
        view.items, view.texts = list(self.acct.items), list(self.acct.texts)
        view.calls, view._positions = dict(self.acct.calls), dict(self.acct._positions)
        view.turns = dict(self.acct.turns)
        peek = read_window(self.path, start_offset=self.offset, start_line=self.line,
                           final=True, state=self.state)
        view.feed(peek.result.turns, peek.first_kept)
        return view


_windows: OrderedDict[Path, LiveWindow] = OrderedDict()
_windows_lock = threading.Lock()


def current(path: Path) -> tuple[LiveWindow, Accountant]:
    """The file's window, up to date, from this process's cache of recent ones.

    The Accountant returned is shared: callers read it and never change it.
    """
    with _windows_lock:
        window = _windows.pop(path, None) or LiveWindow(path)
        _windows[path] = window
        while len(_windows) > CACHED_WINDOWS:
            _windows.popitem(last=False)
    with window.lock:
        window.update()
        return window, window.view()


def forget() -> None:
    """Empty the cache (the next read of every file is a whole one)."""
    with _windows_lock:
        _windows.clear()
