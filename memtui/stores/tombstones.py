"""Tombstones: what a human deleted, forgot or rejected, so extraction never recreates it.

A tombstone names the store of what was buried (state, fact, episode), a kind (the
state category, the fact key, the episode kind), the text that was buried and the
transcript message it came from. The stenographer drops a candidate that matches one of
the same agent and store:

- the same normalised text (whatever the kind);
- or, of the same kind, a text at least ``SIMILARITY`` (0.85) similar after normalising
  (``memtui.text.similarity``) that has the same numbers: "Pin the events DB to
  Postgres 15" stays buried with "pin the events database to Postgres 15", while
  "... to Postgres 16" is a new decision, not the buried one;
- or, of the same kind and from the buried entry's own message, a text at least
  ``SAME_MESSAGE_SIMILARITY`` (0.6) similar (a second reading of the same words).

A tombstone left by `forget` is *sealed*: it keeps no text. Its ``norm`` is ``~`` and a
keyed hash of each normalised word (``#`` before words with digits), and a fact's key is
sealed the same way, so nothing under the home contains the forgotten words while the
same three matches still work, on words instead of characters.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memtui import text, timeutil
from memtui.db import Database
from memtui.errors import MemtuiError, NotFound
from memtui.stores import audit, episodes, facts, state, watermarks

STORES = ("state", "fact", "episode")
"""The stores a tombstone can bury from (`memtui forget STORE ID`)."""
SEAL_KEY = "tombstones.seal_key"
"""The watermark holding this home's key for sealed tombstones (made on first use)."""
SEALED = "~"
"""Opens the norm (and a fact's kind) of a sealed tombstone: normalised text never does."""


@dataclass(frozen=True)
class Tombstone:
    id: int
    agent: str
    layer: str
    """The store of the buried item, one of ``STORES``. (Its first name, kept in the
    database column and the JSON that scripts read; it is not a memory layer.)"""
    kind: str
    text: str
    norm: str
    source_file: str | None
    source_entry: str | None
    reason: str
    actor: str
    created_at: str

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def norm_text(store: str, kind: str, value: str) -> str:
    """The matching key of a buried text (facts match on key and value together)."""
    if store == "fact":
        return text.normalise(f"{facts.normalise_key(kind)} {value}")
    return text.normalise(value)


def seal_key(db: Database, *, create: bool = False) -> bytes | None:
    """This home's key for sealed tombstones; made (inside a write) when ``create``."""
    value = watermarks.get(db, SEAL_KEY)
    if value is None and create:
        value = secrets.token_hex(32)
        with db.write():
            watermarks.put(db, SEAL_KEY, value)
    return bytes.fromhex(value) if value else None


def seal_words(key: bytes, norm: str) -> list[str]:
    """A normalised text as keyed word hashes, in order (``#`` marks words with digits)."""
    out = []
    for word in norm.split():
        digest = hmac.new(key, word.encode("utf-8", "surrogatepass"), hashlib.sha256)
        out.append(("#" if any(ch.isdigit() for ch in word) else "") + digest.hexdigest()[:12])
    return out


def sealed_norm(key: bytes, norm: str) -> str:
    return SEALED + " ".join(seal_words(key, norm))


def _sealed_kind(key: bytes, store: str, kind: str) -> str:
    """A fact's key is part of what was said; a state category or episode kind is not."""
    return sealed_norm(key, facts.normalise_key(kind)) if store == "fact" else kind


def add(
    db: Database, *, agent: str, store: str, kind: str, text_: str, actor: str,
    reason: str = "", source_file: str | None = None, source_entry: str | None = None,
    sealed: bool = False,
) -> Tombstone:
    """Bury a text; nothing matching it is extracted again for this agent.

    A ``sealed`` tombstone keeps word hashes instead of the text (see the module doc).
    """
    if store not in STORES:
        raise MemtuiError(f"unknown tombstone store {store!r}; expected {', '.join(STORES)}")
    if store == "fact":
        kind = facts.normalise_key(kind)
    norm = norm_text(store, kind, text_)
    stamp = timeutil.iso(timeutil.now())
    with db.write():
        if sealed:
            key = seal_key(db, create=True)
            assert key is not None
            norm, kind, text_ = sealed_norm(key, norm), _sealed_kind(key, store, kind), ""
        tid = db.execute(
            "INSERT INTO tombstones(agent, layer, kind, text, norm, source_file, source_entry, "
            "reason, actor, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (agent, store, kind, text_, norm, source_file,
             source_entry, reason, audit.check_actor(actor), stamp),
        )
        stone = get(db, tid)
        audit.record(db, actor, "tombstone.add", f"tombstone:{tid}", None, stone.as_dict())
    return stone


def get(db: Database, tombstone_id: int) -> Tombstone:
    row = db.one("SELECT * FROM tombstones WHERE id = ?", (tombstone_id,))
    if row is None:
        raise NotFound(f"no tombstone {tombstone_id}")
    return Tombstone(**row)


def remove(db: Database, tombstone_id: int, *, actor: str) -> Tombstone:
    """Lift a tombstone: extraction may produce the text again."""
    with db.write():
        stone = get(db, tombstone_id)
        db.execute("DELETE FROM tombstones WHERE id = ?", (tombstone_id,))
        audit.record(db, actor, "tombstone.remove", f"tombstone:{tombstone_id}",
                     stone.as_dict(), None)
    return stone


