"""Homes memtui must not change: a memory.db from a newer memtui, a read-only home (issue 9)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from memtui.config import load_settings, render_settings
from memtui.db import Database, supported_version
from memtui.errors import NewerSchema
from memtui.home import Home
from tests.conftest import run_cli


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _make_newer(home: Home) -> int:
    newer = supported_version() + 1
    conn = apsw.Connection(str(home.db_path))
    conn.execute(f"PRAGMA user_version={newer}")
    conn.close()  # checkpoints: the header says so too
    return newer


@pytest.mark.parametrize("args", [
    ("state", "add", "decision", "Stay on nginx"),
    ("state", "list"),
    ("rules", "add", "Tag releases"),
    ("remember", "a note"),
    ("extract",),
    ("sources", "add", "/tmp/nothing-here/*.jsonl"),
    ("search", "nginx"),
    ("index",),
    ("boot",),
    ("gate", "pre", "deploy"),
    ("maintain",),
    ("daemon", "--once", "extraction"),
    ("init",),
    ("policy", "check"),
])
def test_a_newer_schema_is_refused_before_anything_is_touched(
        home: Home, args: tuple[str, ...]) -> None:
    newer = _make_newer(home)
    before = _snapshot(home.root)
    done = run_cli(*args, home=home)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert f"schema version {newer}" in done.stderr
    assert f"supports ({supported_version()})" in done.stderr
    assert "upgrade memtui" in done.stderr and "Traceback" not in done.stderr
    assert _snapshot(home.root) == before


def test_a_newer_schema_still_in_the_wal_is_refused_on_open(home: Home) -> None:
    writer = apsw.Connection(str(home.db_path))
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute(f"PRAGMA user_version={supported_version() + 5}")
    try:
        home.refuse_newer()  # the file's header does not know yet
        with pytest.raises(NewerSchema, match="upgrade memtui"):
            home.open_db()
    finally:
        writer.close()


def test_doctor_still_reports_a_newer_schema(home: Home) -> None:
    _make_newer(home)
    done = run_cli("doctor", home=home)
    assert done.returncode == 3 and "upgrade memtui" in done.stdout


def test_the_current_schema_opens(home: Home) -> None:
    db = Database(home.db_path, max_version=supported_version())
    assert db.schema_version() == supported_version() and not db.readonly
    db.close()


# -- a read-only home ------------------------------------------------------------------------
#
# Tests run as root, and root ignores permission bits. The real check runs memtui in a
# child without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (setpriv), which makes root obey
# them; as a normal user the child needs no prefix. Where neither is possible, the
# in-process test still covers the code path through the writability probe.


def _as_unprivileged() -> list[str] | None:
    """A command prefix under which permission bits apply, or None when there is none."""
    import shutil

    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search",
              "--inh-caps=-dac_override,-dac_read_search"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


def _run_read_only(home: Home, *args: str) -> subprocess.CompletedProcess[str]:
    prefix = _as_unprivileged()
    if prefix is None:
        pytest.skip("cannot drop the permission override here (no setpriv)")
    env = {k: v for k, v in os.environ.items() if k != "MEMTUI_HOME"}
    return subprocess.run([*prefix, sys.executable, "-m", "memtui.cli.main", "--home",
                           str(home.root), *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.fixture
def read_only_home(home: Home, tmp_path: Path) -> Iterator[Home]:
    settings = load_settings(home.config_path)
    settings.search.provider = "none"  # keyword search: no model to load
    home.config_path.write_text(render_settings(settings))
    assert run_cli("state", "add", "decision", "Stay on Postgres 16", home=home).returncode == 0
    assert run_cli("rules", "add", "Tag releases first", home=home).returncode == 0
    assert run_cli("remember", "Postgres upgrade planned", home=home).returncode == 0
    assert run_cli("index", home=home).returncode == 0
    paths = [home.root, *home.root.rglob("*")]
    modes = {p: p.stat().st_mode for p in paths}
    for p in paths:
        p.chmod(modes[p] & ~0o222)
    yield Home(home.root)
    for p in reversed(paths):
        p.chmod(modes[p])


def test_reading_commands_work_on_a_read_only_home(read_only_home: Home) -> None:
    before = _snapshot(read_only_home.root)
    listed = _run_read_only(read_only_home, "state", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [e["summary"] for e in json.loads(listed.stdout)] == ["Stay on Postgres 16"]
    for args in (("rules", "list"), ("boot",), ("audit",), ("get", "MEMORY.md"),
                 ("search", "Postgres", "--min-score", "0"), ("recall", "Postgres"),
                 ("state", "show", "1"), ("index", "status"), ("gate", "pre", "deploy")):
        done = _run_read_only(read_only_home, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr
    search = json.loads(_run_read_only(read_only_home, "search", "Postgres", "--min-score", "0",
                                       "--json").stdout)
    assert any("Postgres" in hit["snippet"] for hit in search["results"])
    assert _snapshot(read_only_home.root) == before


def test_writing_commands_fail_with_one_line_naming_the_path(read_only_home: Home) -> None:
    for args, path in ((("state", "add", "decision", "x"), read_only_home.db_path),
                       (("rules", "add", "x"), read_only_home.db_path),
                       (("remember", "x"), read_only_home.index_dir),
                       (("extract",), read_only_home.root),
                       (("index", "--rebuild"), read_only_home.index_dir)):
        done = _run_read_only(read_only_home, *args)
        assert done.returncode == 1, (args, done.stdout)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, (args, done.stderr)
        assert str(path) in lines[0] and ("write permission" in lines[0]
                                          or "ermission denied" in lines[0]), lines


def test_doctor_tells_permissions_from_damage(read_only_home: Home) -> None:
    done = _run_read_only(read_only_home, "doctor")
    assert done.returncode == 0, done.stdout
    assert "permissions" in done.stdout and "read-only" in done.stdout
    assert "restore memory.db" not in done.stdout


def test_a_database_that_may_not_be_written_opens_for_reading(
        home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui import db as dbmod
    from memtui.errors import ReadOnly
    from memtui.stores import state

    writer = home.open_db()
    state.add(writer, state.NewState("main", "decision", "Keep it"), actor="test")
    writer.close()
    monkeypatch.setattr(dbmod, "writable", lambda path: False)
    db = home.open_db()
    try:
        assert db.readonly
        assert [e.summary for e in state.list_entries(db)] == ["Keep it"]
        with pytest.raises(ReadOnly, match=r"memory\.db is read-only .* write permission"):
            state.add(db, state.NewState("main", "decision", "More"), actor="test")
        assert [e.summary for e in state.list_entries(db)] == ["Keep it"]
    finally:
        db.close()
