"""Rules and classifier together: who decides whether a turn rejects or decides something.

The phrase rules stay the first reader; the classifier's calibrated probabilities then

- **add** a rejection the rules missed when P(rejected) reaches ``rejected`` ("that's a
  no on the paid plan", a refusal hidden behind a reason; in a question, ``question`` if
  that is higher). The preceding turn should have offered something to turn down
  (``features.proposes``: a question, an intent, options or a draft): after a report
  ("Done, tests pass."), "why are there two handlers?" asks; it refuses nothing. Where
  no offer shows, the turn needs ``unoffered``: an offer is often only implied ("A
  one-year term saves about 19%." then "still a no, the budget's frozen"), so a
  refusal the classifier is sure of still counts.
- **veto** a rule's rejection when P(rejected) is below ``veto`` and the classifier reads
  the turn as noise, a correction (only after an agent's turn) or an approval it would
  record itself, P(decision) reaching ``decision`` ("no worries", "no wait, the staging
  one", sarcasm). A prohibition it reads as a standing instruction or a preference
  ("never deploy on Fridays") stays a rejection: the rules' reading of those is the
  project's (a CRITICAL rule), not a mistake. Where it reads an approval it is unsure of,
  the turn would otherwise record nothing at all: a clear rule refusal stands, and an
  unsure one (``UNSURE_RULE`` or less: a short reply, a prohibition inside an
  instruction, ``SCOPED``: "migrate those 52. archive the rest, don't delete") gives way
  to the approval, below the promotion threshold, so for review. Out of fold over the
  non-held-out corpus (sets 1-20, 18,984 turns) 14 turns were lost so, 12 of them are
  now read as labelled ("only room 3. the others read fine and i'm not reflashing what
  works", "then skip the resize, 74 is fine"); on the held-out split, measured after,
  2 turns change, both wrongly.
- **file as a task** a rule's prohibition inside an instruction (``SCOPED``) the
  classifier reads as a task, P(rejected) below ``veto``: "fix the lint stuff, don't
  touch the logic" asks for work and limits it. Kept as a rejection it would become a
  rule for good; vetoed, the limit would be lost. Out of fold (sets 1-20) 11 turns
  change, 8 of them labelled task, one a refusal ("Then I would prefer that you do not
  merge them automatically. Could you list them for me instead?"); held-out, measured
  after, 2 change, both rightly. A clear rule refusal stays: there the classifier's task
  reading was a refusal 11 times in 35, and so does a short one ("no console logs!").
- **add** a decision the rules missed when P(decision) reaches ``decision`` (an approval
  in unusual words), unless the turn already rejects.
- **add** neither in an answer to a question of fact, status or clarification
  (``asked.answers_only``): "yes, green light is on" to "Is the gateway still powered?"
  approves nothing and "no, still the leaky ones" to "Did the goggles get replaced?"
  refuses nothing. In corpus set 14 (written after the classifier was trained; its
  1,675 non-held-out turns), 272 replies answer such a question and one of them
  refuses; without this rule the combination read 85 of them as a refusal or a
  decision, none rightly, and with it 3 (the rules' own).

- **add** neither in a turn that says the person has not decided (``undecided``: "hmm,
  if people have to pay for the SMS nobody will answer. I am not sure.", "dunno, what
  would you do?"). Of the 59 such turns in the non-held-out part of sets 1-15, 51 are
  labelled none, 7 discovery and one a refusal (where "I don't know" is about
  neighbours). Before this, the classifier read 10 of the 19 such none-turns in set 16's
  non-held-out part (which no weight had read) as refusals; it now loses 2 refusals
  there. Nor in one that only says there is no hurry (``unhurried``: "no rush on the
  invite"), which the classifier read as a refusal 6 times out of fold (sets 1-20), all
  labelled none; held-out, measured after, one none-turn read as a decision is gone.
  Nor in one that asks before it answers (``asks_first``: "Before I decide, could you
  tell me …?"): out of fold 4 none-turns were read as refusals; held-out, none changes.

The thresholds are fitted out of fold by ``bench/train_classifier.py`` and stored with
the weights (a set for the head with the reader, a set for the head alone). The
confidence of the result is the classifier's calibrated probability, raised to the
rule's own confidence when both agree; a rule's rejection the classifier neither
confirms nor vetoes keeps the rule's confidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memtui.extract.classify.head import Verdict

DEFAULT_THRESHOLDS = {"rejected": 0.6, "veto": 0.15, "decision": 0.6, "question": 0.0,
                      "unoffered": 1.01}
"""``question``: what P(rejected) a question needs for the classifier alone to read it as a
refusal, if more than ``rejected`` ("isn't marketing doing that already?" pushes back and
leaves the choice open; "why would we pay for that?" turns the offer down).
``unoffered``: what P(rejected) a turn needs for the classifier alone to read it as a
refusal when the preceding turn offers nothing ``features.proposes`` sees, if more than
the others (1.01, a head file without it: never)."""
_UNDECIDED = re.compile(
    r"\bnot (?:really |quite |so |too )?sure\b(?=\s*(?:$|[.,;:!?…)]|(?:yet|anymore|tbh|"
    r"honestly|what|which|who)\b|about (?:this|that|it)\b))"
    r"|(?:^|\bi |\bi really |\bhonestly,? )(?:don'?t|dont|do not) know\b(?=\s*(?:$|[.,;:!?…)]|"
    r"(?:yet|tbh|honestly|either|what|which|if|whether)\b|about (?:this|that|it)\b))"
    r"|\bdunno\b|(?<!you have )(?<!you've )\bno idea\b|\bhaven'?t decided\b"
    r"|\bcan'?t decide\b|\bundecided\b|\bon the fence\b", re.I)


def undecided(text: str) -> bool:
    """Whether the (cleaned) turn says the person has not decided: "not sure", "I don't
    know", "dunno", "no idea". Not "I'm not sure we can promise that", whose doubt is
    about the offer itself, nor "we don't know next quarter's spend"; and putting the
    answer off ("let me think about it", "still thinking") is a refusal of the offer for
    now, not this."""
    return _UNDECIDED.search(text) is not None


_ACKNOWLEDGES = re.compile(
    r"^(?:(?:ok(?:ay)?|alright|right|ah|oh|hmm+|yes|yeah|thanks|thank you)[,.!]*\s+)*"
    r"(?:(?:i )?understand|understood|i see|got it|noted|(?:that )?makes sense|fair enough|"
    r"good to know)[\s,.!]*(?:thanks?(?: you)?)?[\s.!]*$", re.I)


def acknowledges(text: str) -> bool:
    """Whether the (cleaned) turn only acknowledges what it heard ("ok, makes sense",
    "got it", "alright, noted", "ok understand"), which approves nothing, even after an
    offer: all 27 such turns in the non-held-out corpus are labelled none. "Understood,
    go ahead" says more, and a bare "ok" is not this."""
    return _ACKNOWLEDGES.match(text.strip()) is not None


