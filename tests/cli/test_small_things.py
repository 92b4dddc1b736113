"""Nothing silently wrong (issue 9, small things): every fallback and every gap is said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.home import Home
from tests.conftest import run_cli


def test_a_deleted_policy_is_said(home: Home) -> None:
    home.policy_path.unlink()
    done = run_cli("extract", home=home)
    assert done.returncode == 0, done.stderr
    assert f"warning: {home.policy_path} is missing" in done.stderr
    assert "built-in default policy" in done.stderr
    out = json.loads(run_cli("extract", "--json", home=home).stdout)
    assert any("policy.yaml is missing" in w for w in out["warnings"])


def test_a_source_whose_files_vanished_is_said(home: Home, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "a.jsonl").write_text('{"type": "message", "id": "m1", "role": "user", '
                                    '"content": "hello"}\n')
    assert run_cli("sources", "add", str(folder / "*.jsonl"), "--format", "generic",
                   home=home).returncode == 0
    quiet = run_cli("extract", home=home)
    assert "warning" not in quiet.stderr
    (folder / "a.jsonl").unlink()
    done = run_cli("extract", home=home)
    assert done.returncode == 0
    assert "names no files now" in done.stderr and str(folder / "*.jsonl") in done.stderr
    doctor = run_cli("doctor", home=home)
    assert doctor.returncode == 0  # a warning: the home works
    assert "source 1" in doctor.stdout and "names no files now" in doctor.stdout


@pytest.mark.parametrize("args", [("state", "list"), ("rules", "list"), ("audit",),
                                  ("sources", "list"), ("flows", "list")])
def test_a_broken_config_stops_listings_too(home: Home, args: tuple[str, ...]) -> None:
    home.config_path.write_text("[gates]\ntoken_budget = 'lots'\n")
    done = run_cli(*args, home=home)
    assert done.returncode == 1, done.stdout
    assert "memtui.toml" in done.stderr and "gates.token_budget" in done.stderr
