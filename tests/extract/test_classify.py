"""The learned classifier's parts: the filter, the context, summaries, the combination."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.classifier.corpus import Example
from bench.classifier.evaluate import prepared
from memtui.extract.asked import answers_only
from memtui.extract.candidates import Extraction
from memtui.extract.classify.apply import ALONE_ACTIVE, refine
from memtui.extract.classify.combine import (
    acknowledges,
    asks_first,
    busy,
    combine,
    undecided,
    unhurried,
)
from memtui.extract.classify.features import (
    BUCKETS,
    Buckets,
    characters,
    context_of,
    features,
    lexical,
    proposes,
    worth_embedding,
)
from memtui.extract.classify.head import WEIGHTS, Classifier, Head, Verdict
from memtui.extract.classify.reader import READER
from memtui.extract.classify.summary import (
    decision_summary,
    gerund,
    proposal,
    rejection_summary,
    settled,
)
from memtui.extract.local import LocalExtractor

ROOT = Path(__file__).resolve().parents[2]
TH = {"rejected": 0.6, "veto": 0.15, "decision": 0.6}


def v(rejected: float, decision: float = 0.0, top: str | None = None) -> Verdict:
    if top is None:
        top = ("rejected" if rejected >= decision else "decision") \
            if max(rejected, decision) >= 0.5 else "none"
    return Verdict(top, max(rejected, decision, 1 - rejected - decision), rejected, decision)


def test_a_rejection_names_the_refused_proposal() -> None:
    ask = "Would you like me to sign up for the paid newsletter plan?"
    assert rejection_summary("That's a no on the paid plan", ask) == (
        "Rejected: signing up for the paid newsletter plan")
    # A bare "Should I?" reads the sentence before it.
    assert rejection_summary("nah", "I can add Redis as a cache. Should I?") == (
        "Rejected: adding Redis as a cache")
    assert rejection_summary("nope", "I can cut the history part. Want me to?") == (
        "Rejected: cutting the history part")
    # So does a question that only asks to go on; where that sentence names no act, the
    # proposal is none and the summary shows the words before the question.
    assert rejection_summary("nah", "I can set up nightly backups to S3. Want me to go "
                             "ahead?") == "Rejected: setting up nightly backups to S3"
    assert decision_summary("yes please", "Plan: raise the memory limit to 1Gi. Shall I "
                            "proceed with that?") == "Raise the memory limit to 1Gi"
    assert proposal("The migration is drafted. Want me to go ahead?") == ""
    # Words between the lead and the verb, and a thing offered rather than an act.
    assert rejection_summary("no", "Should I at least add gitleaks to CI?") == (
        "Rejected: adding gitleaks to CI")
    assert rejection_summary("no", "Want me to also scale the later waves?") == (
        "Rejected: scaling the later waves")
    assert rejection_summary("no", "I propose to print 2,000.") == "Rejected: printing 2,000"
    assert rejection_summary("no", "Want me to re-run all plates?") == (
        "Rejected: re-running all plates")
    assert rejection_summary("nah", "Imports take 2 minutes. Want a progress bar?") == (
        "Rejected: a progress bar")
    assert decision_summary("yes", "Want a progress bar?") == "A progress bar"
    # "do that", "set it up": the sentence before says what
    assert rejection_summary("no", "I could split Jonas's weeks. Want me to do that?") == (
        "Rejected: splitting Jonas's weeks")
    # A plan the agent only announced, and a permission prompt worded as an order.
    assert rejection_summary("not this week", "I'm going to rotate the TLS certs tonight.") == (
        "Rejected: rotating the TLS certs tonight")
    assert rejection_summary("n, later", "Tests pass. Merge PR #92? (y/n)") == (
        "Rejected: merging PR #92")
    # An offer with another choice after it ("…, or would you prefer …"): the first.
    assert rejection_summary("nah", "Would you like me to customize it with specific colors, "
                             "or would you prefer to edit it yourself?") == (
        "Rejected: customizing it with specific colors")
    assert rejection_summary("no", "Shall I send it now or on Monday morning?") == (
        "Rejected: sending it now or on Monday morning")  # one act, two times: both
    # A plan under a heading, and its "unless you object".
    assert rejection_summary("please no", "The drive is 95% full. Planned: delete recordings "
                             "older than 2 years tonight unless you object.") == (
        "Rejected: deleting recordings older than 2 years tonight")
    assert decision_summary("ok", "Proposed: enforce MFA for everyone on Monday.") == (
        "Enforce MFA for everyone on Monday")
    # Nothing proposed that names an act: the person's own words, and what they answer
    # (not "Rejected: <their words>", which reads as if their own idea was turned down).
    assert rejection_summary("never deploy on fridays", "Done.") == "Never deploy on fridays"
    assert rejection_summary("can we keep the old code around?", "The plan is in PLAN.md. "
                             "Anything to change before I start?") == (
        "Can we keep the old code around? — re: Anything to change before I start?")


def test_a_decision_states_the_decision_not_the_acknowledgement() -> None:
    assert decision_summary("OK, approved", "Shall I ship the Hugo site on Friday?") == (
        "Ship the Hugo site on Friday")
    said = decision_summary("yes, but only on staging first", "Should I enable the cache?")
    assert said.startswith("Enable the cache") and "only on staging" in said
    assert decision_summary("OK, approved", "Ship the Hugo site on Friday?") == (
        "Ship the Hugo site on Friday")
    assert proposal("Here are the numbers.") == ""
    # questions that order nothing
    for asked in ("Done. Sounds good?", "Good to go?", "Any news?", "Thoughts?", "Friday?",
                  "Problem solved?", "Deployed to staging?", "Monday or Tuesday?",
                  "Pretty clean, right?"):
        assert proposal(asked) == "", asked
    # the question is named before a plan announced after it
    assert proposal("Should I bump the version to 2.0? I'll wait for your go-ahead.") == (
        "bump the version to 2.0")


def test_what_the_agent_would_do_is_a_proposal_a_reply_names() -> None:
    """"I'd X." offers as much as "I'll X.": approving it decides X, not "Approved: I'd …"."""
    assert decision_summary("yes pin it", "Spotify is 52% of listens. I'd pin episode 47 on "
                            "the website.") == "Pin episode 47 on the website"
    assert rejection_summary("no", "Then I'd still lower the TTLs to 300 now.") == (
        "Rejected: lowering the TTLs to 300")
    assert decision_summary("agreed", "Then I'd recommend staying with the current "
                            "vendor.") == "Staying with the current vendor"
    # what it would think, or could not do, proposes nothing
    for said in ("I'd say it's fine.", "I'd guess the cron ran twice.",
                 "I could not reproduce it on staging.", "I would never have noticed."):
        assert proposal(said) == "", said
    # an offer after "Meanwhile", "OK to …?", "Would you like a …?"
    assert decision_summary("yes", "Meanwhile I can point search at the old core as a "
                            "fallback. Want that?") == "Point search at the old core as a fallback"
    assert rejection_summary("no", "OK to run docker compose up -d?") == (
        "Rejected: running docker compose up -d")
    assert decision_summary("yes", "Would you like a reminder the day before?") == (
        "A reminder the day before")
    # the last plan announced, "also" or not: "I find 'valued customer' empty" refuses
    # the template, not the receipts
    assert proposal("I'll request receipts. I'm also planning to use the new reminder "
                    "template.") == "use the new reminder template"
    assert rejection_summary("no", "I'm also going to bump Hugo to 0.125.") == (
        "Rejected: bumping Hugo to 0.125")
    # a suggestion without its "I"
    assert decision_summary("ok, 35 for api", "Suggest raising the limit to 35 words for "
                            "/api?") == "Raising the limit to 35 words for /api"
    # the ask's own tail is no part of the act
    assert decision_summary("yes roll back", "I can roll back to v2.30 now, want me to?") == (
        "Roll back to v2.30 now")
    assert decision_summary("yes", "I'd cancel all three today — shall I?") == (
        "Cancel all three today")
    assert rejection_summary("no", "I'll handle address changes myself, if that's OK.") == (
        "Rejected: handling address changes myself")
    # a plan whose words name nothing ("add it") is about something further back
    assert proposal("I'd add it: a ride ending early tends to create tickets.") == ""
    assert proposal("The push fires at 25 minutes. I'd add it.") == ""


@pytest.mark.parametrize(("ask", "want"), [
    ("Should the alert also fire at night?", "The alert should also fire at night"),
    ("Should sessions go to Redis?", "Sessions should go to Redis"),
    ("Should the toast text go through strings.json?",
     "The toast text should go through strings.json"),  # "text" names, "go" settles
    ("Should the functions that move out of run_all.py stay importable?",
     "The functions that move out of run_all.py should stay importable"),
    ("Should bins under 50 kg be rejected as scale errors?",
     "Bins under 50 kg should be rejected as scale errors"),
    # not a design question a yes settles as a statement
    ("Should I merge it now?", ""), ("Should it run hourly or daily?", ""),
    ("Should the legacy tenant migrate?", ""),  # no verb it knows: left as asked
    ("Shall we?", ""), ("Is the alert on?", ""),
])
def test_a_yes_to_a_design_question_is_the_statement_it_makes_true(ask: str, want: str) -> None:
    assert settled(ask) == want


@pytest.mark.parametrize(("verb", "want"), [("stop", "stopping"), ("make", "making"),
                                            ("sign", "signing"), ("commit", "committing"),
                                            ("open", "opening"), ("tie", "tying"),
                                            ("rerun", "rerunning"), ("reset", "resetting"),
                                            ("repeat", "repeating"), ("unplug", "unplugging"),
                                            ("re-tag", "re-tagging"), ("reopen", "reopening"),
                                            ("render", "rendering"), ("refit", "refitting"),
                                            ("dropping", "dropping"), ("bring", "bringing"),
                                            ("sing", "singing")])
def test_gerund(verb: str, want: str) -> None:
    assert gerund(verb) == want


def test_the_cheap_filter_and_the_context() -> None:
    assert worth_embedding("nah, not this week")
    assert not worth_embedding("word " * 200)
    assert not worth_embedding("```\ncode\n```")
    assert not worth_embedding("")
    # A slash command typed to the harness answers nothing; a path in a sentence is prose.
    for command in ("/clear", "/them", "/model sonnet"):
        assert not worth_embedding(command), command
    assert worth_embedding("/etc/hosts is wrong, use the staging one")
    prev = "Rotation done on eu-west. All checks green. Should I do us-east right away?"
    assert context_of(prev) == "Should I do us-east right away?"
    assert context_of("Done. The job ran in 4 minutes.") == "Done. The job ran in 4 minutes."


def test_combination_adds_vetoes_and_keeps() -> None:
    # The classifier finds a rejection the rules missed.
    out = combine(None, 0.0, v(0.93), TH)
    assert (out.label, out.by) == ("rejected", "classifier") and out.confidence == 0.93
    # It vetoes a rule rejection it is sure is none ("no worries")...
    assert combine("rejected", 0.9, v(0.02), TH).label is None
    # ...or an approval it would record ("no wait, the staging one")...
    assert combine("rejected", 0.55, v(0.02, 0.8), TH).label == "decision"
    # ...but an approval it is unsure of would record nothing: a clear rule refusal stands
    # ("then skip the resize, 74 is fine")...
    clear = combine("rejected", 0.9, v(0.02, 0.45, top="decision"), TH)
    assert (clear.label, clear.confidence, clear.by) == ("rejected", 0.9, "rules")
    # ...and an unsure one (a prohibition inside an instruction) gives way to the approval
    # ("migrate those 52. archive the rest, don't delete"), at the classifier's confidence.
    unsure = combine("rejected", 0.55, v(0.02, 0.45, top="decision"), TH)
    assert (unsure.label, unsure.confidence, unsure.by) == ("decision", 0.45, "classifier")
    asked = combine("rejected", 0.55, v(0.02, 0.45, top="decision"), TH, question=True)
    assert (asked.label, asked.confidence) == ("rejected", 0.55)
    # ...but not a prohibition it reads as a standing instruction ("never deploy on
    # Fridays"): that keeps the rule's reading and confidence.
    kept = combine("rejected", 0.9, v(0.02, top="learning"), TH)
    assert (kept.label, kept.confidence) == ("rejected", 0.9)
    # A prohibition inside an instruction the classifier reads as a task ("fix the lint
    # stuff, don't touch the logic") is filed with the task; a clear refusal is not.
    scoped = combine("rejected", 0.5, v(0.02, top="task"), TH)
    assert (scoped.label, scoped.by) == ("task", "classifier")
    assert combine("rejected", 0.9, v(0.02, top="task"), TH).label == "rejected"
    assert combine("rejected", 0.5, v(0.3, top="task"), TH).label == "rejected"
    assert combine("rejected", 0.55, v(0.02, top="task"), TH).label == "rejected"  # "no logs!"
    # A correction corrects what the agent said: with no agent turn before, nothing.
    assert combine("rejected", 0.9, v(0.02, top="correction"), TH).label is None
    alone = combine("rejected", 0.9, v(0.02, top="correction"), TH, replying=False)
    assert (alone.label, alone.confidence) == ("rejected", 0.9)
    # Agreement keeps the higher confidence.
    both = combine("rejected", 0.55, v(0.8), TH)
    assert (both.label, both.confidence, both.by) == ("rejected", 0.8, "both")
    # An approval in unusual words becomes a decision; a weak one does not.
    assert combine(None, 0.0, v(0.05, 0.9), TH).label == "decision"
    assert combine(None, 0.0, v(0.05, 0.3), TH).label is None
    # A rule decision the classifier does not confirm keeps the rule's confidence.
    assert combine("decision", 0.85, v(0.01, 0.01, top="task"), TH).confidence == 0.85


def test_features_pair_the_turn_with_its_context() -> None:
    np = pytest.importorskip("numpy")
    table = {"a": np.array([1.0, 0.0]), "b": np.array([0.0, 1.0])}
    x = features(["a", "a"], ["b", ""], lambda texts: np.vstack([table[t] for t in texts]))
    assert x.shape == (2, 7 + BUCKETS.total)
    assert x[0, :7].tolist() == [1, 0, 0, 1, 0, 0, 1]
    assert x[1, :7].tolist() == [1, 0, 0, 0, 0, 0, 0]
    words, chars, asked = np.split(x[:, 7:], [BUCKETS.words, BUCKETS.words + BUCKETS.chars],
                                   axis=1)
    assert np.count_nonzero(words[0]) == 2  # "a": the word and the opening word
    assert np.count_nonzero(chars[0]) == 1  # " a ": one 3-gram, too short for a 4-gram
    for block in (words[0], chars[0], asked[0]):  # each L2-normalised
        assert abs(float(np.linalg.norm(block)) - 1.0) < 1e-6
    assert not asked[1].any()  # no context: no words of it
    old = features(["a"], ["b"], lambda texts: np.vstack([table[t] for t in texts]),
                   Buckets(16, 0, 0))
    assert old.shape == (1, 7 + 16)  # a head fitted without a block reads without it


def test_the_hashed_words_carry_the_stance_not_the_topic() -> None:
    """"hold off on the restart" and "go ahead with the restart" share the topic's
    buckets and differ in the stance's; case and curly apostrophes change nothing."""
    hold, go = set(lexical("hold off on the restart")), set(lexical("go ahead with the restart"))
    assert len(hold & go) >= 3 and len(hold - go) >= 4 and len(go - hold) >= 4  # the, restart
    assert lexical("I’d rather NOT") == lexical("i'd rather not")