def list_tombstones(db: Database, agent: str | None = None, limit: int = 200) -> list[Tombstone]:
    sql, params = ("SELECT * FROM tombstones WHERE agent = ? ORDER BY id DESC LIMIT ?",
                   (agent, limit)) if agent else (
        "SELECT * FROM tombstones ORDER BY id DESC LIMIT ?", (limit,))
    return [Tombstone(**r) for r in db.query(sql, params)]


def bury_state(db: Database, entry_id: int, *, actor: str, reason: str = "") -> Tombstone:
    """Archive a state entry and bury it: a human deleted it or rejected it in review."""
    with db.write():
        entry = state.get(db, entry_id)
        if entry.status in ("active", "completed"):
            state.archive(db, entry_id, actor=actor)
        return add(db, agent=entry.agent, store="state", kind=entry.category,
                   text_=entry.summary, actor=actor, reason=reason,
                   source_file=entry.source_file, source_entry=entry.source_entry)


def bury_fact(db: Database, fact_id: int, *, actor: str, reason: str = "") -> Tombstone:
    """Forget a fact and bury its key and value."""
    with db.write():
        fact = facts.forget(db, fact_id, actor=actor)
        return add(db, agent=fact.agent, store="fact", kind=fact.key, text_=fact.value,
                   actor=actor, reason=reason, source_file=fact.source_file,
                   source_entry=fact.source_entry)


def bury_episode(db: Database, episode_id: int, *, actor: str, reason: str = "") -> Tombstone:
    """Delete an episode and bury it."""
    with db.write():
        ep = episodes.delete(db, episode_id, actor=actor)
        return add(db, agent=ep.agent, store="episode", kind=ep.kind, text_=ep.summary,
                   actor=actor, reason=reason, source_file=ep.source_file,
                   source_entry=ep.source_entry)


SAME_MESSAGE_SIMILARITY = 0.6
"""A candidate from a buried entry's own message matches it at this text similarity (an
extractor may word the same thing a little differently on a second reading)."""
SIMILARITY = 0.85
"""A candidate of the same kind from any message matches a tombstone at this normalised
similarity, if its numbers are the same (a small rewording is not a new memory)."""


def _numbers(norm: str) -> frozenset[str]:
    return frozenset(w for w in norm.split() if any(ch.isdigit() for ch in w))


def _word_ratio(a: Sequence[str], b: Sequence[str]) -> float:
    from difflib import SequenceMatcher

    if not a or not b:
        return 0.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


class Graveyard:
    """The tombstones of one agent held in memory, for matching many candidates fast."""

    def __init__(self, stones: Iterable[Tombstone] = (), key: bytes | None = None) -> None:
        self._norms: set[tuple[str, str]] = set()
        self._entries: dict[tuple[str, str, str], list[str]] = {}
        self._kinds: dict[tuple[str, str], list[tuple[str, frozenset[str]]]] = {}
        self._key = key
        self._sealed: dict[tuple[str, str], list[tuple[list[str], str | None]]] = {}
        for stone in stones:
            self.add(stone)

    @classmethod
    def load(cls, db: Database, agent: str) -> Graveyard:
        rows = db.query("SELECT * FROM tombstones WHERE agent = ?", (agent,))
        return cls((Tombstone(**r) for r in rows), seal_key(db))

    def add(self, stone: Tombstone) -> None:
        self._norms.add((stone.layer, stone.norm))
        if stone.norm.startswith(SEALED):
            self._sealed.setdefault((stone.layer, stone.kind), []).append(
                (stone.norm[len(SEALED):].split(), stone.source_entry))
            return
        self._kinds.setdefault((stone.layer, stone.kind), []).append(
            (stone.norm, _numbers(stone.norm)))
        if stone.source_entry:
            key = (stone.layer, stone.kind, stone.source_entry)
            self._entries.setdefault(key, []).append(stone.norm)

    def __len__(self) -> int:
        return len(self._norms)

    def buried(self, store: str, kind: str, value: str, source_entry: str | None) -> bool:
        """True when a candidate matches a tombstone: the same normalised text, a text of
        the same kind at least ``SIMILARITY`` similar with the same numbers, or a text of
        the same kind from the same message at least ``SAME_MESSAGE_SIMILARITY`` similar."""
        if not self._norms:
            return False
        if store == "fact":
            kind = facts.normalise_key(kind)
        norm = norm_text(store, kind, value)
        if (store, norm) in self._norms:
            return True
        numbers: frozenset[str] | None = None
        for buried, buried_numbers in self._kinds.get((store, kind), ()):
            if numbers is None:
                numbers = _numbers(norm)
            if numbers == buried_numbers and text.ratio_at_least(norm, buried, SIMILARITY):
                return True
        if source_entry:
            for buried in self._entries.get((store, kind, source_entry), ()):
                if text.similarity(norm, buried) >= SAME_MESSAGE_SIMILARITY:
                    return True
        return bool(self._sealed) and self._buried_sealed(store, kind, norm, source_entry)

    def _buried_sealed(self, store: str, kind: str, norm: str, source_entry: str | None) -> bool:
        """The same three matches against sealed stones, on word hashes."""
        if self._key is None:
            return False
        words = seal_words(self._key, norm)
        if (store, SEALED + " ".join(words)) in self._norms:
            return True
        numbers = frozenset(w for w in words if w.startswith("#"))
        for buried, entry in self._sealed.get((store, _sealed_kind(self._key, store, kind)), ()):
            ratio = _word_ratio(words, buried)
            if ratio >= SIMILARITY and numbers == frozenset(w for w in buried if w[0] == "#"):
                return True
            if source_entry and entry == source_entry and ratio >= SAME_MESSAGE_SIMILARITY:
                return True
        return False
