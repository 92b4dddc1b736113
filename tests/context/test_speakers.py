"""Only the person's words are quoted as the person's: sub-agent Task prompts and
heartbeat prompts stay out of compaction summaries and recovery (issue: role "user" is
not the person)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memtui.context.recovery import recover
from memtui.context.speakers import by_person, label
from memtui.context.summary import api_summary, local_summary
from memtui.home import Home
from memtui.transcripts import read_transcript

PERSON_FIRST = "Please move the nightly backups to restic"
PERSON_LAST = "Also keep thirty days of snapshots"
TASK_PROMPT = "Count the archive files under /var/backups and report the total"
HEARTBEAT = ("This is a heartbeat from memtui. Follow the checklist below strictly.\n"
             "If nothing needs attention, reply HEARTBEAT_OK and nothing else.\n\n"
             "## HEARTBEAT.md\n- check disk usage on lumen-prod-1\n")


def _line(kind: str, uuid: str, content: Any, **fields: Any) -> str:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id="m-" + uuid, model="claude-sonnet-4-5",
                       usage={"input_tokens": 900, "output_tokens": 40})
    return json.dumps({"type": kind, "uuid": uuid, "sessionId": "s1",
                       "timestamp": "2026-11-16T10:00:00Z", "message": message, **fields})


def transcript(folder: Path) -> Path:
    """A Claude Code session: the person twice, a sub-agent's Task prompt (a sidechain)
    with its work, a heartbeat piped in by `claude -p`, and the agent's answers."""
    call = {"type": "tool_use", "id": "t1", "name": "Task", "input": {"prompt": TASK_PROMPT}}
    text = [
        _line("user", "u1", PERSON_FIRST),
        _line("assistant", "a1", [{"type": "text", "text": "Moving them to restic now."}]),
        _line("user", "u2", PERSON_LAST),
        _line("assistant", "a2", [call]),
        _line("user", "u3", TASK_PROMPT, isSidechain=True, agentId="ab12"),
        _line("assistant", "a3", [{"type": "text", "text": "There are 41 archive files."}],
              isSidechain=True, agentId="ab12"),
        _line("user", "u4", [{"type": "tool_result", "tool_use_id": "t1",
                              "content": "41 archive files"}]),
        _line("assistant", "a4", [{"type": "text", "text": "Restic keeps 30 daily snapshots."}]),
        _line("user", "u5", HEARTBEAT),
        _line("assistant", "a5", [{"type": "text", "text": "HEARTBEAT_OK"}]),
    ]
    path = folder / "s1.jsonl"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def test_the_reader_and_the_labels_tell_the_person_apart(tmp_path: Path) -> None:
    turns = read_transcript(transcript(tmp_path), final=True).turns
    people = [t.text for t in turns if by_person(t)]
    assert people == [PERSON_FIRST, PERSON_LAST]
    labels = {t.id: label(t) for t in turns}
    assert (labels["u1"], labels["u3"], labels["m-a3"], labels["u4"], labels["u5"]) == (
        "user", "agent", "sub-agent", "tool", "machine")


def test_the_local_summary_quotes_only_the_person(home: Home, tmp_path: Path) -> None:
    turns = read_transcript(transcript(tmp_path), final=True).turns
    summary = local_summary(home, "main", turns, [])
    goal = summary.split("## Constraints")[0]
    assert f"Asked first: {PERSON_FIRST}" in goal
    assert f"Asked last: {PERSON_LAST}" in goal
    assert "Count the archive" not in summary and "HEARTBEAT" not in goal
    # The main agent's last answer: not the sub-agent's report to it, not an ack.
    assert "Last said: Restic keeps 30 daily snapshots." in summary
    assert "Last said: There are 41" not in summary


def test_the_api_summary_labels_who_spoke(home: Home, tmp_path: Path) -> None:
    import anthropic
    import httpx2

    seen: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        return httpx2.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "## Goal\n- restic\n"}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 5}})

    client = anthropic.Anthropic(api_key="test", max_retries=0, http_client=httpx2.Client(
        transport=httpx2.MockTransport(handler)))
    turns = read_transcript(transcript(tmp_path), final=True).turns
    api_summary(home, turns, "## Goal\n- (none)\n", client=client)
    prompt = seen[0]["messages"][0]["content"]
    conversation = prompt.split("<conversation>")[1]
    users = [line for line in conversation.splitlines() if line.startswith("[user]")]
    assert users == [f"[user] {PERSON_FIRST}", f"[user] {PERSON_LAST}"]
    assert f"[agent] {TASK_PROMPT}" in conversation
    assert "[machine] This is a heartbeat from memtui." in conversation


def test_recovery_quotes_only_the_person_as_the_user(home: Home, tmp_path: Path) -> None:
    path = transcript(tmp_path)
    result = recover(home, "main", 1, session=path)
    assert not result.refused, result.reason
    lines = [line for _, section in result.sections for line in section]
    users = [line for line in lines if line.startswith("[user]")]
    assert users == [f"[user] {PERSON_FIRST}", f"[user] {PERSON_LAST}"]
    assert f"[agent] {TASK_PROMPT}" in lines
    assert not any("heartbeat from memtui" in line for line in lines)