@given(st.text(max_size=200))
def test_hashed_words_are_buckets_of_the_vector(text: str) -> None:
    buckets = lexical(text)
    assert buckets == sorted(set(buckets)) == lexical(text)
    assert all(0 <= b < BUCKETS.words for b in buckets)
    assert bool(buckets) == bool(text.split() and any(not c.isspace() for c in text))
    grams = characters(text, BUCKETS.chars)
    assert grams == sorted(set(grams)) and all(0 <= b < BUCKETS.chars for b in grams)
    assert characters(text.upper(), BUCKETS.chars) == characters(text.lower(), BUCKETS.chars) \
        or not text.isascii()  # case folds (outside ASCII, upper() may change the length)


def test_the_shipped_head_is_small_and_never_saw_the_held_out_split() -> None:
    head = Head.load()
    assert head.labels[:2] == ("rejected", "decision") and "none" in head.labels
    assert WEIGHTS.stat().st_size < 128_000
    assert set(head.thresholds) == {"rejected", "veto", "decision", "question", "unoffered"}
    if READER.is_file():  # fitted for the mean with the reader, and for the head alone
        assert head.alone is not None and set(head.alone) == set(head.thresholds)
    assert head.buckets == BUCKETS and head.w.shape[0] == 3 * 384 + 1 + BUCKETS.total
    manifest = json.loads(WEIGHTS.with_name("head-manifest.json").read_text())
    from bench.classifier.corpus import load

    heldout = {e.conv for e in load(generated=False, sgd=False) if e.split == "heldout"}
    assert heldout and not heldout & set(manifest["conversations"])


