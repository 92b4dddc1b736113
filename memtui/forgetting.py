"""Forget: find every trace of a memory, show it, and remove it from every file of the home.

One engine for `memtui forget` and the MCP ``forget`` tool. ``plan`` lists exactly what
would go (memory.db rows, markdown lines, index chunks) and a ``token`` that names that
list; ``forget`` deletes only when given the token of the same list, so nothing changes
between what was shown and what is deleted. Deleting is real: the rows (with
``secure_delete``, a VACUUM and a WAL truncate), their words in the audit detail (the
fact that something was forgotten stays), the markdown lines in MEMORY.md and the daily
logs, and the index's chunks, vectors and FTS terms. Transcripts are the agent's files
and are never edited; the index keeps forgotten messages out of them. A sealed tombstone
(no text) per item stops re-extraction from bringing it back.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from memtui import text as textutil
from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.stores import forget as store


@dataclass(frozen=True)
class MarkdownLine:
    """A line of MEMORY.md or a daily log that holds forgotten words."""

    agent: str
    path: str
    """Relative to the agent's workspace."""
    line: int
    text: str


@dataclass(frozen=True)
class Plan:
    """What a forget would delete; ``token`` confirms exactly this list."""

    request: str
    rows: list[store.Row]
    lines: list[MarkdownLine]
    index_chunks: dict[str, int]
    needles: list[str]
    token: str

    @property
    def empty(self) -> bool:
        return not self.rows and not self.lines and not any(self.index_chunks.values())

    def as_dict(self) -> dict[str, Any]:
        return {"request": self.request, "token": self.token,
                "rows": [{"layer": r.layer, "id": r.id, "agent": r.agent, "text": r.text}
                         for r in self.rows],
                "markdown": [{"agent": m.agent, "path": m.path, "line": m.line,
                              "text": m.text} for m in self.lines],
                "index_chunks": self.index_chunks}


@dataclass(frozen=True)
class Forgotten:
    """What a forget removed."""

    rows: list[str]
    tombstones: list[int]
    markdown_lines: int
    index_chunks: dict[str, int]
    audit_rows_scrubbed: int
    checkpoints: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def plan_item(home: Home, db: Database, layer: str, item_id: int) -> Plan:
    """The plan for one row (``state 12``): it, its markdown lines and index chunks."""
    r = store.row(db, layer, item_id)
    return _plan(home, f"{layer} {item_id}", [r], [t for t in r.text.split("\n") if t.strip()],
                 agents=[r.agent])


def plan_query(home: Home, db: Database, query: str, *, agent: str | None = None) -> Plan:
    """The plan for every row, markdown line and chunk holding ``query``'s words."""
    if len(textutil.normalise(query)) < 3:
        raise MemtuiError("the query to forget is too short: give at least 3 letters or digits")
    rows = store.matching(db, query, agent=agent)
    agents = [agent] if agent else home.agents()
    return _plan(home, f"query {query!r}", rows, [query], agents=agents)


def _plan(home: Home, request: str, rows: list[store.Row], needles: list[str], *,
          agents: Sequence[str]) -> Plan:
    from memtui.search import forgotten

    needles = sorted({n for n in needles + [t for r in rows for t in _phrases(r)]
                      if len(textutil.normalise(n)) >= 3})
    norms = [textutil.normalise(n) for n in needles]
    lines = [m for a in agents for m in _markdown_lines(home, a, norms)]
    chunks = {a: forgotten.count(home, a, needles=needles, refs=_refs(rows),
                                 entries=_entries(rows)) for a in agents}
    digest = hashlib.sha256(json.dumps(
        [request, [(r.target, r.text) for r in rows],
         [(m.agent, m.path, m.line, m.text) for m in lines]], ensure_ascii=False
    ).encode("utf-8", "surrogatepass")).hexdigest()
    return Plan(request, rows, lines, chunks, needles, digest[:16])


def _phrases(r: store.Row) -> list[str]:
    parts = [p for p in r.text.split("\n") if p.strip()]
    return parts + ([f"{r.kind} {r.text}"] if r.layer == "fact" else [])


def _refs(rows: Sequence[store.Row]) -> list[str]:
    return [r.target for r in rows if r.layer in ("episode", "fact")]


def _entries(rows: Sequence[store.Row]) -> list[str]:
    return sorted({r.source_entry for r in rows if r.source_entry})


def _markdown_lines(home: Home, agent: str, norms: Sequence[str]) -> list[MarkdownLine]:
    from memtui.search.documents import memory_files

    workspace = home.workspace(agent)
    out: list[MarkdownLine] = []
    for path in memory_files(workspace):
        rel = path.relative_to(workspace).as_posix()
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for number in _matching_lines(lines, norms):
            out.append(MarkdownLine(agent, rel, number, lines[number - 1]))
    return out


