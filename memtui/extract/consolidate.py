"""Consolidation: extracted candidates become memory without duplicates or resurrections.

Rules, applied in this order to every candidate:

1. **Tombstones.** A candidate matching a tombstone of the agent (same source message
   and kind, or the same normalised text) is dropped: what a human deleted, forgot or
   rejected is never recreated by extracting the same source again.
2. **Rejections are never stored twice.** A rejected candidate whose normalised
   summary is at least ``threshold`` similar to *any* earlier rejection of the agent
   (whatever its status or domain) is dropped.
3. **Near-duplicates update.** A state candidate at least ``threshold`` similar to an
   active or completed entry of the same category and domain updates that entry (new
   wording, higher confidence) instead of adding one. Similarity is
   ``memtui.text.similarity``: difflib's ratio over the normalised texts (lowercase,
   runs of non-alphanumerics as one space). The threshold is ``[extract] similarity``
   in memtui.toml, 0.82 by default: it joins rewordings such as "Don't restart postgres
   during business hours" / "don't restart Postgres in business hours!" and keeps
   "use pnpm" apart from "use npm".
4. **Facts supersede.** A fact with an existing key and a new value supersedes the
   current one; the same value changes nothing.

The in-memory index keeps a run fast: a candidate is compared character by character
only with entries whose keywords (stems, stopwords dropped) overlap its own with a Dice
coefficient of 0.6 or more, whose word sequences are at least half alike and whose
length allows the threshold.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from memtui import text
from memtui.db import Database
from memtui.extract.candidates import EpisodeCandidate, Extraction, FactCandidate, StateCandidate
from memtui.stores import episodes, facts, state
from memtui.stores.tombstones import Graveyard

ACTOR = "extractor"
DEFAULT_THRESHOLD = 0.82


def _keys(norm: str) -> frozenset[str]:
    return frozenset(text.keywords(norm)) or frozenset(norm.split())


@dataclass
class _Item:
    id: int | None
    """None while the entry waits to be inserted at the end of the batch."""
    norm: str
    keys: frozenset[str]
    pending: StateCandidate | None = None


MAX_COMPARISONS = 12
"""Most entries one candidate is compared with character by character (the best-keyed)."""
MIN_KEYWORD_DICE = 0.6
"""Keyword overlap (Dice) an entry needs before its characters are compared."""
MIN_WORD_RATIO = 0.5
"""difflib ratio over the words an entry needs before its characters are compared."""


class SimilarityIndex:
    """Normalised summaries grouped by a bucket key, with a keyword index for candidates.

    Only entries whose keyword sets (stems, stopwords dropped) overlap with a Dice
    coefficient of at least ``MIN_KEYWORD_DICE`` and whose word sequences have a difflib
    ratio of at least ``MIN_WORD_RATIO`` are compared character by character, so
    a run stays linear in practice: a near-duplicate above the threshold shares most of
    its words with the entry it repeats.
    """

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self._by_key: dict[object, dict[str, list[_Item]]] = defaultdict(
            lambda: defaultdict(list))

    def add(self, bucket: object, item: _Item) -> None:
        index = self._by_key[bucket]
        for key in item.keys:
            index[key].append(item)

    def best(self, bucket: object, norm: str) -> _Item | None:
        """The most similar item of the bucket at or above the threshold, if any."""
        index = self._by_key.get(bucket)
        if not index or not norm:
            return None
        keys = _keys(norm)
        shared: dict[int, list[Any]] = {}
        for key in keys:
            for item in index.get(key, ()):
                slot = shared.get(id(item))
                if slot is None:
                    shared[id(item)] = [1, item]
                else:
                    slot[0] += 1
        if not shared:
            return None
        n = len(norm)
        words = norm.split()
        # Dice coefficient of the keyword sets: a cheap gate before difflib.
        ranked = sorted(
            (slot for slot in shared.values()
             if 2 * slot[0] >= MIN_KEYWORD_DICE * (len(keys) + len(slot[1].keys))),
            key=lambda slot: -slot[0])[:MAX_COMPARISONS]
        best: tuple[float, _Item] | None = None
        for _, item in ranked:
            if item.norm == norm:
                return item
            m = len(item.norm)
            if 2 * min(n, m) / (n + m) < self.threshold:
                continue
            if SequenceMatcher(None, words, item.norm.split(), autojunk=False).ratio() < (
                    MIN_WORD_RATIO):
                continue
            sm = SequenceMatcher(None, norm, item.norm, autojunk=False)
            if sm.quick_ratio() < self.threshold:
                continue
            score = sm.ratio()
            if score >= self.threshold and (best is None or score > best[0]):
                best = (score, item)
        return best[1] if best else None


@dataclass
class Outcome:
    """What consolidation did with one batch, and the lines for the daily log."""

    added: Counter[str] = field(default_factory=Counter)
    """State entries added, per category."""
    updated: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    rejections_seen: int = 0
    tombstoned: int = 0
    not_allowed: int = 0
    episodes: Counter[str] = field(default_factory=Counter)
    facts: Counter[str] = field(default_factory=Counter)
    """Facts per action: added, superseded, unchanged, stale."""
    outcomes: int = 0
    log: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    """Daily-log lines per day (YYYY-MM-DD)."""

    def merge(self, other: Outcome) -> None:
        self.added.update(other.added)
        self.updated.update(other.updated)
        self.duplicates += other.duplicates
        self.rejections_seen += other.rejections_seen
        self.tombstoned += other.tombstoned
        self.not_allowed += other.not_allowed
        self.episodes.update(other.episodes)
        self.facts.update(other.facts)
        self.outcomes += other.outcomes


LOGGED_EPISODES = frozenset({"incident", "fix", "compaction"})
"""Episode kinds worth their own line in the daily log (decisions and rejections are there
as state entries; tool calls are summed up)."""


class Consolidator:
    """Writes one agent's candidates into memory.db; keep one per run (it caches)."""

    def __init__(self, db: Database, agent: str, *, threshold: float = DEFAULT_THRESHOLD,
                 actor: str = ACTOR, source_file: str | None = None) -> None:
        self.db = db
        self.agent = agent
        self.threshold = threshold
        self.actor = actor
        self.source_file = source_file
        self.graveyard = Graveyard.load(db, agent)
        self._index = SimilarityIndex(threshold)
        self._loaded: set[str] = set()

    # -- state ---------------------------------------------------------------------------

    def _bucket(self, category: str, domain: str) -> tuple[str, str]:
        # Rejections share one bucket whatever their domain: never stored twice.
        return (category, "*") if category == "rejected" else (category, domain)

    def _load(self, category: str) -> None:
        if category in self._loaded:
            return
        self._loaded.add(category)
        statuses = ("'active','completed','archived','superseded'" if category == "rejected"
                    else "'active','completed'")
        rows = self.db.rows(
            f"SELECT id, domain, summary FROM state WHERE agent = ? AND category = ? "
            f"AND status IN ({statuses})", (self.agent, category))
        for entry_id, domain, summary in rows:
            norm = text.normalise(summary)
            self._index.add(self._bucket(category, domain), _Item(entry_id, norm, _keys(norm)))

    def _state(self, cands: list[StateCandidate], out: Outcome) -> None:
        new_items: list[_Item] = []
        for c in cands:
            if self.graveyard.buried("state", c.category, c.summary, c.source_entry):
                out.tombstoned += 1
                continue
            self._load(c.category)
            norm = text.normalise(c.summary)
            if not norm:
                continue
            bucket = self._bucket(c.category, c.domain)
            match = self._index.best(bucket, norm)
            if match is None:
                item = _Item(None, norm, _keys(norm), pending=c)
                self._index.add(bucket, item)
                new_items.append(item)
                continue
            if c.category == "rejected":
                out.rejections_seen += 1
                continue
            if match.pending is not None:
                out.duplicates += 1
                continue
            if match.norm == norm:
                out.duplicates += 1
                continue
            assert match.id is not None
            current = state.get(self.db, match.id)
            state.update(self.db, match.id, actor=self.actor, summary=c.summary,
                         detail=c.detail or None,
                         confidence=max(current.confidence, c.confidence))
            match.norm = norm
            out.updated[c.category] += 1
        if not new_items:
            return
        pending = [item.pending for item in new_items if item.pending is not None]
        news = [state.NewState(
            agent=self.agent, category=p.category, summary=p.summary, domain=p.domain,
            detail=p.detail, status=p.status, source_file=self.source_file,
            source_entry=p.source_entry, confidence=p.confidence, created_at=p.at)
            for p in pending]
        ids = state.add_many(self.db, news, actor=self.actor)
        for item, p, entry_id in zip(new_items, pending, ids, strict=True):
            item.id, item.pending = entry_id, None
            out.added[p.category] += 1
            out.log[_day(p.at)].append(f"- **{p.category}** {p.summary}  `{_ref(p.source_entry)}`")

    # -- episodes ------------------------------------------------------------------------

    def _episodes(self, cands: list[EpisodeCandidate], outcomes: list[tuple[str, str]],
                  out: Outcome) -> None:
        keep = [c for c in cands
                if not self.graveyard.buried("episode", c.kind, c.summary, c.source_entry)]
        out.tombstoned += len(cands) - len(keep)
        if keep:
            episodes.add_many(self.db, [episodes.NewEpisode(
                agent=self.agent, kind=c.kind, summary=c.summary, at=c.at, detail=c.detail,
                session=c.session, source_file=self.source_file, source_entry=c.source_entry,
                tool=c.tool, ref=c.ref, outcome=c.outcome) for c in keep], actor=self.actor)
        tools: dict[str, Counter[str]] = defaultdict(Counter)
        for c in keep:
            out.episodes[c.kind] += 1
            if c.kind in LOGGED_EPISODES:
                out.log[_day(c.at)].append(f"- _{c.kind}_ {c.summary}  `{_ref(c.source_entry)}`")
            elif c.kind == "tool_call" and c.tool:
                tools[_day(c.at)][c.tool] += 1
        for day, counter in tools.items():
            calls = ", ".join(f"{name} ×{n}" for name, n in counter.most_common())
            out.log[day].append(f"- tool calls: {calls}")
        if outcomes:
            out.outcomes += episodes.set_outcomes(self.db, self.agent, outcomes, actor=self.actor)

    # -- facts ---------------------------------------------------------------------------

    def _facts(self, cands: list[FactCandidate], out: Outcome) -> None:
        for c in cands:
            if self.graveyard.buried("fact", c.key, c.value, c.source_entry):
                out.tombstoned += 1
                continue
            change = facts.put(self.db, self.agent, c.key, c.value, actor=self.actor,
                               source_file=self.source_file, source_entry=c.source_entry,
                               confidence=c.confidence, at=c.at)
            out.facts[change.action] += 1
            if change.action == "added":
                out.log[_day(c.at)].append(
                    f"- **fact** {change.fact.key} = {change.fact.value}  `{_ref(c.source_entry)}`")
            elif change.action == "superseded" and change.previous is not None:
                out.log[_day(c.at)].append(
                    f"- **fact** {change.fact.key} = {change.fact.value} "
                    f"(was {change.previous.value})  `{_ref(c.source_entry)}`")

    # -- all -----------------------------------------------------------------------------

    def apply(self, extraction: Extraction, *, source_file: str | None = None) -> Outcome:
        """Write one batch's candidates; call inside the batch's transaction."""
        if source_file is not None:
            self.source_file = source_file
        out = Outcome()
        with self.db.write():
            self._state(extraction.state, out)
            self._episodes(extraction.episodes, extraction.outcomes, out)
            self._facts(extraction.facts, out)
        return out


def _day(at: str | None) -> str:
    if at:
        return at[:10]
    from memtui import timeutil

    return timeutil.iso(timeutil.now())[:10]


def _ref(entry: str) -> str:
    return entry if len(entry) <= 14 else entry[:12] + "…"
