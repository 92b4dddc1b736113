"""read_transcript and detect_format: watermarks, torn and bad lines, byte offsets, detection."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memtui.errors import MemtuiError
from memtui.transcripts import StaleOffset, UnknownFormat, detect_format, read_transcript


def msg(msg_id: str, text: str, role: str = "user") -> dict[str, Any]:
    return {"type": "message", "id": msg_id, "session": "s", "role": role, "content": text}


def encoded(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n"


def test_torn_last_line_is_left_for_the_next_read(write_lines: Callable[..., Path]) -> None:
    torn = encoded(msg("m2", "second"))[:-9]
    path = write_lines("t.jsonl", [msg("m1", "first")], tail=torn)
    size_before_torn = path.stat().st_size - len(torn)

    first = read_transcript(path)
    assert [t.id for t in first.turns] == ["m1"]
    assert first.problems == []
    assert (first.end_offset, first.end_line) == (size_before_torn, 2)
    assert first.pending_bytes == len(torn)

    with path.open("ab") as fh:
        fh.write(encoded(msg("m2", "second"))[len(torn) :])
    second = read_transcript(path, start_offset=first.end_offset, start_line=first.end_line)
    assert [(t.id, t.line, t.offset) for t in second.turns] == [("m2", 2, size_before_torn)]
    assert (second.end_offset, second.end_line, second.pending_bytes) == (
        path.stat().st_size,
        3,
        0,
    )


def test_final_consumes_a_last_line_without_newline(write_lines: Callable[..., Path]) -> None:
    last = encoded(msg("m2", "no newline at the end"))[:-1]
    path = write_lines("t.jsonl", [msg("m1", "first")], tail=last)
    assert [t.id for t in read_transcript(path).turns] == ["m1"]
    result = read_transcript(path, final=True)
    assert [t.id for t in result.turns] == ["m1", "m2"]
    assert result.end_offset == path.stat().st_size and result.end_line == 3


def test_malformed_lines_are_reported_and_skipped(write_lines: Callable[..., Path]) -> None:
    path = write_lines(
        "bad.jsonl",
        [
            msg("m1", "one"),
            '{"type": "message", "id": "m2", "content": ',
            "",
            "[1, 2, 3]",
            b'{"type": "message", "id": "m3", "role": "user", "content": "\xff\xfe"}',
            "   ",
            msg("m4", "still read"),
        ],
    )
    result = read_transcript(path)

    assert [(t.id, t.line) for t in result.turns] == [("m1", 1), ("m4", 7)]
    assert [p.line for p in result.problems] == [2, 4, 5]
    assert result.problems[0].message.startswith("not valid JSON")
    assert result.problems[1].message == "expected a JSON object, got list"
    assert result.problems[2].message.startswith("not valid JSON")
    assert all(p.path == str(path) for p in result.problems)
    assert result.end_offset == path.stat().st_size and result.lines_read == 7


def test_problem_line_numbers_stay_right_when_resuming(write_lines: Callable[..., Path]) -> None:
    lines: list[Any] = [msg(f"m{i}", f"text {i}") for i in range(1, 6)]
    lines.insert(4, "{oops")
    path = write_lines("r.jsonl", lines)
    offset = sum(len(encoded(m)) for m in lines[:3])

    for start_line in (4, None):
        result = read_transcript(path, start_offset=offset, start_line=start_line)
        assert [(t.id, t.line) for t in result.turns] == [("m4", 4), ("m5", 6)]
        assert [p.line for p in result.problems] == [5]
        assert result.end_line == 7 and result.lines_read == 3


def test_offsets_count_bytes_with_multibyte_text(write_lines: Callable[..., Path]) -> None:
    texts = ["Grüße aus Köln", "日本語のテキスト", "emoji 🚀🔥 and ñ", "plain"]
    path = write_lines("u.jsonl", [msg(f"m{i}", t) for i, t in enumerate(texts)])
    data = path.read_bytes()
    turns = read_transcript(path).turns

    assert [t.text for t in turns] == texts
    for turn in turns:
        assert json.loads(data[turn.offset : turn.end_offset])["id"] == turn.id
    assert turns[-1].end_offset == len(data) > len(data.decode("utf-8"))

    # Resuming at a byte offset past multibyte text lands exactly on the next line.
    rest = read_transcript(path, start_offset=turns[2].offset, start_line=3)
    assert [t.id for t in rest.turns] == ["m2", "m3"]


def test_crlf_lines_read(write_lines: Callable[..., Path]) -> None:
    path = write_lines("w.jsonl", [encoded(msg("m1", "windows"))[:-1] + b"\r"])
    result = read_transcript(path)
    assert [t.text for t in result.turns] == ["windows"]
    assert result.turns[0].end_offset == path.stat().st_size


def test_stale_watermark_is_refused(write_lines: Callable[..., Path]) -> None:
    path = write_lines("s.jsonl", [msg("m1", "one"), msg("m2", "two")])
    size = path.stat().st_size

    with pytest.raises(StaleOffset, match="only .* bytes long"):
        read_transcript(path, start_offset=size + 10)
    with pytest.raises(StaleOffset, match="not the start of a line") as info:
        read_transcript(path, start_offset=5)
    assert isinstance(info.value, ValueError) and isinstance(info.value, MemtuiError)
    assert str(path) in str(info.value)
    assert read_transcript(path, start_offset=size).turns == []


def test_unknown_format_argument(write_lines: Callable[..., Path]) -> None:
    with pytest.raises(ValueError, match="unknown transcript format 'yaml'"):
        read_transcript(write_lines("x.jsonl", [msg("m1", "x")]), fmt="yaml")


@pytest.mark.parametrize(
    ("first_lines", "expected"),
    [
        ([{"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}], "openclaw"),
        ([{"type": "message", "id": "a", "message": {"role": "user", "content": "x"}}], "openclaw"),
        ([{"type": "progress", "sessionId": "s", "uuid": "u", "data": {}}], "claude-code"),
        ([{"type": "file-history-snapshot", "messageId": "m", "snapshot": {}}], "claude-code"),
        (
            [{"type": "meta"}, {"type": "message", "id": "1", "role": "user", "content": "x"}],
            "generic",
        ),
        (["", "  "], "unknown"),
        ([], "unknown"),
    ],
)
def test_detect_format(
    write_lines: Callable[..., Path], first_lines: list[Any], expected: str
) -> None:
    assert detect_format(write_lines("d.jsonl", first_lines)) == expected


def test_detect_format_on_the_real_and_sample_files(short_jsonl: Path) -> None:
    samples = Path(__file__).resolve().parents[2] / "sample-data" / "transcripts"
    assert detect_format(short_jsonl) == "claude-code"
    assert {detect_format(p) for p in (samples / "openclaw").rglob("*.jsonl")} == {"openclaw"}
    assert {detect_format(p) for p in (samples / "claude-code").rglob("*.jsonl")} == {"claude-code"}


def test_only_a_torn_first_line_is_not_judged_yet(write_lines: Callable[..., Path]) -> None:
    path = write_lines("young.jsonl", [], tail=b'{"type":"session","vers')
    assert detect_format(path) == "unknown"
    result = read_transcript(path)
    assert (result.format, result.turns, result.end_offset, result.end_line) == (
        "unknown",
        [],
        0,
        1,
    )


def test_junk_raises_unknown_format(write_lines: Callable[..., Path]) -> None:
    path = write_lines("junk.jsonl", ["hello world", "[1, 2]", {"kind": "log", "msg": "x"}])
    with pytest.raises(UnknownFormat) as info:
        detect_format(path)
    message = str(info.value)
    assert str(path) in message
    assert "line 1 is not JSON" in message and "line 2 is a JSON list" in message
    assert "line 3 has type None" in message
    assert isinstance(info.value, ValueError)
    with pytest.raises(UnknownFormat):
        read_transcript(path)
