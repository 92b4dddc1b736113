"""The offline extractor: deterministic phrase rules that turn prepared turns into memory.

No model, no network, the same output for the same input. It reads user and assistant
turns sentence by sentence and recognises:

- **rejected**: "no, ...", "don't ...", "never ...", "stop doing X", "I'd rather not",
  "let's not", "I don't want", "that's wrong", "revert that", a bare "no" to a
  proposal, and a tool use the human refused ("The user doesn't want to proceed with
  this tool use") — told apart from **preferences** ("I prefer X", "I'd rather X",
  stored as context) and from **decisions** ("let's go with X", "we'll use X", a "yes"
  to a question, stored as decision). A bare choice among what the agent offered ("y"
  to "(y/n)", "2" or "b" to a list of options, "3 - use staging" to a permission
  prompt) is read against the options (``asked.pick``), and a reply that opens by
  naming one of two alternatives the agent asked about ("Monday morning, please" to
  "Send it now or on Monday morning?") as that choice (``asked.named``).
- **task** (requests and problem reports), **context** (FYI, "we're using X"),
  **learning** ("always ...", "next time ...", a fix after a tool error),
  **discovery** ("it turns out ...", "the root cause is ...", the person's "that's why
  ..." or "I just noticed ...") and **agent_state**
  ("status: ...", "blocked on ...").
- **facts** (``extract.facts``): "my X is Y", "the X is at Y", "we use X for Y",
  "set X to Y", "switched X from A to B", "call me Y".
- **episodes**: one per tool call (its outcome arrives with the result), incidents
  (failed tool results and failed model calls), rejections, decisions and compactions.

Only the person's words are read for rejections, decisions, tasks and facts: a prompt
the agent wrote for a sub-agent is not, and a sub-agent's words give no rejection or
decision (``Turn.author``; machine-written prompts never reach the extractor).

Every candidate cites the message id it came from; a person's rejection or decision right
after the assistant asked or proposed something also cites that message
(``answers_entry``: a "No." cites both itself and what it refused). Rules favour
precision: a sentence that matches nothing produces nothing, and questions are never
rejections.

Confidence of a rejection (the nightly maintenance turns rejections into CRITICAL rules,
and only promotes those of confidence >= 0.7):

- 0.95 a refused tool use (an action, not words);
- 0.9 a clear one: a prohibition opening the sentence ("no, don't add Redis", "never
  deploy on Fridays", "please don't push to main", "stop adding emojis") or a stated
  will ("I'd rather not run another stateful service", "let's not", "I don't want ...",
  "we're not posting to HN", "that's wrong, ..."), with at least three words;
- 0.8 a "No X ..." rule ("No pricing in launch posts");
- 0.6 a "no" followed by something else ("No, I think Postgres is enough");
- 0.55 an ambiguous one: a short reply ("No.", "No rollback.", "Revert that") that can
  only be read against the question it answers;
- 0.5 a prohibition inside an instruction ("apply it to the local dev db only, and don't
  touch staging"), which may only limit the work asked for (``combine.SCOPED``);
- 0.6 a rejection the assistant reports ("we decided against a rollback"), and one the
  policy captured that no rule recognised (``extract.enforce``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memtui.config import MaintenanceSettings
from memtui.extract.asked import (
    OFFERS,
    Pick,
    alternatives,
    answers_only,
    asks_only,
    in_context,
    last_ask,
    last_offer,
    mentions,
    named,
    nothing_more,
    of_fact,
    options,
    pick,
    pushback,
    relays_question,
)
from memtui.extract.candidates import (
    EpisodeCandidate,
    Extraction,
    PreparedTurn,
    StateCandidate,
)
from memtui.extract.classify.combine import SCOPED, UNSURE_RULE, busy, unhurried
from memtui.extract.classify.summary import decided, proposal, rejection_summary, settled
from memtui.extract.facts import fact_in
from memtui.extract.refusals import REFUSAL_CHARS, refusal_reason
from memtui.redact import redact
from memtui.text import capital, clean, domain_of, sentences, shorten

if TYPE_CHECKING:
    from memtui.extract.classify.head import Classifier

NAME = "local"

REVIEW_BELOW: float = MaintenanceSettings().promote_min_confidence
"""By default a rejection less sure than what maintenance promotes waits for review."""

DETAIL_CHARS = 1000

# -- rules -------------------------------------------------------------------------------


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


_APOS = "['’]?"
DONT = rf"(?:don{_APOS}t|do not|dont)"

# Rejections. Order matters only for the summary; any hit makes the sentence a rejection.
_NO_START = _rx(
    # and the no of the people who write English as a second language: "nein, Montag",
    # "não, sizing goes in the table", "nee, too expensive" (not "non-blocking")
    # "god no", "lol no", "hell no" (not the "oh no" of dismay)
    r"^(?:(?:god|oh god|good god|lol|haha|hell|ugh|lmao|omg|heavens|good heavens|goodness|"
    r"lord|(?:oh,? )?(?:please|pls|plz))[,.!]?\s+)?"
    r"(?:no|nope|nah|nay|negative|non|nein|nee|não|nao|nie|nej|όχι|hayır|hayir)\b(?!-)"
    r"(?![\s,]*(?:problem|worries|worry|rush|hurry|idea|"
    r"doubt|pressure|stress|big deal|biggie|sweat|harm|offen[cs]e|objections?|concerns?|"
    r"need to (?:worry|rush|hurry|stress|apologi[sz]e)|wonder|matter|one|way\b(?!\s*[.!])|"
    # conceding: "no, you're right, it's the 14th"
    rf"(?:you{_APOS}re|you are|that{_APOS}s|it{_APOS}s) (?:right|correct|true)\b))"
)
_OBJECTS = _rx(r"\bany (?:objections?|concerns?)\b|\b(?:do|would) you mind\b"
               r"|\b(?:is|would) (?:that|this|it) (?:be )?a problem\b")
"""A question whether the person objects: a "no" to it approves ("Any objections to
restarting at 6?" — "nope")."""
_NO_OBJECTION = _rx(r"^(?:no|nope|nah|not at all|none|no objections?|no concerns?|"
                    r"not really)\b(?![\s,]*(?:wait|stop|don))")
_PROHIBIT_START = _rx(
    rf"^(?:please\s+|pls\s+|and\s+|but\s+|just\s+|so\s+)?(?:{DONT}|never|stop|quit|avoid|"
    r"no more|cease|refrain from)\b(?!\s+(?:worry|know|mind|hesitate|forget|ask|mention|"
    r"think|see|understand|get me wrong))"
)
# A stated will: clear wherever it stands in the sentence.
_REJECT_WILL = _rx(
    rf"\b(?:i{_APOS}d|i would|we{_APOS}d|we would) (?:rather|prefer) not\b"
    rf"|\blet{_APOS}s not\b"
    rf"|\b(?:i|we) (?:{DONT}|really {DONT}|do not) (?:want|like|need)\b"
    # a worry is not a refusal: "I don't want to look like I'm laughing at him", "I don't
    # want to break somebody's explore"
    r"(?! (?:to )?(?:look|sound|seem|feel|come across|end up|lose|miss|break|hurt|upset|"
    r"annoy|offend|wake|bother|confuse|scare|overwhelm|explain|manage|worry|risk|surprise|"
    r"disappoint|embarrass|panic)\b)"
    rf"|\bwe (?:shouldn{_APOS}t|should not|won{_APOS}t|will not|must not|mustn{_APOS}t)\b"
    rf"|\bthat{_APOS}s (?:wrong|not (?:right|correct|what i))\b"
    r"|\b(?:absolutely|definitely|certainly) not\b|\bi said no\b"
    rf"|\b(?:we|i)(?:{_APOS}re|{_APOS}m| are| am) not (?:going to |gonna )?\w+ing\b"
    r"|\b(?:decided against|ruled out)\b"
)
# A reply that turns an offer down without saying no: its time or place ("not now, the
# box is mid-migration", "not in this PR", "not before legal signs off"), its worth
# ("overkill", "way too much", "not worth it", "not needed"), or keeping what it would
# change ("sql stays", "then it stays"). Only in reply to an offer or a plan the agent
# announced ("I'm going to split it into three modules." "not in this PR"), and as a
_A_NO_WORDS = r"\b(?:is|'s|’s) a (?:hard |firm |big |clear )?no\b(?!-)"

# "no, but": it defers or narrows more often than it forbids.
_DECLINES = _rx(
    r"^(?:(?:please|pls),?\s+|wait,?\s+)?not (?:now|yet|today|tonight|tomorrow|this|until|till|"
    r"before|"
    r"after|during|in|on|at|for|right now)\b"
    r"(?! (?:that|sure|really|bad|quite|all(?! of)|a hurry|a rush|my (?:end|side|experience))\b)"
    rf"|^(?:(?:that|it|this)(?:{_APOS}s| is) |way |far |still |much |a bit |bit )*"
    r"(?:too (?:much|many|slow|expensive|risky|noisy|early|big|long|complex|complicated|heavy|"
    r"pricey|aggressive|soon)|overkill|scope creep|not worth it|not needed|unnecessary|"
    r"not necessary)\b"
    # putting it off: "let me think about it", "wait for Lena's review", "hold off"
    r"|^(?:hmm+,? )?let me (?:first )?(?:think|check|ask|talk|call|read|show|see|discuss|"
    r"run it by|sleep on|look)\b(?! out loud)"
    r"|^(?:please |pls )?(?:wait (?:for|until|till|with)|hold off)\b|^please wait\b"
    # "not a chance with this budget", "not a fan, sounds like we're raising them"
    r"|^not a (?:chance|fan|good idea|great idea|priority)\b"
    r"|^skip (?:it|that|this|the|those|them)\b|^(?:oh,? )?(?:please|pls|plz),? not\b"
    # "Thank you, but my daughter will drive me", "thank you, is kind, but no"
    r"|^thank(?:s| you)\b[^.?!]{0,60}?\b(?:but|though|however|i'?m afraid)\b"
    r"|^thank(?:s| you)[,.!]?\s+(?:no|not)\b"
    # "not worth the hassle with inheritance", "no way, that test caught two bugs",
    # "that's a no from me", "that's a bit much", "i'll just rotate it myself"
    r"|^(?:then |so |hmm+,? )?(?:it'?s |that'?s )?not worth\b|^no way\b"
    r"|^(?:that'?s|that is|it'?s) a (?:no\b|hard no|bit much|lot\b|huge|big ask)"
    # "hold on, the director sees it first", "we tried that in 2022 and it was a mess",
    # "nobody here wants to babysit sentry", "one at a time please", "better not"
    r"|^hold on\b|^we(?:'ve| have)? tried\b|^one (?:at a time|by one)\b"
    # "15% more for convenience is a no from me", "let it lapse", "maybe later in the
    # year", "I'm not convinced, the VM has been rock solid", "I'd hold off", "decline"
    rf"|{_A_NO_WORDS}"
    r"|(?:^|,\s*)let (?:it|them|that) (?:be|lapse|go|slide|run out|expire)\b"
    r"|^(?:maybe|perhaps) (?:later|next (?:year|month|time)|another time|"
    r"some other time)\b|^(?:hmm+,? )?i'?m not (?:convinced|sold|keen)\b|\bhold off\b"
    r"|^(?:kindly|please) wait\b|^decline(?=\s*(?:[,.!;:]|$))"
    r"|^nobody (?:here |in (?:the|our) \w+ )?(?:wants|needs|uses|opens|reads|can|will|looks|"
    r"cares|watches)\b|^(?:better|best) not\b|^i'?d love (?:to|that|it|this)\b[^.?!]*\bbut\b"
    rf"|^(?:that|this|it)(?:{_APOS}s| is) (?:very |so |really )?(?:kind|sweet|thoughtful|"
    r"nice|generous|lovely)\b.*\b(?:but|though)\b"
    r"|^i never\b(?! (?:know|remember|understand|get|thought)\b)"
    rf"|^we don{_APOS}t (?!know|mind|care|need to|have to|want)\w+"
    # "cant, bank export starts 4:30", "cannot install ghostscript on the server", not
    # "can't talk, on the bus" or "can't log in to the app", a problem
    rf"|^(?:(?:oh|ah|sorry|hmm)[,.!]?\s+)?(?:i |we )?(?:can{_APOS}?t|cannot|can not)\b"
    r"(?! (?:talk|hurt|wait|complain|believe|remember|tell|find|see|hear|stop|thank|help|say|"
    r"log|sign|access|open|get|connect|load|print|reach|figure|work out|seem)\b)"
    r"|^(?:then |so )?(?!(?:i|we|you|he|she) )(?:the |our |my )?[\w.-]+(?: [\w.-]+)? stays?\b"
    r"(?! (?:up|open|on|in|at|with|for|under|below|within|the|a|by|late|home|over)\b)"
)

_NEITHER = _rx(
    r"^(?:(?:hmm+|um+|honestly|sorry|so)[,.]?\s+)?(?:neither|weder noch|none of (?:them|those|"
    r"these|the \w+))\b|\bneither (?:of )?(?:those|these|them|one|option)s? (?:work|suit|fit)")
"""Turning down every option offered ("neither, we're in Croatia then" to "Want me to
enrol Zosia?", "none of these, too generic", "weder noch"), unless the question only asks
a fact ("Is your hotel the Fita or the Ibis?" / "neither, it's the Hilton")."""

_COUNTERS = _rx(r"^(?:no,? )?i'?ll (?:just )?\w+\b[^.?!]{0,40}\bmyself\b|^i'?ll just\b"
                r"|^not (?:the|a|an|this|these|those) \w+|^not that (?!(?:i|it|we|you|they|he|she|"
                r"there|bad|much|many|important|big|hard|easy|simple|long|often|kind)\b)\w+")
"""Doing it another way instead of the offer: "i'll just rotate it myself, it's two
minutes", "Not the board. Just me first", "not a voucher, we call her personally"; in a
reply that opened by approving ("ok, but not the pricing one, I'm writing that
myself") it is the approval's condition."""

_A_NO = _rx(_A_NO_WORDS)
"""A verdict and nothing else: "That's a no on the paid plan", "15% more is a no from me"."""

_REFUSED_AGAIN = _rx(r"\bi (?:already|just) said no\b|^(?:then|so),? skip\b|"
                     r"^skip (?:it|that|this|them) (?:then|this time)\b")
"""A refusal whatever the agent's last words: "I already said no offers for him. stop",
"then skip it, I only bump when I submit" (after "0.4.2 → 0.4.3, a bugfix"); read in
the whole turn, since the "then" that makes it an answer is a lead the sentence loses."""

_RATHER = _rx(rf"^(?:hmm+,? )?i(?:{_APOS}d| would) (?:perhaps |much |really )?rather\b")
"""A counter-proposal ("I'd rather water on a timer" after "Shall I add soil sensors?"),
unless the agent offered alternatives and it picks one ("I'd rather the 10:00 one")."""

_PUTS_OFF = _rx(r"\b(?:not (?:now|yet|today|tonight|tomorrow|this (?:week|month|time))|later|"
               r"wait (?:for|until|till)|hold (?:off|on))\b")
"""A deferral inside an approval ("ok, but not now", "sure, later"): it puts the offer off."""

# Something put in the offer's place ("dm them instead", "cut the history bit instead"):
# in reply to an offer or an announced plan, the offer is turned down (on the non-held-out
# corpus, 35 of 40 such replies after an offer are refusals). "instead of X" names what
# is refused inside the sentence and is left to the classifier.
_SUBSTITUTES = _rx(r"\binstead\b(?!\s+of\b)")

_KEEPS_NOTHING = (r" (?:me|us|you) (?:posted|updated|informed|in the loop)|"
                  r" it up\b(?![\s-]*to[\s-]*date)| up the\b| going\b| at it\b| trying\b|"
                  r" (?:it|them|those) coming\b")
"""After "keep": asking for news ("keep me posted") or cheering the work on ("keep it
up", "keep going"), which keep nothing: neither a standing rule nor a refusal."""
_KEEPS = _rx(
    r"^(?:(?:please|actually|just|i'?d|we'?ll|let'?s|then|no)\W+){0,2}"
    r"(?:keep|leave|stay with|stick (?:with|to))\b"
    rf"(?!{_KEEPS_NOTHING}| an eye\b| in (?:mind|touch)\b| a (?:note|comment|review|message)\b"
    r"| (?:it|them|this|these|those|things|everything) (?:short|simple|brief|concise|tight|"
    r"small|light|lean|casual|formal|friendly|polite|neutral|clean|minimal|under|below|"
    r"within)\b)"
)
"""Keeping what an offer would change ("keep headspace, I only paused it" after "Cancel
both?", "leave it, comms handles twitter" after "Should I reply to the tweet?"): a
refusal in reply to a question that proposes a change (``_CHANGES``), unless it asks
whether to keep ("Keep it?", "… or keep it as a draft?"). "keep it short" is a style, and
"keep it short" after "Shall I draft the reply?" or "I'll draft it" no refusal."""
_CHANGES = _rx(
    r"\b(?:drop|delete|remove|cancel|cut|close|clean|prune|archive|uninstall|disable|"
    r"turn off|switch|replace|rewrite|change|move|rename|roll ?back|reply|send|tell|include|"
    r"exclude|add|update|upgrade|lower|raise|restart|merge|split|flatten|convert|reschedule|"
    r"bump|trim|shorten|strip|unsubscribe|email|post|publish|notify|wipe|reset|kill|stop|"
    r"deprecate)\w*"
)
"""A question proposing to change, remove or send something: what "keep it" refuses (on
the non-held-out corpus, 32 of 35 "keep/leave X" replies to such a question refuse it)."""

# The person taking back a plan, theirs or the agent's, after it was agreed or begun
# ("actually, hold off on all of it", "wait, don't book yet", "ok, forget the 14:00 call").
_REVERSES = _rx(
    r"^(?:(?:actually|wait|hold on|hang on|on second thoughts?|scratch that|"
    r"change of plans?|never ?mind|nvm)\b[\s,.!:;—-]*)+"
    r"(?:(?:no|sorry|hmm|ok)\b[\s,.!:;—-]*)*(?:about [^:,]{1,30}[:,]\s*)?"
    rf"(?:please\s+|pls\s+|let{_APOS}s\s+|just\s+)?"
    r"(?:(?:forget|scrap|hold(?:\s+off)?|undo|revert|call off|ditch|shelve|abandon|hang on|"
    r"hold on|no need)\b"
    r"|(?:drop|skip|cancel|kill|stop|pause|bin)\b(?:\s*(?:[,.!;]|$)|\s+(?:it|that|this|them|all|"
    r"everything)\b|(?!.*\b(?:first|then|before|after|once)\b))"
    r"|leave\b(?!\s+(?:a|an|some|me|us|him|her|notes?|comments?|feedback|reviews?|messages?)\b)"
    rf"|{DONT}\b(?!\s+(?:forget|worry|mind|you|we)\b))"
    r"|^forget (?:it|that|this|the|about|what|my|our|i)\b"
)
# An order not to: clear when it opens the sentence, ambiguous inside an instruction.
_REJECT_ORDER = _rx(
    rf"\byou (?:shouldn{_APOS}t|should not|must not|mustn{_APOS}t)\b"
    r"|\b(?:revert|undo|roll back) (?:that|this|it|those|these|the change|your change)\b"
    r"|\bnot like (?:that|this)\b"
    rf"|\b(?:please|pls) {DONT}\b"
    # not "we should stop doing hands", "every test must stop it in teardown": a lesson
    r"|(?<!must )(?<!should )(?<!\bto )(?<!will )(?<!'ll )(?<!\bcan )(?<!could )(?<!would )"
    r"(?<!shall )(?<!\bmay )(?<!might )\b(?:stop|quit) (?:doing|using|adding|running|calling|"
    r"making|writing|it|that)\b"
    rf"|\b{DONT} (?:ever|do that|do this|use|add|touch|change|run|push|commit|delete|"
    r"modify|create|install|call|remove|rename|deploy|merge|restart|edit|rewrite|write)\b"
)

CLEAR = 0.9
"""Confidence of a clear rejection (see the module docstring for the whole scale)."""
RULE = 0.8
"""A "No X in Y" rule."""
NO_BUT = 0.6
"""A "no" followed by something else than a prohibition."""
AMBIGUOUS = UNSURE_RULE
"""A short reply (which gives way to an approval the classifier reads, ``combine``)."""
# SCOPED (``combine``): a prohibition inside an instruction, which gives way to an approval
# the classifier reads, or is filed as a task where it reads one.
REFUSAL = 0.95
"""A refused tool use."""


def _lesson(lower: str) -> bool:
    """Whether a sentence states a lesson: a ``_LEARN`` phrase, unless its only one is an
    "always" about someone's habit said while venting ("the committee meetings are always
    so long 🙄"); an order that opens with "always" teaches, laughing or not."""
    found = [m[0] for m in _LEARN.finditer(lower)]
    if not found or any("always" not in f for f in found) or not _VENTS.search(lower):
        return bool(found)
    return _ORDERS_ALWAYS.match(lower) is not None  # "ugh, always check the timezone"


def _opens_approving(reply: str) -> bool:
    """Whether the person's whole turn opens by approving ("ok, but …", "go, but …")."""
    return _APPROVE.search(clean(reply).lower()) is not None


def _declined(lower: str, answering: str, reply: str = "") -> str | None:
    """The offer a sentence turns down without saying no, None if it does not: a deferral
    or a judgement of worth (``_DECLINES``) of what the turn before offered or announced
    (``last_offer``), something put in its place (``_SUBSTITUTES``), or keeping
    (``_KEEPS``) what it asked to change (``last_ask``). In a reply (``reply``, the whole
    turn) that opened by approving ("ok, but keep the sentence about the cooperatives"),
    keeping or replacing a part is the approval's condition, not a refusal."""
    def approved() -> bool:  # read only when a keep or a substitute is in sight
        return _opens_approving(reply)

    countered = _SUBSTITUTES.search(lower) or _COUNTERS.search(lower)
    if (_DECLINES.search(lower) and not busy(lower)) or (
            countered and not approved() and not _APPROVE.search(lower)) or (
            _RATHER.search(lower) and alternatives(answering) is None
            and not options(answering)):
        # "not yet, still shows yesterday" to "Did the dashboards refresh?" answers it
        return None if answers_only(answering) else last_offer(answering) or None
    if _NEITHER.search(lower) and (offer := last_offer(answering)) and not of_fact(offer):
        return offer
    if not _KEEPS.search(lower) or approved():
        return None
    # the question it answers, or else the plan the agent announced ("I'd drop those 37
    # from the analysis." / "keep them for sections A and B")
    offer = last_ask(answering) or last_offer(answering)
    if _CHANGES.search(offer) and not re.search(r"\b(?:keep|leave)\b", offer, re.I):
        return offer
    return None


def _conditions(s: str, pt: PreparedTurn, ask: str) -> bool:
    """Whether the prohibition in a turn's first sentence ``s`` is the condition of an
    approval it opens with ("yes, map them. don't touch the raw files though", "go, but
    don't deploy it yourself") rather than a refusal: not a reversal ("ok, actually
    don't"), not a deferral ("ok, but not now"), and the question answered asks for
    consent (``answers_only``: a "yes" to "Did that fix it?" approves nothing)."""
    lower = s.lower()
    after = (m := _APPROVE.search(lower)) and lower[m.end():].lstrip(" ,.!:;-—") or lower
    return (_opens_approving(pt.text)
            # "ok, please don't touch those 28" refuses; "go, but don't deploy it" approves
            and not (_PROHIBIT_START.search(after) and not after.startswith("but "))
            and not _REVERSES.search(lower) and not _PUTS_OFF.search(lower)
            and not (ask and answers_only(pt.answering, ask)))


def _approval(s: str, ask: str, answering: str) -> str:
    """What an approval decides: the proposal as an order ("Merge PR #92 into main"), and
    the person's words when they add a condition or a change; "Approved: <question>"
    when the question proposes no act of the agent's ("Should the export include …?")."""
    if (action := proposal(answering)) and len(action.split()) > 1:
        return decided(action, s)  # not a bare "Investigate": the question says more
    if made := settled(ask):  # "Should the alert also fire at night?" → "The alert should …"
        return decided(made, s)
    return f"Approved: {in_context(ask, answering)}" + (f" — {s}" if len(s.split()) > 4
                                                         else "")


def _refused(rest: str, answering: str) -> str:
    """A "no" and what follows it (a reason, or nothing), named by what it refuses: the
    proposal first, so that a long reason cannot cut it off ("Rejected: deleting the old
    recordings tonight — the old recordings are …"); else the question or the plan it
    answers ("No rollback — re: Should the deploy have a rollback step?")."""
    proposed = bool(proposal(answering))
    if not rest and not proposed:
        return f"Declined: {in_context(last_offer(answering), answering)}"
    refused = rejection_summary(rest, answering)  # the words and what they answer, without one
    return f"{refused} — {rest}" if rest and proposed else refused


def _answer_summary(picked: Pick, text: str, answering: str) -> str:
    """A bare yes or no named as any approval or refusal is, by what it answers ("y" to
    "Shall I drop the staging table?" decides "Drop the staging table"); a choice among
    options keeps the option chosen."""
    if picked.said == "yes":
        return shorten(_approval(clean(text).strip(), picked.ask, answering))
    if picked.said == "no":
        return shorten(_refused(picked.rest, answering))
    return picked.summary


_UNDOES = _rx(
    r"^(?:(?:please|pls|ok(?:ay)?|no|nope|hmm+|ugh|wait|why|thanks?|thank you)[,.!?]*\s+)*"
    r"(?:revert|undo|restore|(?:roll|put|bring|give|take|change|switch|split|move|set|"
    r"turn) (?:\S+ ){0,5}back|take (?:\S+ ){0,4}(?:out|down|off)|"
    r"turn (?:it|that|them|this|those) off)\b")
"""An order to take back a change: "revert the rename", "put legacy_donors back", "give me
the CSV back", "take the toggle out please", "roll the driver back", "turn that off"."""
_CHANGED = {"added": "adding", "dropped": "dropping", "deleted": "deleting",
            "removed": "removing", "renamed": "renaming", "moved": "moving",
            "rewrote": "rewriting", "rewritten": "rewriting", "reworded": "rewording",
            "changed": "changing", "switched": "switching", "replaced": "replacing",
            "cut": "cutting", "tightened": "tightening", "translated": "translating",
            "set up": "setting up", "turned on": "turning on", "enabled": "enabling",
            "disabled": "disabling", "upgraded": "upgrading", "updated": "updating",
            "merged": "merging", "wrote": "writing", "inserted": "inserting",
            "swapped": "swapping", "converted": "converting"}
"""The changes an agent reports making, and the act each names."""
_CHANGE = "|".join(sorted(_CHANGED, key=len, reverse=True))
_DID = _rx(r"\bi(?:'ve| have)? (?:also|went ahead|took the liberty)\b"
           r"|\bwhile i was (?:in )?there\b|\bon top of (?:that|this)\b")
"""The agent reporting a change it made on its own: "I also renamed slot_start to
start_at", "I went ahead and added a dark-mode toggle", "while I was in there"."""
_POINTS_BACK = _rx(r"^\S+\s+(?:it|them|that|this|those|these)\b")
"""An order that points back at the change: "put them back", "take it out"."""
_DID_WHAT = _rx(
    r"\bi(?:'ve| have)?\s+(?:(?:also|just|already|went ahead and|took the liberty of)\s+)*"
    rf"(?=(?:{_CHANGE})\b)")
"""Where the changes an agent reports begin: "I also |renamed `slot_start` …". Reported
plainly ("I added a section on our funding round."), a change may be what was asked for,
so an order to take back something else ("take the prints out" after "I added the
endpoint and its tests") asks for a change to it and refuses nothing."""
_ONE_CHANGE = _rx(
    rf"\b(?P<verb>{_CHANGE})"
    rf"\s+(?P<what>[^;:]+?)(?=\s*(?:[;:]|,?\s(?:and\s+(?:{_CHANGE})|so|since|because|as|"
    r"while i was|which|to (?:make|save|free|speed|keep))\b|,\s|[.!]?$))")
"""One change and what it changed, up to the end of its clause."""


def _undoing(s: str, done: str) -> str:
    """The summary of an order to take back a change the agent reported (``done``): the
    change as an act, refused, and the person's words ("Rejected: renaming slot_start to
    start_at across the models — revert the rename, the app still reads slot_start").
    Of several changes ("I added retry logic and upgraded the Stripe SDK"), the one the
    words name ("roll back the stripe upgrade"); the words and the report where they name
    none, or no one."""
    start = _DID_WHAT.search(done)
    begin = start.end() if start is not None else len(done)
    changes: list[re.Match[str]] = []
    for m in _ONE_CHANGE.finditer(done, begin):
        # one change after another: "moved the list into shops.yaml and removed …"
        if done[changes[-1].end() if changes else begin:m.start()].strip(" ,") not in (
                "", "and"):
            break
        changes.append(m)
    named = [m for m in changes if mentions(s, _act(m))] if len(changes) > 1 else changes
    if len(named) != 1 or len(named[0]["what"].split()) > 15:
        return _about(capital(s), done, "")
    return shorten(f"Rejected: {_act(named[0])} — {s}")


def _act(change: re.Match[str]) -> str:
    """A change reported (``_ONE_CHANGE``) as the act it was: "renaming slot_start to …"."""
    return f"{_CHANGED[change['verb'].lower()]} {change['what'].strip()}"


def done_unasked(answering: str, words: str = "") -> str:
    """The sentence in which the agent's turn reports a change it made on its own ("I also
    deleted the duplicate folders I found, 210 GB."), or one it reported plainly that the
    person's ``words`` name or point back at ("take the code out" to "I added a 10%
    discount code at the end."), or "". An order to take that change back turns
    down what the agent did: in the non-held-out corpus (sets 1-19) all 29 such replies
    are refusals, where the 36 reversal orders after no such report are refusals (15),
    tasks (12) and approvals (8) alike ("ok, roll back all except bike 3" to "Their tool
    allows a downgrade within 7 days.")."""
    for s in reversed(sentences(clean(answering)) if answering else []):
        if _DID.search(s):
            return s
        plain = _DID_WHAT.search(s)
        if plain and words and (_POINTS_BACK.match(words.strip()) or mentions(
                words, s[plain.end():])):
            return s
    return ""


_SAYS_WHAT = _rx(rf"^(?P<what>[^,;:]+?)\s*{_A_NO_WORDS}")
_NOT_A_NAME = frozenset("that this it which so then and but well ok okay yeah yes honestly "
                        "also sorry".split())


def _named_no(s: str, answering: str) -> str:
    """A verdict's summary: what its words say is a no, when they name it ("rewriting
    history on a shared repo is a no" after "I'd rotate the key and rewrite history to
    remove it." turns down only the rewrite), else the proposal ("That's a no on the paid
    plan" after "Would you like me to sign up for the paid newsletter plan?")."""
    m = _SAYS_WHAT.match(s.strip())
    what = m["what"].strip() if m else ""
    first = what.split()[0] if what else ""
    # a price or a number is why, not what: "15% more for convenience is a no"
    if len(what.split()) >= 2 and first.isalpha() and first.lower() not in _NOT_A_NAME:
        return shorten(f"Rejected: {what}")
    return rejection_summary(s, answering)


def _about(s: str, offer: str, answering: str) -> str:
    """A refusal in words that never name what they turn down, with what they answer."""
    return f"{s.rstrip('.!')} — re: {in_context(offer, answering)}"


def rejection_confidence(s: str) -> float | None:
    """How sure a sentence (lead words already dropped) is a rejection; None: it is not."""
    lower = s.lower()
    n_words = len(s.split())
    if _REVERSES.search(lower):
        return CLEAR if n_words >= 3 else NO_BUT
    if _PROHIBIT_START.search(lower):
        return CLEAR if n_words >= 3 else AMBIGUOUS
    if _REJECT_WILL.search(lower):
        return CLEAR if n_words >= 3 else NO_BUT
    m = _REJECT_ORDER.search(lower)
    if m is None:
        return None
    if lower[:m.start()].strip(" ,;:-—") and not _FROM_NOW.search(lower):
        # "apply it to dev only, and don't touch staging"; "from now on you don't delete
        # anything without asking" is a standing rule
        return SCOPED
    return CLEAR if n_words >= 3 else AMBIGUOUS
_ASSISTANT_REJECT = _rx(
    r"\b(?:decided against|ruled out|(?:i|we) rejected|not viable|dead end|gave up on|"
    r"giving up on|abandon(?:ed|ing)? (?:the|this|that)|won'?t work (?:because|since|here))\b"
)
_QUESTION_START = _rx(
    rf"^(?:why|how|what|when|where|who|which|can|could|would|should|shall|is|are|do|does|did|"
    rf"will|have|has|{DONT}|doesn{_APOS}t|isn{_APOS}t|aren{_APOS}t|won{_APOS}t)\b"
)

# Preferences (not rejections): context about how the human likes things.
_PREFER = _rx(
    r"\b(?:i|we) (?:(?:really |generally |usually |always )?(?:prefer|like|love))\b"
    r"(?! (?:to know|it when you))"
    # "I'd like to understand the jump" wants an answer, not a way of working
    rf"|\b(?:i{_APOS}d|i would|we{_APOS}d|we would) (?:always |much |far |generally |usually |"
    r"really )?(?:rather|prefer|"
    r"like(?! to (?:know|understand|see|ask|hear|learn|find out)\b))\b"
    r"|\bmy preference\b|\bpreferably\b"
)

# Decisions.
_ASSISTANT_DECIDE = _rx(
    rf"\b(?:i|we)(?:{_APOS}ve| have)? (?:decided|chose|chosen|settled on|opted for|went with)\b"
    rf"|\b(?:i{_APOS}m|i am|we{_APOS}re|we are) going with\b|\bdecision:"
)
_DECIDE = _rx(
    rf"\blet{_APOS}?s (?:go with|use|do|stick with|keep|switch|move|try|adopt|pick|make)\b"
    rf"|\b(?:we|i){_APOS}?(?:ll| will| are going to|'re going to| am going to) "
    r"(?:use|go with|stick with|keep|switch|adopt|pick)\b"
    r"|\b(?:settled on|going with|go with|opting for|opted for)\b"
    # deciding is a decision only when the person or their team decides: not "marketing
    # decided this last year", "I can't decide which" or "when does he decide"
    rf"|\b(?:i|we)(?:{_APOS}ve| have)?(?: just| already| finally| now)? (?:decided|chose|"
    r"agreed|settled)\b|^(?:decided|agreed|decision)\b|\b(?:my|our|final) decision\b|"
    rf"\bdecision:|\b(?:it{_APOS}s|it is) decided\b"
    r"|\b(?:switch|move|migrate) (?:to|over to)\b"
    r"|\b(?:use|using) \S+(?: \S+)? (?:instead|from now on|going forward)\b"
)
_GO = _rx(
    r"^(?:(?:ok(?:ay)?|yes|yeah|yep|sure|good|great|perfect|alright|then|👍)[,.!]?\s+)*"
    r"(?:(?:please do(?! not\b)|do it|do that|do|go for it|go ahead|proceed|(?:send|post|publish|"
    r"book|ship|merge|order|submit)(?: it| them| that)?)(?=\s*(?:[,.!;:]|$|(?:now|then|please|"
    r"pls|today|tonight)\b))|(?:please|pls|plz)[\s.!]*$)")
"""An order to go on with what was asked or announced ("please do", "go for it", "ok do
that", "send" to "Send?", "book it", a bare "pls" to "Message Tom about it?"), said
alone: "send to her dorm in Delft" or "merge instead" put something else in its place."""

_SCOFFS = _rx(
    r"^(?:oh,? (?:sure|yes|yeah|great|perfect)\b|(?:yes|yeah|sure)(?: yes)?,? because\b)"
    r"|\bwhat could (?:possibly )?go wrong\b|\bgod forbid\b|\byeah,? right\b"
    r"|\bbecause (?:that|this|it) went so well\b|,? brilliant[.!]*$")
"""An approval's words in mockery ("oh sure, be the only one who skips it, brilliant",
"yes because what that dashboard needs is more numbers"): they approve nothing."""
_APPROVE = _rx(
    r"^(?:yes|yep|yeah|yup|ok|okay|sure|sounds good|looks good|lgtm|approved|ship it|"
    r"go ahead|go(?=\s*[,.!]|\s*$)|do it|perfect|great,? (?:go|do)|correct|proceed|"
    r"very well|(?:alright|all right|fine|agreed|deal|that works|works for me)(?=\s*[,.!]|\s*$))\b"
)

_IS_FINE = _rx(
    r"^(?:(?:ok(?:ay)?|oh|hmm+|right|great|perfect|sure|yes|yeah|yep)[,.!]?\s+)?"
    r"(?P<what>(?:[\w.'’-]+\s+){0,3}?[\w.'’-]+)\s+(?:is|are)\s+(?:(?:totally|perfectly|"
    r"absolutely|quite|more than)\s+)?(?:fine|ok|okay|enough|good enough|plenty|all right|"
    r"alright)\b")
""""X is fine" after an offer: "a docstring is fine" to "Should I at least add a
docstring?" approves what it names; "economy is fine, the kids love the big windows" to
"Should I book first class instead?" keeps what the offer would change."""
_WORKS = _rx(
    r"^(?:(?:ok(?:ay)?|oh|hmm+|right|great|perfect|sure|yes|yeah|yep|ya|haan)[,.!]?\s+)?"
    r"(?P<what>(?:[\w.'’-]+\s+){0,3}?[\w.'’-]+)\s+(?:works|would work|suits (?:me|us)|"
    r"sounds (?:good|fine|great|right)|is better|would be better|is best)"
    r"(?=\s*(?:$|[,.!;:)—-]|(?:for (?:me|us)|then|too|yes|perfectly|great|fine)\b))")
_ALL_OF_IT = _rx(
    r"^(?:(?:ok(?:ay)?|yes|yeah|yep|sure|then)[,.!]?\s+)?(?:(?:do|send|book|fix|add) )?"
    r"(?:both|all (?:of them|of it|\d+|two|three|four|five|six)|all|everything)\b"
    r"(?!\s+(?:of )?(?:the|my|our|these|those|are|is|were|was|good|fine|set|done|checks?|"
    r"not|clear|right|ok|okay|in one)\b)")
"""Taking every part of an offer ("do both", "All 12.", "both, co-productions are a third
of the programme"): an approval, unless it asks ("both in one PR or separate?") or is
"all good". 37 of 38 such replies to an offer in the non-held-out corpus decide."""
_AGREED = _rx(r"^(?:that|this|it|those|these|both|either|all|all of (?:them|those|these))$")
_NUMBERED = _rx(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                r"twenty|thirty|half|noon|midnight|morning|evening|night)\b")
_LEADS_IN = _rx(r"^(?:(?:ok(?:ay)?|yes|yeah|yep|sure|good|great|perfect|fine|alright|then|so|"
                r"please|pls)[,.!]?\s+)*(?P<verb>[a-z]+)\b[,.!]?\s*(?P<rest>.*)$")
_THE_OFFER = _rx(r"^(?:it|them|him|her|that|this|those|these|all|both|everything|one|ones"
                 r"|(?:half|most|some|\d+|two|three|four|five|six|seven|eight|nine|ten)"
                 r"(?= of (?:them|those|these|it)\b|\s*[.,;!]|$))\b")
"""What follows an approval's verb that names the offer itself: a pronoun, or how much of
it ("refund half.", "schedule three.", "refund 3 of them" to "Shall I refund all 4?")."""


def _echoes(s: str, answering: str) -> str:
    """The action a sentence approves by ordering it in the offer's own verb ("book him"
    to "I can book the entertainer for 15:00.", "squash it, keep the first line" to
    "Should I squash the 23 commits?", "refund the duplicate now" to "I can refund the
    duplicate now."), or "". What follows the verb must be a pronoun or name what the
    offer names: "sign from the team" to "Should I sign them from the CEO?" puts
    something else in its place. In the non-held-out corpus 178 of 181 such replies are
    decisions."""
    action = proposal(answering)
    m = _LEADS_IN.match(s.strip())
    if not action or m is None or answers_only(answering):
        return ""
    verb, rest = m["verb"].lower(), m["rest"]
    if len(verb) < 3 or verb != action.split()[0].lower() or verb in ("the", "and"):
        return ""
    if rest and not _THE_OFFER.match(rest.lower()) and not mentions(
            " ".join(action.split()[1:]), " ".join(rest.split()[:3])):
        return ""
    return action


_REPORTS = _rx(r"\b(?:says?|said|thinks?|told|only|never|not|still|also)\b")
_GO_ON = _rx(r"\b(?:go ahead|go for it|book it|do (?:it|that)|set (?:it|that|them) up|"
             r"turn (?:it|them) on|send it|yes|yep|yeah|sure)\b")

_INSISTS = _rx(r"^(?:(?:yes|yeah|yep|yup)\b|(?:i'?m |i am |quite |very |absolutely |"
               r"totally |100% )?(?:sure|certain|positive)\b)")
_GIVES_IN = _rx(r"\b(?:you'?re right|fair (?:enough|point)|good point|fine|ok(?:ay)?|go ahead|"
                r"do it|(?:add|do|change|use|move) (?:it|that|them))\b|\bif you put it\b")
"""A "yes, I'm sure" that holds to what the person said (``asked.pushback``), and what
turns it into giving in ("yes ok, you're right, add it")."""

# Learnings and standing instructions.
_LEARN = _rx(
    # someone's habit is not a lesson: "I always forget", "she always complains", "he
    # always does", "it's always been bad", "as always"; nor how a thing always is or
    # was ("august is always dead", "in summer it was always full")
    r"(?<!\bi )(?<!\bhe )(?<!\bshe )(?<!\bas )(?<!'s )(?<!’s )(?<!\bit )"
    r"(?<!\bis )(?<!\bare )(?<!'re )(?<!’re )(?<!\bwas )(?<!\bwere )"
    r"(?<!\bis almost )(?<!\bare almost )"
    # nor a past one ("the secretary always went to make tea"); a view held until now is
    # ("I've always found that a model people trust beats a better one")
    r"(?<!'ve )(?<!’ve )(?<!\bhave )(?<!\bhas )\balways\b(?! been\b)"
    r"(?! (?:\w*[^\We]ed|went|was|were|did|had|came|took|made|said|told|got|gave|knew|sent|wrote|"
    r"paid|ran|used to)\b)"
    r"|(?:(?<='ve )|(?<=’ve )|(?<=\bhave )|(?<=\bhas ))always\b(?! been\b)"
    # unless it judges a practice ("fixed sleeps in tests are always wrong", "the fix is
    # always to restart the worker"), not a person ("you are always wrong")
    r"|(?<!\bhe )(?<!\bshe )(?<!\byou )(?<!\bthey )(?<!\bwe )"
    r"\b(?:is|are)(?: almost)? always (?:wrong|a (?:bug|mistake|trap)|to (?!be\b)\w)"
    # a lesson written down for later ("lesson for me: …", "note for the future: …",
    # "Saving on packaging is never saving, note for me."), not a note asked for ("write
    # a note for the team about the VPN")
    r"|\b(?:note|lesson|rule)s? for (?:us|me|the team|the future)(?:,? \w+)?"
    r"(?=\s*(?::|[-–—]|[.!]?$))|\b(?:note|lesson|rule)s? for the future\b"
    r"|\bfor the future(?=\s*[:,])"
    # what experience taught ("we've learned this twice now: …", "I have learnt not to …"),
    # not news ("I've learned that the server is down", "we learned the client moved")
    rf"|\b(?:i|we){_APOS}(?:ve| have) learn(?:ed|t)(?=:| (?:not|never|to|over|my lesson|"
    r"our lesson|this|the hard way|from|with)\b)|\bthings? (?:i|we) (?:have |'ve |’ve )?"
    r"learn(?:ed|t)(?=:)"
    # not remembering is no lesson ("I don't remember that"); TIL is, "til 22" is until
    r"|\b(?:from now on|in the future|going forward|next time|"
    r"(?<!n't )(?<!n’t )(?<!nt )(?<!not )remember (?:to|that)|"
    r"make sure (?:to|you|that)|keep in mind|lesson(?:s)? learned|lesson:|note to self|"
    r"rule of thumb|important:)|^til:"
)
_GROANS = r"\b(?:ugh|sigh|lol|(?:ha){2,}h?|lmf?ao|smh)\b"
_VENTS = re.compile(r"[\U0001F644\U0001F629\U0001F624\U0001F612\U0001F611\U0001F602\U0001F923"
                    rf"\U0001F605]|{_GROANS}", re.I)
"""Eye-rolls, groans and laughs: "they always move my appointments 🙄" vents about a
habit; it teaches nothing."""
_ORDERS_ALWAYS = re.compile(rf"^(?:[\W_]*{_GROANS})*"
                            r"[\W_]*always\b(?! \w+ing\b| so\b| the same\b| late\b)", re.I)
"""A sentence that opens with "always" (after a groan or a laugh) is an order."""
_SHOUTED = _rx(r"\b(?:til|todo)\b")
"""Marks that count only in capitals, as typed: "TIL" is a lesson learned, "til 22" is
until; a to-do mark in capitals names a task, the Spanish "todo" ("gracias por todo")
does not."""
_FIXED = _rx(
    r"\b(?:fixed (?:it|by|the|this)|the fix (?:is|was)|that (?:worked|fixed it)|works now|"
    r"now works|now passes|resolved (?:it|by|the)|solution (?:is|was)|the trick (?:is|was))\b"
)
_ASSISTANT_LEARN = _rx(
    r"\b(?:lessons? learned|lesson:|takeaway|note to self|in the future,|going forward,|"
    r"today i learned)"
)

# Tasks.
_TASK_START = _rx(
    r"^(?:please|pls|can you|could you|would you|will you|i need you to|i want you to|"
    r"we need to|you need to|need to|todo:|to do:|task:|next,? |now,? |also,? |then,? |"
    r"help me|let'?s (?:add|fix|build|write|implement|create|make|refactor|update|"
    r"investigate|debug|look)|"
    r"(?:add|fix|create|write|implement|update|remove|delete|refactor|run|check|investigate|"
    r"debug|build|deploy|install|set up|setup|rename|move|make|find|look into|look at(?! you\b)|"
    r"review|test|document|clean up|migrate|upgrade|bump|configure|change|replace|port|"
    r"optimi[sz]e|profile|benchmark|ship|release|merge|rebase|commit|push|cut|drop|draft|"
    r"schedule|split|send|post|publish|rerun|restart|stage|lead with)\s+"
    # a noun with its number is the subject, not an order: "port 80 was open"
    r"(?!v?\d[\w.]*\s+(?:is|was|are|were|has|had|failed|fails|passed|passes|works|worked)\b)"
    r"[\w\"'(])"
)
_LEAD = _rx(r"^(?:(?:also|and|then|now|next(?! time\b)|so|ok|okay|but|oh(?![\s,]*no\b)|good|"
            r"great|thanks|hmm+|hm|umm?|uh|ahh?|well)\b[,:]?\s*)+")
"""Lead words and fillers dropped before a sentence is read ("ok so", "and then", "hmm");
not the "oh" of "oh no" (dismay, not a refusal), nor the "next" of "and next time …"."""
_ASKS_BACK = r"\b(?:what|which|where|when)$"
"""A reply ending in a question word asks about the request ("bump to what"); it sets no
task."""
_SUBJECT = (r"(?:it|i|we|they|he|she|this|that|there|the|my|our|your|his|her|their|any|"
            r"anyone|anybody|someone|somebody|everyone|everybody|people)")
"""Who a question without its mark asks about; "should be fine", "is done" drop theirs."""
_WH_ASK = _rx(r"^(?:wait,?\s+)?(?:(?:why|how|what|when|where|who|which)\s+(?:do|does|did|is|are|"
              r"was|were|would|should|could|can|will|has|have|had)|(?:does|did|is|are|was|were|"
              rf"has|shall)\s+(?:you|{_SUBJECT})|(?:can|could|should)\s+{_SUBJECT}|"
              r"(?:do|have)\s+(?:i|you|we|they))\b|" + _ASKS_BACK)
"""A question typed without its question mark: "why do contractors always pull this",
"wait, does it go out under my name", "can people get the exchange instead", "bump to
what". "could you stop adding emojis" is a request, however it is phrased."""
_ASKS_INFO = _rx(
    r"\b(?:can|could|would|will) you (?:please |maybe |just |first |even |also )?"
    r"(?:tell (?:me|us)|show (?:me|us)|explain|point (?:me|us)|let (?:me|us) know|happen to|"
    r"even|remind me (?:what|who|how|where|when|why|which|if|whether)|"
    r"see (?:who|what|if|whether|where|when|why|how))\b"
)
"""A request for an answer, not for work: "could you tell me where the duplicates come
from?", "can you even make a map?" ask; they set the agent no task to remember."""
_STANDING = _rx(
    rf"^(?:keep(?!{_KEEPS_NOTHING})|stick to|stay under|"
    r"stay within|stay below)\b"
    r"|\b(?:stays?|must stay|should stay|go(?:es)? out|must be|should be) (?:under|within|below|"
    r"at most|before|after)\b"
)
_FROM_NOW = _rx(r"\b(?:from now on|going forward|from today on|from here on|starting (?:today|"
               r"now|tomorrow|next week|monday)|henceforth)\b")
"""A standing instruction set for the future: a decision as well as a lesson."""
_DECIDE_START = _rx(r"^(?:stay on|stick with|use|go with|make it|switch to|keep using)\b")
_TASK_ANY = _rx(r"\b(?:todo:|to-?do list|remind me to|don'?t forget to|action item)")
_PROBLEM = _rx(
    rf"\b(?:(?:doesn{_APOS}t|does not|doesnt|won{_APOS}t|will not|can{_APOS}t|cannot)"
    r"(?: seem to)? (?:work|start|run|build|load|compile|connect|deploy|boot|open|install)|"
    r"fails|failing|failed|is broken|are broken|crash(?:es|ing|ed)?|not working|"
    r"stopped working|throws|errors? out|hangs|times? out|returns? (?:a )?\d{3})\b"
)

# Context.
_CONTEXT = _rx(
    r"^(?:fyi|for context|for reference|note:|note that|btw|by the way|context:|background:|"
    r"heads up)\b"
    rf"|\b(?:we are|we{_APOS}re|i am|i{_APOS}m) (?:using|on|running|working with)\b"
    r"|\b(?:this|the|our) (?:project|repo|repository|codebase|app|service|stack) "
    r"(?:uses|runs on|is written in|targets|depends on|is built (?:with|on))\b"
)

# Assistant-side rules.
_DISCOVER = _rx(
    r"\b(?:i found|found that|it turns out|turns out|the (?:root )?cause (?:is|was)|"
    r"the (?:issue|problem|bug|culprit) (?:is|was)|the reason (?:is|was)|discovered|"
    r"i (?:noticed|see) that|this means that|the error (?:is|was) (?:caused|because))\b"
)
_PERSON_DISCOVERS = _rx(
    rf"\b(?:that{_APOS}s why|that is why|turns out|turned out|all along|"
    r"i (?:just )?(?:found out|noticed|reali[sz]ed|figured out|discovered)|"
    r"the (?:root )?(?:cause|culprit|problem|issue) (?:is|was))\b"
)
"""What the person finds out: "oh, that's why the disk filled up", "turns out the cron ran
twice", "I just noticed the backups skip sockets"."""
_STATUS = _rx(
    r"^(?:status|progress|next steps?|remaining|blocked|summary|done|completed):\s*\w"
    rf"|\b(?:i{_APOS}m|i am) (?:currently |now )?(?:working on|in the middle of|blocked)\b"
    r"|\bblocked (?:on|by)\b|\bwaiting (?:for|on) (?:the|you|your|approval|ci|review)\b"
    r"|\ball (?:\d+ )?tests (?:pass|are passing|passed)\b"
)
_LET_ME = _rx(r"^(?:let me|i'll|i will|now i'll|first,? |okay,? let me|ok,? let me)\b")

class LocalExtractor:
    """The deterministic extractor (see the module docstring for what it recognises)."""

    name = NAME

    def __init__(self, classifier: Classifier | None = None,
                 review_below: float = REVIEW_BELOW) -> None:
        self.classifier = classifier
        """The learned head read beside the rules ([extract] classifier; None: rules only)."""
        self.review_below = review_below
        """With the classifier, a rejection less sure than this waits for review (the
        home's ``[maintenance] promote_min_confidence``). The rules' own confidences are
        fixed per phrase, not calibrated, so the rules alone never send one there."""

    def extract(self, turns: Sequence[PreparedTurn]) -> Extraction:
        if self.classifier is not None:
            from memtui.extract.classify.apply import extract_with

            return extract_with(self.extract_turn, self.classifier, turns, self.review_below)
        out = Extraction()
        for turn in turns:
            self.extract_turn(turn, out)
        return out

    # -- per turn ------------------------------------------------------------------------

    def structural(self, pt: PreparedTurn, out: Extraction) -> bool:
        """Tool calls, tool outcomes, refusals, failures and compactions: no reading of
        prose needed (the llm extractor uses this too). True for a compaction."""
        if pt.turn.kind == "compaction":
            out.episodes.append(self._episode(pt, "compaction", "Context compacted",
                                              shorten(pt.text, DETAIL_CHARS)))
            return True
        if pt.calls:
            self._calls(pt, out)
        if pt.results:
            self._results(pt, out)
        if pt.turn.error:
            # A failed model call (a 429, a 502): the agent lost a turn, worth remembering.
            error = redact(pt.turn.error).text
            first = shorten(error.strip().split("\n", 1)[0], 160)
            out.episodes.append(self._episode(pt, "incident", f"Model call failed: {first}",
                                              shorten(error, DETAIL_CHARS), outcome="error"))
        return False

    def extract_turn(self, pt: PreparedTurn, out: Extraction) -> None:
        turn = pt.turn
        if self.structural(pt, out) or not pt.text:
            return
        if turn.role == "user":
            if turn.author == "person":  # not a prompt the agent wrote for a sub-agent
                self._user(pt, out)
        elif turn.role == "assistant":
            self._assistant(pt, out)

    def _episode(self, pt: PreparedTurn, kind: str, summary: str, detail: str = "",
                 **extra: str | None) -> EpisodeCandidate:
        return EpisodeCandidate(kind=kind, summary=summary, detail=detail, source_entry=pt.id,
                                at=pt.at, session=pt.turn.session, **extra)

    def _state(self, pt: PreparedTurn, category: str, summary: str, detail: str = "",
               confidence: float = 0.8) -> StateCandidate:
        short = shorten(summary)
        return StateCandidate(category=category, summary=short, detail=shorten(detail, DETAIL_CHARS)
                              if detail and detail != summary else "",
                              source_entry=pt.id, domain=domain_of(short), confidence=confidence,
                              at=pt.at, session=pt.turn.session)

    def _calls(self, pt: PreparedTurn, out: Extraction) -> None:
        for call in pt.calls:
            out.episodes.append(self._episode(pt, "tool_call", call.gist, tool=call.name,
                                              ref=call.id))

    def _results(self, pt: PreparedTurn, out: Extraction) -> None:
        for res in pt.results:
            gist = res.call.gist if res.call else (res.name or "a tool")
            if res.refused:
                out.outcomes.append((res.call_id, "refused"))
                summary = shorten(f"Refused tool use: {gist}", REFUSAL_CHARS)
                reason = refusal_reason(res.content)
                out.state.append(self._state(pt, "rejected", summary, reason,
                                             confidence=REFUSAL))
                out.episodes.append(self._episode(pt, "rejection", summary, reason,
                                                  tool=res.name, ref=res.call_id,
                                                  outcome="refused"))
            elif res.is_error:
                out.outcomes.append((res.call_id, "error"))
                first = shorten(res.content.strip().split("\n", 1)[0], 160) or "error"
                out.episodes.append(self._episode(pt, "incident", f"{gist} failed: {first}",
                                                  shorten(res.content, DETAIL_CHARS),
                                                  tool=res.name, ref=res.call_id,
                                                  outcome="error"))
            else:
                out.outcomes.append((res.call_id, "ok"))

    def _user(self, pt: PreparedTurn, out: Extraction) -> None:
        """The person's words, sentence by sentence; a bare choice opening the turn
        ("2", "y", "3 - use staging") answers the options just offered (``asked.pick``)."""
        task_done = False
        picked, picked_from = pick(pt.text, pt.previous_assistant), pt.previous_assistant
        if picked is None:
            picked, picked_from = pick(pt.text, pt.open_offer), pt.open_offer
        chose = named(pt.text, pt.previous_assistant) or named(pt.text, pt.open_offer)
        for i, s in enumerate(sentences(clean(pt.text)) or [clean(pt.text)]):
            fact = fact_in(_LEAD.sub("", s) or s, pt)
            if fact is None and ":" in s[:30]:
                fact = fact_in(s.split(":", 1)[1].strip(), pt)
            if fact is not None:
                out.facts.append(fact)
            found: tuple[str, str, float] | None
            if picked is not None and i == 0:
                found, s = (picked.category, _answer_summary(picked, pt.text, picked_from),
                            picked.confidence), clean(pt.text)
            else:
                found = self._classify_user(_LEAD.sub("", s) or s, pt, opening=i == 0)
                if chose is not None and i == 0 and (found is None or found[0] in (
                        "decision", "task") or len(s.split()) <= 3):
                    # "Monday morning, if you please" to "Send it now or on Monday morning?"
                    found, s = (chose.category, chose.summary, chose.confidence), clean(pt.text)
            if found is None:
                continue
            category, summary, confidence = found
            if len(summary.split()) < 2:
                continue
            if category == "task":
                if task_done:
                    continue
                task_done = True
            entry = self._state(pt, category, summary, s, confidence)
            out.state.append(entry)
            if category == "learning" and _FROM_NOW.search(s):
                # "From now on we deploy on Tuesdays" is decided today and kept as a rule:
                # the learning becomes the rule, the decision dates it.
                category, entry = "decision", self._state(pt, "decision", summary, s,
                                                          confidence)
                out.state.append(entry)
            if category in ("decision", "rejected"):
                entry.answers_entry = answered(pt)
                kind = "decision" if category == "decision" else "rejection"
                out.episodes.append(self._episode(pt, kind, shorten(summary),
                                                  answers_entry=entry.answers_entry))

    def _classify_user(self, s: str, pt: PreparedTurn, *, opening: bool = False
                       ) -> tuple[str, str, float] | None:
        """``opening``: ``s`` is the turn's first sentence."""
        lower = s.lower()
        ask = last_ask(pt.answering)
        if ask and _OBJECTS.search(ask) and _NO_OBJECTION.search(lower) and not (
                s.rstrip().endswith("?")):
            # "nope" to "Any objections?"
            return "decision", f"Approved: {in_context(ask, pt.answering)}", 0.75
        if unhurried(s) and len(s.split()) <= 5:
            return None  # "please, no rush", "ok, take your time": nothing asked or refused
        question = s.rstrip().endswith("?") or bool(_WH_ASK.search(lower.rstrip(" .!")))
        m = _NO_START.search(lower)
        if m:
            if question and not re.search(r"[.!,;]\s", s) and (
                    len(s.split()) > 1 or s[m.end():].strip(" ?") == ""):
                # "no contract change?" and "negative?" ask; "no more views. can you …?"
                # refuses
                return None
            rest = s[m.end():].lstrip(" ,.!:;-—")
            inner = rejection_confidence(rest)
            if inner is None and nothing_more(rest, ask):
                return None  # "nope, that's it" to "Anything else?" refuses nothing
            if inner is None and (asks_only(ask) or not ask and relays_question(pt.answering)):
                # "no, still the same 500" to "Did that fix it?" answers it; what follows
                # the no ("no, undo all of it") is read on its own
                return self._classify_user(capital(rest), pt) if rest else None
            bare = s[m.end():m.end() + 1] in ("", ",", ".", "!", ":", ";", " ") and (
                not rest or s[m.end():].lstrip()[:1] in ("", ",", ".", "!", ":", ";", "-", "—"))
            if not bare:
                # "No pricing in launch posts": the whole sentence is the prohibition.
                sure = RULE if len(s.split()) >= 4 else AMBIGUOUS
                return "rejected", self._with_ask(s, pt), sure
            if inner is not None and not rest.rstrip().endswith("?"):
                # "No, don't add Redis": what follows the no says what is rejected.
                return "rejected", self._with_ask(capital(rest), pt), inner
            if len(rest.split()) >= 4:
                # "no, the old recordings are for the anniversary film": a reason
                return "rejected", _refused(rest, pt.answering), NO_BUT
            if ask:
                # "no" or "nope, too early" to "Should I ask the content agent to …?"
                return "rejected", _refused(rest, pt.answering), AMBIGUOUS
            return None
        if not question:
            confidence = rejection_confidence(s)
            if confidence is not None and opening and (
                    offered := ask or last_offer(pt.answering)) and _conditions(s, pt, ask):
                # "ok do it, but don't touch the colours" to "Shall I recolour the
                # chart?" or "I could recolour the chart." approves; the prohibition is
                # the approval's condition
                return "decision", _approval(s, offered, pt.answering), 0.75
            if confidence is not None:
                return "rejected", self._with_ask(s, pt), confidence
            if opening and _UNDOES.search(lower) and (done := done_unasked(pt.answering, s)):
                # "revert the rename, the app still reads slot_start" to "I also renamed
                # slot_start to start_at.": what the agent did on its own, turned down
                return "rejected", _undoing(s, done), NO_BUT
            if _REFUSED_AGAIN.search(lower) or (
                    opening and _REFUSED_AGAIN.search(clean(pt.text).lower())):
                return "rejected", self._with_ask(s, pt), NO_BUT
            if (offer := _declined(lower, pt.answering, pt.text)) is not None:
                # its words never name what they turn down: the offer does
                if _A_NO.search(lower) and proposal(pt.answering):
                    # "That's a no on the paid plan" names only the verdict: the
                    # proposal says what was refused, the words stay as the detail
                    return "rejected", _named_no(s, pt.answering), NO_BUT
                return "rejected", _about(s, offer, pt.answering), NO_BUT
        if question:
            # a request, at the start or after the problem it is about ("the export test
            # fails on CI, can you fix it?")
            if _ASKS_INFO.search(lower) or re.search(_ASKS_BACK, lower.rstrip(" ?.!")):
                return None
            if _TASK_START.search(lower) and not _QUESTION_START.search(lower) or re.search(
                    r"(?:^|[,;:]\s*)(?:can|could|would|will) you\b", lower):
                return "task", s, 0.7
            return None
        if _PREFER.search(lower) and not re.search(r"\b(?:want|like) (?:you|u) to\b", lower):
            return "context", f"Preference: {s}", 0.8
        if opening and (action := _echoes(s, pt.answering)):
            return "decision", decided(action, s), 0.75
        if opening and _ALL_OF_IT.match(lower) and (
                plan := last_offer(pt.answering)) and not answers_only(pt.answering, ask):
            return "decision", _approval(s, plan, pt.answering), 0.75
        fine = (_IS_FINE.match(lower) or _WORKS.match(lower)) if opening else None
        if fine and not _REPORTS.search(fine["what"]) and (
                plan := last_offer(pt.answering)) and not answers_only(pt.answering, ask):
            # "Baraka says the queue is fine" reports, neither approving nor keeping
            what = fine["what"]
            if _AGREED.match(what) or mentions(plan, what) or _GO_ON.search(lower):
                return "decision", _approval(s, plan, pt.answering), 0.75
            if fine.re is _IS_FINE and not (
                    _NUMBERED.search(what) or re.search(r"\b(?:but|though)\b", lower)
                    or mentions(pt.answering, what)):
                # what it keeps is nothing the agent offered
                return "rejected", _about(s, plan, pt.answering), NO_BUT
        if _INSISTS.search(lower) and not _GIVES_IN.search(lower) and (
                argued := pushback(pt.answering)):
            # "yes, I'm sure, Davi likes it where it is" to "Are you sure? Moving it to
            # JSON would let you change prices without touching code." holds to a refusal
            return "rejected", _about(s, argued, pt.answering), NO_BUT
        go = _GO.match(lower)
        if _APPROVE.search(lower) or go:
            # "yes, but only before 4pm" to "Should cancelled slots be rebooked?" approves
            # with a condition; "yes" to "Did that fix it?" answers it, approving nothing,
            # and "yeah, rename the field" to "Anything else?" asks for something new
            if _SCOFFS.search(lower):
                return None  # "oh sure, because the trial went so well"
            if ask and not answers_only(pt.answering, ask):
                return "decision", _approval(s, ask, pt.answering), 0.75
            if not ask and (plan := last_offer(pt.answering)) and (
                    OFFERS.search(plan) or go or len(lower.split()) > 4) and not (
                    _lesson(lower) or _STANDING.search(lower)):  # a rule, below
                # "yes, but to Herr Brandt, not the lab manager" after "I could add a check
                # that emails the lab manager." approves the offer; a bare "ok" after "I'll
                # chart Eastside separately." may only hear a plan out
                return "decision", _approval(s, plan, pt.answering), 0.75
            if len(lower.split()) <= 4 and not go:
                return None  # "sure" to a report; "merge it." there is still an order
        mark = next((m[0] for m in _SHOUTED.finditer(s) if m[0].isupper()), "")
        if _lesson(lower) or _STANDING.search(lower) or mark == "TIL":
            return "learning", s, 0.8
        if _DECIDE.search(lower) or _DECIDE_START.search(lower):
            return "decision", s, 0.85
        if _CONTEXT.search(lower):
            return "context", s, 0.75
        if _PERSON_DISCOVERS.search(lower):
            return "discovery", s, 0.7
        if (_TASK_START.search(lower) or _TASK_ANY.search(lower) or mark) and not (
                _ASKS_INFO.search(lower)):
            return "task", s, 0.75
        if _PROBLEM.search(lower) and len(s) < 300:
            return "task", s, 0.6
        return None

    @staticmethod
    def _with_ask(s: str, pt: PreparedTurn) -> str:
        """A short rejection says what it rejects: the question it answers, if any."""
        if len(s.split()) >= 5:
            return s
        ask = last_offer(pt.answering)  # a question, or a plan the agent announced
        if len(ask.split()) <= 3:  # "Want me to?" names nothing: the sentence before it does
            ask = proposal(pt.answering) or in_context(ask, pt.answering)
        return f"{s.rstrip('.!')} — re: {ask}" if ask else s

    def _assistant(self, pt: PreparedTurn, out: Extraction) -> None:
        text = clean(pt.text)
        lower_all = text.lower()
        if not any(p.search(lower_all) for p in (_DISCOVER, _STATUS, _ASSISTANT_DECIDE,
                                                  _ASSISTANT_REJECT, _ASSISTANT_LEARN,
                                                  _FIXED)):
            return
        # A sub-agent's words never reject or decide anything for the person.
        taken: set[str] = set() if pt.in_conversation else {"rejected", "decision"}
        for s in sentences(text):
            lower = s.lower()
            if s.rstrip().endswith("?") or _LET_ME.search(lower) or len(s.split()) < 4:
                continue
            found: tuple[str, float] | None = None
            if "rejected" not in taken and _ASSISTANT_REJECT.search(lower):
                found = ("rejected", 0.6)
            elif "discovery" not in taken and _DISCOVER.search(lower):
                found = ("discovery", 0.7)
            elif "learning" not in taken and (
                    _ASSISTANT_LEARN.search(lower) or (pt.after_tool_error
                                                       and _FIXED.search(lower))):
                found = ("learning", 0.65)
            elif "decision" not in taken and _ASSISTANT_DECIDE.search(lower):
                found = ("decision", 0.6)
            elif "agent_state" not in taken and _STATUS.search(lower):
                found = ("agent_state", 0.6)
            if found is None:
                continue
            category, confidence = found
            taken.add(category)
            out.state.append(self._state(pt, category, s, "", confidence))
            if category == "decision":
                out.episodes.append(self._episode(pt, "decision", shorten(s)))
            elif category == "learning" and pt.after_tool_error:
                out.episodes.append(self._episode(pt, "fix", shorten(s)))


def answered(pt: PreparedTurn) -> str | None:
    """The assistant message a person's rejection or decision answers: the one just
    before it, when it asked or proposed something, or the offer the person has only
    asked about since (None: it answers nothing known)."""
    if pt.answering_id and (last_offer(pt.answering) or done_unasked(pt.answering, pt.text)):
        return pt.answering_id
    return None

