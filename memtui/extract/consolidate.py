"""Consolidation: extracted candidates become memory without duplicates or resurrections.

Rules, applied in this order to every candidate:

1. **Tombstones.** A candidate matching a tombstone of the agent (same source message
   and kind, or the same normalised text) is dropped: what a human deleted, forgot or
   rejected is never recreated by extracting the same source again.
2. **Rejections are never stored twice.** A rejected candidate whose normalised
   summary is at least ``threshold`` similar to *any* earlier rejection of the agent
   (whatever its status or domain) is dropped.
3. **Restatements update, changes supersede.** A state candidate at least ``threshold``
   similar to an active or completed entry of the same category and domain is the same
   entry only when it names the same things: every *mark* of one text (a token with a
   digit -- 15, v2.3, 10:00 --, an identifier -- phx.server, user_id, camelCase --, or a
   capitalised word past the first -- Postgres, GPU) must be a word of the other
   (``similarity.marks``, ``same_marks``), and no content word of one is replaced by another
   (``subject.restates``: "use pnpm" is not "use npm").
   - Same marks: a restatement. It updates the entry in place (new wording, higher
     confidence) and the entry now cites the latest message (``source_entry``,
     ``source_file``, and the proposal it answers, ``answers_entry``); the audit row keeps
     the previous source.
   - Different marks in a decision, context, learning or agent_state entry about the
     same subject (``extract.subject``: the texts differ in one place, the value): the
     decision changed ("Postgres 15" -> "Postgres 16"). The candidate is added as a new
     entry citing its own message and the old entry is marked superseded by it
     (``state.link_superseded``: the chain answers "what did we decide before?"). About
     another subject ("... for the api database" / "... for the billing database",
     "item 3 ..." / "item 4 ..."), both stay active.
   - Different marks in a task, discovery or rejection: another thing (task 12 is not
     task 13), added as its own entry.
   Similarity is ``memtui.text.similarity``: difflib's ratio over the normalised texts
   (lowercase, runs of non-alphanumerics as one space). The threshold is ``[extract]
   similarity`` in memtui.toml, 0.82 by default: it joins rewordings such as "Don't
   restart postgres during business hours" / "don't restart Postgres in business hours!"
   and keeps "use pnpm" apart from "use npm".
4. **Facts supersede.** A fact with an existing key and a new value supersedes the
   current one; the same value changes nothing.

The in-memory index (``extract.similarity``) keeps a run fast and deterministic.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from memtui import text, timeutil
from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.extract.candidates import EpisodeCandidate, Extraction, FactCandidate, StateCandidate
from memtui.extract.similarity import Item, SimilarityIndex, keys_of, marks, words_of
from memtui.stores import episodes, facts, state
from memtui.stores.tombstones import Graveyard

ACTOR = "extractor"
DEFAULT_THRESHOLD = 0.82

SUPERSEDING = frozenset({"decision", "context", "learning", "agent_state"})
"""Categories where a similar entry with other numbers or names replaces the old one (the
decision changed); in the others (task, discovery, rejected) it is another entry."""


@dataclass
class Outcome:
    """What consolidation did with one batch, and the lines for the daily log."""

    added: Counter[str] = field(default_factory=Counter)
    """State entries added, per category."""
    updated: Counter[str] = field(default_factory=Counter)
    """Entries restated in other words (updated in place, citing the latest message)."""
    superseded: Counter[str] = field(default_factory=Counter)
    """Entries replaced by a changed one (different numbers or names), per category."""
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
        self.superseded.update(other.superseded)
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
        # Rejections said again (a standing instruction re-sent): their episodes go too.
        self._said_again: set[tuple[str, str]] = set()
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
            self._index.add(self._bucket(category, domain),
                            Item(entry_id, norm, keys_of(norm), marks=marks(summary),
                                  words=words_of(summary, norm), summary=summary))

    def _state(self, cands: list[StateCandidate], out: Outcome) -> None:
        new_items: list[Item] = []
        for c in cands:
            if self.graveyard.buried("state", c.category, c.summary, c.source_entry):
                out.tombstoned += 1
                continue
            self._load(c.category)
            norm = text.normalise(c.summary)
            if not norm:
                continue
            bucket = self._bucket(c.category, c.domain)
            c_marks, c_words = marks(c.summary), words_of(c.summary, norm)
            found = self._index.find(bucket, norm, c_marks, c_words,
                                     changed=c.category in SUPERSEDING, summary=c.summary)
            if found is None or not found.same:
                item = Item(None, norm, keys_of(norm), pending=c, marks=c_marks, words=c_words,
                             summary=c.summary)
                if found is not None:
                    # A changed decision: the new entry replaces the old one.
                    item.supersedes = found.item
                    self._index.remove(bucket, found.item)
                self._index.add(bucket, item)
                new_items.append(item)
                continue
            match = found.item
            if c.category == "rejected":
                out.rejections_seen += 1
                self._said_again.add((c.source_entry, norm))
                continue
            if match.pending is not None:
                # Restated before it was written: it is written once, citing the latest.
                match.pending = dataclasses.replace(
                    match.pending, summary=c.summary, detail=c.detail or match.pending.detail,
                    source_entry=c.source_entry, answers_entry=c.answers_entry,
                    confidence=max(match.pending.confidence, c.confidence))
                match.norm, match.summary = norm, c.summary
                out.duplicates += 1
                continue
            assert match.id is not None
            if state.restate(self.db, match.id, actor=self.actor, summary=c.summary,
                             detail=c.detail, confidence=c.confidence,
                             source_entry=c.source_entry, source_file=self.source_file,
                             answers_entry=c.answers_entry):
                out.updated[c.category] += 1
            else:
                out.duplicates += 1
            match.norm, match.summary = norm, c.summary
        if not new_items:
            return
        pending = [item.pending for item in new_items if item.pending is not None]
        news = [state.NewState(
            agent=self.agent, category=p.category, summary=p.summary, domain=p.domain,
            detail=p.detail, status=p.status, source_file=self.source_file,
            source_entry=p.source_entry, confidence=p.confidence, created_at=p.at,
            answers_entry=p.answers_entry)
            for p in pending]
        ids = state.add_many(self.db, news, actor=self.actor)
        for item, p, entry_id in zip(new_items, pending, ids, strict=True):
            item.id, item.pending = entry_id, None
            out.added[p.category] += 1
            note = ""
            if item.supersedes is not None and item.supersedes.id is not None:
                try:
                    state.link_superseded(self.db, item.supersedes.id, entry_id,
                                          actor=self.actor)
                except MemtuiError:
                    pass  # superseded or removed by a human since it was loaded: keep both
                else:
                    out.superseded[p.category] += 1
                    note = f" (replaces #{item.supersedes.id})"
            out.log[_day(p.at)].append(
                f"- **{p.category}** {p.summary}{note}  `{_ref(p.source_entry)}`")

    # -- episodes ------------------------------------------------------------------------

    def _episodes(self, cands: list[EpisodeCandidate], outcomes: list[tuple[str, str]],
                  out: Outcome) -> None:
        keep = [c for c in cands
                if not self.graveyard.buried("episode", c.kind, c.summary, c.source_entry)]
        out.tombstoned += len(cands) - len(keep)
        # A known rejection said again is no new event; a refused tool use (ref) always is.
        keep = [c for c in keep if not (c.kind == "rejection" and c.ref is None and (
            c.source_entry, text.normalise(c.summary)) in self._said_again)]
        # A tool call whose result is in the same batch is added with its outcome: one
        # row written (and one audit line), not a row and then an update of it. A call id
        # an earlier batch stored too (generic transcripts reuse short ids) is updated as
        # before, every row of it.
        results: dict[str, list[str]] = defaultdict(list)
        for ref, outcome in outcomes:
            results[ref].append(outcome)
        called = {c.ref for c in keep if c.kind == "tool_call" and c.ref in results}
        settled = called - episodes.stored_refs(self.db, self.agent, called)
        for c in keep:
            if c.kind == "tool_call" and c.ref in settled:
                was = c.outcome  # counted as the updates would have: one per change
                for outcome in results[c.ref]:
                    if outcome != was:
                        out.outcomes += 1
                    was = outcome
        if keep:
            episodes.add_many(self.db, [episodes.NewEpisode(
                agent=self.agent, kind=c.kind, summary=c.summary, at=c.at, detail=c.detail,
                session=c.session, source_file=self.source_file, source_entry=c.source_entry,
                tool=c.tool, ref=c.ref, answers_entry=c.answers_entry,
                outcome=results[c.ref][-1] if c.kind == "tool_call" and c.ref in settled
                else c.outcome)
                for c in keep], actor=self.actor)
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
        later = [(ref, outcome) for ref, outcome in outcomes if ref not in settled]
        if later:  # results of calls read in an earlier batch
            out.outcomes += episodes.set_outcomes(self.db, self.agent, later, actor=self.actor)

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
    """The daily log a line goes to: the agent's local day of the turn (the day rule)."""
    from memtui.workspace.layout import local_day

    return local_day(timeutil.parse(at) if at else None)


def _ref(entry: str) -> str:
    return entry if len(entry) <= 14 else entry[:12] + "…"
