"""Who wrote a turn: the person, the main agent, a sub-agent, or the machine."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memtui.transcripts import Turn, read_transcript


def _cc(kind: str, uuid: str, content: Any, **fields: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = "m-" + uuid
    return {"type": kind, "uuid": uuid, "sessionId": "s", "timestamp": "2026-11-16T10:00:00Z",
            "message": message, **fields}


def test_author_defaults_to_the_role() -> None:
    def turn(role: Any) -> Turn:
        return Turn(id="1", session="s", timestamp=datetime(2026, 1, 1, tzinfo=UTC), role=role,
                    text="", source="f", line=1, offset=0, end_offset=1, format="generic")

    assert [turn(r).author for r in ("user", "assistant", "tool", "system")] == [
        "person", "agent", "machine", "machine"]
    assert Turn(id="1", session="s", timestamp=None, role="user", text="", source="f", line=1,
                offset=0, end_offset=1, format="generic", author="agent").author == "agent"


def test_claude_code_sidechain_lines_are_not_the_person(write_lines: Callable[..., Path]
                                                         ) -> None:
    call = {"type": "tool_use", "id": "t1", "name": "Task", "input": {"prompt": "Count files"}}
    result = [{"type": "tool_result", "tool_use_id": "t9", "content": "3 files"}]
    path = write_lines("main.jsonl", [
        _cc("user", "u1", "Please count the files", isSidechain=False),
        _cc("assistant", "a1", [call], isSidechain=False),
        _cc("user", "u2", "Count files", isSidechain=True, agentId="ab12"),
        _cc("assistant", "a2", [{"type": "text", "text": "There are 3 files."}],
            isSidechain=True, agentId="ab12"),
        _cc("user", "u3", result, isSidechain=True),
        _cc("user", "u4", "<local-command-stdout>Total cost: $0.01</local-command-stdout>"),
        _cc("user", "u5", "thanks", isSidechain=False),
    ])
    turns = read_transcript(path, final=True).turns
    got = [(t.id, t.role, t.author, t.subagent_id) for t in turns]
    assert got == [
        ("u1", "user", "person", None),
        ("m-a1", "assistant", "agent", None),
        ("u2", "user", "agent", "ab12"),
        ("m-a2", "assistant", "subagent", "ab12"),
        ("u3", "tool", "machine", None),
        ("u4", "system", "machine", None),
        ("u5", "user", "person", None),
    ]


def test_a_sub_agents_own_file_names_it(write_lines: Callable[..., Path]) -> None:
    path = write_lines("agent-x7.jsonl", [
        _cc("user", "u1", "Run the tests", isSidechain=True),
        _cc("assistant", "a1", [{"type": "text", "text": "All green."}], isSidechain=True),
    ])
    turns = read_transcript(path, final=True).turns
    assert [(t.author, t.subagent_id) for t in turns] == [("agent", "x7"), ("subagent", "x7")]


def test_inline_sidechains_of_the_real_viewer_file(write_lines: Callable[..., Path]) -> None:
    path = Path(__file__).resolve().parents[1] / "data" / "claude-code-viewer" / (
        "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    side_texts = sum(1 for d in lines if d.get("isSidechain") and d["type"] == "user"
                     and isinstance(d["message"]["content"], str))
    turns = read_transcript(path, final=True).turns
    authors = Counter((t.role, t.author) for t in turns)
    # Every sidechain prompt is the orchestrator's, never the person's.
    assert authors[("user", "agent")] == side_texts > 0
    assert authors[("user", "person")] <= 3
    assert authors[("assistant", "subagent")] > 10 * authors[("assistant", "agent")] / 2