_OCCUPIED = re.compile(
    r"\b(?:can'?t talk|hold on|one (?:sec|second|moment)|^moment\b|eating|driving|"
    r"on (?:a|the) (?:call|bus|train)|on the phone|in (?:a meeting|rehearsal|class|surgery)|"
    r"waiting room|(?:busy|swamped) (?:now|right now|atm)|back to back)", re.I)
_SOON = re.compile(
    r"\b(?:(?:in|back in|give me) (?:an?|one|half an|\d+|ten|five|fifteen|twenty|thirty|"
    r"two) (?:hour|hr|min|minute|sec)s?\b|(?:ten|five|fifteen|twenty|thirty|\d+) min(?:ute)?s?\b|"
    r"(?:ask|ping) me (?:again )?(?:after|in)\b(?! (?:the|our|my|next|\w+ (?:season|"
    r"gala|holidays?)))|after (?:\d{1,2}(?::\d\d)?|lunch|this call|the call|the meeting)\b)",
    re.I)


def busy(text: str) -> bool:
    """Whether the (cleaned) turn only says the person is busy for now and will answer
    soon ("can't talk, on the bus with the kids, back in an hour", "hold on, on a call
    with the kiln guy, ten minutes", "eating now, ask me again in one hour"), which
    answers nothing yet: the 6 such turns in sets 1-15's non-held-out part are labelled
    none, and the classifier read five of them as refusals. Putting an offer off to a
    later date ("ask me after the gala", "not while I'm driving. Tomorrow morning.") is
    not this: it refuses the offer for now."""
    return _OCCUPIED.search(text) is not None and _SOON.search(text) is not None


_NO_RUSH = re.compile(
    r"\b(?:no (?:rush|hurry|pressure)|no need to (?:hurry|rush)|(?:there'?s |there is )?no "
    r"urgency|not urgent|take your time)\b(?! (?:job|order|fee|delivery|service|option))",
    re.I)


def unhurried(text: str) -> bool:
    """Whether the (cleaned) turn tells the agent there is no hurry ("no rush on the
    invite", "no need to hurry, nobody needs that box today", "take your time"), which
    turns nothing down: 23 of the 28 such turns in the non-held-out corpus are labelled
    none, and the classifier read some as refusals for the "no" they open with. Not a "no
    rush job", which is a thing."""
    return _NO_RUSH.search(text) is not None