def test_the_head_reading_alone_uses_the_thresholds_fitted_for_it() -> None:
    from dataclasses import replace

    shipped = Head.load()
    mean, alone = {"rejected": 0.5, "veto": 0.4, "decision": 0.5}, \
        {"rejected": 0.65, "veto": 0.2, "decision": 0.6}
    head = replace(shipped, thresholds=mean, alone=alone)
    assert Classifier(head=head, reader=False).thresholds() == alone
    old_file = replace(shipped, thresholds=mean, alone=None)  # one set: used either way
    assert Classifier(head=old_file, reader=False).thresholds() == mean
    if READER.is_file():
        assert Classifier(head=head).thresholds() == mean


def test_training_refuses_held_out_examples() -> None:
    from bench.classifier.corpus import Example
    from bench.classifier.training import matrix

    ex = Example("hand/x/0", "x", "ops", "hand", "Should I?", "no", "rejected", "heldout")
    with pytest.raises(RuntimeError, match="held-out"):
        matrix([ex], embed=None)  # type: ignore[arg-type]


def test_the_corpus_is_large_varied_and_split_by_conversation() -> None:
    from collections import Counter

    from bench.classifier.corpus import DOMAINS, LABELS, load

    own = load(sgd=False)
    assert len(own) >= 1500
    hand = [e for e in own if e.source == "hand"]
    assert {e.domain for e in hand} == set(DOMAINS)
    assert set(Counter(e.label for e in hand)) == set(LABELS)
    split_of: dict[str, set[str]] = {}
    for e in own:
        split_of.setdefault(e.conv, set()).add(e.split)
    assert all(len(s) == 1 for s in split_of.values())
    assert all(e.split == "train" for e in own if e.source == "generated")


