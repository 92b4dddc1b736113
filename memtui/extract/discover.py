"""Finding agent transcripts where OpenClaw and Claude Code keep them, for `sources discover`.

- OpenClaw: ``~/.openclaw/agents/<agent id>/sessions/*.jsonl*``, one source per agent:
  the session files and the ``.jsonl.reset.<stamp>``/``.jsonl.deleted.<stamp>`` copies
  ``/reset`` and deletions leave (what was not extracted yet is only there); the glob
  leaves out ``*.trajectory.jsonl`` traces and ``*.checkpoint.*.jsonl`` copies
  (``transcripts.names``). A source registered by an older memtui as ``*.jsonl`` counts
  as known, with a note to replace it.
- Claude Code: ``~/.claude/projects/<project>/*.jsonl`` (``$CLAUDE_CONFIG_DIR`` moves
  ``~/.claude``), one source for all projects, for the agent the caller names.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

from memtui.home import AGENT_ID
from memtui.stores.sources import Source
from memtui.transcripts.names import is_transcript

OPENCLAW_GLOB = "*.jsonl*"


@dataclass(frozen=True)
class Found:
    """A source that could be added."""

    pattern: str
    format: str
    agent: str
    files: int
    known: bool
    """Already a source of that agent."""
    note: str = ""


def default_roots() -> tuple[Path, Path]:
    claude = os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude"
    return Path("~/.openclaw").expanduser(), Path(claude).expanduser()


def discover(existing: list[Source], *, default_agent: str, agent: str | None = None,
             openclaw_root: Path | None = None, claude_root: Path | None = None
             ) -> list[Found]:
    """Transcript folders of the known agents that exist on this machine."""
    oc_default, cc_default = default_roots()
    openclaw_root = (openclaw_root or oc_default).expanduser()
    claude_root = (claude_root or cc_default).expanduser()
    known = {(s.pattern, s.agent) for s in existing}
    found: list[Found] = []
    for sessions in sorted((openclaw_root / "agents").glob("*/sessions")):
        if not sessions.is_dir():
            continue
        oc_agent = agent or sessions.parent.name
        note = "" if AGENT_ID.match(oc_agent) else "not a valid memtui agent id: use --agent"
        pattern = str(sessions.absolute() / OPENCLAW_GLOB)
        legacy = (str(sessions.absolute() / "*.jsonl"), oc_agent) in known
        if legacy and not note:
            note = ("registered as *.jsonl, which misses reset and deleted sessions: "
                    "remove that source and add this one")
        files = [p for p in glob.glob(pattern) if is_transcript(Path(p))]
        found.append(Found(pattern, "openclaw", oc_agent, len(files),
                           (pattern, oc_agent) in known or legacy, note))
    projects = claude_root / "projects"
    if projects.is_dir():
        pattern = str(projects.absolute() / "*" / "*.jsonl")
        cc_agent = agent or default_agent
        found.append(Found(pattern, "claude-code", cc_agent, len(glob.glob(pattern)),
                           (pattern, cc_agent) in known))
    return found
