"""The one lock helper: exclusive across processes and within one, released by a kill."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memtui.errors import MemtuiError
from memtui.locks import LockTimeout, file_lock

HOLDER = """
import sys
from pathlib import Path
from memtui.locks import file_lock
with file_lock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


@contextmanager
def held_elsewhere(path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``path`` until a line is written to its stdin."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_a_lock_held_by_another_process_times_out_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "job.lock"
    with held_elsewhere(path):
        with pytest.raises(LockTimeout) as once, file_lock(path, timeout=0):
            pass
        with pytest.raises(LockTimeout) as waited, file_lock(path, timeout=0.2):
            pass
    assert isinstance(once.value, MemtuiError) and once.value.path == path
    assert str(path) in str(once.value) and "gave up" not in str(once.value)
    assert str(path) in str(waited.value) and "gave up after 0.2 s" in str(waited.value)


def test_a_waiting_lock_is_taken_when_the_holder_lets_go(tmp_path: Path) -> None:
    path = tmp_path / "job.lock"
    with held_elsewhere(path) as holder:
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.write("go\n")
        holder.stdin.flush()
        with file_lock(path):  # waits as long as it takes
            assert holder.stdout.readline() == "released\n"


def test_a_killed_holder_releases_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "job.lock"
    with held_elsewhere(path) as holder:
        holder.kill()
        holder.wait(timeout=30)
        with file_lock(path, timeout=0):
            pass


def test_a_second_holder_in_the_same_process_is_refused_until_release(tmp_path: Path) -> None:
    path = tmp_path / "job.lock"
    with file_lock(path):
        with pytest.raises(LockTimeout), file_lock(path, timeout=0):
            pass
    with file_lock(path, timeout=0):
        pass


def test_an_error_inside_the_block_releases_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "job.lock"
    with pytest.raises(KeyError), file_lock(path):
        raise KeyError("boom")
    with file_lock(path, timeout=0):
        pass


def test_a_negative_timeout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="timeout"):
        file_lock(tmp_path / "job.lock", timeout=-1)