@pytest.mark.slow
def test_the_local_extractor_with_the_classifier_names_what_was_refused() -> None:
    """Real model, shipped head: an indirect refusal, "That's a no on the paid plan". The
    rules name it by the proposal, as the classifier names one it alone reads
    (``tests/extract/test_answers.py``); the classifier confirms it, sure enough to serve."""
    from memtui.extract.candidates import PreparedTurn
    from memtui.extract.classify.head import Classifier
    from memtui.extract.local import LocalExtractor
    from memtui.transcripts import Turn

    def said(i: int, text: str, previous: str) -> PreparedTurn:
        turn = Turn(id=f"m{i}", session="s", timestamp=None, role="user", text=text,
                    source="t.jsonl", line=i, offset=0, end_offset=0, format="claude-code",
                    author="person")
        return PreparedTurn(turn=turn, text=text, previous_assistant=previous)

    ask = "Would you like me to sign up for the paid newsletter plan?"
    turns = [said(1, "That's a no on the paid plan", ask),
             said(2, "thanks!", "Done, the report is in your inbox.")]
    alone = [s for s in LocalExtractor().extract(turns).state if s.category == "rejected"]
    assert [s.confidence for s in alone] == [0.6]  # the rules: recorded, not a rule yet
    out = LocalExtractor(classifier=Classifier()).extract(turns)
    rejected = [s for s in out.state if s.category == "rejected"]
    assert [s.summary for s in rejected] == ["Rejected: signing up for the paid newsletter plan"]
    assert rejected[0].source_entry == "m1"
    assert rejected[0].detail == "That's a no on the paid plan"
    assert rejected[0].confidence >= ALONE_ACTIVE and rejected[0].status == "active"
    assert not [s for s in out.state if s.source_entry == "m2"]  # thanks is nothing
    # a discovery no phrase rule names, read by the classifier alone
    found = "oh so the invoices bounced because the vat id had a space in it"
    alone = LocalExtractor(classifier=Classifier()).extract([said(3, found, "Report sent.")])
    assert [(s.category, s.summary, s.source_entry) for s in alone.state] == [
        ("discovery", found, "m3")]
    assert [e.kind for e in out.episodes if e.source_entry == "m1"] == ["rejection"]


