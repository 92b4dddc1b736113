"""Forgetting in memory.db: delete the rows, scrub their words from the audit, seal a tombstone.

``erase`` runs in one transaction with ``PRAGMA secure_delete`` on, so freed cells are
zeroed; ``compact`` then rewrites the file (VACUUM, for remnants older writes left in
free space) and truncates the write-ahead log, so the words are gone from every file of
memory.db. What stays: a sealed tombstone per item (keyed word hashes, no text, so
re-extraction cannot bring it back) and an audit row saying that something was forgotten.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memtui import text as textutil
from memtui.db import Database
from memtui.errors import MemtuiError, NotFound
from memtui.stores import audit, episodes, facts, state, tombstones

LAYERS = ("state", "fact", "episode")
FORGOTTEN = "[forgotten]"
"""What replaces forgotten words inside audit details and queued daily-log sections."""


@dataclass(frozen=True)
class Row:
    """One memory.db row that a forget removes, with the words that must go with it."""

    layer: str
    id: int
    agent: str
    kind: str
    text: str
    source_file: str | None
    source_entry: str | None

    @property
    def target(self) -> str:
        return f"{self.layer}:{self.id}"


@dataclass(frozen=True)
class Erased:
    """What ``erase`` did."""

    rows: list[str]
    tombstones: list[int]
    audit_rows_scrubbed: int
    pending_scrubbed: int


def row(db: Database, layer: str, item_id: int) -> Row:
    """The row ``layer:item_id`` as a forget would remove it (NotFound when absent)."""
    if layer == "state":
        e = state.get(db, item_id)
        return Row("state", e.id, e.agent, e.category,
                   e.summary + (f"\n{e.detail}" if e.detail else ""), e.source_file,
                   e.source_entry)
    if layer == "fact":
        f = facts.get(db, item_id)
        return Row("fact", f.id, f.agent, f.key, f.value, f.source_file, f.source_entry)
    if layer == "episode":
        ep = episodes.get(db, item_id)
        return Row("episode", ep.id, ep.agent, ep.kind,
                   ep.summary + (f"\n{ep.detail}" if ep.detail else ""), ep.source_file,
                   ep.source_entry)
    raise MemtuiError(f"unknown layer {layer!r}; expected {', '.join(LAYERS)}")


def matching(db: Database, needle: str, *, agent: str | None = None,
             limit: int = 200) -> list[Row]:
    """Rows whose words contain ``needle``'s words in order (normalised), any status."""
    norm = textutil.normalise(needle)
    if not norm:
        raise MemtuiError("nothing to forget: the query has no letters or digits")
    like = "%" + "%".join(norm.split()) + "%"
    where, params = ("AND agent = ?", [agent]) if agent else ("", [])
    found: list[Row] = []
    for layer, table, words in (("state", "state", "summary || ' ' || detail"),
                                ("fact", "facts", "key || ' ' || value"),
                                ("episode", "episodes", "summary || ' ' || detail")):
        # LIKE narrows cheaply (case-insensitive for ASCII); the normalised check decides.
        ids = db.rows(f"SELECT id, {words} FROM {table} WHERE {words} LIKE ? {where} "
                      f"ORDER BY id LIMIT ?", [like, *params, limit])
        for item_id, body in ids:
            if contains(str(body), norm):
                found.append(row(db, layer, int(item_id)))
    return found


def contains(body: str, norm_needle: str) -> bool:
    """True when the normalised ``body`` holds ``norm_needle`` on word boundaries."""
    return f" {norm_needle} " in f" {textutil.normalise(body)} "


def _json_fragment(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)[1:-1]


def erase(db: Database, rows: Sequence[Row], needles: Sequence[str], *, actor: str,
          reason: str = "", notes: Sequence[tuple[str, str]] = ()) -> Erased:
    """Delete ``rows`` and every trace of ``needles`` in memory.db, in one transaction.

    Rows that point at a deleted row (``superseded_by``) keep their own status and lose
    the link. Each row leaves a sealed tombstone; tombstones holding the same words in
    clear are sealed too. Audit rows of the deleted targets keep only that they were
    forgotten; other audit rows and queued daily-log sections lose the words. ``notes``
    are (agent, text) of markdown lines forgotten with them: each gets a sealed state
    tombstone too, so extraction does not bring the words back as a state entry.
    """
    audit.check_actor(actor)
    db.conn.execute("PRAGMA secure_delete=ON")
    words = sorted({t for r in rows for t in _texts(r)} | {n for n in needles if n.strip()},
                   key=len, reverse=True)
    stones: list[int] = []
    with db.write():
        tombstones.seal_key(db, create=True)
        for r in rows:
            _delete(db, r)
            stones.append(tombstones.add(
                db, agent=r.agent, store=r.layer, kind=r.kind, text_=r.text, actor=actor,
                reason=reason, source_file=r.source_file, source_entry=r.source_entry,
                sealed=True).id)
        for agent, note in notes:
            stones.append(tombstones.add(db, agent=agent, store="state", kind="",
                                         text_=note, actor=actor, reason=reason,
                                         sealed=True).id)
        _seal_clear_stones(db, words, actor)
        scrubbed = _scrub_audit(db, [r.target for r in rows], words)
        pending = _scrub_pending(db, words)
        if any(r.layer == "episode" for r in rows):
            # Rewrites the FTS index without the deleted rows' terms (deletes only add
            # delete markers to its segments; optimize merges them away).
            db.execute("INSERT INTO episodes_fts(episodes_fts) VALUES ('optimize')")
        audit.record(db, actor, "forget", "forget", None,
                     {"rows": [r.target for r in rows], "tombstones": stones,
                      "reason": reason})
    return Erased([r.target for r in rows], stones, scrubbed, pending)


