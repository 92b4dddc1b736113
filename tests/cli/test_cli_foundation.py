"""The command line as users and agent hooks run it: outputs, --json, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from memtui.home import Home
from tests.conftest import run_cli


def test_init_creates_the_home_and_rerunning_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "h"
    first = run_cli("init", "--agent", "ops", "--agent", "content", home=root)
    assert first.returncode == 0, first.stderr
    for rel in ["memtui.toml", "policy.yaml", "memory.db", "agents/ops/MEMORY.md",
                "agents/ops/SESSION-STATE.md", "agents/ops/HEARTBEAT.md", "agents/content/memory"]:
        assert (root / rel).exists(), rel
    before = {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()
              and "memory.db" not in p.name}
    again = run_cli("init", home=root)
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert {p: p.stat().st_mtime_ns for p in before} == before


def test_invalid_config_stops_every_command_with_file_and_key(home: Home) -> None:
    home.config_path.write_text("[gates]\ntoken_budget = 'lots'\n")
    done = run_cli("boot", "main", home=home)
    assert done.returncode == 1
    assert "memtui.toml" in done.stderr and "gates.token_budget" in done.stderr
    assert "an integer" in done.stderr


def test_exit_codes(home: Home, tmp_path: Path) -> None:
    assert run_cli("rules", "show", "999", home=home).returncode == 2
    assert run_cli("flows", "record", "nope", "pass", home=home).returncode == 2
    assert run_cli("state", "add", "opinion", "x", home=home).returncode == 1
    assert run_cli("rules", "frobnicate", home=home).returncode == 1
    missing = run_cli("boot", home=tmp_path / "nowhere")
    assert missing.returncode == 2 and "memtui init" in missing.stderr


def test_state_rules_flows_round_trip_with_json(home: Home) -> None:
    added = run_cli("state", "add", "decision", "Stay on nginx", "--domain", "infra", "--json",
                    home=home)
    entry = json.loads(added.stdout)
    sup = json.loads(run_cli("state", "supersede", str(entry["id"]), "Move to Caddy", "--json",
                             home=home).stdout)
    shown = json.loads(run_cli("state", "show", str(sup["id"]), "--json", home=home).stdout)
    assert [e["summary"] for e in shown["chain"]] == ["Stay on nginx", "Move to Caddy"]
    assert shown["entry"]["domain"] == "infra"
    listed = json.loads(run_cli("state", "list", "--json", home=home).stdout)
    assert [e["summary"] for e in listed] == ["Move to Caddy"]

    rule = json.loads(run_cli("rules", "add", "Never deploy on Fridays", "--score", "9.5",
                              "--json", home=home).stdout)
    refused = run_cli("rules", "retire", str(rule["id"]), home=home)
    assert refused.returncode == 1 and "only a human" in refused.stderr
    assert run_cli("rules", "retire", str(rule["id"]), "--human", home=home).returncode == 0
    assert json.loads(run_cli("rules", "list", "--json", home=home).stdout)[0]["status"] == (
        "retired")

    assert run_cli("flows", "add", "deploy-production", "--step", "Check CI", "--step",
                   "Deploy the tag", "--trigger", "deploy to production", home=home
                   ).returncode == 0
    for _ in range(2):
        assert run_cli("flows", "record", "deploy-production", "fail", home=home).returncode == 0
    db = home.open_db()
    from memtui.stores import flows

    for _ in range(32):
        flows.record(db, "deploy-production", "pass", actor="test")
    db.close()
    check = run_cli("flows", "check", "deploy to production", home=home)
    assert check.returncode == 0
    assert "1. Check CI" in check.stdout and "2. Deploy the tag" in check.stdout
    assert "Effectiveness: 94% (32/34 successful)" in check.stdout
    assert run_cli("flows", "check", "bake a cake", home=home).returncode == 3  # negative


def test_gate_pre_post_and_boot(home: Home) -> None:
    run_cli("flows", "add", "deploy-production", "--step", "Deploy", "--trigger",
            "deploy to production", home=home)
    run_cli("rules", "add", "Tag releases before deploying", "--score", "8.5", home=home)
    for n in range(3):
        run_cli("state", "add", "decision", f"Deploy window number {n} is after 18:00",
                home=home)
    pre = json.loads(run_cli("gate", "pre", "main", "deploy to production", "--json",
                             home=home).stdout)
    assert pre["flow"] == "deploy-production" and pre["tokens"] <= 3000
    text = run_cli("gate", "pre", "main", "deploy to production", "--budget", "60", home=home)
    assert "cut to fit" in text.stdout
    post = run_cli("gate", "post", "main", "pass", "shipped", "--lesson", "Tag first",
                   home=home)
    assert post.returncode == 0 and "not permanent" in post.stdout
    boot = json.loads(run_cli("boot", "main", "--json", home=home).stdout)
    assert [s["name"] for s in boot["sections"]] == ["rules", "capabilities", "lessons",
                                                     "flows", "rejections"]
    assert all(isinstance(s["tokens"], int) for s in boot["sections"])


def test_maintain_dry_run_then_real(home: Home) -> None:
    run_cli("state", "add", "rejected", "Rejected: adding Redis", home=home)
    dry = run_cli("maintain", "--dry-run", home=home)
    assert dry.returncode == 0 and "would" in dry.stdout and "1 rejection(s)" in dry.stdout
    assert json.loads(run_cli("rules", "list", "--json", home=home).stdout) == []
    real = json.loads(run_cli("maintain", "--json", home=home).stdout)
    assert real["counts"]["promoted_rejections"] == 1
    again = run_cli("maintain", home=home)
    assert "already ran today" in again.stdout


def test_doctor_reports_and_fails_when_broken(home: Home) -> None:
    ok = run_cli("doctor", home=home)
    assert ok.returncode == 0, ok.stdout
    for word in ["SQLite", "fts5", "sqlite-vec", "schema", "integrity", "wal"]:
        assert word in ok.stdout
    home.policy_path.unlink()
    broken = run_cli("doctor", home=home)
    assert broken.returncode == 3 and "fix: memtui init" in broken.stdout


def test_init_on_an_invalid_or_partial_home_creates_nothing(home: Home) -> None:
    home.policy_path.unlink()
    home.config_path.write_text("[gates]\ntoken_budget = -3\n")
    done = run_cli("init", home=home)
    assert done.returncode == 1 and "gates.token_budget" in done.stderr
    assert not home.policy_path.exists()
    home.config_path.write_text("")
    unknown = run_cli("init", "--agent", "newbie", home=home)
    assert unknown.returncode == 1 and "[agents] ids" in unknown.stderr
    assert not (home.root / "agents" / "newbie").exists()


def test_bad_input_gets_exit_codes_not_tracebacks(home: Home) -> None:
    for args, code, words in [
        (("state", "list", "--since", "notadate"), 1, "not an ISO date"),
        (("gate", "pre", "nosuchagent", "deploy"), 2, "unknown agent"),
        (("boot", "nosuch"), 2, "unknown agent"),
        (("health", "nosuch"), 2, "no health check"),
        (("flows", "check", "zzz", "--json"), 3, ""),  # ran; the answer is no
        (("state", "add", "task", "x"), 0, ""),
        (("state", "update", "1", "--summary", ""), 1, "non-empty summary"),
        (("rules", "add", "Tag releases"), 0, ""),
        (("rules", "violate", "1", "999"), 2, "no rule 999"),
    ]:
        done = run_cli(*args, home=home)
        assert done.returncode == code, (args, done.stderr)
        assert words in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr
    rule = json.loads(run_cli("rules", "show", "1", "--json", home=home).stdout)["rule"]
    assert rule["violations"] == 0, "a failed multi-id command changes none of them"


def test_a_damaged_database_is_reported_not_a_traceback(home: Home) -> None:
    home.db_path.write_bytes(b"this is not a database" * 200)
    for name in ("memory.db-wal", "memory.db-shm"):
        (home.root / name).unlink(missing_ok=True)
    done = run_cli("boot", "main", home=home)
    assert done.returncode == 1 and "memtui doctor" in done.stderr
    assert "Traceback" not in done.stderr
    doctor = run_cli("doctor", home=home)
    assert doctor.returncode == 3 and "restore memory.db" in doctor.stdout
    assert "Traceback" not in doctor.stderr