def test_a_question_needs_its_own_threshold_to_be_read_as_a_refusal() -> None:
    """"isn't marketing doing that already?" pushes back and leaves the choice open: a
    question the classifier alone reads as a refusal needs ``question``, if higher."""
    th = {**TH, "rejected": 0.5, "question": 0.8}
    assert combine(None, 0.0, v(0.7), th, question=False).label == "rejected"
    assert combine(None, 0.0, v(0.7), th, question=True).label is None
    assert combine(None, 0.0, v(0.85), th, question=True).label == "rejected"
    # a head file without it reads a question as any turn
    assert combine(None, 0.0, v(0.7), {**TH, "rejected": 0.5}, question=True).label == \
        "rejected"
    # the rules' own rejection in a question is not the classifier's to add
    assert combine("rejected", 0.9, v(0.7), th, question=True).label == "rejected"


def test_where_no_offer_shows_a_refusal_needs_the_unoffered_threshold() -> None:
    """A refusal turns something down: after a report the same words mostly ask or
    instruct, so with no offer in sight the classifier must be surer (``unoffered``); a
    head file without that threshold never reads one there."""
    th = {**TH, "rejected": 0.5, "unoffered": 0.8}
    assert combine(None, 0.0, v(0.7), th, offered=True).label == "rejected"
    assert combine(None, 0.0, v(0.7), th, offered=False).label is None
    assert combine(None, 0.0, v(0.85), th, offered=False).label == "rejected"
    # a question with no offer needs the higher of the two
    assert combine(None, 0.0, v(0.85), {**th, "question": 0.9}, offered=False,
                   question=True).label is None
    assert combine(None, 0.0, v(0.93), TH, offered=True).label == "rejected"
    assert combine(None, 0.0, v(0.93), TH, offered=False).label is None
    # With no offer in sight the rules' decision stands ("let's go with Caddy... no wait,
    # we stay on nginx" reverses a choice); after an offer the refusal reading wins.
    assert combine("decision", 0.85, v(0.9), th, offered=False).label == "decision"
    assert combine("decision", 0.85, v(0.9), th, offered=True).label == "rejected"
    # The rules' own reading does not depend on it.
    assert combine("rejected", 0.9, v(0.93), TH, offered=False).label == "rejected"
    for offer in ("Should I restart it?", "I'm going to split the module.", "I'd schedule "
                  "the cutover for Saturday.", "Here's the draft.", "Option A or option B.",
                  "Let me delete the old branch.", "Delete 14 stale branches? (y/n)",
                  "Overwrite config.yaml? [y/N]"):
        assert proposes(offer), offer
    for report in ("", "Done, the tests pass.", "I've created custom-light.json.",
                   "Now find the second handler and add the same:",
                   "Done (3 files changed)", "Removed the old branch (was it stale?)."):
        assert not proposes(report), report


