"""The stenographer's commands as users run them: extract, policy test, sources discover."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from memtui.home import Home
from tests.conftest import run_cli

REPO = Path(__file__).resolve().parents[2]
SHORT = REPO / "tests" / "data" / "claude-code" / "short.jsonl"


def test_extract_prints_a_summary_then_nothing_new(home: Home) -> None:
    assert run_cli("sources", "add", str(SHORT), home=home).returncode == 0
    dry = run_cli("extract", "--dry-run", home=home)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("Would extract 5 of 5 new turns from 1 file(s)")
    first = run_cli("extract", home=home)
    assert first.returncode == 0, first.stderr
    assert "Extracted 5 of 5 new turns" in first.stdout
    assert "2 rejected" in first.stdout and "1 task" in first.stdout
    assert "progress lines" in first.stdout  # what was skipped, and why
    assert "text refused by policy (self_narration)" in first.stdout
    assert "daily log" in first.stdout
    again = run_cli("extract", "--json", home=home)
    data = json.loads(again.stdout)
    assert data["turns_read"] == 0 and data["files"] == {"unchanged": 1}


def test_extract_llm_without_a_key_is_an_error(home: Home) -> None:
    result = run_cli("extract", "--extractor", "llm", home=home,
                     env={"ANTHROPIC_API_KEY": ""})
    assert result.returncode == 1 and "ANTHROPIC_API_KEY" in result.stderr


def test_extract_unknown_source_names_the_fix(home: Home) -> None:
    result = run_cli("extract", "--source", "/nope/x.jsonl", home=home)
    assert result.returncode == 2 and "memtui sources add" in result.stderr


def test_policy_test_shows_each_turn(home: Home) -> None:
    result = run_cli("policy", "test", str(SHORT), home=home)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "REFUSED    forbidden.self_narration" in out
    assert "→ state/rejected [infra]: Refused tool use: Bash: mix phx.server" in out
    assert "→ episode/tool_call: Glob: mix.exs" in out
    assert out.rstrip().endswith("5 turns: 4 capture something, 1 refused")
    as_json = json.loads(run_cli("policy", "test", "--json", str(SHORT), home=home).stdout)
    assert [t["role"] for t in as_json] == ["user", "assistant", "tool", "tool", "user"]


def test_sources_discover_finds_the_default_layouts(home: Home, tmp_path: Path) -> None:
    oc = tmp_path / "oc" / "agents" / "ops" / "sessions"
    cc = tmp_path / "cc" / "projects" / "-home-dana-src"
    oc.mkdir(parents=True)
    cc.mkdir(parents=True)
    shutil.copy(SHORT, cc / "s.jsonl")
    (oc / "a.jsonl").write_text('{"type":"session","version":3,"id":"x","timestamp":"t"}\n')
    args = ("sources", "discover", "--openclaw", str(tmp_path / "oc"), "--claude",
            str(tmp_path / "cc"))
    listed = run_cli(*args, home=home)
    assert listed.returncode == 0, listed.stderr
    assert "found: " in listed.stdout and "run again with --yes" in listed.stdout
    added = run_cli(*args, "--yes", home=home)
    assert "added source 1" in added.stdout and "added source 2" in added.stdout
    sources = json.loads(run_cli("sources", "list", "--json", home=home).stdout)
    assert {(s["source"]["agent"], s["source"]["format"]) for s in sources} == {
        ("ops", "openclaw"), ("main", "claude-code")}
    assert "already a source" in run_cli(*args, home=home).stdout


# -- memtui forget -----------------------------------------------------------------------


def _generic(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    path.write_text("".join(json.dumps(
        {"type": "message", "id": i, "session": "s1", "ts": f"2026-03-01T10:00:0{n}Z",
         "role": role, "content": content}) + "\n" for n, (i, role, content) in enumerate(rows)))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return path


def test_forget_buries_what_it_deletes_even_when_reworded(home: Home, tmp_path: Path) -> None:
    first = _generic(tmp_path / "a.jsonl", [
        ("u1", "user", "We decided to pin the events database to Postgres 15."),
        ("u2", "user", "My timezone is Europe/Berlin."),
    ])
    assert run_cli("sources", "add", str(first), home=home).returncode == 0
    assert run_cli("extract", home=home).returncode == 0
    db = home.open_db()
    try:
        [decision] = db.query("SELECT id FROM state WHERE category = 'decision'")
        fact_id = db.scalar("SELECT id FROM facts WHERE key = 'timezone'")
        episode_id = db.scalar("SELECT id FROM episodes WHERE kind = 'decision'")
    finally:
        db.close()
    done = run_cli("forget", "state", str(decision["id"]), "--reason", "wrong", "--json",
                   home=home)
    assert done.returncode == 0, done.stderr
    stone = json.loads(done.stdout)["tombstone"]
    assert stone["layer"] == "state" and stone["reason"] == "wrong" and stone["actor"] == "cli"
    out = run_cli("forget", "fact", str(fact_id), home=home)
    assert out.returncode == 0 and out.stdout.startswith(f"forgot fact {fact_id}: ")
    assert run_cli("forget", "episode", str(episode_id), home=home).returncode == 0
    missing = run_cli("forget", "state", "999", home=home)
    assert missing.returncode == 2 and "no state entry 999" in missing.stderr

    # The same source read again, and a reworded one: nothing comes back.
    db = home.open_db()
    try:
        with db.write():
            db.execute("DELETE FROM extracted_turns")
            db.execute("DELETE FROM source_files")
    finally:
        db.close()
    reworded = _generic(tmp_path / "b.jsonl", [
        ("v1", "user", "We decided to pin the events DB to Postgres 15!"),
        ("v2", "user", "my timezone is Europe/Berlin"),
    ])
    assert run_cli("sources", "add", str(reworded), home=home).returncode == 0
    again = run_cli("extract", "--json", home=home)
    assert again.returncode == 0, again.stderr
    data = json.loads(again.stdout)
    assert data["turns_extracted"] == 4 and data["tombstoned"] >= 4
    db = home.open_db()
    try:
        assert db.scalar("SELECT count(*) FROM state WHERE status = 'active'") == 0
        assert db.scalar("SELECT count(*) FROM facts WHERE superseded_at IS NULL") == 0
        assert db.scalar("SELECT count(*) FROM episodes WHERE kind = 'decision'") == 0
    finally:
        db.close()
    # A changed decision is not the buried one.
    changed = _generic(tmp_path / "c.jsonl", [
        ("w1", "user", "We decided to pin the events database to Postgres 16."),
    ])
    assert run_cli("sources", "add", str(changed), home=home).returncode == 0
    data = json.loads(run_cli("extract", "--json", home=home).stdout)
    assert data["state_added"] == {"decision": 1}


# -- failures, unknown types, a missing policy ------------------------------------------


def test_extract_exits_1_when_every_file_fails(home: Home, tmp_path: Path) -> None:
    bad = [tmp_path / "bad1.jsonl", tmp_path / "bad2.jsonl"]
    bad[0].write_text("hello world\nnot json\n")
    bad[1].write_text('{"foo": 1}\n')
    for path in bad:
        assert run_cli("sources", "add", str(path), home=home).returncode == 0
    result = run_cli("extract", home=home)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 2
    for path, line in zip(bad, errors, strict=True):
        assert line.startswith(f"error: {path}: not a transcript") and line.count(str(path)) == 1
    # One good file among them: the run did its work, exit 0 (the failures are reported).
    good = _generic(tmp_path / "good.jsonl", [("u1", "user", "Please add a health check.")])
    assert run_cli("sources", "add", str(good), home=home).returncode == 0
    mixed = run_cli("extract", home=home)
    assert mixed.returncode == 0 and mixed.stderr.count("error: ") == 2


def test_unknown_generic_line_types_are_reported_as_unknown(home: Home, tmp_path: Path) -> None:
    path = _generic(tmp_path / "g.jsonl", [("u1", "user", "Please add a health check.")])
    with path.open("a") as fh:
        fh.write(json.dumps({"type": "meta", "conversation": "c1"}) + "\n")
        fh.write(json.dumps({"type": "meta", "conversation": "c2"}) + "\n")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    assert run_cli("sources", "add", str(path), "--format", "generic", home=home).returncode == 0
    data = json.loads(run_cli("extract", "--dry-run", "--json", home=home).stdout)
    assert data["unknown_types"] == {"meta": 2} and not data["skipped"]
    text = run_cli("extract", home=home).stdout
    assert "unknown    2 'meta' lines" in text


def test_policy_commands_name_a_missing_policy_and_the_fix(home: Home) -> None:
    home.policy_path.unlink()
    for args in (("policy", "check"), ("policy", "test", str(SHORT))):
        result = run_cli(*args, home=home)
        assert result.returncode == 1
        assert "Traceback" not in result.stderr
        assert f"{home.policy_path} does not exist" in result.stderr
        assert "memtui init" in result.stderr


def test_format_choices_come_from_the_sources_store() -> None:
    import click

    from memtui.cli.extract import backtest
    from memtui.cli.policy import test as policy_test
    from memtui.cli.sources import add
    from memtui.stores.sources import FORMATS

    for command in (backtest, policy_test, add):
        [param] = [p for p in command.params if p.name == "fmt"]
        assert isinstance(param.type, click.Choice) and param.type.choices is FORMATS
