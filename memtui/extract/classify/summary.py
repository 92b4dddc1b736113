"""Summaries that name what was refused or decided, from the proposal a reply answers.

"That's a no on the paid plan" after "Would you like me to sign up for the paid
newsletter plan?" is filed as "Rejected: signing up for the paid newsletter plan"; "OK,
approved" after "Shall I ship the Hugo site on Friday?" (or "Ship the Hugo site on
Friday?") as "Ship the Hugo site on Friday"; "not this week" after "I'm going to rotate
the certs tonight." as "Rejected: rotating the certs tonight".
"""

from __future__ import annotations

import re

from memtui.extract.asked import ASKING, goes_on, in_context, last_offer
from memtui.extract.classify.features import CONTEXT_CHARS
from memtui.text import capital, clean, sentences, shorten

_HEADING = r"(?:the )?(?:plan(?:ned)?|propos(?:ed|al)):\s*"
"""A plan or proposal under a heading: "Planned: …", "Proposed: …", "The plan: …"."""
_ASK_LEAD = re.compile(
    r"^(?:(?:ok|okay|so|then|alternatively|also|next|meanwhile|in the meantime)[,:]?\s+)?"
    r"(?:if (?:useful|helpful|needed|you(?:'d)? (?:want|like|prefer))[,:]?\s+)?(?:"
    r"(?:do you want|would you like|want|shall|should|can|could|may) (?:me|i|we) (?:to\b\s*)?"
    r"|(?:is it )?ok(?:ay)? to\s(?=\w+\s)"
    r"|would you like (?=(?:a|an|the|some|another|more|any)\s)"
    r"|(?:should|shall|can|could|may) (?:i|we)\s"
    r"|i(?:\s+(?:could|can|would|will)|'d|'ll) (?:also |just |now |first |still )?"
    r"(?:like to |suggest (?:we |that we )?|recommend (?=\w+ing\b))?"
    r"|i (?:suggest|propose|recommend) (?:that )?(?:we |i )?(?:to )?"
    r"|(?:suggest|propose|recommend) (?=\w+ing\b)"
    r"|(?:do you )?want (?=(?:a|an|the|some|another|more|any)\s)"
    r"|(?:i'm|i am) (?:also |now |then |just )?(?:thinking of|going to|planning to|about to)\s"
    r"|we could\s"
    rf"|how about (?:i |we )?|next step:\s*|{_HEADING}|ready to\s)", re.I)
_HEDGE = re.compile(r"^(?:(?:also|just|now|first|then|still|quickly|at least|maybe|"
                    r"perhaps|go ahead and)\s+)+", re.I)
"""Words between the lead and the verb ("Should I also …", "Should I at least …")."""
_INTENT = re.compile(r"^(?:(?:ok|okay|so|then|next|now)[,:]?\s+)?(?:i(?:'ll| will)|"
                     r"(?:i'm|i am) (?:also |now |then |just )?(?:going|planning|about) to|"
                     r"i(?:'d| would)(?! (?:not|never|be|have|need|say|guess|think|"
                     r"expect|imagine|bet|love|hate)\b))"
                     r"\s.*[^:]$"
                     rf"|^{_HEADING}\w.*[^:]$", re.I)
"""A sentence announcing what the agent is about to do ("I'm going to rotate the certs
tonight.", "Planned: delete the old recordings tonight unless you object.") or would do
("I'd pin episode 47 on the website."): a plan the reply can take or turn down though
nothing was asked. Not a coding agent's narration of its next step ("Let me check the
config:", "I'll read the file:"), which a reply seldom answers, nor what it would not do
or would think ("I'd say it's fine."). In the non-held-out corpus, reading "I'd …" as a
plan changed 10 readings by the rules, 9 of them to the corpus's label, and named 29
approvals by the act ("Pin episode 47 on the website", not "Approved: I'd pin …")."""
_NOT_A_VERB = frozenset((
    "is are was were am be do does did have has had will would can could should shall may "
    "might must what why how when where who whom which whose any anything anyone anybody "
    "the a an this that these those it its you your we our i my me they their them he she "
    "his her there here all both either neither not or and but so ok okay also then sure "
    "right really just still same one two yes no good fine great cool ready happy better "
    "worth clear sound look thoughts questions ideas objections everything nothing "
    "something else more less other another next last first pretty too very quite "
    "maybe problem monday tuesday wednesday thursday friday saturday sunday").split())
