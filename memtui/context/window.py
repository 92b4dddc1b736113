"""Reading a session's window from its transcript: turns, compactions and the model."""

from __future__ import annotations

import json
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path

from memtui.context.accounting import Accountant
from memtui.context.sessions import scan_model
from memtui.transcripts import Problem, ReadResult, ReadState, Turn, read_transcript


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


def branched(turns: list[Turn], previous: str | None = None,
             known: Container[str] = ()) -> bool:
    """Whether an OpenClaw turn continues from a message other than the one just before it
    (a session is a tree: /tree and retries start branches in the same file).

    ``previous`` and ``known``: the last turn and every turn read before ``turns``.
    """
    seen: set[str] = set()
    last = previous
    for turn in turns:
        parent = turn.parent_id
        if turn.format == "openclaw" and parent is not None and parent != last and (
                parent in seen or parent in known):
            return True
        seen.add(turn.id)
        last = turn.id
    return False


def active_branch(turns: list[Turn]) -> list[Turn]:
    """The messages of the branch the session is on: from the last entry back to the root.

    A parent that is not a message (a model change, a label) is taken to sit just before
    the message that follows it, which is where the writer puts it.
    """
    if not branched(turns):
        return turns
    index = {t.id: i for i, t in enumerate(turns)}
    keep: set[int] = set()
    i = len(turns) - 1
    while i >= 0 and i not in keep:
        keep.add(i)
        parent = turns[i].parent_id
        if parent is None:
            break
        i = index.get(parent, i - 1)
    return [t for j, t in enumerate(turns) if j in keep]


def read_window(path: Path, *, start_offset: int = 0, start_line: int | None = None,
                final: bool = True, state: ReadState | None = None) -> Read:
    """A read of the transcript from a watermark; ``state`` is the last read's, so a
    resumed read reads only what was appended (see ``read_transcript``)."""
    result = read_transcript(path, start_offset=start_offset, start_line=start_line,
                             final=final, state=state)
    return Read(result, first_kept_ids(path, result.turns), scan_model(path, start_offset))


def account(path: Path) -> tuple[Accountant, Read]:
    """The whole transcript read once into an Accountant."""
    read = read_window(path)
    acct = Accountant()
    acct.feed(active_branch(read.result.turns), read.first_kept)
    return acct, read


def problems_of(read: Read) -> list[Problem]:
    return list(read.result.problems)
