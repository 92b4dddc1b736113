"""`remember` for agents: what a model asks to keep, through the same gates as extraction.

The text is redacted, checked against the capture policy's forbidden sections (an agent
asking to remember "thanks" is UI noise), and then written: a markdown note (today's
daily log or MEMORY.md), a state entry, or a fact (a key's current value). State entries
and facts go through consolidation, so a restated decision updates the one already
there, a changed one supersedes it, a fact's new value supersedes the old one (its
history kept), and a buried one (tombstone) stays buried.
"""

from __future__ import annotations

import re
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

FACT_LAYER = "fact"
LAYERS = NOTE_LAYERS + STATE_LAYERS + (FACT_LAYER,)
_KEYED = re.compile(r"^\s*([^:=\n]{1,80}?)\s*[:=]\s*(\S.*)$", re.S)
"""A fact written as its key and value: "staging db port: 5433", "deploy branch = main"."""


@dataclass(frozen=True)
class Kept:
    """What `remember` did: ``id`` cites the memory (``state:12``, ``memory/…md:7``)."""

    stored: bool
    id: str | None
    layer: str
    reason: str
    redacted: list[str]


def remember(home: Home, db: Database, agent: str, content: str, layer: str = "daily", *,
             tags: Sequence[str] = (), actor: str, key: str | None = None) -> Kept:
    """Keep ``content`` in ``layer`` for ``agent``; refused content is not written.

    In the ``fact`` layer ``content`` is the value of ``key``; without a key, it is read
    from the content written as "key: value" or "key = value".
    """
    from memtui.redact import redact

    if layer not in LAYERS:
        raise MemtuiError(f"unknown layer {layer!r}: use {', '.join(LAYERS)}")
    if not content.strip():
        raise MemtuiError("nothing to remember: the content is empty")
    if key is not None and layer != FACT_LAYER:
        raise MemtuiError(f"a key names a fact: use the layer {FACT_LAYER!r}, not {layer!r}")
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
    if layer == FACT_LAYER:
        return _fact(db, agent, key, text, actor, clean.kinds)
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


def _fact(db: Database, agent: str, key: str | None, text: str, actor: str,
          kinds: list[str]) -> Kept:
    from memtui.extract.candidates import Extraction, FactCandidate
    from memtui.extract.consolidate import Consolidator
    from memtui.redact import redact
    from memtui.stores import facts

    if key is None:
        keyed = _KEYED.match(text)
        if keyed is None:
            raise MemtuiError("a fact needs a key: pass one, or write the content as "
                              "'key: value' (for example 'staging db port: 5433')")
        key, text = keyed.group(1), keyed.group(2).strip()
    else:  # the content was redacted by the caller; a key given apart is redacted here
        found = redact(key)
        key, kinds = found.text, [*kinds, *(k for k in found.kinds if k not in kinds)]
    norm = facts.normalise_key(key)
    if not norm:
        raise MemtuiError("a fact needs a non-empty key")
    entry = f"{actor}-{uuid.uuid4().hex[:12]}"
    with db.write():
        before = facts.current(db, agent, norm)
        outcome = Consolidator(db, agent, actor=actor).apply(Extraction(
            facts=[FactCandidate(key=key, value=text, source_entry=entry, confidence=1.0)]))
        now = facts.current(db, agent, norm)
    if outcome.tombstoned:
        return Kept(False, None, FACT_LAYER, "forgotten earlier: a tombstone keeps it out",
                    kinds)
    assert now is not None
    if outcome.facts["stale"]:  # a clock set back: the current value is newer
        return Kept(False, f"fact:{now.id}", FACT_LAYER, "older than the current value",
                    kinds)
    if outcome.facts["unchanged"]:
        return Kept(False, f"fact:{now.id}", FACT_LAYER, "already the current value", kinds)
    if outcome.facts["superseded"] and before is not None:
        return Kept(True, f"fact:{now.id}", FACT_LAYER,
                    f"superseded the value {before.value!r} (fact:{before.id})", kinds)
    return Kept(True, f"fact:{now.id}", FACT_LAYER, "added", kinds)