def test_an_answer_to_a_question_of_fact_is_no_refusal_or_decision_of_the_classifier() -> None:
    """"yes, Hotel Fita" to "Is your hotel the Fita?" answers it: the classifier alone
    adds neither reading there, however sure; it still vetoes, and the rules' own
    reading stands."""
    th = {**TH, "rejected": 0.5, "decision": 0.5}
    assert combine(None, 0.0, v(0.95), th, answer=True).label is None
    assert combine(None, 0.0, v(0.0, 0.95), th, answer=True).label is None
    assert combine(None, 0.0, v(0.95), th, answer=False).label == "rejected"
    assert combine("rejected", 0.9, v(0.9), th, answer=True).label == "rejected"
    assert combine("rejected", 0.55, v(0.05, top="none"), {**th, "veto": 0.2},
                   answer=True).label is None
    assert answers_only("Booked the canal tour. Is your hotel the Fita at Museumplein?")
    assert not answers_only("Booked the canal tour. Shall I book the museum too?")
    assert not answers_only("Booked the canal tour.")
    assert answers_only("Done. Is there anything more I can help with?")  # it closes
    assert answers_only("Understood, I'll hold it. Is there more you need today?")
    assert answers_only("Added the gallery. Do you want any other section on the homepage?")
    assert not answers_only("Toner is at 10%. Want me to order any more toner?")  # offers


@pytest.mark.parametrize("text, says", [
    ("hmm, if people have to pay for the SMS nobody will answer. I am not sure.", True),
    ("hmm not sure, what do you think", True),
    ("dunno, the old Androids do weird things with 5 GHz", True),
    ("I don't know, let me check the logbook", True),
    ("no idea honestly, marketing would know", True),
    ("I'm not sure we're in a position to promise that", False),  # doubts the offer
    ("we don't know next quarter's spend, so skip it", False),
    ("you have no idea how much drama that saves", False),
    ("let me think about it", False),  # puts it off: a refusal for now
])
def test_a_turn_that_says_the_person_has_not_decided(text: str, says: bool) -> None:
    assert undecided(text) is says