def _matching_lines(lines: Sequence[str], norms: Sequence[str]) -> list[int]:
    """1-based numbers of the lines to drop: each holding a phrase, and the indented
    continuation lines of a matching bullet (`remember` writes multi-line entries so)."""
    drop: list[int] = []
    bullet = False
    for number, line in enumerate(lines, start=1):
        if bullet and line.startswith("  ") and line.strip():
            drop.append(number)
            continue
        bullet = False
        if any(store.contains(line, n) for n in norms if n):
            drop.append(number)
            bullet = line.lstrip().startswith("- ")
    return drop


def forget(home: Home, db: Database, plan: Plan, token: str, *, actor: str,
           reason: str = "") -> Forgotten:
    """Delete everything ``plan`` lists, if ``token`` is its token.

    The plan is made again first: if anything it lists changed since it was shown, the
    tokens differ and nothing is deleted.
    """
    if token != plan.token:
        raise MemtuiError("the confirm token does not match this forget: ask again without "
                          "a token to see what would be deleted now")
    from memtui.search import forgotten

    notes = [(m.agent, _note(m.text)) for m in plan.lines if not _from_extraction(m.text)]
    erased = store.erase(db, plan.rows, plan.needles, actor=actor, reason=reason, notes=notes)
    removed = _remove_lines(home, plan.lines, [textutil.normalise(n) for n in plan.needles])
    agents = {r.agent for r in plan.rows} | {m.agent for m in plan.lines}
    content = sorted({w for n in plan.needles for w in textutil.normalise(n).split()
                      if w not in textutil.STOPWORDS})
    scrubbed = erased.audit_rows_scrubbed + sum(
        store.scrub_calls(db, content, partial(mentions_forgotten, db, a)) for a in agents)
    checkpoints = {"memory.db": store.compact(db)}
    chunks: dict[str, int] = {}
    for agent in plan.index_chunks:
        done = forgotten.erase(home, agent, needles=plan.needles, refs=_refs(plan.rows),
                               entries=_entries(plan.rows))
        chunks[agent] = done.chunks
        checkpoints[f"index/{agent}"] = done.checkpoint
    return Forgotten(erased.rows, erased.tombstones, removed, chunks, scrubbed, checkpoints)


def _from_extraction(line: str) -> bool:
    """Daily-log lines written by extraction cite their message; their row has a stone."""
    return line.rstrip().endswith("`") and "**" in line


def _note(line: str) -> str:
    body = line.strip().removeprefix("- ")
    head, _, rest = body.partition(" ")
    return rest if len(head) == 5 and head[2] == ":" and head.replace(":", "").isdigit() else body


def _remove_lines(home: Home, lines: Sequence[MarkdownLine], norms: Sequence[str]) -> int:
    """Drop the lines from their files, matched again on the current text, through the
    one writer of memory files (its lock, its atomic replace that keeps an agent's own
    concurrent appends)."""
    from memtui.workspace import writer

    removed = 0
    by_file: dict[tuple[str, str], None] = {(m.agent, m.path): None for m in lines}
    for agent, rel in by_file:
        path = home.workspace(agent) / rel
        if not path.is_file() or path.is_symlink():
            continue
        counted: list[int] = []

        def drop(text: str, counted: list[int] = counted) -> str:
            rows = text.split("\n")
            gone = set(_matching_lines(rows, norms))
            counted[:] = [len(gone)]
            return "\n".join(r for n, r in enumerate(rows, start=1) if n not in gone)

        with writer.memory_lock(home, agent):
            writer.append(path, "", drop)
        removed += counted[0] if counted else 0
    return removed


def mentions_forgotten(db: Database, agent: str, value: str) -> bool:
    """True when the meaningful words of ``value`` all come from one forgotten text.

    Audit rows written after a forget (an agent asking for it again) must not bring the
    words back into memory.db; the sealed tombstones answer without holding the text.
    """
    from memtui.stores import tombstones

    words = [w for w in textutil.normalise(value).split() if w not in textutil.STOPWORDS]
    if not words:
        return False
    rows = db.rows("SELECT norm FROM tombstones WHERE agent = ? AND norm LIKE ?",
                   (agent, tombstones.SEALED + "%"))
    key = tombstones.seal_key(db) if rows else None
    if key is None:
        return False
    mine = set(tombstones.seal_words(key, " ".join(words)))
    return any(mine <= set(str(norm)[len(tombstones.SEALED):].split()) for (norm,) in rows)
