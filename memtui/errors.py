"""The errors the engine raises; each carries the exit code the CLI maps it to."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The exit codes of every `memtui` command (documented once, in the README)."""

    OK = 0
    """Success."""
    BAD_INPUT = 1
    """Bad input or usage, or something on disk that needs a human fix."""
    NOT_FOUND = 2
    """A named thing (home, agent, entry, rule, flow, file) does not exist."""
    NEGATIVE = 3
    """The command ran, and its answer is no: a failing health or doctor check, no flow."""


class MemtuiError(Exception):
    """Bad input or usage: the message says what was wrong and where (exit code 1)."""

    exit_code: int = ExitCode.BAD_INPUT


class NotFound(MemtuiError):
    """A named thing (agent, rule, flow, state entry, file) does not exist (exit code 2)."""

    exit_code: int = ExitCode.NOT_FOUND


class ConfigError(MemtuiError):
    """A settings or policy file is invalid; names the file, the key and what was expected."""

    def __init__(self, path: object, key: str, expected: str, line: int | None = None) -> None:
        self.path = str(path)
        self.key = key
        self.expected = expected
        self.line = line
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {key}: {expected}")


class Broken(MemtuiError):
    """Something on disk is broken (integrity, missing extension) and needs a human fix."""


class ReadOnly(MemtuiError):
    """A write was asked of a file this user may only read; names the path and the permission."""


class NewerSchema(Broken):
    """memory.db was written by a newer memtui: this one refuses it before touching it."""
