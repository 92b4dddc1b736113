"""Exactly once: reading a growing file piece by piece equals reading it once at the end."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openclaw_cases import encode, parent_session, subagent_session, v1_session, wild_session

from memtui.transcripts import Problem, ReadResult, ReadState, Turn, openclaw, read_transcript

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO / "tests" / "data" / "claude-code"
SAMPLES = REPO / "sample-data" / "transcripts"


def _cc(kind: str, uuid: str, **fields: Any) -> str:
    line = {"type": kind, "uuid": uuid, "sessionId": "s", "timestamp": "2026-11-16T10:00:00Z"}
    return json.dumps({**line, **fields}, ensure_ascii=False)


def _block(msg_id: str, uuid: str, block: dict[str, Any]) -> str:
    return _cc("assistant", uuid, message={"id": msg_id, "role": "assistant", "content": [block]})


def _result(uuid: str, call: str, text: str) -> str:
    content = [{"type": "tool_result", "tool_use_id": call, "content": text, "is_error": True}]
    return _cc("user", uuid, message={"role": "user", "content": content})


# Claude Code lines with everything that can go wrong at a cut: multibyte text, a bad
# line and a blank line inside an open message, interleaved tool results, an unknown
# type, and a last message that only `final` consumes.
TRICKY = (
    "\n".join(
        [
            _cc("progress", "p0", data={"type": "hook_progress"}),
            _cc("user", "u1", message={"role": "user", "content": "Grüße, 日本語 and 🚀: deploy?"}),
            _block("m1", "a1", {"type": "thinking", "thinking": "Prüfen…"}),
            _block(
                "m1", "a2", {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"c": "ls"}}
            ),
            '{"type": "assistant", "uuid": "broken", ',
            "",
            _result("r1", "t1", "permission denied ✗"),
            _block("m1", "a3", {"type": "tool_use", "id": "t2", "name": "Read", "input": {}}),
            _result("r2", "t2", "ok ✓"),
            _cc("brand-new", "n1"),
            _block("m2", "a4", {"type": "text", "text": "Erledigt — done 🎉"}),
            _cc("system", "y1", subtype="turn_duration"),
            _cc("user", "u2", message={"role": "user", "content": "danke"}),
            _block("m3", "a5", {"type": "text", "text": "Gern geschehen."}),
        ]
    ).encode("utf-8")
    + b"\n"
)


# Claude Code lines of the newer kinds: titles, cost, sidechains, a failed model call.
TITLED = (
    "\n".join(
        [
            json.dumps({"type": "summary", "summary": "Old title", "leafUuid": "x"}),
            _cc("user", "u1", message={"role": "user", "content": "Fix the parser"}),
            json.dumps({"type": "ai-title", "aiTitle": "Parser fix", "sessionId": "s"}),
            _block("m1", "a1", {"type": "text", "text": "On it."}),
            json.dumps({"type": "cost-state", "sessionId": "s", "totalCostUSD": 0.25}),
            _cc("user", "u2", isSidechain=True, agentId="z9",
                message={"role": "user", "content": "Count the tests"}),
            _cc("assistant", "a2", isSidechain=True, agentId="z9",
                message={"id": "m2", "role": "assistant",
                         "content": [{"type": "text", "text": "12 tests."}]}),
            _cc("assistant", "a3", isApiErrorMessage=True,
                message={"id": "m3", "role": "assistant",
                         "content": [{"type": "text", "text": "API Error: 529 overloaded"}]}),
            json.dumps({"type": "mode", "sessionId": "s", "mode": "default"}),
            json.dumps({"type": "custom-title", "customTitle": "Parser", "sessionId": "s"}),
            _cc("user", "u3", message={"role": "user", "content": "thanks"}),
        ]
    ).encode("utf-8")
    + b"\n"
)


def _files() -> list[tuple[str, bytes]]:
    files = [("tricky.jsonl", TRICKY), ("titled.jsonl", TITLED),
             ("wild.jsonl", encode(wild_session())), ("v1.jsonl", encode(v1_session())),
             ("sub.jsonl", encode(subagent_session())), ("parent.jsonl", encode(parent_session()))]
    for path in [SHARED / "short.jsonl", *sorted(SAMPLES.rglob("*.jsonl"))]:
        if path.exists():
            files.append((path.name, path.read_bytes()))
    return files


FILES = _files()
# The shared real files: too long to cut at every line, so only at random places.
REAL = sorted((REPO / "tests" / "data").glob("*/*.jsonl"))
REAL_FILES = FILES + [(p.name, p.read_bytes()) for p in REAL]


def _summary(
    results: list[ReadResult],
) -> tuple[list[Turn], list[Problem], Counter[str], Counter[str]]:
    turns = [t for r in results for t in r.turns]
    problems = [p for r in results for p in r.problems]
    skipped: Counter[str] = Counter()
    unknown: Counter[str] = Counter()
    for r in results:
        skipped.update(r.skipped)
        unknown.update(r.unknown_types)
    return turns, problems, skipped, unknown


def read_in_pieces(path: Path, data: bytes, cuts: list[int], *, carry: bool = False
                   ) -> list[ReadResult]:
    """Grow the file to each cut in turn, reading from the watermark each time; with
    ``carry``, passing each read's state to the next (as a follower does)."""
    results = []
    offset, line = 0, 1
    state: ReadState | None = None
    for cut in [*sorted(set(cuts)), len(data)]:
        with path.open("r+b" if path.exists() else "wb") as fh:  # grow it, same file
            fh.seek(0, 2)
            fh.write(data[fh.tell():cut])
            fh.truncate(cut)
        result = read_transcript(path, start_offset=offset, start_line=line,
                                 final=cut == len(data), state=state if carry else None)
        assert result.end_offset <= cut
        results.append(result)
        offset, line, state = result.end_offset, result.end_line, result.state
    return results


