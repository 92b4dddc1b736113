"""Tiered recovery: tiers, the budget, the anti-loop refusal, and private memory kept out
of group and shared contexts (over many randomised requests)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.context.recovery import TIER0_TOKENS, recover
from memtui.context.report import context_report
from memtui.home import Home
from memtui.stores import facts as fact_store
from memtui.stores import state as state_store
from tests.conftest import run_cli
from tests.context.conftest import OPS_PLAIN, configure, register
from tests.context.synth import Writer


def seed(home: Home, agent: str = "ops") -> None:
    db = home.open_db()
    try:
        state_store.add(db, state_store.NewState(agent, "rejected", "Rejected: Redis cache"),
                        actor="test")
        state_store.add(db, state_store.NewState(agent, "task", "Ship v2.16.0 on Wednesday"),
                        actor="test")
        for n in range(100):
            state_store.add(db, state_store.NewState(
                agent, "discovery",
                f"Discovery {n}: the ingest queue lag grows at the top of the hour"),
                actor="test")
    finally:
        db.close()


def test_tiers_grow_and_tier0_stays_near_1000_tokens(home: Home) -> None:
    seed(home)
    register(home, "ops", OPS_PLAIN)
    day = home.workspace("ops") / "memory" / "2026-01-01.md"
    day.write_text("# 2026-01-01\n\n## 10:00\n- renewed the certificate\n")
    tiers = [recover(home, "ops", t, budget=50_000) for t in range(4)]
    assert tiers[0].tokens <= TIER0_TOKENS
    titles = [[t for t, _ in r.sections] for r in tiers]
    assert titles[0][:2] == ["Rejected: do NOT re-suggest", "Active state"]
    assert "Recent messages" in titles[1] and "Recent messages" not in titles[0]
    assert "Today's recap" in titles[2] and any("2026-01-01" in c for c in tiers[2].cut)
    assert "Full log" in titles[3]
    assert [r.tokens for r in tiers] == sorted(r.tokens for r in tiers)
    recent = dict(tiers[1].sections)["Recent messages"]
    assert len(recent) <= 30
    # The rejection and the task outrank 100 discoveries.
    text = tiers[0].as_markdown()
    assert "Redis cache" in text and "Ship v2.16.0" in text
    assert any("left out" in c for c in tiers[0].cut)


def test_a_short_budget_cuts_the_least_important_first_and_says_so(home: Home) -> None:
    seed(home)
    register(home, "ops", OPS_PLAIN)
    full = recover(home, "ops", 1, budget=50_000)
    short = recover(home, "ops", 1, budget=700)
    assert short.tokens <= 700 < full.tokens
    assert any("Recent messages" in c and "700" in c for c in short.cut)
    assert "Redis cache" in short.as_markdown()


def test_a_tier_that_would_pass_the_flush_threshold_is_refused(home: Home,
                                                             tmp_path: Path) -> None:
    seed(home)
    [copy] = register(home, "ops", OPS_PLAIN)
    used = context_report(home, "ops", copy).used
    configure(home, f"[context]\nwindow_tokens = {used + 25_500}\nmodel_windows = {{}}")
    ok = recover(home, "ops", 0)
    assert not ok.refused
    refused = recover(home, "ops", 3, budget=50_000)
    assert refused.refused and "flush threshold" in refused.reason
    assert refused.sections == [] and refused.window_used == used


PRIVATE_MARK = "PRIVATE-7f3a"


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(st.tuples(st.sampled_from(["private", "Personal", "deploy", "infra"]),
                                  st.sampled_from(["task", "decision", "rejected",
                                                   "context", "agent_state"])),
                        min_size=1, max_size=12),
       fact_keys=st.lists(st.sampled_from(["private.phone", "personal/address", "db.host",
                                           "PRIVATE:note", "team"]), max_size=5),
       tier=st.integers(0, 3), budget=st.integers(200, 20_000))
def test_group_contexts_never_hold_private_memory(home: Home, entries: list[tuple[str, str]],
                                                  fact_keys: list[str], tier: int,
                                                  budget: int) -> None:
    agent = "main"
    db = home.open_db()
    try:
        with db.write():
            db.execute("DELETE FROM state")
            db.execute("DELETE FROM facts")
        for n, (domain, category) in enumerate(entries):
            private = domain.lower() in ("private", "personal")
            summary = f"{PRIVATE_MARK} {n}" if private else f"public entry {n}"
            state_store.add(db, state_store.NewState(agent, category, summary, domain=domain),
                            actor="test")
        for key in fact_keys:
            private = key.lower().split(".")[0].split("/")[0].split(":")[0] in (
                "private", "personal")
            fact_store.put(db, agent, key, f"{PRIVATE_MARK} fact" if private else "public",
                           actor="test")
    finally:
        db.close()
    (home.workspace(agent) / "MEMORY.md").write_text(f"# Memory\n{PRIVATE_MARK} long-term\n")
    group = recover(home, agent, tier, budget=budget, group=True)
    assert PRIVATE_MARK not in group.as_markdown()
    solo = recover(home, agent, 0, budget=20_000, group=False)
    if any(d.lower() in ("private", "personal") for d, _ in entries):
        assert PRIVATE_MARK in solo.as_markdown()


def test_a_group_session_is_detected_and_its_report_excludes_memory_md(home: Home,
                                                                     tmp_path: Path) -> None:
    w = Writer()
    path = tmp_path / "grp.jsonl"
    import json

    path.write_text("".join(json.dumps(e) + "\n" for e in [*w.header(), *w.exchange()]))
    [copy] = register(home, "main", path)
    (copy.parent / "sessions.json").write_text(json.dumps(
        {"agent:main:discord:channel:42": {"sessionId": copy.stem}}))
    db = home.open_db()
    try:
        state_store.add(db, state_store.NewState("main", "task", f"{PRIVATE_MARK} x",
                                                 domain="private"), actor="test")
    finally:
        db.close()
    result = recover(home, "main", 1)
    assert result.group and PRIVATE_MARK not in result.as_markdown()
    report = context_report(home, "main")
    assert {f.name: f.status for f in report.files}["MEMORY.md"] == "EXCLUDED"


def test_cli_recover(home: Home) -> None:
    seed(home)
    register(home, "ops", OPS_PLAIN)
    out = run_cli("recover", "ops", "--tier", "1", home=home)
    assert out.returncode == 0, out.stderr
    assert "Rejected: Redis cache" in out.stdout and "tokens" in out.stdout
    same = run_cli("recover", "--agent", "ops", "--tier", "1", home=home)
    assert same.stdout == out.stdout
    bad = run_cli("recover", "ops", "--tier", "5", home=home)
    assert bad.returncode == 1
    configure(home, "[context]\nwindow_tokens = 30000\nmodel_windows = {}")
    refused = run_cli("recover", "ops", "--tier", "3", home=home)
    assert refused.returncode == 3 and "flush threshold" in refused.stdout
