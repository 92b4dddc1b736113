"""Live refresh, memray-style: a timer wakes a worker that reads one frozen Snapshot.

The worker asks ``PRAGMA data_version`` (it changes when any other connection commits);
only then does it read the overview again. The context view is read on every tick: it
follows the agent's transcript, which changes without memory.db changing. The UI thread
gets a SnapshotReady and a MemoryChanged message and never waits on SQLite.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from textual import work

from memtui.tui.contextview import read_context
from memtui.tui.data import Snapshot, read_snapshot
from memtui.tui.messages import JobDone, MemoryChanged, SnapshotReady
from memtui.tui.store import Store


class LiveMixin:
    """For the App: ``store``, ``agent`` and ``clock`` are set by it."""

    store: Store
    agent: str | None
    clock: Callable[[], datetime]
    _snapshot: Snapshot | None = None
    _version: int | None = None
    _tick_lock = threading.Lock()
    _live_failed = False
    _force = False

    def start_live(self, every: float) -> None:
        node: Any = self
        self._tick_lock = threading.Lock()
        self.read_now()
        if every > 0:
            node.set_interval(every, self._tick, name="live")

    def read_now(self) -> None:
        """Read everything again now (agent switched, a change was made)."""
        self._force = True
        self._tick()

    def _tick(self) -> None:
        self._poll()

    @work(thread=True, exit_on_error=False, group="live")
    def _poll(self) -> None:
        # A tick while the previous read is still running is skipped, not queued.
        if not self._tick_lock.acquire(blocking=False):
            return
        try:
            self._read_if_changed()
        except Exception as exc:  # say so once; the next tick tries again
            if not self._live_failed:
                self._live_failed = True
                node: Any = self
                node.post_message(JobDone("live", f"reading memory failed: {exc}", "error"))
        finally:
            self._tick_lock.release()

    def _read_if_changed(self) -> None:
        node: Any = self
        agent = self.agent
        version = self.store.data_version()
        previous = self._snapshot
        # A forced read asked for while another read ran is done by the next tick.
        force, self._force = self._force, False
        changed = (force or version != self._version or previous is None
                   or previous.agent != agent)
        if changed:
            snapshot = read_snapshot(self.store, agent, now=self.clock(), with_context=False)
        else:
            assert previous is not None
            snapshot = previous
        context = read_context(self.store, agent or self.store.home.settings.default_agent())
        if not changed and previous is not None and _same_context(previous, context):
            return
        snapshot = dataclasses.replace(snapshot, context=context)
        self._snapshot = snapshot
        node.post_message(SnapshotReady(snapshot))
        if changed:
            self._version = version
            node.post_message(MemoryChanged(version))


def _same_context(snapshot: Snapshot, context: Any) -> bool:
    old = snapshot.context
    if old is None:
        return False
    # read_at moves on every read; what is shown is the rest.
    return dataclasses.replace(old, read_at="") == dataclasses.replace(context, read_at="")
