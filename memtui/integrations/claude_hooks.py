"""What each Claude Code hook event does, and what it prints back (the engine side).

Claude Code runs a command per event with a JSON payload on stdin and reads its stdout:

- SessionStart: boot context and Tier 0 recovery (active state and rejections), as
  ``hookSpecificOutput.additionalContext``;
- UserPromptSubmit: the five memories most relevant to the prompt (ambient recall), the
  same way; keyword search in this process unless the warm search service answers, so
  the embedding model is never loaded here;
- PreToolUse: the pre-action gate, for tool calls that match a flow; its items go back
  as ``additionalContext``, and a matching rejection asks the user
  (``permissionDecision: "ask"``) with the reason; memtui never allows or denies a call;
- PreCompact: `memtui flush --force` (the context engine extracts the region about to be
  compacted); PostToolUse: episodic capture (the session extracted, at most every
  ``CAPTURE_EVERY`` seconds); Stop: extract. These run in a detached process, so the
  agent never waits for them.

A hook must never block the agent: ``run`` returns no output on any failure, and says
why in the result's ``log`` line for the hook log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memtui.home import Home
from memtui.serving.framing import as_context

RECALL_LIMIT = 5
CAPTURE_EVERY = 30.0
"""Seconds between two captures started by PostToolUse (Stop always extracts)."""
ASK_RELEVANCE = 0.5
"""A rejection this relevant to a tool call makes the gate ask the user first."""


@dataclass(frozen=True)
class HookResult:
    """What to print (None: nothing) and one line for the hook log."""

    output: dict[str, Any] | None
    log: str


def _context(event: str, text: str) -> dict[str, Any] | None:
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def run(home: Home, agent: str, event: str, payload: dict[str, Any]) -> HookResult:
    """Handle one event; any failure gives no output and the reason in ``log``."""
    handler = HANDLERS.get(event)
    if handler is None:
        return HookResult(None, f"{event}: not an event memtui handles")
    try:
        return handler(home, agent, payload)
    except Exception as exc:  # a hook never blocks the agent: say why, inject nothing
        return HookResult(None, f"{event}: failed, nothing injected: "
                                f"{type(exc).__name__}: {exc}")


def session_start(home: Home, agent: str, payload: dict[str, Any]) -> HookResult:
    from memtui.serving.boot import build_boot

    db = home.open_db()
    try:
        boot = build_boot(home, db, agent)
        recovery = _tier0(home, db, agent, payload)
    finally:
        db.close()
    lines = [(line.removeprefix("- "), f"boot:{s.name}") for s in boot.sections
             for line in s.lines]
    lines += [(text, cite) for text, cite in recovery]
    block = as_context(f"session start for {agent}", lines)
    return HookResult(_context("SessionStart", block),
                      f"SessionStart: {len(lines)} line(s) of boot context and recovery")


def _tier0(home: Home, db: Any, agent: str, payload: dict[str, Any]) -> list[tuple[str, str]]:
    """Tier 0: the context engine's when it is there, else active state and rejections."""
    try:
        from memtui.context.recovery import recover
    except ImportError:
        from memtui.stores import state

        rows = state.recent(db, agent=agent, category="rejected",
                            statuses=state.REJECTION_STATUSES, limit=20)
        rows += state.recent(db, agent=agent, exclude_category="rejected", limit=30)
        return [(f"[{e.category}] {e.summary}", f"state:{e.id}") for e in rows]
    transcript = payload.get("transcript_path")
    session = Path(transcript) if transcript and Path(transcript).is_file() else None
    result = recover(home, agent, 0, session=session)
    return [(line.lstrip("- "), f"recovery:{title}")
            for title, lines in result.sections for line in lines if line.strip()]


def user_prompt(home: Home, agent: str, payload: dict[str, Any]) -> HookResult:
    from memtui.search import keyword, service

    prompt = str(payload.get("prompt") or "").strip()
    if not prompt:
        return HookResult(None, "UserPromptSubmit: empty prompt")
    answer, why = service.ask(home, {"op": "recall", "agent": agent, "query": prompt,
                                     "limit": RECALL_LIMIT})
    if answer is not None:
        hits, how = answer["result"]["hits"], "service"
    else:
        hits = keyword.recall(home, agent, prompt, limit=RECALL_LIMIT).as_dict()["hits"]
        how = f"keyword in-process ({why})"
    hits = hits[:RECALL_LIMIT]
    block = as_context("relevant memories", [(h["text"], h["cite"]) for h in hits])
    return HookResult(_context("UserPromptSubmit", block),
                      f"UserPromptSubmit: {len(hits)} memories, {how}")


