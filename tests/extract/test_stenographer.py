"""The stenographer: watermarks, exactly-once extraction, failures, resets, dry runs, daily logs."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memtui.db import Database
from memtui.extract import stenographer as steno
from memtui.extract.candidates import Extraction, ExtractorError, PreparedTurn
from memtui.extract.local import LocalExtractor
from memtui.home import Home
from memtui.stores import episodes, facts, jobs, sources, tombstones
from memtui.timeutil import parse
from memtui.workspace import dailylog

REPO = Path(__file__).resolve().parents[2]
CLAUDE_SAMPLES = REPO / "tests" / "data" / "claude-code"
SAMPLE_DATA = REPO / "sample-data" / "transcripts"


def line(i: int, role: str, content: str, **extra: Any) -> str:
    row = {"type": "message", "id": f"m{i}", "session": "s1",
           "ts": f"2026-03-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z", "role": role,
           "content": content, **extra}
    return json.dumps(row) + "\n"


CONVERSATION = [
    line(1, "user", "Please add a health check endpoint to the API."),
    line(2, "assistant", "Adding it. Shall I pull in requests for the HTTP client?", tool_calls=[
        {"id": "c1", "name": "bash", "input": {"command": "pytest -q tests/api"}}]),
    line(3, "tool", "1 failed", tool_call_id="c1", name="bash", is_error=True),
    line(4, "user", "No, don't use requests in the service, we use httpx for HTTP clients."),
    line(5, "assistant", "Understood, switching to httpx."),
    line(6, "user", "My timezone is Europe/Berlin."),
]


def write(path: Path, lines: Sequence[str], mode: str = "w") -> Path:
    with path.open(mode, encoding="utf-8") as fh:
        fh.writelines(lines)
    return path


def old(path: Path) -> Path:
    """Make a file look idle (complete) to the stenographer."""
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return path


@pytest.fixture
def transcript(tmp_path: Path, home: Home, db: Database) -> Path:
    path = old(write(tmp_path / "session.jsonl", CONVERSATION))
    sources.add(db, str(path), agent="main", fmt="generic", actor="test")
    return path


def run(home: Home, db: Database, **kw: Any) -> steno.RunReport:
    extractor = kw.pop("extractor", None)
    return steno.run(home, db, steno.Options(**kw), extractor=extractor)


def count(db: Database, table: str, where: str = "1") -> int:
    return int(db.scalar(f"SELECT count(*) FROM {table} WHERE {where}"))


def snapshot(db: Database) -> tuple[int, ...]:
    return tuple(count(db, t) for t in ("state", "episodes", "facts", "extracted_turns"))


# -- the samples -----------------------------------------------------------------------


def test_claude_code_samples_read_cleanly_and_the_refused_tool_use_is_a_rejection(
    home: Home, db: Database
) -> None:
    sources.add(db, str(CLAUDE_SAMPLES / "*.jsonl"), agent="main", actor="test")
    report = run(home, db)
    assert report.problems == [] and not report.failed
    assert not [k for k in report.skipped if k.startswith("unknown line type")]
    assert report.turns_read == report.turns_extracted > 0
    rejected = db.query("SELECT * FROM state WHERE category = 'rejected' ORDER BY id")
    refused = [r for r in rejected if r["summary"].startswith("Refused tool use: Bash")]
    assert len(refused) == 1
    assert "mix phx.server" in refused[0]["summary"]
    # It cites the tool-result message that carried the refusal, in short.jsonl.
    assert refused[0]["source_entry"] == "ff80d82a-4ac1-4945-83dd-1226f98b8cf6"
    assert refused[0]["source_file"].endswith("short.jsonl")
    eps = episodes.for_entry(db, refused[0]["source_entry"])
    assert {e.kind for e in eps} == {"rejection"}
    bash_call = db.one("SELECT * FROM episodes WHERE kind = 'tool_call' AND tool = 'Bash' "
                       "AND summary LIKE '%mix phx.server%'")
    assert bash_call is not None and bash_call["outcome"] == "refused"


def test_sample_data_transcripts_read_with_zero_errors(home: Home, db: Database) -> None:
    if not SAMPLE_DATA.exists():
        pytest.skip("sample-data/transcripts not present")
    sources.add(db, str(SAMPLE_DATA / "**" / "*.jsonl"), agent="main", actor="test")
    report = run(home, db)
    assert report.problems == [] and not report.failed
    assert report.turns_read == report.turns_extracted > 100
    assert not [k for k in report.skipped if k.startswith("unknown line type")]
    summaries = [r["summary"] for r in db.query(
        "SELECT summary FROM state WHERE category = 'rejected'")]
    assert any("Redis" in s for s in summaries)
    assert any("restart postgres" in s.lower() for s in summaries)
    assert any(s.startswith("Refused tool use: Bash: git") for s in summaries)
    assert run(home, db).turns_read == 0


def test_a_tool_result_read_later_sets_the_outcome_of_the_call_read_earlier(
    tmp_path: Path, home: Home, db: Database
) -> None:
    path = old(write(tmp_path / "session.jsonl", CONVERSATION[:2]))
    sources.add(db, str(path), agent="main", fmt="generic", actor="test")
    first = run(home, db)
    call = db.one("SELECT * FROM episodes WHERE kind = 'tool_call'")
    assert call is not None and call["outcome"] is None and first.outcome.outcomes == 0
    old(write(path, CONVERSATION[2:3], mode="a"))
    second = run(home, db)
    assert second.turns_extracted == 1 and second.outcome.outcomes == 1
    call = db.one("SELECT * FROM episodes WHERE kind = 'tool_call'")
    assert call is not None and call["outcome"] == "error"
    assert count(db, "audit", "action = 'episode.outcome'") == 1


def test_a_call_id_used_again_in_a_later_run_updates_every_call_of_it(
    tmp_path: Path, home: Home, db: Database
) -> None:
    # generic transcripts may number their calls per turn: "c1" again in the next one
    path = old(write(tmp_path / "session.jsonl", CONVERSATION[:2]))
    sources.add(db, str(path), agent="main", fmt="generic", actor="test")
    run(home, db)
    old(write(path, [
        line(3, "tool", "ok", tool_call_id="c1", name="bash"),
        line(4, "assistant", "Running it again.", tool_calls=[
            {"id": "c1", "name": "bash", "input": {"command": "pytest -q"}}]),
        line(5, "tool", "2 failed", tool_call_id="c1", name="bash", is_error=True),
    ], mode="a"))
    second = run(home, db)
    rows = db.query("SELECT outcome FROM episodes WHERE kind = 'tool_call' ORDER BY id")
    assert [r["outcome"] for r in rows] == ["error", "error"]  # the last result of c1 wins
    assert second.outcome.outcomes == 4  # as the updates count: each row, each change


def test_a_tool_result_in_the_same_batch_is_written_with_its_call(
    home: Home, db: Database, transcript: Path
) -> None:
    report = run(home, db)
    assert report.outcome.outcomes == 1
    [add] = [json.loads(r["after"]) for r in db.query(
        "SELECT after FROM audit WHERE action = 'episode.add'")
        if json.loads(r["after"])["kind"] == "tool_call"]
    assert add["outcome"] == "error"
    assert count(db, "audit", "action = 'episode.outcome'") == 0


# -- watermarks and exactly once -------------------------------------------------------


def test_extracts_and_cites_messages_then_a_rerun_changes_nothing(
    home: Home, db: Database, transcript: Path
) -> None:
    report = run(home, db)
    assert report.turns_extracted == 6 and not report.failed
    [rej] = db.query("SELECT * FROM state WHERE category = 'rejected'")
    assert rej["source_entry"] == "m4" and "requests" in rej["summary"]
    assert rej["source_file"] == str(transcript)
    assert rej["created_at"] == "2026-03-01T10:00:04Z"
    assert facts.current(db, "main", "timezone").value == "Europe/Berlin"  # type: ignore[union-attr]
    call = db.one("SELECT * FROM episodes WHERE kind = 'tool_call'")
    assert call is not None and (call["tool"], call["outcome"]) == ("bash", "error")
    wm = db.one("SELECT * FROM source_files WHERE path = ?", (str(transcript),))
    assert wm is not None and wm["offset"] == transcript.stat().st_size
    assert wm["last_entry_id"] == "m6" and wm["failures"] == 0
    before = snapshot(db)
    again = run(home, db)
    assert again.turns_read == 0 and snapshot(db) == before
    assert [f.status for f in again.files] == ["unchanged"]


def test_appended_turns_are_read_from_the_watermark(
    home: Home, db: Database, transcript: Path
) -> None:
    run(home, db)
    before = snapshot(db)
    write(transcript, [line(7, "user", "We decided to use Postgres 16 for the main database.")],
          "a")
    old(transcript)
    report = run(home, db)
    assert report.turns_read == 1 and report.turns_extracted == 1
    assert count(db, "extracted_turns") == before[3] + 1
    assert count(db, "state", "category = 'decision' AND source_entry = 'm7'") == 1


def test_a_torn_last_line_waits_for_its_newline(home: Home, db: Database, tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    write(path, CONVERSATION[:2])
    torn = CONVERSATION[2]
    write(path, [torn[:20]], "a")
    sources.add(db, str(path), agent="main", fmt="generic", actor="test")
    assert run(home, db).turns_extracted == 2
    write(path, [torn[20:]], "a")
    assert run(home, db).turns_extracted == 1
    assert count(db, "extracted_turns") == 3


def test_truncated_or_replaced_files_are_read_again_without_duplicates(
    home: Home, db: Database, transcript: Path
) -> None:
    run(home, db)
    before = snapshot(db)
    # Replaced: same first turns, new inode, a new turn at the end.
    replacement = transcript.with_suffix(".new")
    write(replacement, [*CONVERSATION[:3], line(9, "user", "Set the log level to debug.")])
    os.replace(replacement, transcript)
    old(transcript)
    report = run(home, db)
    assert [f.status for f in report.files] == ["reset"]
    assert report.turns_extracted == 1
    assert report.skipped["already extracted (seen in another file or read)"] == 3
    assert count(db, "extracted_turns") == before[3] + 1
    assert facts.current(db, "main", "log level").value == "debug"  # type: ignore[union-attr]
    # Truncated in place: shorter than the watermark.
    write(transcript, CONVERSATION[:1])
    old(transcript)
    report = run(home, db)
    assert report.turns_extracted == 0 and count(db, "extracted_turns") == before[3] + 1


def test_a_rotated_copy_is_not_extracted_twice(home: Home, db: Database, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = old(write(folder / "a.jsonl", CONVERSATION))
    sources.add(db, str(folder / "*.jsonl*"), agent="main", fmt="generic", actor="test")
    run(home, db)
    before = snapshot(db)
    shutil.copy(path, folder / "a.jsonl.1")
    old(folder / "a.jsonl.1")
    report = run(home, db)
    assert report.turns_read == 6 and report.turns_extracted == 0
    assert snapshot(db) == before


def test_a_rotated_log_and_its_replacement_with_the_same_ids_are_both_extracted(
    home: Home, db: Database, tmp_path: Path
) -> None:
    """log.jsonl (ids 1, 2, no session field) rotated to log.jsonl.1 and a new log.jsonl
    with ids 1, 2: the new turns are extracted, the rotated copy is not read twice."""
    folder = tmp_path / "logs"
    folder.mkdir()

    def log(words: str) -> list[str]:
        return [json.dumps({"type": "message", "id": str(i), "ts": f"2026-03-01T10:00:0{i}Z",
                            "role": "user", "content": f"{words} {i}."}) + "\n"
                for i in (1, 2)]

    path = old(write(folder / "log.jsonl", log("Please add the first health check number")))
    sources.add(db, str(folder / "log.jsonl*"), agent="main", fmt="generic", actor="test")
    assert run(home, db).turns_extracted == 2
    os.rename(path, folder / "log.jsonl.1")
    old(write(folder / "log.jsonl", log("Please rename the second worker pool number")))
    report = run(home, db)
    assert report.turns_read == 4 and report.turns_extracted == 2
    assert report.skipped["already extracted (seen in another file or read)"] == 2
    assert count(db, "extracted_turns") == 4
    assert count(db, "state", "summary LIKE '%second worker pool%'") == 2


class Flaky:
    """An extractor that fails its first ``failures`` calls."""

    name = "flaky"

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.inner = LocalExtractor()

    def extract(self, turns: Sequence[PreparedTurn]) -> Extraction:
        if self.failures > 0:
            self.failures -= 1
            raise ExtractorError("model unavailable")
        return self.inner.extract(turns)


def test_three_failed_runs_leave_the_watermark_and_the_fourth_backfills(
    home: Home, db: Database, transcript: Path
) -> None:
    flaky = Flaky(3)
    for attempt in range(1, 4):
        report = run(home, db, extractor=flaky)
        assert [f.status for f in report.failed] == ["failed"]
        assert snapshot(db) == (0, 0, 0, 0)
        wm = db.one("SELECT * FROM source_files")
        assert wm is not None and wm["offset"] == 0 and wm["failures"] == attempt
        assert "model unavailable" in wm["last_error"]
        last = jobs.last(db, "extraction")
        assert last is not None and last.status == "failed"
    report = run(home, db, extractor=flaky)
    assert not report.failed and report.turns_extracted == 6
    wm = db.one("SELECT * FROM source_files")
    assert wm is not None and wm["failures"] == 0 and wm["offset"] == transcript.stat().st_size
    assert count(db, "extracted_turns") == 6


def test_a_failure_midway_keeps_the_committed_batches(
    home: Home, db: Database, tmp_path: Path
) -> None:
    path = old(write(tmp_path / "long.jsonl", [
        line(i, "user", f"Please handle ticket {i} about the {['api', 'ui', 'db'][i % 3]} layer")
        for i in range(1, 31)]))
    sources.add(db, str(path), agent="main", fmt="generic", actor="test")

    class FailsSecond(Flaky):
        calls = 0

        def extract(self, turns: Sequence[PreparedTurn]) -> Extraction:
            self.calls += 1
            if self.calls == 2:
                raise ExtractorError("bad output")
            return self.inner.extract(turns)

    report = run(home, db, extractor=FailsSecond(0), batch_turns=10)
    assert report.turns_extracted == 10 and report.failed
    wm = db.one("SELECT offset, line FROM source_files")
    assert wm is not None and wm["line"] == 11
    report = run(home, db, batch_turns=10)
    assert report.turns_extracted == 20
    assert count(db, "extracted_turns") == 30


def test_dry_run_writes_nothing(home: Home, db: Database, transcript: Path) -> None:
    report = run(home, db, dry_run=True)
    assert report.turns_extracted == 6 and sum(report.outcome.added.values()) > 0
    assert snapshot(db) == (0, 0, 0, 0)
    assert count(db, "source_files") == 0 and count(db, "audit", "actor = 'extractor'") == 0
    assert not (home.workspace("main") / "memory" / "2026-03-01.md").exists()
    assert run(home, db).turns_extracted == 6


class Probing:
    """The local extractor, which first checks that another connection could write now."""

    name = "probing"

    def __init__(self, home: Home) -> None:
        self.other = home.open_db()
        self.other.conn.set_busy_timeout(0)
        self.free: list[bool] = []
        self.inner = LocalExtractor()

    def extract(self, turns: Sequence[PreparedTurn]) -> Extraction:
        import apsw

        try:
            self.other.conn.execute("BEGIN IMMEDIATE")
            self.other.conn.execute("ROLLBACK")
            self.free.append(True)
        except apsw.BusyError:
            self.free.append(False)
        return self.inner.extract(turns)


@pytest.mark.parametrize("dry_run", [False, True])
def test_extraction_does_not_hold_the_write_lock_while_it_extracts(
    home: Home, db: Database, tmp_path: Path, dry_run: bool
) -> None:
    path = old(write(tmp_path / "long.jsonl", [
        line(i, "user", f"Please add health check endpoint number {i} to the API.")
        for i in range(1, 41)]))
    sources.add(db, str(path), agent="main", fmt="generic", actor="test")
    probing = Probing(home)
    report = run(home, db, extractor=probing, batch_turns=10, dry_run=dry_run)
    probing.other.close()
    assert report.turns_extracted == 40 and len(probing.free) == 4
    # Another writer (gate post, state add) could have written during every batch.
    assert all(probing.free)
    assert count(db, "state") == (0 if dry_run else 40)
    assert not list(home.root.glob(".dry-run-*"))


def test_since_skips_older_turns(home: Home, db: Database, transcript: Path) -> None:
    report = run(home, db, since=parse("2026-03-01T10:00:04Z"))
    assert report.skipped["older than --since"] == 3
    assert report.turns_extracted == 3
    assert count(db, "state", "source_entry = 'm1'") == 0
    # The older turns are not lost: the watermark stayed before them.
    assert "--since" in report.files[0].message
    again = run(home, db, since=parse("2026-03-01T10:00:04Z"))
    assert again.turns_extracted == 0 and again.skipped["older than --since"] == 3
    later = run(home, db)
    assert later.turns_extracted == 3
    assert later.skipped["already extracted (seen in another file or read)"] == 3
    assert count(db, "extracted_turns") == 6 and count(db, "state", "source_entry = 'm1'") == 1
    assert run(home, db).turns_read == 0  # and now the watermark is at the end


def test_another_run_in_progress_is_refused(home: Home, db: Database, transcript: Path) -> None:
    with steno.run_lock(home), pytest.raises(steno.Busy):
        run(home, db)


def test_secrets_are_redacted_before_storage(home: Home, db: Database, tmp_path: Path) -> None:
    key = "sk-ant-api03-" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7" * 2
    path = old(write(tmp_path / "s.jsonl", [
        line(1, "user", f"Don't ever paste {key} into chat logs again."),
        line(2, "assistant", "Checking.", tool_calls=[
            {"id": "c1", "name": "bash", "input": {"command": f"curl -H 'x-api-key: {key}' x"}}]),
    ]))
    sources.add(db, str(path), agent="main", fmt="generic", actor="test")
    report = run(home, db)
    assert report.redacted["anthropic_key"] >= 2
    dump = json.dumps(db.query("SELECT * FROM state")) + json.dumps(
        db.query("SELECT * FROM episodes")) + json.dumps(db.query("SELECT * FROM audit"))
    assert key not in dump and "[REDACTED:anthropic_key]" in dump
    daily = (home.workspace("main") / "memory" / "2026-03-01.md").read_text()
    assert key not in daily


# -- tombstones and consolidation across runs ------------------------------------------


def forget_reading(db: Database) -> None:
    """Make the next run read everything again as if it were new."""
    with db.write():
        db.execute("DELETE FROM extracted_turns")
        db.execute("DELETE FROM source_files")


def test_buried_entries_are_never_recreated_and_nothing_duplicates(
    home: Home, db: Database, transcript: Path
) -> None:
    run(home, db)
    [rej] = db.query("SELECT id FROM state WHERE category = 'rejected'")
    tombstones.bury_state(db, rej["id"], actor="cli", reason="wrong")
    fact = facts.current(db, "main", "timezone")
    assert fact is not None
    tombstones.bury_fact(db, fact.id, actor="cli")
    states = count(db, "state")
    forget_reading(db)
    report = run(home, db)
    assert report.turns_extracted == 6
    assert report.outcome.tombstoned >= 2
    assert count(db, "state") == states
    assert count(db, "state", "category = 'rejected' AND status = 'active'") == 0
    assert facts.current(db, "main", "timezone") is None


# -- the daily log ---------------------------------------------------------------------


def test_daily_log_is_appended_once_per_section(
    home: Home, db: Database, transcript: Path
) -> None:
    report = run(home, db)
    path = home.workspace("main") / "memory" / "2026-03-01.md"
    assert report.daily_logs == [str(path)]
    text = path.read_text()
    assert text.startswith("# 2026-03-01")
    assert "**rejected**" in text and "`m4`" in text and "timezone = Europe/Berlin" in text
    # A crash after writing the file but before clearing the queue: no second copy.
    with db.write():
        db.execute("INSERT INTO daily_log_pending(id, agent, day, text, created_at) "
                   "VALUES (1, 'main', '2026-03-01', 'again', 'x')")
    dailylog.flush(home, db)
    assert path.read_text() == text
    assert count(db, "daily_log_pending") == 0


def test_a_run_over_many_files_appends_the_daily_log_at_intervals_and_at_its_end(
    home: Home, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The day's file is rewritten whole at each append: once per file was a tenth of a
    run over 200 short sessions. Appends wait ``DAILY_LOG_EVERY`` (the queue is durable)
    and the run's end, or its stop, appends what is left."""
    for n in range(5):
        path = old(write(tmp_path / f"s{n}.jsonl", [
            json.dumps({**json.loads(row), "session": f"s{n}", "id": f"s{n}-{i}"}) + "\n"
            for i, row in enumerate(CONVERSATION)]))
        sources.add(db, str(path), agent="main", fmt="generic", actor="test")
    appends: list[int] = []
    real = dailylog.flush

    def counted(h: Home, d: Database) -> list[Path]:
        appends.append(count(d, "daily_log_pending"))
        return real(h, d)

    monkeypatch.setattr(dailylog, "flush", counted)
    monkeypatch.setattr(steno, "DAILY_LOG_EVERY", 3600.0)
    report = run(home, db)
    assert appends == [5]  # one append, at the end, of the five files' sections
    daily = home.workspace("main") / "memory" / "2026-03-01.md"
    assert report.daily_logs == [str(daily)]
    assert daily.read_text().count("`s4-3`") == 1 and count(db, "daily_log_pending") == 0