def test_the_classifier_alone_reads_no_refusal_in_an_undecided_turn() -> None:
    """However sure the classifier is, "hmm … I am not sure" to an offer refuses nothing;
    the rules' own refusal in such a turn still stands."""
    pt = prepared(Example(id="u/1", conv="u", domain="ops", source="hand",
                          prev="A free alternative is a short SMS survey during the shows.",
                          text="Hmm, if people have to pay for the SMS, nobody will answer. "
                               "I am not sure.", label="none"))
    sure = Verdict("rejected", 0.97, 0.97, 0.01)
    one = Extraction()
    refine(pt, one, sure, {**TH, "rejected": 0.5}, review_below=0.7)
    assert one.state == []
    pt2 = prepared(Example(id="u/2", conv="u", domain="ops", source="hand",
                           prev="Shall I add a late fee?",
                           text="not sure about the fee. please don't add it", label="rejected"))
    got = LocalExtractor().extract([pt2])
    refine(pt2, got, sure, {**TH, "rejected": 0.5}, review_below=0.7)
    assert [s.category for s in got.state] == ["rejected"]


@pytest.mark.parametrize("text, only", [
    ("ok understand", True),
    ("alright, noted", True),
    ("Makes sense, thanks!", True),
    ("got it", True),
    ("ah ok, fair enough", True),
    ("Understood, go ahead", False),  # it approves
    ("ok", False),  # a bare "ok" to an offer may approve it
    ("noted, but don't book it yet", False),
])
def test_a_turn_that_only_acknowledges(text: str, only: bool) -> None:
    assert acknowledges(text) is only


@pytest.mark.parametrize("text, says", [
    ("can't talk, on the bus with the kids, back in an hour", True),
    ("hold on, on a call with the kiln guy, ten minutes", True),
    ("eating now, ask me again in one hour", True),
    ("in a meeting, ping me after lunch", True),
    ("ask me after the gala", False),  # puts the offer off: a refusal for now
    ("Not while I'm driving. Tomorrow morning, I want to read it first.", False),
    ("demo in 40 min and resize means a restart, not risking it", False),
    ("I like readmes you can read in two minutes, on a phone, waiting for a train", False),
])
def test_a_turn_that_says_the_person_is_busy_for_now(text: str, says: bool) -> None:
    assert busy(text) is says


@pytest.mark.parametrize("text, says", [
    ("no rush on the invite", True),
    ("No rush at all, the board doesn't meet until the end of the month.", True),
    ("no need to hurry, nobody needs that box today. ping me when it's done", True),
    ("ok, take your time", True),
    ("There is no hurry whatever; the council does not sit again until May.", True),
    ("monday stays, no rush job, cotton on the digital press would look awful", False),
    ("no, not the rush order either", False),
    ("no thanks, we're in a hurry", False),
])
def test_a_turn_that_says_there_is_no_hurry(text: str, says: bool) -> None:
    assert unhurried(text) is says


@pytest.mark.parametrize("text, says", [
    ("Before I decide, could you tell me if my files are deleted after the refund?", True),
    ("41 minutes is crazy. Before I say yes: will the cache survive a plugin change?", True),
    ("ok but one question, the QR cards go to the reception printer?", True),
    ("Please wait, I have a question first. Is the SharePoint data in Japan?", True),
    ("Few questions before. JSON will be a much bigger file, no?", True),
    ("yes, one question, no survey link", False),  # decides
    ("She needs to talk to him tonight before we sign up.", False),
    ("can you check it adds up before I sign, her spreadsheets have surprised us", False),
])
def test_a_turn_that_asks_before_it_answers(text: str, says: bool) -> None:
    assert asks_first(text) is says


def test_no_hurry_turns_down_nothing() -> None:
    """"no hurry, tonight I am at my daughter's recital" after "I'll send chapter 8 when
    it's ready." opens with a no and refuses nothing: a classifier sure it is a refusal
    records nothing."""
    pt = prepared(Example(id="h/1", conv="h", domain="writing", source="hand",
                          prev="Will do from chapter 8 on. I'll send chapter 8 when it's ready.",
                          text="no hurry, tonight I am at my daughter's recital anyway",
                          label="none"))
    out = Extraction()
    refine(pt, out, Verdict("rejected", 0.83, 0.83, 0.01), TH, review_below=0.7)
    assert out.state == []


def test_the_classifier_alone_reads_no_approval_in_an_acknowledgement() -> None:
    pt = prepared(Example(id="k/1", conv="k", domain="personal", source="hand",
                          prev="The first free slot is on 2 September. I can book it.",
                          text="ok understand", label="none"))
    out = Extraction()
    refine(pt, out, Verdict("decision", 0.02, 0.95, 0.01), TH, review_below=0.7)
    assert out.state == []


