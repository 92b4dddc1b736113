"""`remember` for agents: what a model asks to keep, through the same gates as extraction.

The text is redacted, checked against the capture policy's forbidden sections (an agent
asking to remember "thanks" is UI noise), and then written: a markdown note (today's
daily log or MEMORY.md), or a state entry that goes through consolidation, so a restated
decision updates the one already there, a changed one supersedes it, and a buried one
(tombstone) stays buried.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.home import Home

NOTE_LAYERS = ("daily", "long-term")
STATE_LAYERS = ("decision", "task", "discovery", "learning", "context", "rejected")
if TYPE_CHECKING:
    from memtui.extract.policy import Policy

LAYERS = NOTE_LAYERS + STATE_LAYERS


@dataclass(frozen=True)
class Kept:
    """What `remember` did: ``id`` cites the memory (``state:12``, ``memory/…md:7``)."""

    stored: bool
    id: str | None
    layer: str
    reason: str
    redacted: list[str]


def remember(home: Home, db: Database, agent: str, content: str, layer: str = "daily", *,
             tags: Sequence[str] = (), actor: str) -> Kept:
    """Keep ``content`` in ``layer`` for ``agent``; refused content is not written."""
    from memtui.redact import redact

    if layer not in LAYERS:
        raise MemtuiError(f"unknown layer {layer!r}: use {', '.join(LAYERS)}")
    if not content.strip():
        raise MemtuiError("nothing to remember: the content is empty")
    clean = redact(content.replace("\x00", " "))
    text = clean.text.strip()
    tag_text = " ".join(f"#{t.strip().lstrip('#')}" for t in tags if t.strip())
    refused = _policy(home).evaluate(text, "user").refused
    if refused is not None:
        return Kept(False, None, layer, f"refused by the capture policy: {refused.reason}",
                    clean.kinds)
    if layer in NOTE_LAYERS:
        from memtui.workspace.memoryfiles import remember as write

        done = write(home, agent, f"{text} {tag_text}".rstrip(),
                     long_term=layer == "long-term")
        return Kept(True, f"{done.path}:{done.line}", layer, "written", clean.kinds)
    return _state(db, agent, text, layer, tag_text, actor, clean.kinds)


def _policy(home: Home) -> Policy:
    from memtui.extract import policy

    if home.policy_path.exists():
        return policy.load_policy(home.policy_path)
    return policy.default_policy()


def _state(db: Database, agent: str, text: str, category: str, tags: str, actor: str,
           kinds: list[str]) -> Kept:
    from memtui.extract.candidates import Extraction, StateCandidate
    from memtui.extract.consolidate import Consolidator

    entry = f"{actor}-{uuid.uuid4().hex[:12]}"
    candidate = StateCandidate(category=category, summary=text, source_entry=entry,
                               detail=tags, confidence=1.0)
    with db.write():
        outcome = Consolidator(db, agent, actor=actor).apply(Extraction(state=[candidate]))
        found = db.scalar("SELECT id FROM state WHERE agent = ? AND source_entry = ? "
                          "ORDER BY id DESC LIMIT 1", (agent, entry))
    if outcome.tombstoned:
        return Kept(False, None, category, "forgotten earlier: a tombstone keeps it out", kinds)
    if found is None:
        return Kept(False, None, category, "already remembered in these words", kinds)
    how = ("superseded an older entry" if outcome.superseded else
           "updated the same entry" if outcome.updated else "added")
    return Kept(True, f"state:{found}", category, how, kinds)
