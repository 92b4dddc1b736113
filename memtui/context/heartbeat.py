"""The heartbeat: wake an agent with its checklist and where it left off, or stay quiet.

Skipped when HEARTBEAT.md is effectively empty or outside active hours. Otherwise the
prompt carries HEARTBEAT.md, open tasks and checkpoints, and rejections, with memtui's
suggestion ("continue task X" or HEARTBEAT_OK). Delivery: dry-run shows the prompt,
command pipes it to a configured command, anthropic makes one API call. An OK reply, a
NO_REPLY and an alert identical to one within dedupe_hours are suppressed. Every run is
logged in the jobs table with its outcome, tokens and estimated cost.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memtui import timeutil
from memtui.context import replies
from memtui.errors import ConfigError, MemtuiError
from memtui.home import Home
from memtui.stores import jobs
from memtui.stores import state as state_store
from memtui.text import estimate_tokens

DELIVERIES = ("dry-run", "command", "anthropic")
_EMPTY_LINE = re.compile(r"^\s*(#+(\s.*)?|[-*+]\s*(\[[ xX]?\])?\s*|<!--.*-->)?\s*$")


@dataclass(frozen=True)
class HeartbeatResult:
    agent: str
    deliver: str
    outcome: str
    """skipped, dry-run, ok, no-reply, duplicate, alert or failed."""
    reason: str
    decision: str
    prompt: str
    reply: str | None
    shown: str | None
    """What reaches the human: the alert, or None when suppressed."""
    tokens_in: int
    tokens_out: int
    exact_tokens: bool
    cost_usd: float
    job_id: int | None


@dataclass(frozen=True)
class DayCost:
    day: str
    runs: int
    tokens: int
    cost_usd: float


def effectively_empty(text: str) -> bool:
    """Only blank lines, headers, empty list items or comments: nothing to check."""
    return all(_EMPTY_LINE.match(line) for line in text.splitlines())


def within_active_hours(spec: str, zone: str, now: datetime) -> bool:
    """``HH:MM-HH:MM`` in ``zone``; a range may wrap past midnight; empty means always."""
    if not spec.strip():
        return True
    try:
        start_s, end_s = (part.strip() for part in spec.split("-"))
        start = _clock(start_s)
        end = _clock(end_s)
        tz = ZoneInfo(zone)
    except (ValueError, ZoneInfoNotFoundError) as exc:
        raise ConfigError("memtui.toml", "heartbeat.active_hours",
                          f"HH:MM-HH:MM and an IANA time zone, got {spec!r} in {zone!r} "
                          f"({exc})") from exc
    local = now.astimezone(tz).time()
    if start == end:
        return True
    if start < end:
        return start <= local < end
    return local >= start or local < end


def _clock(text: str) -> time:
    if text == "24:00":
        return time(23, 59, 59, 999999)
    hours, minutes = text.split(":")
    return time(int(hours), int(minutes))


def build_prompt(home: Home, agent: str, checklist: str) -> tuple[str, str]:
    """(prompt, decision): the checklist, open tasks and checkpoints, rejections."""
    db = home.open_db()
    try:
        with db.read():
            tasks = state_store.recent(db, category="task", agent=agent, limit=5)
            checkpoints = state_store.recent(db, category="agent_state", agent=agent, limit=3)
            rejected = state_store.recent(db, category="rejected", agent=agent,
                                          statuses=state_store.REJECTION_STATUSES, limit=8)
    finally:
        db.close()
    if tasks:
        decision = f"continue task: {tasks[0].summary}"
    else:
        decision = replies.HEARTBEAT_OK
    lines = ["This is a heartbeat from memtui. Follow the checklist below strictly; do not "
             "restart old tasks from earlier chats unless they are listed as open.",
             f"If nothing needs attention, reply {replies.HEARTBEAT_OK} and nothing else.", "",
             "## HEARTBEAT.md", checklist.strip(), "", "## Where you left off"]
    lines += [f"- Open task: {t.summary}" for t in tasks] or ["- No open tasks."]
    lines += [f"- Checkpoint: {c.summary}" for c in checkpoints]
    if rejected:
        lines += ["", "## Rejected: do NOT re-suggest"] + [f"- {r.summary}" for r in rejected]
    lines += ["", "## memtui suggests",
              f"- {decision}" if tasks else f"- Nothing is open: {replies.HEARTBEAT_OK} "
                                            "unless the checklist finds a problem."]
    return "\n".join(lines) + "\n", decision


def _deliver_command(home: Home, agent: str, prompt: str) -> str:
    cfg = home.settings.heartbeat
    if not cfg.command.strip():
        raise MemtuiError("heartbeat delivery 'command' needs [heartbeat] command in "
                          f"{home.config_path}")
    workspace = home.workspace(agent)
    try:
        done = subprocess.run(cfg.command, shell=True, input=prompt, capture_output=True,
                              text=True, timeout=cfg.timeout_seconds,
                              cwd=workspace if workspace.is_dir() else None)
    except subprocess.TimeoutExpired as exc:
        raise MemtuiError(f"heartbeat command timed out after {cfg.timeout_seconds:g} s: "
                          f"{cfg.command}") from exc
    if done.returncode != 0:
        raise MemtuiError(f"heartbeat command exited {done.returncode}: "
                          f"{done.stderr.strip()[-500:]}")
    return done.stdout


def _deliver_anthropic(home: Home, prompt: str, client: Any) -> tuple[str, int, int]:
    import anthropic

    from memtui.context.counting import anthropic_client

    cfg = home.settings.heartbeat
    try:
        response = anthropic_client(client, cfg.timeout_seconds).messages.create(
            model=cfg.model, max_tokens=cfg.max_output_tokens,
            messages=[{"role": "user", "content": prompt}])
    except (anthropic.AnthropicError, TypeError) as exc:
        raise MemtuiError(f"heartbeat API call failed: {type(exc).__name__}: {exc}") from exc
    text = "".join(getattr(block, "text", "") for block in response.content)
    u = response.usage
    tokens_in = (u.input_tokens + (u.cache_read_input_tokens or 0)
                 + (u.cache_creation_input_tokens or 0))
    return text, tokens_in, u.output_tokens


def _seen_recently(home: Home, agent: str, key: str, now: datetime) -> bool:
    hours = home.settings.heartbeat.dedupe_hours
    cutoff = timeutil.iso(now - timedelta(hours=hours))
    db = home.open_db()
    try:
        with db.read():
            runs = jobs.recent(db, "heartbeat", limit=500)
    finally:
        db.close()
    return any(j.name == agent and j.started_at >= cutoff and j.counts.get("alert_key") == key
               and j.counts.get("outcome") in ("alert", "duplicate") for j in runs)


def _attempt(home: Home, agent: str, deliver: str, now: datetime, client: Any
             ) -> tuple[HeartbeatResult, str]:
    """The run's result (before its cost and job are known) and the alert's key."""
    cfg = home.settings.heartbeat
    checklist_path = home.workspace(agent) / "HEARTBEAT.md"
    checklist = checklist_path.read_text(encoding="utf-8") if checklist_path.is_file() else ""
    prompt, decision, reply, shown = "", "", None, None
    tokens_in = tokens_out = 0
    exact = False
    key = ""
    if effectively_empty(checklist):
        outcome, reason = "skipped", f"{checklist_path} is empty or missing"
    elif not within_active_hours(cfg.active_hours, cfg.timezone, now):
        outcome, reason = "skipped", (f"outside active hours {cfg.active_hours} "
                                      f"({cfg.timezone})")
    else:
        prompt, decision = build_prompt(home, agent, checklist)
        tokens_in = estimate_tokens(prompt)
        try:
            if deliver == "dry-run":
                outcome, reason = "dry-run", "shown, not sent"
            elif deliver == "command":
                reply = _deliver_command(home, agent, prompt)
            else:
                reply, tokens_in, tokens_out = _deliver_anthropic(home, prompt, client)
                exact = True
        except MemtuiError as exc:
            outcome, reason = "failed", str(exc)
        if reply is not None:
            tokens_out = tokens_out or estimate_tokens(reply)
            ok, rest = replies.strip_ok(reply, cfg.ack_max_chars)
            if replies.is_no_reply(reply):
                outcome, reason = "no-reply", "the reply starts with NO_REPLY: suppressed"
            elif ok:
                outcome, reason = "ok", f"{replies.HEARTBEAT_OK}: suppressed"
            else:
                key = replies.alert_key(rest)
                if _seen_recently(home, agent, key, now):
                    outcome, reason = "duplicate", (f"the same alert within "
                                                    f"{cfg.dedupe_hours} h: suppressed")
                else:
                    outcome, reason, shown = "alert", "delivered", rest
    return HeartbeatResult(agent, deliver, outcome, reason, decision, prompt, reply, shown,
                           tokens_in, tokens_out, exact, 0.0, None), key


def run_heartbeat(home: Home, agent: str, deliver: str = "dry-run", *,
                  now: datetime | None = None, client: Any = None) -> HeartbeatResult:
    """One heartbeat for ``agent``; see the module docstring."""
    if deliver not in DELIVERIES:
        raise MemtuiError(f"unknown delivery {deliver!r}: use {', '.join(DELIVERIES)}")
    cfg = home.settings.heartbeat
    now = now or timeutil.now()
    db = home.open_db()
    try:
        job = jobs.start(db, "heartbeat", agent, dry_run=deliver == "dry-run")
    finally:
        db.close()
    try:
        result, key = _attempt(home, agent, deliver, now, client)
    except BaseException as exc:
        db = home.open_db()
        try:
            jobs.finish(db, job, "failed", {"outcome": "failed", "deliver": deliver},
                        f"{type(exc).__name__}: {exc}")
        finally:
            db.close()
        raise
    cost = (result.tokens_in * cfg.input_price_per_mtok
            + result.tokens_out * cfg.output_price_per_mtok) / 1_000_000 \
        if deliver != "dry-run" else 0.0
    counts = {"outcome": result.outcome, "deliver": deliver, "decision": result.decision,
              "tokens_in": result.tokens_in, "tokens_out": result.tokens_out,
              "exact_tokens": result.exact_tokens, "cost_usd": round(cost, 6), "alert_key": key}
    status = {"skipped": "skipped", "failed": "failed"}.get(result.outcome, "ok")
    db = home.open_db()
    try:
        jobs.finish(db, job, status, counts, result.reason)
    finally:
        db.close()
    return dataclasses.replace(result, cost_usd=round(cost, 6), job_id=job)


def heartbeat_costs(home: Home, agent: str | None = None, days: int = 7) -> list[DayCost]:
    """Heartbeat runs, tokens and estimated cost per day, newest first (the console's view)."""
    cutoff = (timeutil.now() - timedelta(days=days)).date().isoformat()
    db = home.open_db()
    try:
        with db.read():
            runs = jobs.recent(db, "heartbeat", limit=10_000)
    finally:
        db.close()
    by_day: dict[str, list[jobs.Job]] = {}
    for job in runs:
        if (agent is None or job.name == agent) and job.started_at[:10] >= cutoff:
            by_day.setdefault(job.started_at[:10], []).append(job)
    return [DayCost(day, len(js),
                    sum(int(j.counts.get("tokens_in", 0)) + int(j.counts.get("tokens_out", 0))
                        for j in js),
                    round(sum(float(j.counts.get("cost_usd", 0.0)) for j in js), 6))
            for day, js in sorted(by_day.items(), reverse=True)]
