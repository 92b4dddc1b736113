"""What the agent asked or offered, and a reply that picks from it.

A person answers a proposal in its own terms more often than in words: "y" to "Run
`npm install`? (y/n)", "3 - staging first" to a permission prompt listing "1. Yes 2. Yes,
don't ask again 3. No, tell me what to do differently", "B" to "Option A: … Option B: …
Which one?". ``pick`` reads such a reply against the options of the agent's last words
(``options``): the chosen option says whether it approves, refuses or chooses, and the
summary names the option, not the digit. Only the structure is read, never a wording
list of the person's: a reply that is not a bare choice is left to the phrase rules.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from memtui.text import capital, clean, sentences, shorten

ASKING = re.compile(
    r"\?\s*$|\b(?:should i|shall i|do you want|would you like|want me to|ok to|okay to|"
    r"i could|i can|i'd suggest|i suggest|i propose|how about|plan:)", re.I)
"""A sentence that asks or proposes: a question, "should I", "I could", "how about"."""
ASKED = re.compile(
    r"\?\s*$|\b(?:should i|shall i|do you want|would you like|want me to|ok to|okay to|"
    r"can i|may i|let me know)\b", re.I)
"""A sentence that asks the person something or offers to do it."""

CLEAR = 0.9
"""A choice among options the agent spelled out: as sure as a refused tool use."""
TERSE = 0.75
"""A bare "y" or 👍 to a question that listed no choices (as sure as a bare "yes")."""
TERSE_NO = 0.55
"""A bare "n" or 👎 to such a question: a short reply, read only against the question."""

_YN = re.compile(r"[(\[]\s*y(?:es)?\s*/\s*n(?:o)?\s*[)\]]", re.I)
_MARK = re.compile(
    r"(?:^|(?<=[\s(\[:]))(?:option\s+)?\(?([1-9]|[a-e])(?:[.):]|\s+[-–—])\s+(?=\S)", re.I)
_YES = frozenset({"y", "👍", "✅", "✔", "✔️", "👌"})
_NO = frozenset({"n", "👎", "❌", "✖", "✖️", "🙅"})
"""Bare answers the phrase rules do not read ("yes", "no thanks" and the rest they do)."""
_ANSWER = re.compile(
    r"^(?:(?:option|opt|choice|number)\s*|#)?"
    r"(?P<keys>[1-9a-e](?:\s*(?:,|\+|&|and)\s*[1-9a-e])*|[^\w\s]{1,2}|[a-z]{1,4})"
    r"(?:\s*(?:[)\]]|\.(?=\s|$))?\s*"
    r"(?:$|(?:[-–—:,;!]|\.(?=\s|$)|\s(?=please|pls|for now|then|thanks))\s*(?P<rest>.*)$))",
    re.I | re.S)
_KEY_SPLIT = re.compile(r"\s*(?:,|\+|&|and)\s*", re.I)
_REFUSING = re.compile(r"^(?:no|nope|don'?t|do not|skip|cancel|abort|deny|neither|none|"
                       r"reject|stop|leave it|not now)\b", re.I)
_APPROVING = re.compile(r"^(?:yes|ok|okay|allow|approve|proceed|go ahead|continue|do it)\b",
                        re.I)
_CLOSING = re.compile(
    r"\banything (?:else|more)\b|\bis that (?:all(?! right)|everything|it)\b"
    r"|\bis there (?:anything |something )?(?:else|more)\b"
    r"|\bany (?:other|more|further) (?:questions?|requests?|changes?|tasks?)\b", re.I)
"""A question that closes the exchange ("Anything else?", "Is there more you need?"), not
an offer: "Would you like something more formal?" offers, and a "no" to it refuses."""
_ANY_MORE = re.compile(r"\bany (?:other|more|further)\b", re.I)
_AGENT_ACTS = re.compile(r"\b(?:me to|should i|shall i|can i|could i|i can|i could|i'll|"
                         r"let me)\b", re.I)
""""Do you want any other section?" closes too; "Want me to order any more toner?" and
"Should I check any other servers?" offer something the agent would do."""
_NOTHING_MORE = re.compile(
    r"^(?:that(?:'s|’s| is| was|s) (?:it|all|everything|enough)\b(?!\s+(?:wrong|bad|broken|"
    r"incorrect|nonsense|rubbish))|(?:i'?m|i am|we'?re|we are|all) (?:good|set|done)\b"
    r"|(?:i )?think (?:it'?s|that'?s|is|we'?re|i'?m) (?:good|fine|all|it)\b"
    r"|nothing(?: else| more)?\b)", re.I)
"""What follows a "no" that only says nothing more is wanted (not "no thanks": that is the
polite refusal of an offer)."""
_ASKS_ONLY = re.compile(
    r"^(?:(?:and|also|so|btw|by the way|oh|one more|quick question|quick check)[,:]?\s+)?"
    r"(?:did|does|do|is|are|was|were|has|have|had|(?:can|could|will) you|any|anything)\b"
    r"(?!\s+(?:both|all|it|that|this|them|the same|either)"
    r"(?:\s+(?:\d+|two|three|four|five|six|of them|of these))?\s*\?)", re.I)
_SEEKS_CONSENT = re.compile(
    r"\b(?:let's|should|shall|want|wanna|"
    r"(?:would|'d|do) (?:you )?like|like (?:me|us|to|it|that|this)|prefer|rather|mind|"
    r"agree|approve|proceed|go ahead|objections?|concerns?|problem|need|needed|necessary|"
    r"safe|worth|acceptable|confirm|final|the right|make sense|or)\b", re.I)
"""Words of a question that ask for consent or a choice: "should", a wish ("want",
"prefer", "need"), whether it is safe, worth it or the right way, "any objections",
alternatives ("the whole list or only …?")."""
_WISHES = re.compile(r"\b(?:let's|should|shall|want|wanna|(?:would|'d) like|prefer|rather|"
                     r"mind|or)\b", re.I)
"""What still asks for a wish or a choice in a question of what happened ("Did you want the
long version?", "Was it the blue one or the red one?"); "Has she approved it?" and "Did
the agency confirm?" ask what happened."""
_APPROVAL = re.compile(
    r"\b(?:i|i'm|i'll|i'd|we|we're|we'll|we'd|me|us|my|our|ok|okay|fine|good|alright|"
    r"all right|sure|happy|ready|work|works|sound|sounds|look|looks)\b", re.I)
"""Words that make a question ask for approval ("Does this look good?", "Is Friday ok?",
"Can I restart it?", "Do we ship today?"), unless it asks what happened ("Did that
work?", "Did you send us the note?")."""
_HAPPENED = re.compile(r"^(?:\S+[,:]?\s+)?(?:did|was|were|has|have|had)\b", re.I)
"""A question that asks what happened ("Did that work?", "Was the upload ok?")."""
_OPTION_CHARS = 100
OFFER_CHARS = 600
"""The end of an open offer kept for a late answer (as much as the last assistant words)."""
ANSWER_TURNS = 3
"""The agent's turns that may answer a person's question about an open offer ("Let me
check." — "About four minutes, it's 40 GB."): one more, and the agent is at work."""


@dataclass(frozen=True)
class Pick:
    """A reply read as a choice: ``category`` rejected or decision. A bare yes or no keeps
    what it said (``said``), the words after it (``rest``) and the question (``ask``), so
    that its summary can name what it approves or refuses."""

    category: str
    summary: str
    confidence: float
    said: str = ""
    """"yes" or "no" for a bare yes or no to a question, else ""."""
    rest: str = ""
    ask: str = ""


@dataclass
class OpenOffer:
    """The agent's last question or offer, kept open while the person only asks about it.

    "I could add the index; shall I?" — "how long would it lock the table?" — "About four
    minutes." — "then no": the "no" answers the offer two agent turns back, not "About
    four minutes.", which asks nothing. An agent's turn that asks or offers opens a new
    offer; the offer stays open only while the person asks questions and the agent
    answers them. An agent that goes on talking past ``ANSWER_TURNS`` turns is at work,
    not answering: "why are there 2 subscription handlers?" and the edits that follow it
    leave "Want me to implement Option A?" behind.
    """

    text: str = ""
    id: str = ""
    asking: bool = False
    """The person's last words were a question: the agent's next words answer it."""
    answered: int = 0
    """The agent's turns since the person's question."""

    def agent(self, text: str, turn_id: str) -> None:
        """The agent said ``text`` (message ``turn_id``)."""
        if offers(text):
            self.text, self.id = text[-OFFER_CHARS:], turn_id
        elif not self.asking or self.answered >= ANSWER_TURNS:
            self.text, self.id = "", ""
        self.answered += 1

    def person(self, text: str) -> None:
        """The person said ``text``: a question keeps the offer open, anything else
        answers it or moves on."""
        self.asking, self.answered = text.rstrip().endswith("?"), 0
        if not self.asking:
            self.text, self.id = "", ""

    def behind(self, previous_id: str | None) -> tuple[str, str | None]:
        """The offer a reply answers when the agent's last words (message
        ``previous_id``) ask nothing themselves, so opened no offer of their own: its
        words and message id, or ("", None)."""
        if self.text and self.id and self.id != previous_id:
            return self.text, self.id
        return "", None


_QUOTED = re.compile(r'"[^"\n]{1,200}"|“[^”\n]{1,200}”')
_HIDDEN = "\ue000"
"""Stands in for a question mark inside a quotation while sentences are found."""


def _unquoted(text: str) -> str:
    """The text with the question marks inside its quotations hidden: 'Scheduled: "Where
    do your users drop off? Funnels in Lumen" goes out Tuesday.' quotes a title, and asks
    the person nothing."""
    return _QUOTED.sub(lambda m: m[0].replace("?", _HIDDEN), text)


def offers(text: str) -> bool:
    """Whether the agent's words ask or offer anything ("Shall I …?", "I could …")."""
    return any(ASKED.search(s) or ASKING.search(s)
               for s in sentences(_unquoted(clean(text))))


def last_ask(previous: str) -> str:
    """The question or proposal at the end of the assistant's last words, shortened."""
    if not previous:
        return ""
    parts = sentences(_unquoted(clean(previous)))
    for s in reversed(parts):
        if ASKED.search(s):
            return shorten(s.replace(_HIDDEN, "?"), 140)
    return ""


_NAMING_CHARS = 90
"""How much of the words before a bare question a summary keeps."""


_GO_ON = re.compile(
    r"^(?:(?:so|ok(?:ay)?|then|alright)[,:]?\s+)?(?:(?:do you )?want me to|would you like me to|"
    r"(?:shall|should|can|may) (?:i|we)|(?:is it )?ok(?:ay)? (?:if i|to)|ready (?:for me )?to)\s+"
    r"(?:go ahead|proceed|continue|go on|carry on|move (?:forward|ahead)|get started|start|go|"
    r"do (?:it|that|this|so)|go for it|make (?:the|that|this|these) changes?)"
    r"(?:\s+(?:with (?:it|that|this|these|them)|and do (?:it|that|this|so)|now|then|"
    r"as planned))*\s*\?$", re.I)
"""A question that only asks whether to go on ("Want me to go ahead?", "Shall I proceed
with it?"): what it is about is in the words before it."""


def goes_on(ask: str) -> bool:
    """Whether ``ask`` only asks to go on (``_GO_ON``), naming nothing itself."""
    return _GO_ON.match(ask.strip()) is not None


def in_context(ask: str, previous: str) -> str:
    """A question too short to name anything ("Send?", "Book it?", "Go ahead?") or that
    only asks to go on ("Want me to go ahead?", ``goes_on``), as a summary shows it: after
    the words before it in ``previous``, which name what it asks about ("Thursday 1–5pm is
    available. Book it?"; a bare "Removed." or "Fair." is not enough, so the sentence
    before that joins it). Any other ``ask`` as it is."""
    if not ask or len(ask.split()) > 3 and not goes_on(ask) or not previous:
        return ask
    parts = [p.replace(_HIDDEN, "?").strip() for p in sentences(_unquoted(clean(previous)))]
    at = next((i for i in range(len(parts) - 1, 0, -1) if parts[i] == ask), 0)
    start = at
    while start > 0 and len(" ".join(parts[start:at]).split()) < 4:
        start -= 1
    before = shorten(" ".join(parts[start:at]), _NAMING_CHARS)
    return f"{before} {ask}" if before else ask


ANNOUNCES = re.compile(
    r"\b(?:i'?m (?:going|about|planning) to|i am (?:going|about|planning) to|i'll|i will|"
    r"i'd|i would|let me|i plan to|i want to|i'm thinking of|next,? i|"
    r"(?:i|we) (?:could|can)(?!['’]|not)|i (?:suggest|recommend|propose))\b", re.I)
"""An agent's sentence announcing what it will or could do, in the first person: a plan
or an offer a reply can turn down ("Redis could be slower" announces nothing)."""


OFFERS = re.compile(
    r"\b(?:i|we) (?:could|can)\b(?!['’]|not)"
    r"|\b(?:i'?d|i would|i) (?:suggest|recommend|propose)\b"
    r"|\bif (?:you'?d? )?(?:want|like|prefer)\b|\bif (?:useful|helpful)\b|\bhappy to\b"
    r"|\bone option\b|\blet me know if\b", re.I)
"""An announcing sentence that offers rather than states a plan ("I could add a check",
"If you want, I can write three more", "I'd suggest a Saturday shift"): an approval of it
decides, where an "ok" to "I'll chart Eastside separately." may only hear the plan out."""


def last_offer(previous: str) -> str:
    """``last_ask``, or else the last sentence announcing what the agent will do
    (``ANNOUNCES``: "I'm going to split it into three modules.", "I'd drain them
    tonight."), shortened; "" when the assistant offered nothing."""
    if ask := last_ask(previous):
        return ask
    for s in reversed(sentences(clean(previous))) if previous else ():
        if ANNOUNCES.search(s):
            return shorten(s, 140)
    return ""


_PUSHBACK = re.compile(r"^(?:\S+[,.]?\s+)?are you (?:really |quite )?(?:sure|certain)"
                       r"(?:\s+about\b[^?]*)?\?$", re.I)
_LOSS = re.compile(r"\b(?:delet|los[et]|permanent|undo|undone|irreversib|overwrit|wipe|"
                   r"erase|destroy|recover|restor)", re.I)


def pushback(previous: str) -> str:
    """The agent's argument when its last words push back on what the person said with a
    bare "Are you sure?" ("Are you sure? It would save two hours a week."; "Are you sure
    about the price table? Moving it to JSON would let you change prices."): a "yes,
    I'm sure" to it holds to a refusal, so it refuses what the agent argues for. "" when
    they do not, when they ask to confirm an act ("Are you sure you want to drop the
    table?"), or when the argument warns of a loss ("Are you sure? This deletes the 2019
    backups."), which a "yes" confirms."""
    if not previous:
        return ""
    parts = sentences(clean(previous))
    asked = [i for i, s in enumerate(parts) if ASKED.search(s)]
    if not asked or not _PUSHBACK.match(parts[asked[-1]].strip(" \"'*_`")):
        return ""
    argument = " ".join(p for i, p in enumerate(parts) if i != asked[-1]
                        and not re.match(r"^(?:ok(?:ay)?|understood|noted|sure|got it)\W*$",
                                         p, re.I))
    if _LOSS.search(argument):
        return ""
    if not argument and " about " in parts[asked[-1]]:
        argument = parts[asked[-1]]  # "Are you sure about the warranty?"
    return shorten(argument, 140)


def options(previous: str) -> dict[str, str]:
    """The numbered or lettered options the agent's last words list, key (``1``, ``b``)
    → the option's words. Only a run that starts at 1 (or a) and counts up without a gap
    is a list of options: "a 2-step plan" or "Plan B." alone lists nothing."""
    text = clean(previous)
    marks = list(_MARK.finditer(text))
    for start, first in enumerate(marks):
        if first.group(1).lower() not in ("1", "a"):
            continue
        run = [first]
        for m in marks[start + 1:]:
            if m.group(1).lower() == chr(ord(run[-1].group(1).lower()) + 1):
                run.append(m)
        if len(run) < 2:
            continue
        out = {}
        for i, m in enumerate(run):
            end = run[i + 1].start() if i + 1 < len(run) else len(text)
            words = text[m.end():end].split("\n", 1)[0]
            if i + 1 == len(run):  # the last option ends where the question after it starts
                words = re.split(r"(?<=[.?!])\s", words, maxsplit=1)[0]
            out[m.group(1).lower()] = shorten(words.strip(" ,;"), _OPTION_CHARS).rstrip(".?!")
        return out
    return {}


def pick(text: str, previous: str) -> Pick | None:
    """``text`` read as a choice from what ``previous`` (the agent's last words) offered:
    a key of its options ("2", "option b", "1 and 3", "3 - use staging"), or a bare yes or
    no ("y", "n", 👍) to its question. None when it is not a bare choice."""
    if not previous or text.rstrip().endswith("?"):
        return None
    m = _ANSWER.match(clean(text).strip())
    if m is None:
        return None
    keys = [k.lower() for k in _KEY_SPLIT.split(m.group("keys"))]
    rest = (m.group("rest") or "").strip()
    listed = options(previous)
    ask = _prompt(previous, listed)
    if all(k in listed for k in keys):
        chosen = [listed[k] for k in keys]
        if len(chosen) == 1 and _REFUSING.match(chosen[0]):
            return _refused(rest, ask, CLEAR)
        if len(chosen) == 1 and _APPROVING.match(chosen[0]):
            return _approved(rest, ask, CLEAR)
        said = "; ".join(chosen)
        return Pick("decision", shorten(f"Chose: {said}" + (f" — {rest}" if rest else "")),
                    CLEAR)
    if len(keys) != 1 or not ask:
        return None
    explicit = bool(_YN.search(previous))
    if not explicit and asks_only(ask):
        return None  # "n" to "Did that fix it?" answers it
    if keys[0] in _YES:
        return _approved(rest, ask, CLEAR if explicit else TERSE)
    if keys[0] in _NO:
        return _refused(rest, ask, CLEAR if explicit else TERSE_NO)
    return None


_CHOICE_LEAD = re.compile(
    r"^.*?\b(?:should|shall|do you want|would you like|want|would you prefer|do you prefer|"
    r"prefer|i can|i could|we can|we could)\b(?:\s+(?:i|we|me|us|it|they|them|the \w+))?"
    r"(?:\s+to)?(?:\s+be)?\s+", re.I)
_OF_FACT = re.compile(r"^(?:is|are|was|were|did|does|do|has|have|had|could you|can you|"
                      r"will you)\b(?!.*\b(?:want|like|prefer|should)\b)", re.I)
_WHICH = re.compile(r"^(?:(?:which|which one|which of (?:the|these|them)(?: two)?|"
                    r"which (?:one )?(?:do|would) you (?:want|prefer|like|pick|choose))"
                    r"(?: (?:for|in|on|at) [^?]{1,40})?|"
                    r"what do you think|thoughts|your call)\s*\?$", re.I)
_REPLY_ASKS = re.compile(r"^(?:how|what|why|when|where|who|which|is|are|does|do|can|could|"
                         r"would|will|not|no|don'?t|never)\b", re.I)
_STATES = re.compile(r"\b(?:is|are|was|were|not|never|no)\b|'s\b|n't\b", re.I)
"""A first clause that says something about an alternative ("attrs is banned here", "web
we do not split") rather than picking it."""
_FUNCTION = frozenset(
    "a an the and or to of in on for with at by from it its this that these those i me my "
    "we our us you your he she they them his her their is are was were be been do does did "
    "have has had will would can could should shall may might must just only also please "
    "pls ok okay yes no not then so but if as about like want prefer rather one ones which "
    "what now more less very really thanks thank per go let let's use".split())
_AS_IS = re.compile(r"^(?:keep(?!\s+\w+ing\b)|leave|wait|hold|stay|skip|not|don'?t|no)\b",
                    re.I)
"""An alternative that keeps things as they are, which declines the other."""


_OFFERS_EITHER = re.compile(r"^(?:\S+,?\s+)?(?:i|we) (?:could|can)(?!['’]|not)\s", re.I)
"""An offer of two things the agent could do, stated rather than asked."""


def alternatives(previous: str) -> tuple[tuple[str, ...], str] | None:
    """The alternatives the agent's last question names, and the question: "Send it now
    or on Monday morning?", "Should the picker be free text or a list?", "I can change
    the generator or update the tests. Which one?", "Theme: pirates, dinosaurs or
    space?"; without a question, the two it offers to do ("I can refund €52 or keep it as
    credit for April."). None where it names none, or where the "or" only asks about a
    fact ("Is the hotel in Lisbon or Porto?"). Reading the stated offers changed 18
    readings of the non-held-out corpus (sets 1-19), 16 of them to the corpus's label."""
    parts = sentences(clean(previous))
    if not parts:
        return None
    ask = parts[-1]
    if _WHICH.match(ask.strip()) and len(parts) > 1:
        ask = parts[-2].rstrip(".") + "?"
    elif not ask.rstrip().endswith("?") and (offers := [
            p for p in parts if " or " in p and _OFFERS_EITHER.search(p)]):
        # "I could print it on the back-room printer, or send it as a text." offers two
        ask = offers[-1].rstrip(".!") + "?"
    body = ask.strip().rstrip(" ?")
    if (not ask.rstrip().endswith("?") or body.count(" or ") != 1 or len(body) > 300
            or _OF_FACT.match(body)):
        return None
    lead = _CHOICE_LEAD.match(body)
    body = re.split(r"[:;]\s", body[lead.end():] if lead else body)[-1]
    # "One question for them: is the car in the street or the garage?"; not "I can do A4
    # with big fonts, or two columns", where "do" is the offer's verb
    if _OF_FACT.match(body) and not (lead and _OFFERS_EITHER.match(ask)):
        return None
    left, _, right = body.rpartition(" or ")
    listed = (_comma_items(left) if " or " not in left else [left]) or [left]
    # "pirates, dinosaurs or space": a list of short items is three or more options;
    # else only the last item is one ("If it can't be reached, should the door keep the
    # cached list, or lock everyone out?")
    short = list(itertools.takewhile(_short_item, reversed(listed)))[::-1]
    if short and _ACK.match(short[0].strip()):  # "Got it, Friday or Monday?"
        short = short[1:]
    options = [*(short if len(short) >= 2 else listed[-1:]), right]
    options = [re.sub(r"^(?:be|would)\s+", "", alt.strip(" ,"), flags=re.I) for alt in options]
    options[-1] = re.sub(r"\s+(?:be |work |fit |sound )?(?:better|best|preferable)$", "",
                         options[-1], flags=re.I)
    return (tuple(options), shorten(ask, 140)) if all(options) else None


def _comma_items(text: str) -> list[str]:
    """The parts of ``text`` between commas outside brackets ("XS (about 9 hours, ~$40),
    M (about 2.5 hours)" is two)."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth <= 0:
            items.append(text[start:i])
            start = i + 1
    return [item for item in (*items, text[start:]) if item.strip()]


_LIST_ITEM_WORDS = 4
_ACK = re.compile(r"^(?:ok(?:ay)?|sure|got it|right|thanks|thank you|understood|noted|great|"
                  r"fine|alright|all right|perfect|yes|no|so|then|also|quick one|done)$", re.I)


def _short_item(item: str) -> bool:
    """An item of a list of options: a few words, besides what brackets add."""
    words = re.sub(r"\([^)]*\)", "", item).split()
    return 0 < len(words) <= _LIST_ITEM_WORDS


def mentions(text: str, part: str) -> bool:
    """Whether ``text`` names a content word of ``part``, give or take an ending."""
    said = _words(text)
    return any(_same(w, t) for w in _words(part) for t in said)


def of_fact(ask: str) -> bool:
    """Whether the agent's question asks about a fact, even between alternatives ("Is the
    hotel in Lisbon or Porto?", "Did it come from prod or CI?"), wanting no choice."""
    question = re.split(r"[:;]\s", ask.strip(" \"'*_`"))[-1]  # after "One question:"
    return bool(_OF_FACT.match(question))


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[^\W\d_]+|\d+", text.lower())
            if w not in _FUNCTION and (len(w) >= 3 or w.isdigit())]


