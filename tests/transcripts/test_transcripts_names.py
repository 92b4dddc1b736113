"""Which files of an OpenClaw sessions folder are read, and the session their names give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.extract.discover import discover
from memtui.stores.sources import Source
from memtui.transcripts import read_transcript
from memtui.transcripts.names import is_side_file, is_transcript, session_stem

SID = "0b9c2f2e-5a43-4a43-9d1c-2f4f5f0e7a11"
NAMES = {
    f"{SID}.jsonl": True,
    f"{SID}.jsonl.reset.2026-03-23T09-15-02.123Z": True,
    f"{SID}.jsonl.deleted.2026-03-23T09-15-02.123Z": True,
    f"{SID}-topic-42.jsonl": True,
    f"{SID}.trajectory.jsonl": False,
    f"{SID}.checkpoint.7d1e4f5c-1111-4222-8333-944445555666.jsonl": False,
    f"{SID}.jsonl.lock": False,
    f"{SID}.jsonl.tmp": False,
    f"{SID}.jsonl.bak-1711180000000": False,
    "sessions.json": False,
}


@pytest.mark.parametrize(("name", "wanted"), NAMES.items())
def test_which_files_are_transcripts(name: str, wanted: bool) -> None:
    assert is_transcript(Path(name)) is wanted


def test_side_files_are_left_out_of_any_glob(tmp_path: Path) -> None:
    for name in NAMES:
        (tmp_path / name).write_text("{}\n")
    source = Source(1, str(tmp_path / "*.jsonl*"), "openclaw", "ops", "t")
    assert sorted(p.name for p in source.files()) == sorted(
        n for n, ok in NAMES.items() if ok)
    assert not is_side_file(Path("notes.log")) and is_side_file(Path("a.trajectory.jsonl"))


def test_a_renamed_file_keeps_its_session() -> None:
    kept = [n for n in NAMES if ".reset." in n or ".deleted." in n or n.endswith(".jsonl")]
    for name in kept:
        if "topic" not in name:
            assert session_stem(Path(name)) == SID, name
    assert session_stem(Path("log.jsonl")) == "log"


def test_headerless_reset_file_gets_the_session_of_its_name(tmp_path: Path) -> None:
    path = tmp_path / f"{SID}.jsonl.reset.2026-03-23T09-15-02.123Z"
    line = {"type": "message", "id": "e1", "parentId": None,
            "timestamp": "2026-03-23T09:00:00Z", "message": {"role": "user", "content": "hi"}}
    path.write_text(json.dumps(line) + "\n")
    assert [t.session for t in read_transcript(path, final=True).turns] == [SID]


def test_discover_takes_reset_files_and_leaves_traces(tmp_path: Path) -> None:
    sessions = tmp_path / "oc" / "agents" / "ops" / "sessions"
    sessions.mkdir(parents=True)
    for name in NAMES:
        (sessions / name).write_text("{}\n")
    (found,) = discover([], default_agent="main", openclaw_root=tmp_path / "oc",
                        claude_root=tmp_path / "none")
    assert found.pattern.endswith("sessions/*.jsonl*") and found.files == 4
    legacy = Source(1, str(sessions.absolute() / "*.jsonl"), "openclaw", "ops", "t")
    (again,) = discover([legacy], default_agent="main", openclaw_root=tmp_path / "oc",
                        claude_root=tmp_path / "none")
    assert again.known and "reset" in again.note
