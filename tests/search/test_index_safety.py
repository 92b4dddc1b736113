"""What the index must never do: keep a secret, or die of a damaged file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.home import Home
from memtui.search import engine, schema
from memtui.search.index import SearchIndex
from tests.search.conftest import FakeEmbedder, add_transcript, write_transcript

# One secret of each kind the redactor knows by shape (values made up, never real).
SECRETS = {
    "anthropic": "sk-ant-api03-Zx8Qw2Lk9Vb4Nm7Pq1Rt5Ys3Ud6Fg0Hj2Kl4Mn8Bv-AbCdEfGh12345678",
    "aws key id": "AKIAZ7Q3M4N5P6R7T8V9",
    "aws secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYz9Q8r7S6t5",
    "github": "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "jwt": ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFuYSJ9"
            ".Qx7dGv2Lq9Wm4Zp8Rt1Yk3Nb6Vc0Hs5Jf2Ud7Ea9Ko"),
    "pem body": "MIIEowIBAAKCAQEAx9Vb4Nm7Pq1Rt5Ys3Ud6Fg0Hj2Kl4Mn8BvZx8Qw2Lk9Vb4Nm7Pq1Rt5Ys3Ud6",
}


def _leaks(root: Path, planted: Path) -> dict[str, list[str]]:
    """Every file under ``root`` (databases, their -wal, markdown) but the memory file
    the test wrote itself, holding a raw secret."""
    found: dict[str, list[str]] = {}
    for path in root.rglob("*"):
        if path.is_file() and path != planted:
            data = path.read_bytes()
            for name, secret in SECRETS.items():
                if secret.encode() in data:
                    found.setdefault(name, []).append(path.name)
    return found


def test_no_planted_secret_reaches_the_index_or_a_result(home: Home, tmp_path: Path,
                                                          fake: FakeEmbedder) -> None:
    s = SECRETS
    chat = write_transcript(tmp_path / "chat.jsonl", [
        {"id": "a1", "content": f"use ANTHROPIC_API_KEY={s['anthropic']} for the deploy bot"},
        {"id": "a2", "content": f"aws id {s['aws key id']}\n"
                                f"aws_secret_access_key = {s['aws secret']}"},
        {"id": "a3", "role": "assistant", "content": "checking the deploy token",
         "tool_calls": [{"id": "c1", "name": "bash",
                         "input": {"command": f"gh auth login --with-token {s['github']}"}}]},
        {"id": "a4", "role": "tool", "tool_call_id": "c1", "name": "bash", "is_error": False,
         "content": f"-----BEGIN RSA PRIVATE KEY-----\n{s['pem body']}\n"
                    f"-----END RSA PRIVATE KEY-----"},
        {"id": "a5", "content": f"the session cookie was Bearer {s['jwt']} for the deploy"},
    ])
    assert chat.parent != home.root and home.root not in chat.parents  # the agent's file
    add_transcript(home, chat)
    memory = home.workspace("main") / "MEMORY.md"  # the agent's own file, indexed
    memory.write_text(f"- deploy key {s['github']}\n", encoding="utf-8")
    index = SearchIndex(home, "main", embedder=fake)
    index.sync()  # kept open: its -wal is grepped too
    res = engine.search(home, "main", "deploy token key", engine.options(home, min_score=0),
                        embedder=fake)
    assert res.results and "[REDACTED:" in json.dumps(res.as_dict())
    assert not any(v in json.dumps(res.as_dict()) for v in SECRETS.values())
    assert _leaks(home.root, memory) == {}
    index.close()
    assert _leaks(home.root, memory) == {}


def test_an_index_from_before_redaction_is_rebuilt(home: Home, transcript: Path,
                                                   fake: FakeEmbedder) -> None:
    add_transcript(home, transcript)
    index = SearchIndex(home, "main", embedder=fake)
    index.sync()
    stored = index.stored_fingerprint()
    assert stored is not None
    del stored["redaction"]  # what an index written before redaction holds
    with index.db.write():
        schema.set_meta(index.db, "fingerprint", json.dumps(stored))
    assert index.check()
    assert index.sync().rebuilt


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "garbage":
        path.write_bytes(bytes((i * 37 + 11) % 256 for i in range(len(data))))
    else:
        path.write_bytes(b"")


@pytest.mark.parametrize("how", ["truncated", "garbage", "zero-length"])
def test_a_damaged_index_is_set_aside_and_rebuilt(home: Home, transcript: Path,
                                                  fake: FakeEmbedder, how: str) -> None:
    add_transcript(home, transcript)
    first = engine.sync(home, "main", embedder=fake)
    path = home.index_path("main")
    assert not Path(f"{path}-wal").exists()  # closed cleanly: the whole index is the file
    _damage(path, how)
    opts = engine.options(home, min_score=0)
    res = engine.search(home, "main", "PostgreSQL migration", opts, embedder=fake)
    assert res.results and res.results[0].message_ids == ["m4", "m5"]
    aside = [p for p in path.parent.glob(f"{path.name}.damaged-*")
             if not p.name.endswith(("-wal", "-shm"))]
    if how == "zero-length":  # an empty file is an empty database: nothing to keep
        assert aside == [] and res.notices == []
    else:
        assert len(aside) == 1 and aside[0].stat().st_size > 0  # kept, never deleted
        assert len(res.notices) == 1 and str(path) in res.notices[0]
        assert aside[0].name in res.notices[0]
    # and the commands that failed before: index, index --rebuild, index status
    _damage(path, how)
    report = engine.sync(home, "main", rebuild=True, embedder=fake)
    assert report.rebuilt and report.chunks_added == first.chunks_added > 0
    assert len(report.notices) == (0 if how == "zero-length" else 1)
    _damage(path, how)
    status = engine.status(home, "main", embedder=fake)
    assert status.path == str(path)
    assert len(status.notices) == (0 if how == "zero-length" else 1)


@pytest.mark.parametrize("how", ["truncated", "garbage"])
def test_doctor_checks_each_index_and_names_the_file(home: Home, transcript: Path,
                                                     fake: FakeEmbedder, how: str) -> None:
    from memtui.upkeep.doctor import diagnose

    add_transcript(home, transcript)
    engine.sync(home, "main", embedder=fake)
    path = home.index_path("main")
    healthy = {c.name: c for c in diagnose(home).checks}
    assert healthy["index main"].status == "ok" and "index set aside" not in healthy
    _damage(path, how)
    damaged = {c.name: c for c in diagnose(home).checks}["index main"]
    assert damaged.status == "warn" and str(path) in damaged.detail
    assert "--rebuild" in damaged.fix
    engine.search(home, "main", "kitten", embedder=fake)  # sets it aside and rebuilds
    after = {c.name: c for c in diagnose(home).checks}
    assert after["index main"].status == "ok"
    assert after["index set aside"].status == "warn" and "main.sqlite.damaged-" in after[
        "index set aside"].detail


def test_a_batch_search_over_a_damaged_index_repairs_it_once(home: Home, transcript: Path,
                                                             fake: FakeEmbedder) -> None:
    add_transcript(home, transcript)
    engine.sync(home, "main", embedder=fake)
    _damage(home.index_path("main"), "garbage")
    queries = [engine.BatchQuery(str(n), q) for n, q in
               enumerate(["PostgreSQL migration", "grey kitten shelter"])]
    got = list(engine.search_batch(home, "main", queries, engine.options(home, min_score=0),
                                   embedder=fake))
    assert [r.results[0].message_ids[0] for _, r in got] == ["m4", "m1"]
    assert len(got[0][1].notices) == 1 and got[1][1].notices == []  # said once


def test_a_damaged_index_is_rebuilt_even_without_sync_before_search(
        home: Home, transcript: Path, fake: FakeEmbedder) -> None:
    add_transcript(home, transcript)
    engine.sync(home, "main", embedder=fake)
    home.settings.search.sync_before_search = False
    _damage(home.index_path("main"), "truncated")
    res = engine.search(home, "main", "PostgreSQL migration",
                        engine.options(home, min_score=0), embedder=fake)
    assert res.results and res.results[0].message_ids == ["m4", "m5"] and res.notices
