"""Which transcript is an agent's session, what model it ran, and whether it is a group one."""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path

from memtui.errors import NotFound
from memtui.home import Home
from memtui.stores import sources as source_store

# A JSON key "model" (Claude Code, OpenClaw messages) or "modelId" (OpenClaw model_change);
# the lookbehind skips keys quoted inside JSON strings (\"model\").
_MODEL = re.compile(rb'(?<!\\)"model(?:Id)?"\s*:\s*"([^"\\]{1,120})"')
_GROUP_KEY = re.compile(r":(?:group|channel|room):")


def agent_transcripts(home: Home, agent: str) -> list[Path]:
    """Every transcript file the agent's registered sources name now."""
    db = home.open_db()
    try:
        with db.read():
            found = source_store.list_sources(db, agent)
    finally:
        db.close()
    files: dict[Path, None] = {}
    for source in found:
        for path in source.files():
            files.setdefault(path, None)
    return list(files)


def newest_session(home: Home, agent: str) -> Path:
    """The agent's most recently written transcript."""
    files = agent_transcripts(home, agent)
    if not files:
        raise NotFound(f"agent {agent!r} has no transcripts: register one with "
                       f"`memtui sources add FILE --agent {agent}`, or pass --session FILE")
    return max(files, key=lambda p: (p.stat().st_mtime, str(p)))


def resolve_session(home: Home, agent: str, session: Path | None) -> Path:
    """The named session file (which must exist), else the agent's newest."""
    if session is None:
        return newest_session(home, agent)
    path = Path(session).expanduser().absolute()
    if not path.is_file():
        raise NotFound(f"no transcript file at {path}")
    return path


def scan_model(path: Path, start: int = 0, chunk: int = 1 << 16) -> str | None:
    """The last model named in the file from byte ``start`` on (None when none is).

    Reads backwards a chunk at a time: the last assistant message names its model, so
    this usually reads one chunk however long the transcript is.
    """
    with path.open("rb") as fh:
        end = fh.seek(0, 2)
        while end > start:
            begin = max(start, end - chunk)
            fh.seek(begin)
            # 256 bytes of overlap: a match split across two chunks is found whole.
            data = fh.read(end - begin + 256)
            found = [m.group(1).decode("utf-8", "replace") for m in _MODEL.finditer(data)
                     if not m.group(1).startswith(b"<")]
            if found:
                return found[-1]
            end = begin
    return None


def is_group_session(home: Home, path: Path) -> bool:
    """Whether a transcript is a group or shared session.

    Either its path matches [context] group_sessions, or an OpenClaw ``sessions.json``
    beside it maps a session key naming a group, channel or room to this session's id.
    """
    text = str(path)
    if any(fnmatch.fnmatch(text, pattern) for pattern in home.settings.context.group_sessions):
        return True
    index = path.parent / "sessions.json"
    if not index.is_file():
        return False
    try:
        entries = json.loads(index.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return False
    if not isinstance(entries, dict):
        return False
    for key, value in entries.items():
        if not isinstance(value, dict):
            continue
        if (value.get("sessionId") == path.stem or value.get("sessionFile") == path.name) \
                and isinstance(key, str) and _GROUP_KEY.search(key):
            return True
    return False