def assert_same_as_one_read(path: Path, pieces: list[ReadResult]) -> None:
    whole = read_transcript(path, final=True)
    assert pieces[-1].end_offset == whole.end_offset == path.stat().st_size
    assert pieces[-1].end_line == whole.end_line
    assert _summary(pieces) == _summary([whole])
    ids = [(t.id, t.role) for t in whole.turns]
    assert len(ids) == len(set(ids)), "a turn was produced twice"
    titles = [r.title for r in pieces if r.title is not None]
    costs = [r.cost_usd for r in pieces if r.cost_usd is not None]
    assert whole.title == (titles[-1] if titles else None)
    assert whole.cost_usd == (costs[-1] if costs else None)


def test_tricky_file_reads_as_expected(tmp_path: Path) -> None:
    path = tmp_path / "tricky.jsonl"
    path.write_bytes(TRICKY)
    live = read_transcript(path)
    assert [t.id for t in live.turns] == ["u1", "m1", "r1", "r2", "m2", "u2"]
    assert live.end_line == 14 and [p.line for p in live.problems] == [5]
    assert live.unknown_types == {"brand-new": 1}
    final = read_transcript(
        path, start_offset=live.end_offset, start_line=live.end_line, final=True
    )
    assert [t.text for t in final.turns] == ["Gern geschehen."]


@pytest.mark.parametrize(("name", "data"), FILES, ids=[name for name, _ in FILES])
def test_cut_at_every_line_boundary_and_mid_line(tmp_path: Path, name: str, data: bytes) -> None:
    starts = [0]
    for raw in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(raw))
    # Every line end, and a cut inside every line (odd sizes land inside multibyte text).
    cuts = starts + [(a + b) // 2 for a, b in pairwise(starts)]
    path = tmp_path / name
    assert_same_as_one_read(path, read_in_pieces(path, data, cuts))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_byte_cuts_give_the_same_turns_exactly_once(data: st.DataObject) -> None:
    name, content = data.draw(st.sampled_from(REAL_FILES), label="file")
    cuts = data.draw(st.lists(st.integers(0, len(content)), max_size=10), label="cuts")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        assert_same_as_one_read(path, read_in_pieces(path, content, cuts))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_byte_cuts_with_the_carried_state_give_the_same_turns_exactly_once(
    data: st.DataObject,
) -> None:
    name, content = data.draw(st.sampled_from(REAL_FILES), label="file")
    cuts = data.draw(st.lists(st.integers(0, len(content)), max_size=12), label="cuts")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        assert_same_as_one_read(path, read_in_pieces(path, content, cuts, carry=True))


OPENCLAW = [(name, data) for name, data in FILES
            if name in ("wild.jsonl", "v1.jsonl", "sub.jsonl", "parent.jsonl")]


def _builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Spy: the offsets at which a read built its tree from the file (no carried state)."""
    calls: list[int] = []
    before = openclaw._Tree.before.__func__  # type: ignore[attr-defined]

    def spy(cls: type[openclaw._Tree], path: Path, start: int) -> openclaw._Tree:
        calls.append(start)
        tree: openclaw._Tree = before(cls, path, start)
        return tree

    monkeypatch.setattr(openclaw._Tree, "before", classmethod(spy))
    return calls


@pytest.mark.parametrize(("name", "data"), OPENCLAW, ids=[name for name, _ in OPENCLAW])
def test_a_carried_state_reads_only_the_appended_lines(
    tmp_path: Path, name: str, data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the state no read goes back before its watermark, and replays, version-1
    links and sub-agent sessions still come out as in one read."""
    built = _builds(monkeypatch)
    lines = data.splitlines(keepends=True)
    path = tmp_path / name
    pieces = read_in_pieces(path, data, [len(b"".join(lines[:n])) for n in range(len(lines))],
                            carry=True)
    assert built == [0]  # only the first read, from the top of the file
    assert_same_as_one_read(path, pieces)


def test_a_state_that_does_not_fit_is_ignored(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    data = encode(wild_session())
    lines = data.splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[: len(lines) // 2]))
    first = read_transcript(path)
    with path.open("ab") as fh:
        fh.write(b"".join(lines[len(lines) // 2:]))
    resume = {"start_offset": first.end_offset, "start_line": first.end_line, "final": True}
    plain = read_transcript(path, **resume)
    built = _builds(monkeypatch)
    # Used twice from the same state: a read does not change the state it was given.
    assert read_transcript(path, **resume, state=first.state).turns == plain.turns
    assert read_transcript(path, **resume, state=first.state).turns == plain.turns
    assert built == []
    # Another file, another offset, or the bytes before the offset rewritten: ignored.
    other = tmp_path / "other.jsonl"
    other.write_bytes(data)
    assert [(t.id, t.text) for t in read_transcript(other, **resume, state=first.state).turns
            ] == [(t.id, t.text) for t in plain.turns]
    assert built == [first.end_offset]
    read_transcript(path, start_offset=len(data), state=first.state)
    assert built[-1] == len(data)
    rewritten = bytearray(data)
    rewritten[first.end_offset - 3] = ord("x")  # inside the last line's closing text
    path.write_bytes(bytes(rewritten))
    read_transcript(path, **resume, state=first.state)
    assert built[-1] == first.end_offset and len(built) == 3