_ASKS_FIRST = re.compile(
    r"\bbefore (?:i|we) (?:decide|say yes|answer|agree|approve|commit|go ahead|move anything|"
    r"sign)\s*[:,.]"
    r"|(?:^|[.!:]\s+|,\s*|\b(?:but|ok|okay|ah|so|wait|sorry) )(?:(?:a|one|quick|small|two|few|"
    r"some|couple of) )+questions?\b\s*(?:first|before)?\s*[:,.]"
    r"|\bi have (?:a |one |some |a few |few |two )?questions?\b|\bquestions? first\b", re.I)


def asks_first(text: str) -> bool:
    """Whether the (cleaned) turn asks before it answers ("Before I say yes: is the cache
    going to survive …?", "ok but one question, the QR cards go to the reception
    printer?", "I have a question first."): the offer is still open. Only with a question
    mark in the turn: "yes, one question, no survey link" decides."""
    return "?" in text and _ASKS_FIRST.search(text) is not None


UNSURE_RULE = 0.55
"""The rules' confidence in a rejection they are unsure of (``local.AMBIGUOUS``: a short
reply); a prohibition inside an instruction (``SCOPED``) is less sure still."""

SCOPED = 0.5
"""The rules' confidence in a prohibition inside an instruction ("fix the lint stuff,
don't touch the logic", ``local.rejection_confidence``): the least sure of their
rejections, which the classifier may file with the instruction as a task."""

VETOING = frozenset({"none", "correction", "decision"})
"""What the classifier must read a turn as to overrule the rules' rejection of it."""


@dataclass(frozen=True)
class Outcome:
    label: str | None
    """rejected, decision, task (the rules' prohibition is part of an instruction) or None
    (neither)."""
    confidence: float
    by: str
    """rules, classifier or both."""


def combine(rule: str | None, rule_confidence: float, verdict: Verdict,
            thresholds: dict[str, float], offered: bool = True,
            question: bool = False, replying: bool = True, answer: bool = False) -> Outcome:
    """The turn's rejection/decision reading given the rules' (``rule``: the strongest
    category the rules found in it, or None) and the classifier's. ``offered``: the
    preceding turn offered something to turn down; ``question``: the turn is a question,
    which asks and decides nothing, so the classifier never reads it as a decision;
    ``replying``: an agent's turn precedes it (with none, there is nothing to correct: a
    correction reading vetoes nothing, and "Don't use requests, we use httpx" opening a
    session stays the rules' prohibition); ``answer``: the turn answers a question of
    fact, status or clarification (``asked.answers_only``: "yes, Hotel Fita" to "Is your
    hotel the Fita?", "no, still the old ones" to "Did the goggles get replaced?"), or
    says the person has not decided (``undecided``), in which the classifier alone reads
    no rejection or decision."""
    t = {**DEFAULT_THRESHOLDS, **thresholds}
    decides = verdict.decision >= t["decision"] and not question
    if rule == "rejected":
        vetoing = VETOING if replying else VETOING - {"correction"}
        if verdict.rejected < t["veto"]:
            if verdict.label == "task" and rule_confidence <= SCOPED:
                # a prohibition that scopes an instruction: filed with it, as a task
                return Outcome("task", verdict.probability, "classifier")
            if verdict.label in vetoing and (
                    verdict.label != "decision" or verdict.decision >= t["decision"]):
                if decides and not answer:
                    return Outcome("decision", verdict.decision, "classifier")
                return Outcome(None, 1.0 - verdict.rejected, "classifier")
            # an approval it is unsure of: an unsure rule refusal gives way, a clear one stands
            if verdict.label == "decision" and rule_confidence <= UNSURE_RULE and not (
                    question or answer):
                return Outcome("decision", verdict.decision, "classifier")
        agree = verdict.rejected >= 0.5
        return Outcome("rejected", max(verdict.rejected, rule_confidence) if agree
                       else rule_confidence, "both" if agree else "rules")
    needs = max(t["rejected"], t["question"] if question else 0.0,
                t["unoffered"] if not offered else 0.0)
    # With no offer in sight, the rules' decision stands: "let's go with Caddy... no
    # wait, we stay on nginx" reverses a choice; it turns down nothing the agent offered.
    if verdict.rejected >= needs and (offered or rule != "decision") and not answer:
        return Outcome("rejected", verdict.rejected, "classifier")
    if rule == "decision":
        agree = verdict.decision >= 0.5
        return Outcome("decision", max(verdict.decision, rule_confidence) if agree
                       else rule_confidence, "both" if agree else "rules")
    if decides and not answer:
        return Outcome("decision", verdict.decision, "classifier")
    return Outcome(None, 0.0, "rules")
