"""Compaction summaries in a structured template (Goal / Constraints / Progress / Decisions /
Next Steps / Critical Context), built locally from memory.db and the region, or by the API."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from memtui.context.flush import Captured
from memtui.context.speakers import by_person, label
from memtui.home import Home
from memtui.stores import state as state_store
from memtui.transcripts import Turn
from memtui.transcripts.harness import is_ack

SECTIONS = ("Goal", "Constraints", "Progress", "Decisions", "Next Steps", "Critical Context")
_READS = ("read", "Read", "view", "cat")
_WRITES = ("write", "Write", "edit", "Edit", "MultiEdit", "apply_patch")
_SECTION = re.compile(r"^## Goal\n(.*?)(?=^## |\Z)", re.S | re.M)


def _short(text: str, limit: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _path(args: dict[str, Any]) -> str | None:
    for key in ("path", "file_path", "filePath"):
        if isinstance(args.get(key), str):
            return str(args[key])
    return None


def local_summary(home: Home, agent: str, turns: Sequence[Turn], captured: Sequence[Captured],
                  previous: str | None = None) -> str:
    """A summary from what memory holds and what the region shows, without a model."""
    users = [t for t in turns if by_person(t) and t.text]
    goal = []
    if previous and (match := _SECTION.search(previous)):
        goal.append(match.group(1).strip())
    if users:
        goal.append(f"- Asked first: {_short(users[0].text)}")
        if len(users) > 1:
            goal.append(f"- Asked last: {_short(users[-1].text)}")
    db = home.open_db()
    try:
        with db.read():
            rejected = state_store.recent(db, category="rejected", agent=agent,
                                          statuses=state_store.REJECTION_STATUSES, limit=8)
            tasks = state_store.recent(db, category="task", agent=agent, limit=6)
            done = state_store.recent(db, category="task", agent=agent,
                                      statuses=("completed",), limit=5)
    finally:
        db.close()
    constraints = [f"- {_short(e.summary)}" for e in rejected]
    tools: Counter[str] = Counter()
    reads: dict[str, None] = {}
    writes: dict[str, None] = {}
    for turn in turns:
        for call in turn.tool_calls:
            tools[call.name] += 1
            path = _path(call.input)
            if path and call.name in _READS:
                reads.setdefault(path)
            elif path and call.name in _WRITES:
                writes.setdefault(path)
    progress = [f"- Done: {_short(e.summary)}" for e in done]
    if tools:
        progress.append("- Tool calls: " + ", ".join(f"{n}× {name}"
                                                     for name, n in tools.most_common(8)))
    if reads:
        progress.append("- Read: " + ", ".join(list(reads)[-10:]))
    if writes:
        progress.append("- Modified: " + ", ".join(list(writes)[-10:]))
    decisions = [f"- {_short(c.summary)} ({c.ref})" for c in captured
                 if c.category == "decision" and c.in_memory]
    decisions += [f"- {_rejected(_short(c.summary))} ({c.ref})" for c in captured
                  if c.category == "rejected" and c.in_memory]
    steps = [f"- {_short(e.summary)}" for e in tasks]
    critical = []
    errors = [r for t in turns for r in t.tool_results if r.is_error]
    for result in errors[-3:]:
        critical.append(f"- {result.name or 'tool'} failed: {_short(result.content, 160)}")
    # The main agent's last answer: a sub-agent's is its report to the agent, and an ack
    # (HEARTBEAT_OK, NO_REPLY) says nothing.
    answers = [t for t in turns if t.role == "assistant" and t.author == "agent" and t.text
               and not is_ack(t.text)]
    if answers:
        critical.append(f"- Last said: {_short(answers[-1].text, 400)}")
    body = {"Goal": goal, "Constraints": constraints, "Progress": progress,
            "Decisions": decisions, "Next Steps": steps, "Critical Context": critical}
    out = []
    for name in SECTIONS:
        out.append(f"## {name}")
        out.extend(body[name] or ["- (none)"])
        out.append("")
    return "\n".join(out).rstrip() + "\n"


PROMPT = """Summarise the conversation below for an agent whose earlier context is being \
compacted. Use exactly these markdown sections: {sections}. Keep exact names, paths, \
numbers and the human's own words for decisions and rejections: only [user] lines are \
the human's ([agent] is the agent prompting a sub-agent, [machine] a harness or \
heartbeat prompt). Be brief.

What memory already holds for this agent (keep it consistent):
{memory}

<conversation>
{conversation}
</conversation>"""


def api_summary(home: Home, turns: Sequence[Turn], local: str, client: Any = None) -> str:
    """One Messages API call; the local summary is its memory context."""
    from memtui.context.counting import anthropic_client

    cfg = home.settings.context
    lines = []
    for turn in turns:
        text = turn.text or "\n".join(r.content[:2000] for r in turn.tool_results)
        if text:
            lines.append(f"[{label(turn)}] {text}")
    conversation = "\n".join(lines)[-400_000:]
    prompt = PROMPT.format(sections=" / ".join(SECTIONS), memory=local,
                           conversation=conversation)
    response = anthropic_client(client, timeout=home.settings.extract.timeout_seconds) \
        .messages.create(model=cfg.summary_model, max_tokens=4096,
                         messages=[{"role": "user", "content": prompt}])
    text = "".join(getattr(block, "text", "") for block in response.content)
    return text.strip() + "\n"


def _rejected(summary: str) -> str:
    """A rejection as the summary lists it: marked once ("Rejected: adding Redis", not
    "Rejected: Rejected: adding Redis"; a refused tool use says so itself)."""
    if re.match(r"(?:Rejected|Declined|Refused)\b", summary):
        return summary
    return f"Rejected: {summary}"