def action_of(tool: str, tool_input: dict[str, Any]) -> str:
    """The words of a tool call a flow or a rejection can match."""
    if tool == "Bash":
        return str(tool_input.get("command") or "")
    target = tool_input.get("file_path") or tool_input.get("notebook_path") or ""
    return f"{tool.lower()} {target}".strip()


def pre_tool(home: Home, agent: str, payload: dict[str, Any]) -> HookResult:
    from memtui.serving.flowmatch import rank_flows
    from memtui.serving.gates import pre_gate
    from memtui.stores import flows

    tool = str(payload.get("tool_name") or "")
    action = action_of(tool, dict(payload.get("tool_input") or {}))
    if not action:
        return HookResult(None, f"PreToolUse: {tool} has nothing to match")
    db = home.open_db()
    try:
        if not rank_flows(flows.list_flows(db, status="active"), action):
            return HookResult(None, f"PreToolUse: no flow matches {tool}")
        gate = pre_gate(home, db, agent, action)
    finally:
        db.close()
    items = [(i.text, i.ref or s.name) for s in gate.sections for i in s.items]
    out = _context("PreToolUse", as_context(f"pre-action gate {gate.gate_id}", items))
    rejected = [i for s in gate.sections if s.name == "rejections" for i in s.items
                if i.relevance >= ASK_RELEVANCE]
    if out is not None and rejected:
        out["hookSpecificOutput"]["permissionDecision"] = "ask"
        out["hookSpecificOutput"]["permissionDecisionReason"] = (
            "memtui: this was rejected before: " + "; ".join(i.text for i in rejected[:3]))
    return HookResult(out, f"PreToolUse: gate {gate.gate_id} for flow {gate.flow}, "
                           f"{len(items)} item(s), {'ask' if rejected else 'no decision'}")


def _extract_later(home: Home, agent: str, payload: dict[str, Any], event: str,
                   every: float = 0.0, command: tuple[str, ...] = ("extract", "--wait"),
                   ) -> HookResult:
    """Start `memtui extract` (or ``command``) for the session's transcript, detached."""
    transcript = str(payload.get("transcript_path") or "")
    if not transcript:
        return HookResult(None, f"{event}: no transcript_path in the payload")
    stamp = home.root / f".hook-capture-{agent}"
    if every and stamp.exists() and time.time() - stamp.stat().st_mtime < every:
        return HookResult(None, f"{event}: captured less than {every:.0f}s ago")
    stamp.touch()
    target = ["--session", transcript] if command[0] == "flush" else ["--source", transcript]
    log = open(log_path(home), "ab")  # noqa: SIM115 - handed to the child, closed below
    try:
        subprocess.Popen(
            [sys.executable, "-m", "memtui.cli.main", "--home", str(home.root), command[0],
             "--agent", agent, *target, *command[1:]],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
            close_fds=True, env={**os.environ, "MEMTUI_HOOK": event})
    finally:
        log.close()
    return HookResult(None, f"{event}: `memtui {command[0]}` of {transcript} started in the "
                            "background")


def pre_compact(home: Home, agent: str, payload: dict[str, Any]) -> HookResult:
    """The context engine's flush: the region about to be compacted goes to memory now."""
    return _extract_later(home, agent, payload, "PreCompact", command=("flush", "--force"))


def post_tool(home: Home, agent: str, payload: dict[str, Any]) -> HookResult:
    return _extract_later(home, agent, payload, "PostToolUse", every=CAPTURE_EVERY)


def stop(home: Home, agent: str, payload: dict[str, Any]) -> HookResult:
    return _extract_later(home, agent, payload, "Stop")


HANDLERS = {"SessionStart": session_start, "UserPromptSubmit": user_prompt,
            "PreToolUse": pre_tool, "PreCompact": pre_compact, "PostToolUse": post_tool,
            "Stop": stop}


def log_path(home: Home) -> Path:
    return home.root / "hooks.log"


def write_log(home: Home, line: str) -> None:
    """Append one line to the hook log; a log that cannot be written is no failure."""
    try:
        with open(log_path(home), "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")
    except OSError:
        pass


def render(result: HookResult) -> str:
    return "" if result.output is None else json.dumps(result.output, ensure_ascii=False)
