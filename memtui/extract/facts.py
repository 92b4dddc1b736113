"""Facts the local extractor reads from a sentence: "my X is Y", "set X to Y" and the like.

A fact is a key and a value that can change later ("timezone" = "Europe/Berlin"). The
rules favour precision: a key that names no thing ("the problem is ..."), a value that
reads like a clause ("that ...", "because ...") or a long one is no fact.
"""

from __future__ import annotations

import re

from memtui.extract.candidates import FactCandidate, PreparedTurn


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


_VALUE_LIKE = re.compile(r"[\d/.:@`\"'_=-]|^[A-Z]\w*$|^\S+$")
_BAD_KEYS = frozenset(
    """problem issue cause reason fix error answer question thing point idea plan goal result
    output difference problem here there it this that one way best worst only same other rest
    first last next main whole key trick catch bug culprit solution truth fact""".split()
)
_FACT_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (_rx(r"^(?:the |our |my )?(?P<k>[a-z][\w'.-]*(?: [\w'.-]+){0,3}) (?:is|are) "
         r"(?:called |named |at |on |in )?(?P<v>[^,;!?]{1,60}), not (?:the |at |on |in )?"
         r"(?P<old>[^,.;!?]{1,60})[.!]?$"), "kv"),
    (_rx(r"\bmy (?P<k>[a-z][\w.-]*(?: [\w.-]+){0,3}) (?:is|are) (?P<v>[^,;!?]{1,80})$"), "kv"),
    (_rx(r"^(?:the |our )(?P<k>[a-z][\w.-]*(?: [\w.-]+){0,3}) (?:is|are|lives|runs) "
         r"(?:at|on|in|under) (?P<v>[^,;!?]{1,80})$"), "kv"),
    (_rx(r"^(?:the |our )(?P<k>[a-z][\w.-]*(?: [\w.-]+){0,3}) (?:is|are) (?P<v>[^,;!?]{1,60})$"),
     "kv_strict"),
    (_rx(r"\bwe (?:use|are using|'re using|now use) (?P<v>[\w.@/+-]+(?: [\w.@/+-]+)?) "
         r"(?:for|as) (?:the |our )?(?P<k>[a-z][\w .-]{1,40}?)(?:[.!]|$)"), "kv"),
    (_rx(r"\b(?:switch|switched|move|moved|migrate|migrated|change|changed) (?:the |our )?"
         r"(?P<k>[a-z][\w.-]*(?: [\w.-]+){0,3}) from (?P<old>[^,;]{1,40}?) to "
         r"(?P<v>[^,;!?]{1,60}?)(?:[.!]|$)"), "kv"),
    (_rx(r"\bset (?:the |our )?(?P<k>[a-z][\w.-]*(?: [\w.-]+){0,3}) to (?P<v>[^,;!?]{1,60}?)"
         r"(?:[.!]|$)"), "kv"),
    (_rx(r"\bcall me (?P<v>(?-i:[A-Z])[\w-]{1,30})\b"), "name"),
)
_VALUE_TRIM = " .,;:!?\"'`()[]"
_REPORTED = frozenset("says said thinks thought told tells knows knew wants wanted".split())
"""A key with a verb in it is someone's words, not a thing: "my manager said they are
still negotiating"."""
_PASSING = _rx(r"^(?:still\b|\w+ing (?:with|to|from|in|on|at|for|up|down|out|over|back|"
               r"home|here|there|the|a|an|his|her|my|our|their|your)\b)")
"""A value that is a passing state, not a setting: "my heart is still racing", "my cousin
is coming with his car"."""
_JUDGED = frozenset("""full empty dying dead broken terrible awful horrible lovely nice great
    good bad fine ok okay slow fast busy tired exhausted fried done gone down weird strange
    crazy amazing perfect wrong right better worse worst best huge tiny small big low high
    ready late early sick ill cold hot dark quiet loud noisy mad angry happy sad annoyed
    worried scared nervous confused lost stuck""".split())
"""A value that opens with a judgement or a state is how something is now, not a setting
to remember: "my battery is dying", "the wifi in the barn is terrible", "my kitchen is
dark like a cave after 3". On the corpus's non-held-out turns the ten facts read with
such a value were none a fact."""


def fact_in(sentence: str, turn: PreparedTurn) -> FactCandidate | None:
    """The first fact a sentence states ("my X is Y", "we use X for Y" ...), if any."""
    for pattern, mode in _FACT_RULES:
        m = pattern.search(sentence)
        if m is None:
            continue
        value = m.group("v").strip(_VALUE_TRIM)
        if mode == "name":
            key = "name"
        else:
            key = m.group("k").strip(_VALUE_TRIM).lower()
            for prefix in ("the ", "our ", "my "):
                key = key.removeprefix(prefix)
            if not key or key.split()[-1] in _BAD_KEYS or key.split()[0] in _BAD_KEYS:
                continue
            if _REPORTED.intersection(key.split()) or _PASSING.search(value) or (
                    value.split()[0].lower() if value else "") in _JUDGED:
                continue
        if not value or len(value.split()) > 8:
            continue
        if mode == "kv_strict" and (len(value.split()) > 4 or not _VALUE_LIKE.search(value)):
            continue
        if value.lower().startswith(("that ", "because ", "why ", "how ", "what ", "not ")):
            continue
        return FactCandidate(key=key, value=value, source_entry=turn.id, confidence=0.7,
                             at=turn.at)
    return None
