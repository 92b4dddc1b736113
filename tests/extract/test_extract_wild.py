"""Extraction from transcripts as they are in the wild (issue 12): who may reject or decide,
heartbeats re-sent for hours, replays, failed model calls, sub-agents."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memtui.db import Database
from memtui.extract import stenographer as steno
from memtui.extract.candidates import PreparedTurn
from memtui.extract.local import LocalExtractor
from memtui.home import Home
from memtui.stores import sources
from memtui.transcripts import Turn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "transcripts"))
from openclaw_cases import (  # noqa: E402
    HEARTBEAT,
    assistant,
    encode,
    entry,
    header,
    parent_session,
    subagent_session,
    user,
    wild_session,
)

VIEWER = Path(__file__).resolve().parents[1] / "data" / "claude-code-viewer"


def turn(role: Any, text: str, author: Any = None, error: str | None = None) -> Turn:
    return Turn(id="t1", session="s", timestamp=datetime(2026, 3, 1, tzinfo=UTC), role=role,
                text=text, source="f", line=1, offset=0, end_offset=1, format="openclaw",
                author=author, error=error)


def extract(t: Turn) -> tuple[list[str], list[str]]:
    out = LocalExtractor().extract([PreparedTurn(turn=t, text=t.text)])
    return [s.category for s in out.state], [e.kind for e in out.episodes]


def test_only_the_person_rejects_or_decides() -> None:
    said = "No, don't add Redis. We decided to stay on nginx."
    assert extract(turn("user", said)) == (["rejected", "decision"], ["rejection", "decision"])
    # The same words as a Task prompt the agent wrote, or a sub-agent's answer: nothing.
    assert extract(turn("user", said, author="agent")) == ([], [])
    reported = "We decided against a rollback because the data is intact."
    assert extract(turn("assistant", reported))[0] == ["rejected"]
    assert extract(turn("assistant", reported, author="subagent")) == ([], [])


def test_a_failed_model_call_is_an_incident() -> None:
    error = "429 rate_limit_error: key sk-ant-api03-" + "a" * 90 + " over its limit"
    out = LocalExtractor().extract([PreparedTurn(turn=turn("assistant", "", error=error),
                                                 text="")])
    (incident,) = out.episodes
    assert incident.kind == "incident" and incident.summary.startswith("Model call failed: 429")
    assert "sk-ant" not in incident.summary + incident.detail


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    """Write a transcript that looks idle (complete) to the stenographer."""
    path.write_bytes(encode(lines))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return path


def test_heartbeats_re_sent_for_hours_give_no_rejection(home: Home, db: Database,
                                                          tmp_path: Path) -> None:
    lines = [header()]
    for i in range(40):  # a heartbeat every 30 minutes, for 20 hours
        lines += [entry(f"h{i}", None, user(HEARTBEAT), 2 * i),
                  entry(f"k{i}", f"h{i}", assistant("HEARTBEAT_OK"), 2 * i + 1)]
    path = _write(tmp_path / "s.jsonl", lines)
    sources.add(db, str(path), agent="main", fmt="auto", actor="test")
    report = steno.run(home, db, steno.Options())
    assert not report.failed
    assert db.scalar("SELECT count(*) FROM state WHERE category = 'rejected'") == 0
    assert db.scalar("SELECT count(*) FROM episodes WHERE kind = 'rejection'") == 0


def test_the_wild_session_extracts_each_thing_once(home: Home, db: Database,
                                                   tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", wild_session())
    sources.add(db, str(path), agent="main", fmt="auto", actor="test")
    report = steno.run(home, db, steno.Options())
    assert not report.failed and report.problems == []
    rejected = [r["summary"] for r in db.query("SELECT summary FROM state "
                                               "WHERE category = 'rejected'")]
    # Said once, replayed once: stored once, without its channel wrapper.
    assert rejected == ["Don't restart postgres today."]
    assert db.scalar("SELECT count(*) FROM episodes WHERE kind = 'rejection'") == 1
    incidents = [r["summary"] for r in db.query("SELECT summary FROM episodes "
                                                "WHERE kind = 'incident' ORDER BY id")]
    assert any(s.startswith("Model call failed: 429") for s in incidents)
    assert sum("failed" in s for s in incidents) == 3  # two tool failures, one model call
    texts = " ".join(r["summary"] for r in db.query("SELECT summary FROM state"))
    assert "untrusted metadata" not in texts and "HEARTBEAT" not in texts


def test_sub_agent_prompts_of_the_viewer_file_are_not_the_persons(home: Home, db: Database
                                                                  ) -> None:
    path = VIEWER / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
    sources.add(db, str(path), agent="main", fmt="auto", actor="test")
    steno.run(home, db, steno.Options())
    person = {json.loads(x)["uuid"] for x in path.read_text(encoding="utf-8").splitlines()
              if json.loads(x).get("isSidechain") is False and json.loads(x)["type"] == "user"}
    cited = {r["source_entry"] for r in db.query(
        "SELECT source_entry FROM state WHERE category IN ('rejected', 'decision', 'task')")}
    assert cited <= person


def test_a_standing_instruction_re_sent_is_one_rejection(home: Home, db: Database,
                                                         tmp_path: Path) -> None:
    lines = [header()]
    for i in range(6):  # the person pastes the same rule into every new task
        lines += [entry(f"u{i}", None, user("Never deploy on Fridays."), 2 * i),
                  entry(f"a{i}", f"u{i}", assistant("Noted."), 2 * i + 1)]
    path = _write(tmp_path / "s.jsonl", lines)
    sources.add(db, str(path), agent="main", fmt="auto", actor="test")
    assert not steno.run(home, db, steno.Options()).failed
    assert db.scalar("SELECT count(*) FROM state WHERE category = 'rejected'") == 1
    assert db.scalar("SELECT count(*) FROM episodes WHERE kind = 'rejection'") == 1


def test_the_policy_keeps_any_extractors_rejections_to_the_person() -> None:
    from memtui.extract.candidates import EpisodeCandidate, Extraction, StateCandidate
    from memtui.extract.enforce import enforce
    from memtui.extract.policy import default_policy

    person, orchestrator = turn("user", "No Redis."), turn("user", "No Redis.", author="agent")
    orchestrator = dataclasses.replace(orchestrator, id="t2")
    refusal = dataclasses.replace(turn("tool", ""), id="t3")
    prepared = [PreparedTurn(turn=t, text=t.text) for t in (person, orchestrator, refusal)]
    proposed = Extraction(
        state=[StateCandidate("rejected", "No Redis", "t1"),
               StateCandidate("rejected", "No Redis", "t2"),
               StateCandidate("decision", "Use Postgres", "t2"),
               StateCandidate("rejected", "Refused tool use: Bash: rm -rf", "t3")],
        episodes=[EpisodeCandidate("rejection", "No Redis", "t2"),
                  EpisodeCandidate("rejection", "Refused tool use: Bash", "t3", ref="c1")])
    kept = enforce(default_policy(), proposed, prepared)
    assert [(s.source_entry, s.category) for s in kept.state] == [
        ("t1", "rejected"), ("t3", "rejected")]
    assert [e.source_entry for e in kept.episodes] == ["t3"]


def test_openclaw_sub_agents_and_cron_jobs_reject_nothing(home: Home, db: Database,
                                                          tmp_path: Path) -> None:
    # "Don't touch prod" is the parent's task, "We decided against touching prod" the
    # sub-agent's, "Never email anyone" a cron job's stored prompt: none is the person's.
    _write(tmp_path / "sub-1.jsonl", subagent_session())
    _write(tmp_path / "main-1.jsonl", parent_session())
    sources.add(db, str(tmp_path / "*.jsonl"), agent="main", fmt="auto", actor="test")
    # "ok, retry it" after the system line is the person's own and may be read as a
    # decision; nothing may come of the machine's words.
    assert not steno.run(home, db, steno.Options()).failed
    read = db.rows("SELECT source_entry, summary FROM state "
                   "WHERE category IN ('rejected', 'decision')")
    assert all(entry == "p3" and "exec failed" not in summary.lower()
               for entry, summary in read), read
    assert db.scalar("SELECT count(*) FROM episodes WHERE kind = 'tool_call'") == 1
