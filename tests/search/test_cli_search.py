"""The commands: the eval's batch contract, exit codes, remember/get/recall/index status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.config import load_settings, render_settings
from memtui.home import Home
from tests.conftest import run_cli
from tests.search.conftest import CONVERSATION, write_transcript

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def keyword_home(home: Home, tmp_path: Path) -> Home:
    """A home without a model ([search] provider = "none"): fast, and the no-vector path."""
    settings = load_settings(home.config_path)
    settings.search.provider = "none"
    settings.search.session_chunking = "message"
    home.config_path.write_text(render_settings(settings))
    path = write_transcript(tmp_path / "chat.jsonl", CONVERSATION)
    done = run_cli("sources", "add", str(path), "--format", "generic", "--agent", "main",
                   home=home)
    assert done.returncode == 0, done.stderr
    return Home(home.root)


def test_batch_json_contract(keyword_home: Home, tmp_path: Path) -> None:
    assert run_cli("index", "--agent", "main", home=keyword_home).returncode == 0
    batch = tmp_path / "q.jsonl"
    batch.write_text('{"id": "a", "query": "PostgreSQL migration"}\n\n'
                     '{"id": "b", "query": "NEAR(\\"kitten\\" col:*)"}\n')
    done = run_cli("search", "--agent", "main", "--batch", str(batch), "--source", "sessions",
                   "--max-results", "50", "--min-score", "0", "--json", home=keyword_home)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"]
    first = rows[0]
    assert first["fallback"] == "no-vector" and first["provider"] is None
    hit = first["results"][0]
    assert hit["message_ids"] == ["m4"] and hit["source"] == "sessions"
    assert {"path", "start_line", "end_line", "score", "snippet"} <= set(hit)
    assert rows[1]["results"][0]["message_ids"] == ["m1"]


def test_search_single_query_explain_and_exit_codes(keyword_home: Home, tmp_path: Path) -> None:
    done = run_cli("search", "kitten", "--explain", "--json", home=keyword_home)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["weights"] == {"vector": 0.0, "text": 1.0}
    assert out["results"][0]["text_score"] > 0
    assert run_cli("search", "x", "--batch", "nope.jsonl", home=keyword_home).returncode == 1
    assert run_cli("search", "--batch", str(tmp_path / "nope.jsonl"),
                   home=keyword_home).returncode == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    done = run_cli("search", "--batch", str(bad), home=keyword_home)
    assert done.returncode == 1 and "bad.jsonl:1" in done.stderr
    assert run_cli("search", "x", "--max-results", "0", home=keyword_home).returncode == 1


def test_remember_get_recall_and_status(keyword_home: Home) -> None:
    done = run_cli("remember", "--long-term", "Staging DB password rotates monthly", "--json",
                   home=keyword_home)
    assert done.returncode == 0, done.stderr
    where = json.loads(done.stdout)
    got = run_cli("get", where["path"], "--from", str(where["line"]), "--lines", "1",
                  home=keyword_home)
    assert got.stdout.strip() == "- Staging DB password rotates monthly"
    assert run_cli("get", "../etc/passwd", home=keyword_home).returncode == 1
    assert run_cli("get", "memory/2001-01-01.md", home=keyword_home).returncode == 2
    rec = run_cli("recall", "staging password", "--layer", "semantic", "--json",
                  home=keyword_home)
    assert rec.returncode == 0, rec.stderr
    hits = json.loads(rec.stdout)["hits"]
    assert hits[0]["cite"].startswith("MEMORY.md:") and hits[0]["layer"] == "semantic"
    rec = run_cli("recall", "PostgreSQL", "--layer", "episodic", "--json", home=keyword_home)
    hit = json.loads(rec.stdout)["hits"][0]
    assert hit["when"].startswith("2024-05-02") and hit["cite"].endswith("#m4")
    st = run_cli("index", "status", "--json", home=keyword_home)
    status = json.loads(st.stdout)
    assert status["chunks"]["sessions"] == 5 and status["dirty"] is False
    assert status["fallbacks"] == ["no-vector"] and status["fingerprint"]["session_chunking"] \
        == "message"


def test_recall_with_history_puts_the_current_value_first(keyword_home: Home) -> None:
    """A fact set twice: recall gives the current value; with --history the old one
    follows it, marked superseded, even where its words match the query better."""
    for value in ("5433 on the staging db port host", "6432"):
        done = run_cli("remember", "--fact", "staging db port", value, home=keyword_home)
        assert done.returncode == 0, done.stderr
    rec = run_cli("recall", "staging db port host", "--layer", "semantic", "--json",
                  home=keyword_home)
    facts = [h for h in json.loads(rec.stdout)["hits"] if h["cite"].startswith("fact:")]
    assert [(h["text"], h["current"]) for h in facts] == [("staging db port: 6432", True)]
    rec = run_cli("recall", "staging db port host", "--layer", "semantic", "--history",
                  "--json", home=keyword_home)
    facts = [h for h in json.loads(rec.stdout)["hits"] if h["cite"].startswith("fact:")]
    assert [h["current"] for h in facts] == [True, False]
    assert facts[1]["text"] == "staging db port: 5433 on the staging db port host"


def test_search_modules_load_no_model_and_no_cli_framework() -> None:
    code = ("import memtui.search.engine, memtui.search.recall, memtui.workspace.memoryfiles\n"
            "import sys; print(' '.join(sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO)
    loaded = {m.split(".")[0] for m in out.stdout.split()}
    assert not loaded & {"torch", "sentence_transformers", "transformers", "click", "textual",
                         "mcp", "rich"}
