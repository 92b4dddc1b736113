"""Forget removes the words from every file of the home, and they stay gone (issue 9)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memtui import forgetting
from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.search import engine
from memtui.stores import tombstones
from memtui.stores.tombstones import Graveyard
from memtui.workspace.memoryfiles import remember
from tests.conftest import run_cli
from tests.mcp.conftest import files_holding
from tests.search.conftest import FakeEmbedder

WORD = "zebracorn"


def _transcript(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    with path.open("a", encoding="utf-8") as out:
        for n, (i, role, content) in enumerate(rows):
            out.write(json.dumps({"type": "message", "id": i, "session": "s1",
                                  "ts": f"2026-03-01T10:00:0{n}Z", "role": role,
                                  "content": content}) + "\n")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return path


@pytest.fixture
def stocked(home: Home, tmp_path: Path) -> tuple[Home, Path, FakeEmbedder]:
    """A home where the word sits in state, episodes, the daily log, MEMORY.md, the
    transcript, and the index (chunks, FTS, vectors, embedding cache)."""
    chat = _transcript(tmp_path / "chat.jsonl", [
        ("u1", "user", f"We decided to rotate the {WORD} credentials every Tuesday."),
        ("u2", "user", "My timezone is Europe/Berlin."),
    ])
    assert run_cli("sources", "add", str(chat), home=home).returncode == 0
    assert run_cli("extract", home=home).returncode == 0
    remember(home, "main", f"The {WORD} vault answers on port 8200")
    remember(home, "main", f"Never paste {WORD} tokens in chat", long_term=True)
    fake = FakeEmbedder()
    engine.sync(home, "main", embedder=fake)
    assert len(files_holding(home.root, WORD)) >= 4  # memory.db, index, two markdown files
    return home, chat, fake


def test_forget_by_query_leaves_no_trace_and_stays_forgotten(stocked: tuple) -> None:
    home, chat, fake = stocked
    db = home.open_db()
    try:
        plan = forgetting.plan_query(home, db, WORD)
        layers = {r.layer for r in plan.rows}
        assert {"state", "episode"} <= layers
        assert {m.path.split("/")[0] for m in plan.lines} == {"MEMORY.md", "memory"}
        assert plan.index_chunks["main"] >= 3
        # The plan deleted nothing; a wrong token deletes nothing either.
        assert len(files_holding(home.root, WORD)) >= 4
        with pytest.raises(MemtuiError, match="token does not match"):
            forgetting.forget(home, db, plan, "0" * 16, actor="test")
        done = forgetting.forget(home, db, forgetting.plan_query(home, db, WORD), plan.token,
                                 actor="test", reason="asked")
        # The two remembered lines and the line extraction wrote to the daily log.
        assert done.markdown_lines == len(plan.lines) == 3
        assert done.index_chunks["main"] == plan.index_chunks["main"]
        assert set(done.checkpoints.values()) <= {"done", "no index"}
        stones = [tombstones.get(db, i) for i in done.tombstones]
        assert stones and all(s.text == "" and s.norm.startswith("~") for s in stones)
        last = db.query("SELECT action, after FROM audit ORDER BY id DESC LIMIT 1")[0]
        assert last["action"] == "forget" and "asked" in last["after"]
        # Extraction may not bring it back, even reworded; other memory is untouched.
        yard = Graveyard.load(db, "main")
        assert yard.buried("state", "decision",
                           f"We decided to rotate the {WORD} credentials every Tuesday!", None)
        assert yard.buried("state", "decision",
                           f"we decided to rotate the {WORD} creds every Tuesday", None)
        assert not yard.buried("state", "decision", "Rotate the api keys every Friday", None)
        assert db.scalar("SELECT count(*) FROM facts WHERE key = 'timezone'") == 1
    finally:
        db.close()
    assert files_holding(home.root, WORD) == []
    assert chat.read_bytes().count(WORD.encode()) == 1  # the agent's file is never edited
    everything = engine.options(home, min_score=0.0, max_results=50)
    assert engine.search(home, "main", WORD, embedder=fake).results == []
    assert all(WORD not in h.snippet for h in engine.search(
        home, "main", WORD, everything, embedder=fake).results)
    # The transcript grows: its new message is indexed, the forgotten one stays out.
    _transcript(chat, [("u3", "user", "The kiwifruit deploy went out at noon.")])
    found = engine.search(home, "main", f"kiwifruit deploy rotate {WORD} credentials",
                          everything, embedder=fake).results
    assert any("kiwifruit" in h.snippet for h in found)
    assert all(WORD not in h.snippet for h in found)
    assert files_holding(home.root, WORD) == []


def test_cli_forget_item_and_query_steps(stocked: tuple) -> None:
    home, _chat, _fake = stocked
    db = home.open_db()
    try:
        state_id = db.scalar("SELECT id FROM state WHERE summary LIKE ?", (f"%{WORD}%",))
    finally:
        db.close()
    dry = run_cli("forget", "state", str(state_id), "--dry-run", home=home)
    assert dry.returncode == 0 and f"state {state_id}" in dry.stdout
    done = run_cli("forget", "state", str(state_id), "--json", home=home)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["tombstone"]["text"] == "" and data["erased"]["rows"] == [f"state:{state_id}"]
    asked = run_cli("forget", "--query", WORD, "--json", home=home)
    plan = json.loads(asked.stdout)["plan"]
    assert plan["markdown"] and plan["token"]
    assert files_holding(home.root, WORD)  # a plan changes nothing
    wrong = run_cli("forget", "--query", WORD, "--confirm", "nope", home=home)
    assert wrong.returncode == 1 and "does not match" in wrong.stderr
    ok = run_cli("forget", "--query", WORD, "--confirm", plan["token"], home=home)
    assert ok.returncode == 0, ok.stderr
    assert files_holding(home.root, WORD) == []
    usage = run_cli("forget", home=home)
    assert usage.returncode == 1 and "STORE ID" in usage.stderr


def test_too_short_a_query_is_refused(home: Home) -> None:
    db = home.open_db()
    try:
        with pytest.raises(MemtuiError, match="too short"):
            forgetting.plan_query(home, db, "a!")
    finally:
        db.close()