def _same(a: str, b: str) -> bool:
    """The same word, give or take an ending ("skip" / "skipped", "automatic" /
    "automatically")."""
    n = min(5, len(a), len(b))
    return a == b or (n >= 4 and a[:n] == b[:n])


def named(text: str, previous: str) -> Pick | None:
    """A reply that opens by naming one of the two alternatives the agent's question named
    (``alternatives``) and not the other: "Monday morning, if you please" to "Send it now
    or on Monday morning?" chooses the second. "both" chooses both, "neither" refuses
    them, and choosing to keep things as they are ("keep it as a draft", "wait for the
    review") turns down the other. A reply that opens with a question or a "no" is left
    to the phrase rules."""
    if not previous or text.rstrip().endswith("?"):
        return None
    found = alternatives(previous)
    if found is None:
        return None
    options, ask = found
    clauses = [c.strip() for c in re.split(r"[,.;!:()—–]|\s-\s", clean(text))]
    first = clauses[0]
    if not first or len(first.split()) > 8 or _REPLY_ASKS.match(first) or _STATES.search(first):
        return None
    if len(options) == 2 and re.match(r"^both(?:\s+(?:please|pls|of them|thanks))*$", first,
                                      re.I):
        return Pick("decision", shorten(f"Chose both: {'; '.join(options)}"), TERSE)
    if re.match(r"^(?:neither|none of (?:them|those|these))\b"
                r"(?!\s+(?:do|did|am|can|have|will|would|is|are|was)\b)", first, re.I):
        every = "both" if len(options) == 2 else "all"
        return Pick("rejected", shorten(f"Declined {every}: {'; '.join(options)}"), TERSE)
    own = [{w for w in _words(alt)
            if not any(_same(w, o) for other in options if other != alt for o in _words(other))}
           for alt in options]

    def names(clause: str) -> list[str]:
        said = _words(clause)
        return [alt for alt, words in zip(options, own, strict=True)
                if any(_same(w, w2) for w in words for w2 in said)]

    def picks(clause: str, option: str) -> bool:
        """The clause names the option and says little else: it picks rather than judges."""
        return len([w for w in _words(clause)
                    if not any(_same(w, a) for a in _words(option))]) <= 2

    hits = names(first)
    if len(hits) != 1 or not picks(first, hits[0]):
        return None  # a first clause saying more than the option judges it
    others = [alt for alt in options if alt != hits[0]]
    # "logging sucks here, metrics": a later clause that picks another one picks it; one
    # that judges another ("linear. last touch makes instagram look useless") or says no
    # to it ("card. never transfers") confirms the pick
    if any(len(got := names(c)) == 1 and got[0] in others and picks(c, got[0])
           and not _STATES.search(c) for c in clauses[1:]):
        return None
    other = ", ".join(others)
    if _AS_IS.match(hits[0]):  # "keep the old" to "Promote the new one or keep the old?"
        return Pick("rejected", shorten(f"Declined: {other} ({hits[0]})"), TERSE)
    return Pick("decision", shorten(f"Chose: {hits[0]} (over: {other})"), TERSE)


