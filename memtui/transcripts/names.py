"""Which files in an agent's session folder are transcripts, and the session a name gives.

OpenClaw keeps ``<session id>.jsonl`` in ``~/.openclaw/agents/<agent>/sessions/`` and,
beside it:

- ``<id>.jsonl.reset.<timestamp>`` and ``<id>.jsonl.deleted.<timestamp>``: the session
  file renamed by ``/reset`` or a deletion. What was not extracted yet is only there, so
  they are read (the ledger skips what was extracted from the file before its rename).
- ``<id>.trajectory.jsonl``: a timing trace of each run (``session.started``,
  ``model.completed`` ...), not a conversation: never read.
- ``<id>.checkpoint.<uuid>.jsonl``: a copy of the session file OpenClaw takes before a
  compaction (``copyFileSync``); the session file keeps every entry the copy has, so a
  checkpoint is skipped as a duplicate (reading it would only find turns the ledger
  already holds, and search would find every message twice).
- lock, temporary and backup files (``.lock``, ``.tmp``, ``.bak-<stamp>`` left by a
  transcript repair): never read.

``sources discover`` registers ``sessions/*.jsonl*``; ``is_side_file`` is what a glob
source leaves out of what it matches.
"""

from __future__ import annotations

import re
from pathlib import Path

# A rename that keeps the transcript: <name>.jsonl.reset.<stamp>, <name>.jsonl.deleted.<stamp>
_RENAMED = re.compile(r"^(?P<stem>.+)\.jsonl\.(?:reset|deleted)\.[^/]+$")
_SIDE_FILES = re.compile(r"\.(?:trajectory|checkpoint\.[^.]+)\.jsonl$")
_NOT_TRANSCRIPTS = re.compile(r"(?:\.lock|\.tmp|\.bak(?:[-.][^/]*)?|~)$")


def session_stem(path: Path) -> str:
    """The session a file's name gives: ``abc`` for abc.jsonl and its reset/deleted copies."""
    match = _RENAMED.match(path.name)
    if match:
        return match.group("stem")
    name = _SIDE_FILES.sub("", path.name)
    if name != path.name:
        return name
    return path.stem


def is_side_file(path: Path) -> bool:
    """A file beside the transcripts that is not one (a trace, a checkpoint copy, a lock)."""
    return bool(_SIDE_FILES.search(path.name) or _NOT_TRANSCRIPTS.search(path.name))


def is_transcript(path: Path) -> bool:
    """Whether a file in an OpenClaw sessions folder holds a conversation worth reading."""
    name = path.name
    if is_side_file(path):
        return False
    return name.endswith(".jsonl") or bool(_RENAMED.match(name))
