"""Reading a session's window from its transcript: turns, compactions and the model."""

from __future__ import annotations

import json
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path

from memtui.context.accounting import Accountant
from memtui.context.sessions import scan_model
from memtui.transcripts import Problem, ReadResult, Turn, openclaw, read_transcript
from memtui.transcripts.jsonl import LineReader, Sink, first_object


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


class OpenClawTail:
    """Reads what was appended to an OpenClaw transcript, carrying the reader's tree state
    (ids, links, replayed-message fingerprints) from one read to the next.

    ``read_transcript`` rebuilds that state by re-reading the file up to the watermark on
    every resumed read, which costs a follower the whole file per poll; this keeps it.
    A turn-for-turn equal result is what ``tests/context/test_follow.py`` checks.
    """

    def __init__(self, path: Path, start: int) -> None:
        """Ready to read from byte ``start``: the state of everything before it is built
        now, once."""
        self.path = path
        self.tree = openclaw.tree_before(path, start)
        self.tree.load()
        header = first_object(path)
        self.session = str(header["id"]) if header and isinstance(header.get("id"), str) \
            else path.stem

    def read(self, start_offset: int, start_line: int) -> Read:
        sink = Sink(str(self.path))
        lines = LineReader(self.path, start_offset, start_line, sink, final=False)
        openclaw.read(lines, sink, session=self.session, final=False, tree=self.tree)
        turns, problems, skipped, unknown = sink.finish(None)
        result = ReadResult(turns=turns, end_offset=lines.end_offset, end_line=lines.next_line,
                            format="openclaw", problems=problems, unknown_types=unknown,
                            skipped=skipped, lines_read=lines.next_line - start_line,
                            pending_bytes=lines.pending_bytes)
        return Read(result, first_kept_ids(self.path, turns),
                    scan_model(self.path, start_offset))


def read_window(path: Path, *, start_offset: int = 0, start_line: int | None = None,
                final: bool = True) -> Read:
    result = read_transcript(path, start_offset=start_offset, start_line=start_line,
                             final=final)
    return Read(result, first_kept_ids(path, result.turns), scan_model(path, start_offset))


def account(path: Path) -> tuple[Accountant, Read]:
    """The whole transcript read once into an Accountant."""
    read = read_window(path)
    acct = Accountant()
    acct.feed(active_branch(read.result.turns), read.first_kept)
    return acct, read


def problems_of(read: Read) -> list[Problem]:
    return list(read.result.problems)