"""Words a question opens with that are not a verb: "Ship it Friday?" orders, "Good to
go?" and "Any news?" do not."""
_THING = frozenset("a an the some any another more this these those my your our".split())
"""Words a proposed thing opens with rather than a verb."""
_TAIL = re.compile(
    r"(?:(?:[,;.]|\s*[—–-])?\s*(?:ok|okay|right|go|go ahead|proceed|now|for you|if you want|"
    r"sound good|(?:do you )?want me to|shall i|should i|if you agree|"
    r"if (?:that's|that is|this is|it's) (?:ok|okay|alright|all right|fine)(?: with you)?|"
    r"if that works(?: for you)?|"
    r"unless (?:you (?:object|say otherwise|stop me|prefer otherwise)|i hear otherwise)))?"
    r"[?.!:\s]*$", re.I)
_PRONOUNS = {"your": "my", "you": "me"}
_DOUBLE = re.compile(r"^[^aeiou]*[aeiou][bdgmnprt]$")
_ONSET = re.compile(r"^(?:[bcdfgpt][lr]|s[cklmnptw]|[cstw]h|tw|[^aeiou])?[aeiou]\w")
"""How an English word can open: at most a consonant or a usual pair, then a vowel."""
_DOUBLE_ALSO = frozenset({"commit", "submit", "admit", "begin", "forget", "regret", "refer",
                          "prefer", "omit", "permit", "upset", "unzip"})


def proposal(previous: str) -> str:
    """The action the preceding turn proposes, as an imperative ("" when none).

    A bare "Should I?" after "I can add Redis as a cache." reads the sentence before it.
    """
    if not previous:
        return ""
    parts = sentences(clean(previous))
    # what the agent asks about first; only without a question, what it announced
    asking = [i for i in range(len(parts)) if ASKING.search(parts[i])]
    intents = [i for i in range(len(parts)) if _INTENT.match(parts[i].strip())]
    for i in reversed(asking or intents):
        action = _action(parts[i])
        # "I'd add it: a ride ending early makes tickets." names no more than "add it"
        vague = _VAGUE.match(action.split(": ", 1)[0]) is not None
        if goes_on(parts[i]):
            # "Want me to go ahead?", "Shall I proceed with that?": the sentence before
            # names it, or nothing does
            action = _action(parts[i - 1]) if i else ""
            vague = False
        elif i and (vague or not action and len(parts[i].split()) <= 3):
            # "Should I?" or "Should I set it up?": the sentence before names it
            named = _action(parts[i - 1])
            action, vague = named or action, vague and not named
        if vague and not asking:
            return ""  # a plan that names nothing: what it is about is further back
        return shorten(action, CONTEXT_CHARS)
    return ""


_VAGUE = re.compile(r"^\S+(?:\s+(?:it|that|this|them|those|so|up|too|now|then|please|"
                    r"as well))+$", re.I)
"""An action that names nothing but a pronoun: "set it up", "do that now"."""


def _action(ask: str) -> str:
    """The act one sentence proposes, as an imperative ("" when it proposes none)."""
    ask = ask.strip(" *_`")
    m = _ASK_LEAD.match(ask)
    start = m.end() if m else 0 if _ordered(ask) else None
    if start is None:
        return ""
    action = _HEDGE.sub("", _TAIL.sub("", ask[start:]).strip(" ,"))
    action = _OTHER_CHOICE.split(action, maxsplit=1)[0].strip(" ,")
    words = action.split()
    ok = (words and words[0].replace("-", "").isalpha() and len(words) <= 25
          and words[0].lower() not in ("not", "never"))  # "I could not reproduce it."
    return action if ok else ""


_OTHER_CHOICE = re.compile(
    r",?\s+or\s+(?:(?:would|do|should|shall|can|could|will)\s+(?:you|i|we)|(?:you|i|we)\s+(?:could|can)"
    r"|would you (?:like|prefer|rather)|do you (?:want|prefer)|want me to)\b", re.I)
"""Where an offer's other choice begins: "customize it with your colours, or would you
prefer to edit it yourself?" proposes the first; a reply turning it down refuses that."""


def _ordered(ask: str) -> bool:
    """Whether a question is an order with a question mark, as permission prompts are
    ("Ship the Hugo site on Friday?", "Merge PR #92?"): it opens with a verb, as far as
    a word that is no question word, pronoun or article, and no third-person verb
    ("Sounds good?", "Deployed to staging?", "Working now?"), can tell, of three words at
    least, that asks nobody ("Given that, should I …?") and offers no alternative ("Monday
    or Tuesday?")."""
    words = ask.split()
    first = words[0].lower() if words else ""
    return (ask.endswith("?") and len(words) >= 3 and first.isalpha()
            and first not in _NOT_A_VERB and not re.search(r"[^su]s$|ed$|ing$|ly$", first)
            and not re.search(r"\b(?:i|you|we|or)\b|,\s*right\?$", ask, re.I))


