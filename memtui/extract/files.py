"""Transcript files between runs: is it the file we read, where to resume, where to cut.

A watermark (``stores.ledger.Watermark``) remembers a file's device, inode, size, the
hash of its first bytes (``head_hash``) and the reader's state, including how far the
reader could read (``read_to``: a torn last line or an open message is held back until
the file goes idle). A file whose watermark is behind ``read_to`` -- a run was stopped
or killed half-way -- is never unchanged: the next run resumes at once. A file that is shorter
than the offset, or whose first bytes changed, is read again from the start (the ledger
of extracted turns keeps that from duplicating anything). A batch may only end where no
earlier turn extends past the cut, so every cut is a safe watermark.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from memtui.stores.ledger import Watermark
from memtui.transcripts import ReadResult, Turn

HEAD_BYTES = 1024
"""How many leading bytes of a file identify it (``head_hash``)."""


def head_hash(path: Path, length: int) -> str:
    """The hash of a file's first ``length`` bytes."""
    with path.open("rb") as fh:
        return hashlib.sha1(fh.read(length)).hexdigest()


def resume_point(path: Path, st: os.stat_result, wm: Watermark | None) -> tuple[int, int, str]:
    """(offset, line, why) to read from: the watermark, or 0 when the file is not the same.

    ``why`` is new, resume, truncated, rewritten (same inode, other first bytes) or
    replaced (another inode, other first bytes).
    """
    if wm is None or wm.offset == 0:
        return 0, 1, "new"
    if st.st_size < wm.offset:
        return 0, 1, "truncated"
    head_len = int(wm.state.get("head_len", 0))
    if wm.head_hash and head_len and head_hash(path, head_len) != wm.head_hash:
        return 0, 1, "rewritten" if (st.st_dev, st.st_ino) == (wm.device, wm.inode) else "replaced"
    return wm.offset, wm.line, "resume"


def unchanged(st: os.stat_result, wm: Watermark | None, idle_final: bool) -> bool:
    """Nothing to do: the file is as it was at the last successful read."""
    if wm is None or wm.size is None or wm.failures:
        return False
    if (st.st_dev, st.st_ino, st.st_size) != (wm.device, wm.inode, wm.size):
        return False
    if wm.state.get("mtime_ns") != st.st_mtime_ns:
        return False
    if wm.offset < int(wm.state.get("read_to", st.st_size)):
        return False  # a run stopped or was killed before the end of what it had read
    # A held-back tail (torn line, open message) is read once the file has gone idle.
    return wm.offset >= st.st_size or not idle_final or bool(wm.state.get("final"))


def batches(result: ReadResult, size: int) -> Iterator[tuple[list[Turn], int, int]]:
    """(turns, cut offset, cut line): safe watermarks after each batch.

    A cut before turn i is safe when no earlier turn ends after turn i starts (a Claude
    Code message spans the tool results interleaved with it).
    """
    turns = result.turns
    start = 0
    max_end = 0
    for i, turn in enumerate(turns):
        if i - start >= size and max_end <= turn.offset:
            yield turns[start:i], turn.offset, turn.line
            start = i
        max_end = max(max_end, turn.end_offset)
    yield turns[start:], result.end_offset, result.end_line
