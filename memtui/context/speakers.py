"""Who said a message, as the context engine shows it: only the person is "user".

A "user" role is not the person's words: an orchestrating agent writes a sub-agent's
Task prompt, and heartbeats, channel wrappers and hooks write machine prompts. Summaries
and recovery quote the person as the one who asked, so they go by ``Turn.author``.
"""

from __future__ import annotations

from memtui.transcripts import Turn

_LABELS = {"person": "user", "subagent": "sub-agent", "machine": "machine"}


def by_person(turn: Turn) -> bool:
    """A message the person wrote (not a prompt an agent or the machine wrote for them)."""
    return turn.author == "person" and turn.kind == "message"


def label(turn: Turn) -> str:
    """``user`` for the person, ``assistant`` for the agent's own replies, ``agent`` for a
    prompt the agent wrote (to a sub-agent), ``sub-agent``, ``machine``, ``tool``."""
    if turn.role == "tool":
        return "tool"
    if turn.author == "agent":
        return "assistant" if turn.role == "assistant" else "agent"
    return _LABELS.get(str(turn.author), str(turn.role))