def gerund(verb: str) -> str:
    """'sign' → 'signing', 'make' → 'making', 'stop' → 'stopping', 're-run' →
    're-running' (common English rules)."""
    v = verb.lower()
    prefix, dash, v = v.rpartition("-")
    if dash:
        return f"{prefix}-{gerund(v)}"
    if v.endswith("ing") and re.search(r"[aeiouy]", v[:-3]):
        return v  # already one: "I'd recommend dropping them" ("bring", "sing" are not)
    if v.endswith("ie"):
        return v[:-2] + "ying"
    if v.endswith("e") and not v.endswith(("ee", "ye", "oe")) and len(v) > 2:
        return v[:-1] + "ing"
    # rerun, unplug: the stem after a prefix, when it can open a word ("render" has none)
    stem = v[2:] if v[:2] in ("re", "un") and len(v) > 4 and _ONSET.match(v[2:]) else v
    if _DOUBLE.match(v) or v in _DOUBLE_ALSO or _DOUBLE.match(stem) or stem in _DOUBLE_ALSO:
        return v + v[-1] + "ing"
    return v + "ing"


def rejection_summary(text: str, previous: str) -> str:
    """'Rejected: <the refused action>' when the turn answers a proposal, else its words."""
    action = proposal(previous)
    if action:
        first, _, rest = action.partition(" ")
        if first.lower() in _THING or "-" in first and first.endswith("ed"):
            # "Want a progress bar?", "property-based tests?": a thing, not an act
            return shorten(f"Rejected: {action}")
        return shorten(f"Rejected: {gerund(first)} {rest}".strip())
    # nothing proposed that it names: the person's words, and what they answer ("btw, can
    # we keep the old code around? — re: Ready to start on phase 1?"), not "Rejected:
    # btw, can we …", which reads as if their own idea had been turned down
    words = capital(text.strip())
    about = in_context(last_offer(previous), previous)
    return shorten(f"{words.rstrip('.!')} — re: {about}" if about else words)


def decision_summary(text: str, previous: str) -> str:
    """The decision itself: the approved proposal as an order, the turn's own words if it
    says more than an approval (a condition, a change)."""
    action = proposal(previous)
    return decided(action, text) if action else shorten(text.strip())


_SHOULD = re.compile(r"^(?:should|shall) (?P<words>[^?]+?)\s*\?$", re.I)
_ADVERBS = frozenset("also only really still just always never automatically then".split())
_SETTLES = frozenset((
    "be stay go run show include count come become use fire compare get have send move "
    "keep list apply start end link open close mention cover accept allow skip print "
    "display expire repeat notify sort wrap live work support say read contain match "
    "trigger exclude round require happen point appear sync update replace take give drop "
    "block stop wait check hold reduce auto-end land sit cost default sum add remove "
    "change split merge post publish email text remind").split())
"""Verbs a design question asks about ("Should sessions go to Redis?")."""


def settled(ask: str) -> str:
    """A design question a yes settles, as the statement it makes true ("Should the alert
    also fire at night?" → "The alert should also fire at night"); "" when it is not one
    (a question about the agent's own act, an alternative, no verb it knows)."""
    m = _SHOULD.match(ask.strip())
    words = m["words"].split() if m is not None else []
    if not words or " or " in ask or words[0].lower() in ("i", "we", "you"):
        return ""  # "Should I …?", "Should we …?": an act, which proposal() reads
    for i in range(1, min(len(words), 9)):
        j = i
        while j < len(words) - 1 and words[j].lower() in _ADVERBS:
            j += 1
        # "the toast text go through …": a noun that can be a verb, before the verb; "the
        # functions that move out … stay importable": a verb of the subject's own clause
        if words[j].lower() in _SETTLES and not (
                j + 1 < len(words) and words[j + 1].lower() in _SETTLES) and (
                words[i - 1].lower() not in ("that", "which", "who", "where", "when")):
            return shorten(f"{capital(' '.join(words[:i]))} should {' '.join(words[i:])}")
    return ""


def decided(action: str, text: str) -> str:
    """What approving ``action`` (a ``proposal``) in the words ``text`` decides: the
    action as an order, with the words when they say more than an approval."""
    words = text.strip()
    if len(words.split()) > 4:
        return shorten(f"{capital(action)} — {words}")
    return shorten(capital(action))