def _prompt(previous: str, listed: dict[str, str]) -> str:
    """What the options answer: the last ask before the list (or anywhere, without one)."""
    if listed:
        first = _MARK.search(clean(previous))
        before = last_ask(clean(previous)[:first.start()]) if first else ""
        if before:
            return before
    return last_ask(previous)


def _approved(rest: str, ask: str, confidence: float) -> Pick:
    summary = f"Approved: {ask}" + (f" — {rest}" if rest else "")
    return Pick("decision", shorten(summary), confidence, "yes", rest, ask)


def _refused(rest: str, ask: str, confidence: float) -> Pick:
    summary = f"{capital(rest).rstrip('.!')} — re: {ask}" if rest else f"Declined: {ask}"
    return Pick("rejected", shorten(summary), confidence, "no", rest, ask)


def asks_only(ask: str) -> bool:
    """Whether the agent's question only asks for a fact, a status or a clarification
    ("Did that fix it?", "Is this for the Lisbon trip?", "Can you log in now?"),
    offering nothing that a "yes" approves or a "no" turns down ("no, still the same 500"
    answers it). It opens with "did", "is", "any" and the like, and none of its words
    seek consent or a choice (``_SEEKS_CONSENT``): "Is it ok to restart?", "Do you want
    the long version?" and "Does this look right?" offer something, and "Do both?"
    orders."""
    # the question itself, after what leads up to it in the same sentence ("Before I
    # switch nameservers: do you still use email there?", "noted. do the students push
    # straight to main?")
    s = re.split(r"(?<=[.:!])\s+|\s+[—–]\s+", ask.strip(" \"'*_-`"))[-1]
    if not (s.endswith("?") and _ASKS_ONLY.match(s)):
        return False
    if _HAPPENED.match(s):  # "did the agency confirm that?" asks what happened
        return not _WISHES.search(s)
    return not _SEEKS_CONSENT.search(s) and not _APPROVAL.search(s)


