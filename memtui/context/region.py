"""The region a compaction would summarise: everything before a cut that keeps the most
recent ~keep_recent_tokens verbatim, never cutting between a tool call and its result."""

from __future__ import annotations

from dataclasses import dataclass

from memtui.context.accounting import Accountant
from memtui.transcripts import Turn


@dataclass(frozen=True)
class Region:
    """Items ``[0, cut)`` of the window are summarised; ``first_kept`` opens the rest."""

    cut: int
    first_kept: str | None
    turns: tuple[Turn, ...]
    """The summarised messages (the previous compaction summary is not a message)."""
    tokens: int


def cut_point(acct: Accountant, keep_tokens: int) -> int:
    """Index of the first kept item: at least ``keep_tokens`` after it, at a message start
    that is not a tool result (walking back to the assistant message that made the call)."""
    items = acct.items
    kept = 0
    index = len(items)
    while index > 0 and kept < keep_tokens:
        index -= 1
        kept += items[index].tokens
    if index == 0:
        return 0
    while index > 0:
        item = items[index]
        starts_turn = items[index - 1].turn_id != item.turn_id
        if starts_turn and item.kind not in ("tool results", "compaction summary"):
            return index
        index -= 1
    return 0


def region(acct: Accountant, keep_tokens: int) -> Region:
    cut = cut_point(acct, keep_tokens)
    ids = list(dict.fromkeys(item.turn_id for item in acct.items[:cut]
                             if item.kind != "compaction summary"))
    turns = tuple(acct.turns[i] for i in ids if i in acct.turns)
    first_kept = acct.items[cut].turn_id if cut and cut < len(acct.items) else None
    return Region(cut, first_kept, turns, sum(i.tokens for i in acct.items[:cut]))
