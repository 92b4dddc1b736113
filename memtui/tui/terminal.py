"""Whether the terminal the console draws on is still there.

A terminal that hangs up (an SSH connection drops, tmux is killed) signals only its
session leader. When that is not the console, as under ``make demo`` (make is the leader:
it survives the SIGHUP and does not pass it on), the console is left on a dead terminal:
every read returns at once with nothing, and Textual's input thread spins on it at full CPU
for as long as the box stays up. So the console asks once a second and leaves when the
terminal is gone.
"""

from __future__ import annotations

import os
import sys

CHECK_SECONDS = 1.0
HANGUP_EXIT = 129
"""The exit status of a process ended by SIGHUP, as a shell reports it (128 + 1)."""


def watched_fd() -> int | None:
    """The terminal to watch: standard input when it is a terminal now, else None (a pipe
    under textual-serve, a test)."""
    stream = sys.__stdin__
    if stream is None:
        return None
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return None
    return fd if os.isatty(fd) else None


def alive(fd: int) -> bool:
    """False once the terminal has hung up: its settings can no longer be read (EIO)."""
    try:
        import termios
    except ImportError:  # no termios (Windows): nothing to ask, assume it is there
        return True
    try:
        termios.tcgetattr(fd)
    except (termios.error, OSError):
        return False
    return True
