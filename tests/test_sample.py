"""The bundled sample home: what `memtui demo` builds, and that the packaged copy is untouched."""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as hst

from memtui.demo import build_demo_home, sample_root
from memtui.errors import MemtuiError
from memtui.serving.flowmatch import rank_flows
from memtui.stores import flows, rules, state
from memtui.text import norm_key
from tests.conftest import run_cli


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(root)).encode() + path.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    before = _digest(sample_root().parent)
    home, summary = build_demo_home(tmp_path_factory.mktemp("demo") / "home",
                                    today=date(2026, 11, 25))
    assert _digest(sample_root().parent) == before, "the demo changed the packaged sample"
    return home, summary


def test_demo_home_holds_the_whole_sample(demo) -> None:  # type: ignore[no-untyped-def]
    home, summary = demo
    assert summary["state entries"] >= 200 and summary["rules"] >= 80
    assert summary["flows"] >= 10 and summary["supersessions"] >= 6
    db = home.open_db()
    cats = dict(db.rows("SELECT category, count(*) FROM state GROUP BY category"))
    assert set(cats) == {"decision", "task", "rejected", "agent_state", "context",
                         "discovery", "learning"}
    assert cats["rejected"] >= 15
    assert set(home.agents()) == {"coordinator", "content", "ops"}
    bands = {rules.band(r.score) for r in rules.list_rules(db, limit=1000)}
    assert bands == {"critical", "active", "dormant", "retired"}
    keys = [(norm_key(r.rule), r.agent) for r in rules.list_rules(db, limit=1000)]
    assert len(keys) - len(set(keys)) >= 5, "near-duplicate rules for maintenance to merge"
    eff = [f.effectiveness for f in flows.list_flows(db) if f.effectiveness is not None]
    assert min(eff) <= 0.45 and max(eff) >= 0.9
    longest = max(len(state.chain(db, r[0]))
                  for r in db.rows("SELECT id FROM state WHERE superseded_by IS NOT NULL"))
    assert longest >= 3
    # History ends the day before "today": nothing in the future.
    assert db.scalar("SELECT max(created_at) FROM state") < "2026-11-25"
    for agent in home.agents():
        ws = home.workspace(agent)
        assert (ws / "MEMORY.md").stat().st_size > 500
        assert len(list((ws / "memory").glob("2026-11-*.md"))) >= 8
    db.close()


def test_demo_dates_shift_to_today(tmp_path: Path) -> None:
    home, _ = build_demo_home(tmp_path / "h", today=date(2027, 1, 10))
    db = home.open_db()
    assert db.scalar("SELECT max(created_at) FROM state")[:10] == "2027-01-09"
    assert any(p.name.startswith("2027-01-0")
               for p in (home.workspace("ops") / "memory").iterdir())
    db.close()


def test_demo_refuses_a_non_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("mine")
    with pytest.raises(MemtuiError, match="not empty"):
        build_demo_home(tmp_path)


def test_demo_command_prints_boot_context(tmp_path: Path) -> None:
    done = run_cli("demo", "--keep", str(tmp_path / "d"))
    assert done.returncode == 0, done.stderr
    assert "Boot context for coordinator" in done.stdout and "CRITICAL" in done.stdout
    assert "4 transcript sources" in done.stdout
    read = done.stdout.split("the stenographer read ")[1].split()[0]
    assert int(read) > 200, done.stdout


def test_demo_flows_answer_real_actions(demo) -> None:  # type: ignore[no-untyped-def]
    home, _ = demo
    db = home.open_db()
    all_flows = flows.list_flows(db)
    assert rank_flows(all_flows, "deploy v2.16.0 to production")[0].flow.name == (
        "deploy-production")
    assert rank_flows(all_flows, "send this week's newsletter")[0].flow.name == (
        "send-newsletter")
    db.close()


@given(hst.text(max_size=200))
def test_flow_matching_never_raises(action: str) -> None:
    fake = flows.Flow(1, "deploy-production", "deploy", None, ["deploy to production", "*"],
                      False, ["x"], 0, 0, 0, None, "active", "", "")
    for match in rank_flows([fake], action):
        assert 0.5 <= match.score <= 1.2
