"""File watching for long-running processes: set the index's dirty flag, debounced.

A daemon, the MCP server or the console starts one ``IndexWatcher`` per agent. It polls
the inputs' signatures (a ``stat`` per memory file and transcript, a small query for
episodes and facts) every ``interval`` seconds; after a change it waits until nothing
has changed for ``debounce`` seconds (an agent appending a burst of lines is one change)
and then sets the dirty flag, so the next search syncs. Polling needs no extra package
and sees the same signatures the sync compares, so the two can never disagree.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from memtui.db import mark_dirty
from memtui.home import Home
from memtui.search.index import SearchIndex


class IndexWatcher:
    """Marks an agent's index dirty when its inputs change (a daemon thread)."""

    def __init__(self, home: Home, agent: str, *, interval: float = 1.0,
                 debounce: float | None = None,
                 on_dirty: Callable[[], None] | None = None) -> None:
        self.home = home
        self.agent = agent
        self.interval = interval
        self.debounce = (home.settings.search.watch_debounce_seconds
                         if debounce is None else debounce)
        self.on_dirty = on_dirty
        self.marked = 0
        self._index = SearchIndex(home, agent, embedder=None)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def signature(self) -> tuple[tuple[str, str], ...]:
        """Every input's (key, signature), sorted: equal tuples mean nothing changed."""
        with self._index._memory_db() as mdb:
            return tuple(sorted((f.key, f.signature) for f in self._index.inputs(mdb)))

    def start(self) -> IndexWatcher:
        self._thread = threading.Thread(target=self._run, name=f"index-watch-{self.agent}",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=max(1.0, self.interval * 2))

    def _run(self) -> None:
        last = self.signature()
        changed_at: float | None = None
        while not self._stop.wait(self.interval):
            try:
                now = self.signature()
            except Exception:  # noqa: BLE001 - a vanished file mid-poll: try again next time
                continue
            if now != last:
                last, changed_at = now, time.monotonic()
            elif changed_at is not None and time.monotonic() - changed_at >= self.debounce:
                changed_at = None
                self._mark()

    def _mark(self) -> None:
        path = self.home.index_path(self.agent)
        if path.exists():
            mark_dirty(path)
        self.marked += 1
        if self.on_dirty is not None:
            self.on_dirty()
