"""Reading a session's window from its transcript: turns, compactions and the model."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from memtui.context.accounting import Accountant
from memtui.context.sessions import scan_model
from memtui.transcripts import Problem, ReadResult, Turn, read_transcript


@dataclass(frozen=True)
class Read:
    """One read of a transcript: where it ended and what it found."""

    result: ReadResult
    first_kept: dict[str, str]
    model: str | None


def first_kept_ids(path: Path, turns: list[Turn]) -> dict[str, str]:
    """firstKeptEntryId of each OpenClaw compaction turn, read from its own line."""
    out: dict[str, str] = {}
    compactions = [t for t in turns if t.kind == "compaction" and t.format == "openclaw"]
    if not compactions:
        return out
    with path.open("rb") as fh:
        for turn in compactions:
            fh.seek(turn.offset)
            try:
                data = json.loads(fh.read(turn.end_offset - turn.offset))
            except ValueError:
                continue
            kept = data.get("firstKeptEntryId") if isinstance(data, dict) else None
            if isinstance(kept, str):
                out[turn.id] = kept
    return out


def read_window(path: Path, *, start_offset: int = 0, start_line: int | None = None,
                final: bool = True) -> Read:
    result = read_transcript(path, start_offset=start_offset, start_line=start_line,
                             final=final)
    return Read(result, first_kept_ids(path, result.turns), scan_model(path, start_offset))


def account(path: Path) -> tuple[Accountant, Read]:
    """The whole transcript read once into an Accountant."""
    read = read_window(path)
    acct = Accountant()
    acct.feed(read.result.turns, read.first_kept)
    return acct, read


def problems_of(read: Read) -> list[Problem]:
    return list(read.result.problems)
