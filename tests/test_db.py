"""The database layer: WAL, extensions, transactions, migrations, integrity."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from memtui.db import Database, open_memory_db
from memtui.schema import MIGRATIONS


def test_wal_busy_timeout_and_sqlite_vec(tmp_path: Path) -> None:
    db = open_memory_db(tmp_path / "m.db")
    assert db.scalar("PRAGMA journal_mode") == "wal"
    assert db.vec_version is not None, db.vec_error
    caps = db.capabilities()
    assert caps.fts5 and caps.sqlite_vec
    assert db.scalar("SELECT vec_distance_cosine('[1,0]', '[0,1]')") == pytest.approx(1.0)
    assert db.schema_version() == max(v for v, _ in MIGRATIONS)


def test_write_rolls_back_whole_on_error(tmp_path: Path) -> None:
    db = open_memory_db(tmp_path / "m.db")
    with pytest.raises(RuntimeError), db.write():
        db.execute("INSERT INTO watermarks VALUES ('a', '1', 'now')")
        raise RuntimeError("boom")
    assert db.scalar("SELECT count(*) FROM watermarks") == 0


def test_nested_write_joins_outer_transaction(tmp_path: Path) -> None:
    db = open_memory_db(tmp_path / "m.db")
    with pytest.raises(RuntimeError), db.write():
        with db.write():
            db.execute("INSERT INTO watermarks VALUES ('a', '1', 'now')")
        raise RuntimeError("outer fails after inner block")
    assert db.scalar("SELECT count(*) FROM watermarks") == 0


def test_write_takes_the_lock_immediately(tmp_path: Path) -> None:
    """A second writer waits at BEGIN (not at its first write): no BUSY_SNAPSHOT."""
    a = open_memory_db(tmp_path / "m.db")
    b = Database(tmp_path / "m.db")
    b.conn.set_busy_timeout(50)
    with a.write():
        with pytest.raises(apsw.BusyError):
            b.conn.execute("BEGIN IMMEDIATE")


def test_migrations_apply_once(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    open_memory_db(path).close()
    db = open_memory_db(path)
    tables = {r[0] for r in db.rows("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"state", "rules", "flows", "flow_runs", "audit", "jobs", "watermarks"} <= tables
    views = {r[0] for r in db.rows("SELECT name FROM sqlite_master WHERE type = 'view'")}
    assert {"v_active_state", "v_rejected", "v_boot_rules"} <= views


def test_integrity_check_reports_ok_and_damage(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    db = open_memory_db(path)
    with db.write():
        db.executemany("INSERT INTO watermarks VALUES (?, ?, 'now')",
                       [(f"key-{i}", "v" * 50) for i in range(2000)])
    assert db.integrity_check() == []
    page = int(db.scalar("PRAGMA page_size"))
    db.close()
    data = bytearray(path.read_bytes())
    # Clobber the header of every b-tree page after the first; keep the file header valid.
    for start in range(page, len(data), page):
        data[start: start + 12] = b"\x0d\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
    path.write_bytes(bytes(data))
    (tmp_path / "m.db-wal").unlink(missing_ok=True)
    try:
        problems = Database(path).integrity_check()
    except apsw.CorruptError:
        problems = ["refused"]  # SQLite refusing the file outright is detection too
    assert problems != []


def test_in_batches_covers_every_value_once_in_lists_sqlite_accepts(tmp_path: Path) -> None:
    from memtui.db import IN_BATCH, in_batches
    from memtui.stores import ledger

    assert list(in_batches([])) == []
    values = list(range(2 * IN_BATCH + 1))
    batches = list(in_batches(values))
    assert [len(part) for _, part in batches] == [IN_BATCH, IN_BATCH, 1]
    assert [v for _, part in batches for v in part] == values
    assert all(marks.count("?") == len(part) for marks, part in batches)
    # A ledger lookup of more ids than one IN list holds still sees every one of them.
    db = open_memory_db(tmp_path / "m.db")
    known = [("s1", f"m{i}") for i in range(0, 2 * IN_BATCH + 7, 2)]
    with db.write():
        ledger.record_turns(db, [ledger.LedgerEntry("main", s, e, "t.jsonl", "2026-01-01")
                                 for s, e in known])
    asked = [("s1", f"m{i}") for i in range(2 * IN_BATCH + 7)] + [("s2", "m0")]
    assert ledger.not_yet_extracted(db, "main", asked) == set(asked) - set(known)
