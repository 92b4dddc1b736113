"""Messages workers post to the UI thread: small dataclasses named for what happened."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from memtui.tui.data import Snapshot


@dataclass
class SnapshotReady(Message):
    """A fresh overview was read; a newer one replaces one not yet handled."""

    snapshot: Snapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SnapshotReady)


@dataclass
class MemoryChanged(Message):
    """memory.db changed (another process, or the console's own writer): pages re-read."""

    version: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, MemoryChanged)


@dataclass
class ChangeDone(Message):
    """A change to memory went through a store function (or was refused)."""

    action: str
    message: str
    ok: bool = True


@dataclass
class JobProgress(Message):
    """A running job says where it is."""

    job: str
    text: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, JobProgress) and message.job == self.job


@dataclass
class JobDone(Message):
    """A job finished, failed or was cancelled."""

    job: str
    text: str
    severity: str = "information"


@dataclass
class Act(Message):
    """A person asked for a change to the item under the cursor (by binding id)."""

    action: str
    target: str
    label: str = ""
    """What the item says: shown in confirmations and prefilled in edits."""
    critical: bool = False
    agent: str | None = None
