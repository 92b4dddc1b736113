"""Episodes: provenance, FTS5 search with stemming and safe queries, tool outcomes."""

from __future__ import annotations

import pytest

from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.stores import audit, episodes
from memtui.stores.episodes import NewEpisode


def add(db: Database, summary: str, kind: str = "incident", **kw: object) -> int:
    return episodes.add_many(db, [NewEpisode(agent=str(kw.pop("agent", "main")), kind=kind,
                                             summary=summary, **kw)],  # type: ignore[arg-type]
                             actor="extractor")[0]


def test_add_keeps_provenance_and_audits(db: Database) -> None:
    eid = add(db, "nginx -t failed", at="2026-11-13T08:50:00Z", session="s1",
              source_file="/t/ops.jsonl", source_entry="915da797", tool="exec")
    ep = episodes.get(db, eid)
    assert (ep.at, ep.session, ep.source_file, ep.source_entry, ep.tool) == (
        "2026-11-13T08:50:00Z", "s1", "/t/ops.jsonl", "915da797", "exec")
    [row] = audit.recent(db, target=f"episode:{eid}")
    assert row.actor == "extractor" and row.action == "episode.add"
    assert [e.id for e in episodes.for_entry(db, "915da797")] == [eid]


def test_search_stems_and_survives_shell_syntax(db: Database) -> None:
    a = add(db, "Deployed 2.3 to production", kind="decision", detail="after the checklist")
    b = add(db, "exec: mix phx.server failed", detail="port 4000 in use")
    add(db, "Newsletter scheduled", kind="note", agent="content")
    assert [e.id for e, _ in episodes.search(db, "deploying")] == [a]
    assert [e.id for e, _ in episodes.search(db, "mix phx.server")] == [b]
    assert [e.id for e, _ in episodes.search(db, 'port "4000" (')] == [b]
    assert episodes.search(db, "newsletter", agent="main") == []
    assert episodes.search(db, "   ") == []
    hits = episodes.search(db, "failed", kind="incident")
    assert [e.id for e, _ in hits] == [b] and hits[0][1] > 0


def test_fts_follows_deletes(db: Database) -> None:
    eid = add(db, "certbot renewal failed")
    episodes.delete(db, eid, actor="cli")
    assert episodes.search(db, "certbot") == []


def test_tool_outcomes_arrive_later(db: Database) -> None:
    add(db, "Bash: pytest -q", kind="tool_call", ref="c1", tool="Bash")
    assert episodes.set_outcomes(db, "main", [("c1", "error"), ("zz", "ok")],
                                 actor="extractor") == 1
    [ep] = episodes.recent(db, kind="tool_call")
    assert ep.outcome == "error"
    assert episodes.counts(db) == {"tool_call": 1}


def test_invalid_episodes_are_refused(db: Database) -> None:
    with pytest.raises(MemtuiError):
        add(db, "x", kind="gossip")
    with pytest.raises(MemtuiError):
        add(db, "   ")
    assert db.scalar("SELECT count(*) FROM episodes") == 0