def test_a_prohibition_that_scopes_a_task_is_kept_as_the_task() -> None:
    """"fix the lint stuff, don't touch the logic" after a CI report asks for work and
    limits it: a rejection would become a rule for good overnight, and vetoing it would
    lose the limit. It is kept as a task, citing only its own turn."""
    pt = prepared(Example(id="t/1", conv="t", domain="coding", source="hand",
                          prev="CI on the MR failed: sqlfluff reports 14 lint violations, "
                               "mostly trailing commas.",
                          text="fix the lint stuff, don't touch the logic", label="task"))
    got = LocalExtractor().extract([pt])
    assert [s.category for s in got.state] == ["rejected"]  # the rules alone
    refine(pt, got, Verdict("task", 0.87, 0.04, 0.02), TH, review_below=0.7)
    [entry] = got.state
    assert (entry.category, entry.summary) == ("task", "fix the lint stuff, don't touch the logic")
    assert entry.status == "active" and entry.answers_entry is None
    assert not [e for e in got.episodes if e.kind == "rejection"]
    # "from now on ..." is a standing rule, never an unsure prohibition inside a task
    rule = prepared(Example(id="t/2", conv="t", domain="personal", source="hand",
                            prev="christ. ok", text="from now on you don't delete anything "
                            "from my calendar without showing me the list first",
                            label="decision"))
    got = LocalExtractor().extract([rule])
    refine(rule, got, Verdict("task", 0.6, 0.05, 0.1), TH, review_below=0.7)
    assert "rejected" in [s.category for s in got.state]


def test_a_pick_from_spelled_out_choices_is_not_overruled() -> None:
    """"n" to a "(y/n)" prompt refuses as clearly as a refused tool use: a classifier that
    reads the reason after it as an approval changes nothing, and a terse pick keeps the
    review its confidence sends it to."""
    pt = prepared(Example(id="p/1", conv="p", domain="coding", source="hand",
                          prev="Conflicts resolved, 112 tests pass. Commit the merge and push? "
                               "(y/n)",
                          text="n, I'll look at it and push myself after lunch",
                          label="rejected"))
    got = LocalExtractor().extract([pt])
    refine(pt, got, Verdict("decision", 0.02, 0.95, 0.01), TH, review_below=0.7)
    [entry] = [s for s in got.state if s.category in ("rejected", "decision")]
    assert entry.category == "rejected" and entry.status == "active"
    terse = prepared(Example(id="p/2", conv="p", domain="coding", source="hand",
                             prev="Push to main?", text="n", label="rejected"))
    got = LocalExtractor().extract([terse])
    refine(terse, got, Verdict("decision", 0.02, 0.95, 0.01), TH, review_below=0.7)
    [entry] = [s for s in got.state if s.category in ("rejected", "decision")]
    assert entry.category == "rejected" and entry.confidence < 0.7
    assert entry.status == "proposed"


def test_a_late_answer_is_read_against_the_offer_it_answers() -> None:
    """"then no", after the person asked how long the lock takes and the agent said
    "About four minutes.", answers "Should I add the index?": the classifier reads the
    pair (offer, turn), as it was trained (``Example.answering``), not the last words."""
    from memtui.extract.candidates import PreparedTurn
    from memtui.extract.classify.apply import read
    from memtui.transcripts import Turn

    class Recording:
        def __init__(self) -> None:
            self.pairs: list[tuple[str, str]] = []

        def verdicts(self, pairs: list[tuple[str, str]]) -> list[Verdict]:
            self.pairs.extend(pairs)
            return [v(0.9) for _ in pairs]

    def said(i: int, text: str, previous: str, offer: str = "") -> PreparedTurn:
        turn = Turn(id=f"m{i}", session="s", timestamp=None, role="user", text=text,
                    source="t.jsonl", line=i, offset=0, end_offset=0, format="claude-code",
                    author="person")
        return PreparedTurn(turn=turn, text=text, previous_assistant=previous,
                            previous_assistant_id=f"a{i}", open_offer=offer,
                            open_offer_id="a0" if offer else None)

    clf = Recording()
    got = read(clf, [said(1, "then no", "About four minutes.", "Should I add the index?"),  # type: ignore[arg-type]
                     said(2, "no thanks", "Want me to open the PR?")])
    assert clf.pairs == [("Should I add the index?", "then no"),
                         ("Want me to open the PR?", "no thanks")]
    assert set(got) == {"m1", "m2"}