_RELAYED = re.compile(r"\b(?:asks?|asked|asking|wants? to know|wonders?|wondering) "
                      r"(?:if|whether) (?P<what>[^.?!]+)[.?]?\s*$", re.I)
_RELAYED_OFFER = re.compile(
    r"^(?:you|she|he|they|we|i|it)(?:['’]d| would| wants?| can| could| may| might| should|"
    r"['’]ll| will| shall)\b|\byou(?:['’]d)? (?:like|want|need|prefer)\b", re.I)


def relays_question(previous: str) -> bool:
    """Whether the agent's last words pass on someone else's question of fact ("A
    customer asks if the Medium Dry is the same as last year's.", "They ask whether she
    needs to borrow a hat."): "no, it's a different blend this year" answers it and turns
    nothing down. Not a relayed offer or request ("The removal company asks if you want
    their packing service", "She asks if she can bring her own dog"), which a "no"
    refuses."""
    parts = sentences(clean(previous)) if previous else []
    m = _RELAYED.search(parts[-1]) if parts else None
    return m is not None and not _RELAYED_OFFER.search(m["what"].strip())


def closes(ask: str) -> bool:
    """Whether the agent's question closes the exchange (``_CLOSING``, or "any other/more
    …" that offers no act of the agent's)."""
    return bool(_CLOSING.search(ask) or (_ANY_MORE.search(ask)
                                         and not _AGENT_ACTS.search(ask)))


def answers_only(previous: str, ask: str | None = None) -> bool:
    """Whether the agent's last words (``previous``) end by asking only a question of fact,
    status or clarification (``asks_only``) or one that closes the exchange ("Anything
    else?"), so a reply answers it rather than approving or refusing anything. ``ask``:
    their ``last_ask``, when the caller has it already."""
    ask = last_ask(previous) if ask is None else ask
    return bool(ask) and (asks_only(ask) or closes(ask))


def nothing_more(rest: str, ask: str) -> bool:
    """Whether a "no" says only that nothing more is wanted, which refuses nothing: any
    "no" to a closing question ("Anything else?", "Is that all?"), or a "no" followed by
    "that's it", "all good" or "nothing else" ("nope, that's all for now"). ``rest`` is
    what follows the "no", ``ask`` the question it answers."""
    return bool(_NOTHING_MORE.match(rest.strip())) or bool(ask and closes(ask))
