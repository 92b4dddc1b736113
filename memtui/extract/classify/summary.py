"""Summaries that name what was refused or decided, from the proposal a reply answers.

"That's a no on the paid plan" after "Would you like me to sign up for the paid
newsletter plan?" is filed as "Rejected: signing up for the paid newsletter plan"; "OK,
approved" after "Shall I ship the Hugo site on Friday?" as "Ship the Hugo site on Friday".
"""

from __future__ import annotations

import re

from memtui.extract.classify.features import ASKING, CONTEXT_CHARS
from memtui.text import capital, clean, sentences, shorten

_ASK_LEAD = re.compile(
    r"^(?:(?:ok|okay|so|then|alternatively|also|next)[,:]?\s+)?(?:"
    r"(?:do you want|would you like|want|shall|should|can|could|may) (?:me|i|we) (?:to )?"
    r"|(?:should|shall|can|could|may) (?:i|we)\s"
    r"|i (?:could|can|would|'d|will|'ll) (?:also |just )?(?:like to |suggest (?:we |that we )?)?"
    r"|i (?:suggest|propose|recommend) (?:that )?(?:we |i )?"
    r"|i'm (?:thinking of|going to|planning to)\s|we could\s|how about (?:i |we )?"
    r"|next step:\s*|plan:\s*|ready to\s)", re.I)
_TAIL = re.compile(r"(?:[,;]?\s*(?:ok|okay|right|go|go ahead|proceed|now|for you|if you want|"
                   r"sound good))?[?.!\s]*$", re.I)
_PRONOUNS = {"your": "my", "you": "me"}
_DOUBLE = re.compile(r"^[^aeiou]*[aeiou][bdgmnprt]$")
_DOUBLE_ALSO = frozenset({"commit", "submit", "admit", "begin", "forget", "regret", "refer",
                          "prefer", "omit", "permit", "upset", "unzip"})


def proposal(previous: str) -> str:
    """The action the preceding turn proposes, as an imperative ("" when none).

    A bare "Should I?" after "I can add Redis as a cache." reads the sentence before it.
    """
    if not previous:
        return ""
    parts = sentences(clean(previous))
    for i in range(len(parts) - 1, -1, -1):
        if not ASKING.search(parts[i]):
            continue
        candidates = [parts[i]] + ([parts[i - 1]] if i and len(parts[i].split()) <= 3 else [])
        for ask in candidates:
            m = _ASK_LEAD.match(ask.strip())
            if m is None:
                continue
            action = _TAIL.sub("", ask.strip()[m.end():]).strip(" ,")
            words = action.split()
            if words and words[0].isalpha() and len(words) <= 25:
                return shorten(action, CONTEXT_CHARS)
        return ""
    return ""


def gerund(verb: str) -> str:
    """'sign' → 'signing', 'make' → 'making', 'stop' → 'stopping' (common English rules)."""
    v = verb.lower()
    if v.endswith("ie"):
        return v[:-2] + "ying"
    if v.endswith("e") and not v.endswith(("ee", "ye", "oe")) and len(v) > 2:
        return v[:-1] + "ing"
    if _DOUBLE.match(v) or v in _DOUBLE_ALSO:
        return v + v[-1] + "ing"
    return v + "ing"


def rejection_summary(text: str, previous: str) -> str:
    """'Rejected: <the refused action>' when the turn answers a proposal, else its words."""
    action = proposal(previous)
    if action:
        first, _, rest = action.partition(" ")
        return shorten(f"Rejected: {gerund(first)} {rest}".strip())
    return shorten(f"Rejected: {text.strip()}")


def decision_summary(text: str, previous: str) -> str:
    """The decision itself: the approved proposal as an order, the turn's own words if it
    says more than an approval (a condition, a change)."""
    action = proposal(previous)
    words = text.strip()
    if not action:
        return shorten(words)
    decided = capital(action)
    if len(words.split()) > 4:
        return shorten(f"{decided} — {words}")
    return shorten(decided)