def _texts(r: Row) -> list[str]:
    parts = [p for p in r.text.split("\n") if p.strip()]
    return parts + ([f"{r.kind} = {r.text}"] if r.layer == "fact" else [])


def _delete(db: Database, r: Row) -> None:
    table = {"state": "state", "fact": "facts", "episode": "episodes"}[r.layer]
    if db.scalar(f"SELECT 1 FROM {table} WHERE id = ?", (r.id,)) is None:
        raise NotFound(f"no {r.layer} {r.id}")
    if r.layer in ("state", "fact"):
        db.execute(f"UPDATE {table} SET superseded_by = NULL WHERE superseded_by = ?", (r.id,))
    db.execute(f"DELETE FROM {table} WHERE id = ?", (r.id,))


def _seal_clear_stones(db: Database, words: Sequence[str], actor: str) -> None:
    norms = {textutil.normalise(w) for w in words}
    for stone in db.query("SELECT * FROM tombstones WHERE text != ''"):
        if any(n and n in stone["norm"] for n in norms):
            db.execute("DELETE FROM tombstones WHERE id = ?", (stone["id"],))
            tombstones.add(db, agent=stone["agent"], store=stone["layer"], kind=stone["kind"],
                           text_=stone["text"], actor=actor, reason=stone["reason"],
                           source_file=stone["source_file"],
                           source_entry=stone["source_entry"], sealed=True)


def _scrub_audit(db: Database, targets: Sequence[str], words: Sequence[str]) -> int:
    n = 0
    for target in targets:
        db.execute("UPDATE audit SET before = CASE WHEN before IS NULL THEN NULL ELSE ? END, "
                   "after = CASE WHEN after IS NULL THEN NULL ELSE ? END WHERE target = ?",
                   ('{"forgotten": true}', '{"forgotten": true}', target))
        n += db.changes()
    for word in words:
        frag = _json_fragment(word)
        db.execute("UPDATE audit SET before = replace(before, ?1, ?2), "
                   "after = replace(after, ?1, ?2) WHERE instr(before, ?1) OR instr(after, ?1)",
                   (frag, FORGOTTEN))
        n += db.changes()
    return n


def _scrub_pending(db: Database, words: Sequence[str]) -> int:
    n = 0
    for word in words:
        db.execute("UPDATE daily_log_pending SET text = replace(text, ?1, ?2) "
                   "WHERE instr(text, ?1)", (word, FORGOTTEN))
        n += db.changes()
    return n


def compact(db: Database) -> str:
    """Rewrite memory.db without free-space remnants and truncate its WAL.

    Returns how the checkpoint went: "done", or "busy" when another process held a read
    transaction open (its WAL frames are then overwritten by later writes, not removed).
    """
    db.conn.execute("PRAGMA secure_delete=ON")
    db.conn.execute("VACUUM")
    busy = db.scalar("PRAGMA wal_checkpoint(TRUNCATE)")
    return "busy" if busy else "done"


def scrub_calls(db: Database, words: Sequence[str], hide: Callable[[str], bool]) -> int:
    """Audited MCP calls whose string arguments ``hide`` says hold forgotten words get
    those arguments replaced; only calls whose detail holds one of ``words`` are read."""
    words = [w for w in words if len(w) >= 3]
    if not words:
        return 0
    where = " OR ".join("instr(lower(after), ?)" for _ in words)
    n = 0
    with db.write():
        for row in db.query(f"SELECT id, after FROM audit WHERE action = 'mcp.call' AND "
                            f"({where})", [w.lower() for w in words]):
            detail = json.loads(row["after"])
            args = detail.get("args") or {}
            changed = {k: FORGOTTEN for k, v in args.items() if isinstance(v, str) and hide(v)}
            if changed:
                detail["args"] = {**args, **changed}
                db.execute("UPDATE audit SET after = ? WHERE id = ?",
                           (json.dumps(detail, sort_keys=True), row["id"]))
                n += 1
    return n
