"""What real OpenClaw files hold (issue 12): v1 sessions, failures, errors, replays, wrappers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from openclaw_cases import (
    WRAPPED,
    assistant,
    encode,
    entry,
    header,
    parent_session,
    subagent_session,
    user,
    v1_session,
    wild_session,
)

from memtui.home import Home
from memtui.transcripts import read_transcript
from memtui.transcripts.harness import unwrap


def test_v1_entries_get_ids_linked_to_the_entry_before(write_lines: Callable[..., Path]) -> None:
    result = read_transcript(write_lines("v1.jsonl", v1_session()), final=True)
    assert result.problems == []
    got = [(t.id, t.parent_id, t.role, t.kind) for t in result.turns]
    # The thinking_level_change on line 3 gets an id too, as pi's migration gives it one.
    assert got == [("L2", None, "user", "message"), ("L4", "L3", "assistant", "message"),
                   ("L5", "L4", "tool", "message"), ("L6", "L5", "system", "compaction")]
    assert {t.session for t in result.turns} == {"v1-sess"}


def test_v3_entry_without_id_is_still_a_problem(write_lines: Callable[..., Path]) -> None:
    path = write_lines("v3.jsonl", [header(), entry(None, None, user("hi"), 1)])
    result = read_transcript(path)
    assert result.turns == [] and [p.line for p in result.problems] == [2]


def test_every_failure_signal_of_a_tool_result(write_lines: Callable[..., Path]) -> None:
    turns = read_transcript(write_lines("s.jsonl", wild_session()), final=True).turns
    outcome = {r.tool_call_id: r.is_error for t in turns for r in t.tool_results}
    # details.status "error" and a non-zero exit code fail although isError is false.
    assert outcome == {"c1": True, "c2": True, "c3": False}


def test_model_call_errors_are_kept(write_lines: Callable[..., Path]) -> None:
    lines = [header(), entry("x1", None, user("go"), 1),
             entry("x2", "x1", assistant(stop="aborted", error="Request was aborted"), 2),
             entry("x3", "x2", assistant(error="502 Bad Gateway", stop="error"), 3),
             entry("x4", "x3", assistant("fine"), 4)]
    turns = read_transcript(write_lines("e.jsonl", lines), final=True).turns
    # An abort is the person's Esc, not a failure.
    assert [(t.id, t.error) for t in turns] == [
        ("x1", None), ("x2", None), ("x3", "502 Bad Gateway"), ("x4", None)]


def test_replayed_stretch_is_read_once(write_lines: Callable[..., Path]) -> None:
    result = read_transcript(write_lines("s.jsonl", wild_session()), final=True)
    ids = [t.id for t in result.turns]
    assert "r1" not in ids and "r2" not in ids and {"a9", "b1", "b6"} <= set(ids)
    assert result.skipped["message (replayed)"] == 2
    assert next(t for t in result.turns if t.id == "b6").parent_id == "r2"


def test_replay_is_recognised_when_resuming_after_the_original(tmp_path: Path) -> None:
    data = encode(wild_session())
    path = tmp_path / "s.jsonl"
    cut = data.index(b'"id": "r1"')
    cut = data.rindex(b"\n", 0, cut) + 1
    path.write_bytes(data[:cut])
    first = read_transcript(path)
    path.write_bytes(data)
    rest = read_transcript(path, start_offset=first.end_offset, start_line=first.end_line)
    assert [t.id for t in rest.turns] == ["b6"] and rest.skipped["message (replayed)"] == 2


def test_the_same_words_sent_again_later_are_not_a_replay(write_lines: Callable[..., Path]
                                                          ) -> None:
    lines = [header(), entry("y1", None, user("deploy"), 1), entry("y2", "y1", user("deploy"), 9)]
    assert len(read_transcript(write_lines("t.jsonl", lines)).turns) == 2


def test_machine_prompts_are_the_machines(write_lines: Callable[..., Path]) -> None:
    turns = read_transcript(write_lines("s.jsonl", wild_session()), final=True).turns
    by_id = {t.id: t for t in turns}
    machine = [t.id for t in turns if t.role == "system"]
    assert machine == ["a7", "b4", "b5"]
    assert all(by_id[i].author == "machine" and by_id[i].text == "" for i in machine)
    assert (by_id["a1"].author, by_id["a1"].text, by_id["a1"].sender) == (
        "person", "please ship the fix", "Bo id:77")
    assert (by_id["a9"].text, by_id["a9"].sender) == (
        "No, don't restart postgres today.", "Ana (1311)")
    # The reply to a heartbeat is a protocol token, not words.
    assert (by_id["a8"].role, by_id["a8"].text) == ("assistant", "")


def test_custom_entries_are_known_and_skipped(write_lines: Callable[..., Path]) -> None:
    result = read_transcript(write_lines("s.jsonl", wild_session()), final=True)
    assert result.unknown_types == {} and result.problems == []
    assert result.skipped["custom"] == 1 and result.skipped["custom_message"] == 1
    assert result.title == "Postgres care"


def test_unwrap_leaves_the_persons_own_brackets_alone() -> None:
    assert unwrap("[draft] fix the tests").text == "[draft] fix the tests"
    assert unwrap("System: the server is down, help").text == "System: the server is down, help"
    assert unwrap("why do you reply HEARTBEAT_OK all the time?").machine is None
    assert unwrap("No, don't add Redis") == unwrap("No, don't add Redis")
    assert unwrap(WRAPPED).machine is None


def test_unwrap_recognises_formats_not_strings() -> None:
    # Another channel, a bare web-chat timestamp, an inline sender, another language.
    assert unwrap("[Signal +4915 id:4915 2026-05-02 08:00 CEST] hallo").text == "hallo"
    assert unwrap("[Sun 2026-03-15 14:27 GMT+8] 想10個自動化點子").text == "想10個自動化點子"
    inline = unwrap("Sender (untrusted metadata): webchat\n\noriginal wrapped prompt")
    assert (inline.text, inline.sender) == ("original wrapped prompt", "webchat")
    zh = ("如果存在 HEARTBEAT.md（工作区上下文），请读取并严格遵循。"
          "如果当前没有需要处理的事项，请回复 HEARTBEAT_OK。")
    assert unwrap(zh).machine == "heartbeat"
    assert unwrap("[Custom heartbeat tick]").machine == "heartbeat"
    events = ("System: [11/26/2026, 04:19:17] Channels:\nSystem: WhatsApp: linked\n"
              "  - default (line one)\n\nwhat changed?")
    assert (unwrap(events).text, unwrap(events).machine) == ("what changed?", None)
    assert unwrap("Run the following periodic tasks (only those due):\n- inbox").machine == (
        "heartbeat")


def test_a_resumed_read_names_the_tool_of_an_earlier_call(write_lines: Callable[..., Path]
                                                          ) -> None:
    def cc(kind: str, uuid: str, content: object) -> dict[str, object]:
        message = {"role": kind, "content": content, "id": "m-" + uuid}
        return {"type": kind, "uuid": uuid, "sessionId": "s", "message": message}

    call = {"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"prompt": "go"}}
    big = "x" * 300_000  # a line longer than one block of the backward search
    path = write_lines("s.jsonl", [
        cc("assistant", "a1", [call]),
        cc("assistant", "a2", [{"type": "text", "text": big}]),
        cc("user", "u1", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]),
    ])
    first = read_transcript(path)
    assert [t.id for t in first.turns] == ["m-a1"]  # m-a2 may still grow: held back
    rest = read_transcript(path, start_offset=first.end_offset, start_line=first.end_line,
                           final=True)
    assert [r.name for t in rest.turns for r in t.tool_results] == ["Task"]


_WORDS = st.text(st.characters(categories=("L", "N", "Zs"), include_characters=".,!'-"),
                 min_size=1, max_size=80).filter(lambda t: t.strip() and "HEARTBEAT" not in t)
_NAME = st.from_regex(r"[A-Z][a-z]{1,10}( [A-Z][a-z]{1,10})?", fullmatch=True)


@given(_WORDS)
def test_plain_words_come_back_unchanged(words: str) -> None:
    got = unwrap(words)
    assert (got.text, got.sender, got.machine) == (words.strip(), None, None)


@given(_WORDS, _NAME, st.sampled_from(["Telegram", "WhatsApp", "Signal", "Discord"]),
       st.sampled_from(["", " +5m", " +2h"]), st.booleans())
def test_any_envelope_or_sender_block_comes_off(words: str, name: str, channel: str,
                                                elapsed: str, as_block: bool) -> None:
    if as_block:
        wrapped = (f'Sender (untrusted metadata):\n```json\n{{"label": "{name}"}}\n```\n\n'
                   f"[Mon 2026-03-23 16:51 GMT+8] {words}")
    else:
        wrapped = f"[{channel} {name} id:42{elapsed} 2026-03-23 16:51 GMT+8] {words}"
    got = unwrap(wrapped)
    assert got.text == words.strip() and got.machine is None
    assert got.sender == (name if as_block else f"{name} id:42")


def test_memtuis_own_heartbeat_is_the_machines(home: Home) -> None:
    from memtui.context.heartbeat import build_prompt

    prompt, _ = build_prompt(home, "main", "- check the backups")
    # Its "Rejected: do NOT re-suggest" list must never come back as the person's rejections.
    assert unwrap(prompt).machine == "heartbeat"


def test_an_openclaw_sub_agent_session(write_lines: Callable[..., Path]) -> None:
    turns = read_transcript(write_lines("sub.jsonl", subagent_session()), final=True).turns
    got = [(t.id, t.role, t.author, t.subagent_id) for t in turns]
    assert got == [("s1", "user", "agent", None), ("s2", "assistant", "subagent", "sub-1"),
                   ("s3", "tool", "machine", None), ("s4", "assistant", "subagent", "sub-1")]


def test_scheduled_and_delegated_prompts_are_the_machines(write_lines: Callable[..., Path]
                                                          ) -> None:
    turns = read_transcript(write_lines("p.jsonl", parent_session()), final=True).turns
    got = [(t.role, t.author, t.text) for t in turns]
    assert got[0] == ("system", "machine", "Summarise my inbox. Never email anyone on my behalf.")
    assert got[1][:2] == ("system", "machine") and "3 tests fail." in got[1][2]
    assert got[2] == ("user", "person", "ok, retry it")
    woken = unwrap("[Subagent Context] All pending descendants have now settled.")
    assert woken.machine == "delivery" and not woken.by_agent
