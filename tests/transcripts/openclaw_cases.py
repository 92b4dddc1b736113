"""Small synthetic OpenClaw sessions holding what real files hold and the samples did not."""

from __future__ import annotations

import json
from typing import Any

HEARTBEAT = ("Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. Do not "
             "infer or repeat old tasks from prior chats. If nothing needs attention, reply "
             "HEARTBEAT_OK.\nCurrent time: Tuesday, June 23rd, 2026 - 04:19 (UTC)")
WRAPPED = ('Conversation info (untrusted metadata):\n```json\n{\n  "message_id": "4122",\n'
           '  "sender_id": "1311",\n  "sender": "Ana",\n  "timestamp": "Mon 2026-03-23 16:51 '
           'GMT+8"\n}\n```\n\nSender (untrusted metadata):\n```json\n{\n  "label": "Ana (1311)",'
           '\n  "id": "1311",\n  "name": "Ana"\n}\n```\n\nNo, don\'t restart postgres today.')
ENVELOPED = "[Telegram Bo id:77 +2m 2026-03-23 17:05 GMT+8] please ship the fix"
SYSTEM_ONLY = ("System: [2026-03-23 17:06:01 GMT+8] Exec finished (gateway id=9, code 0)\n\n"
               "System: [2026-03-23 17:06:02 GMT+8] Cron job backup done")


def header(session: str = "sess-1", version: int | None = 3) -> dict[str, Any]:
    line: dict[str, Any] = {"type": "session", "id": session, "timestamp": "2026-03-23T08:00:00Z",
                            "cwd": "/w"}
    if version is not None:
        line["version"] = version
    return line


def entry(entry_id: str | None, parent: str | None, message: dict[str, Any], ts: int,
          kind: str = "message") -> dict[str, Any]:
    line: dict[str, Any] = {"type": kind}
    if entry_id is not None:
        line |= {"id": entry_id, "parentId": parent}
    stamp = f"2026-03-23T09:{ts // 60:02d}:{ts % 60:02d}.000Z"
    return line | {"timestamp": stamp, "message": {**message, "timestamp": 1774256400000 + ts}}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(text: str = "", *, calls: tuple[str, ...] = (), stop: str = "stop",
              error: str | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "toolCall", "id": c, "name": "exec", "arguments": {"command": "ls"}}
                for c in calls]
    message = {"role": "assistant", "content": content, "stopReason": stop,
               "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0}}
    if error is not None:
        message["errorMessage"] = error
    return message


def result(call: str, text: str, *, is_error: bool = False, **details: Any) -> dict[str, Any]:
    message = {"role": "toolResult", "toolCallId": call, "toolName": "exec",
               "content": [{"type": "text", "text": text}], "isError": is_error}
    if details:
        message["details"] = details
    return message


def wild_session() -> list[dict[str, Any]]:
    """A v3 session with every pattern of issue 12 in it, in the order they happen."""
    lines = [
        header(),
        entry("a1", None, user(ENVELOPED), 1),
        entry("a2", "a1", assistant(calls=("c1", "c2", "c3")), 2),
        entry("a3", "a2", result("c1", "bash: foo: not found", status="error",
                                 error="exit 127"), 3),
        entry("a4", "a3", result("c2", "done", status="completed", exitCode=2), 4),
        entry("a5", "a4", result("c3", "ok", status="completed", exitCode=0), 5),
        entry("a6", "a5", assistant(error="429 rate_limit_error: too many requests",
                                    stop="error"), 6),
        entry("a7", "a6", user(HEARTBEAT), 7),
        entry("a8", "a7", assistant("HEARTBEAT_OK"), 8),
        entry("a9", "a8", user(WRAPPED), 9),
        entry("b1", "a9", assistant("Understood, no restart today."), 10),
        {"type": "custom", "id": "b2", "parentId": "b1", "customType": "x", "data": {}},
        {"type": "custom_message", "id": "b3", "parentId": "b2", "customType": "x",
         "content": "hi", "display": False},
        {"type": "session_info", "id": "b3a", "parentId": "b3", "name": "Postgres care",
         "timestamp": "2026-03-23T09:00:10.500Z"},
        entry("b4", "b3a", user(SYSTEM_ONLY), 11),
        entry("b5", "b4", user("[OpenClaw heartbeat poll]"), 12),
        # The replay: the stretch a9..b1 again, as a branch from a8, with new ids.
        entry("r1", "a8", user(WRAPPED), 9),
        entry("r2", "r1", assistant("Understood, no restart today."), 10),
        entry("b6", "r2", user("thanks"), 13),
    ]
    return lines


def v1_session() -> list[dict[str, Any]]:
    """pi's version 1: a header without ``version``, entries without ids."""
    return [
        header("v1-sess", version=None),
        entry(None, None, user("read the README"), 1),
        {"type": "thinking_level_change", "timestamp": "2026-03-23T09:00:02.000Z",
         "thinkingLevel": "high"},
        entry(None, None, assistant("Reading it.", calls=("c1",)), 3),
        entry(None, None, result("c1", "# README"), 4),
        {"type": "compaction", "timestamp": "2026-03-23T09:00:05.000Z", "summary": "Read it.",
         "firstKeptEntryIndex": 3, "tokensBefore": 100},
    ]


def encode(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(x, ensure_ascii=False).encode() + b"\n" for x in lines)


SUBAGENT_TASK = ("[Sat 2026-04-18 15:10 GMT+8] [Subagent Context] You are running as a subagent "
                 "(depth 1/1). Results auto-announce to your requester; do not busy-poll for "
                 "status.\n\n[Subagent Task]: Don't touch prod; count the failing tests.")
DELIVERY = ("[Wed 2026-02-18 16:43 GMT+1] [System Message] [sessionId: sub-1] A subagent task "
            "\"count\" just completed.\n\nResult:\n3 tests fail.")
CRON = "[cron:8f2a Daily digest] Summarise my inbox. Never email anyone on my behalf."


def subagent_session() -> list[dict[str, Any]]:
    """An OpenClaw sub-agent's own session: the parent's task, then the sub-agent's work."""
    return [
        header("sub-1"),
        entry("s1", None, user(SUBAGENT_TASK), 1),
        entry("s2", "s1", assistant("We decided against touching prod.", calls=("k1",)), 2),
        entry("s3", "s2", result("k1", "3 failed"), 3),
        entry("s4", "s3", assistant("3 tests fail."), 4),
    ]


def parent_session() -> list[dict[str, Any]]:
    """The parent's side: a cron prompt, a sub-agent's result handed back, a system event."""
    return [
        header("main-1"),
        entry("p1", None, user(CRON), 1),
        entry("p2", "p1", user(DELIVERY), 2),
        entry("p3", "p2", user("System (untrusted): [2026-04-18 14:58:51 GMT+8] Exec failed "
                               "(tide-pra, signal SIGTERM)\n\nok, retry it"), 3),
    ]
