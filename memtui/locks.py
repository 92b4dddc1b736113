"""The one inter-process lock of memtui: a lock file held with the kernel's flock.

Every "one at a time" rule of the engine (one extraction per home, one job of each
scheduled kind, one writer of an agent's markdown memory) takes this lock. It is a
kernel lock on an open file, so a process that is killed releases it: there is never a
stale lock to clean up by hand.

``timeout`` says how long to wait: ``None`` waits as long as it takes, ``0`` makes one
attempt, anything else waits that many seconds. A lock not taken in time raises
``LockTimeout``, which names the lock file so a person can see what is held.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from memtui.errors import MemtuiError


class LockTimeout(MemtuiError):
    """Another process held the lock file for longer than the caller would wait."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        waited = f" (gave up after {timeout:g} s)" if timeout else ""
        super().__init__(f"the lock file {path} is held by another process{waited}")


def file_lock(path: Path, *, timeout: float | None = None) -> AbstractContextManager[None]:
    """Hold ``path`` exclusively while the ``with`` block runs (see the module docstring)."""
    if timeout is not None and timeout < 0:
        raise ValueError(f"a lock timeout is None or 0 or more, got {timeout}")
    return _held(Path(path), timeout)


@contextmanager
def _held(path: Path, timeout: float | None) -> Iterator[None]:
    from filelock import FileLock, Timeout

    path.parent.mkdir(parents=True, exist_ok=True)
    # Not a singleton and not re-entrant: a second holder in this process is refused like
    # one in another process, so a test can hold a lock and watch the engine step aside.
    lock = FileLock(path)
    try:
        lock.acquire(timeout=-1 if timeout is None else timeout)
    except Timeout:
        raise LockTimeout(path, timeout or 0.0) from None
    try:
        yield
    finally:
        lock.release()
