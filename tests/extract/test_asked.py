"""A reply that picks from what the agent offered: "y", "2", "b", "3 - use staging"."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtui.extract.asked import (
    CLEAR,
    TERSE,
    TERSE_NO,
    OpenOffer,
    alternatives,
    asks_only,
    in_context,
    last_ask,
    last_offer,
    named,
    of_fact,
    offers,
    options,
    pick,
    relays_question,
)
from memtui.extract.local import LocalExtractor
from memtui.extract.prepare import FileContext
from tests.extract.test_answers import prepared, turn

PERMISSION = ("Run `terraform apply` on prod-eu? 1. Yes 2. Yes, and don't ask again for "
              "this workspace 3. No, and tell me what to do differently")
MERGE = ("Your branch is 23 commits behind main. How do you want to integrate? "
         "1. rebase onto main 2. merge main into the branch 3. squash, then rebase")
LETTERS = ("Three ways to do it: (a) a cron job on the box, (b) a systemd timer, "
           "(c) a Kubernetes CronJob. Which one?")


def test_a_permission_prompts_options_are_read_with_their_words() -> None:
    assert options(PERMISSION) == {
        "1": "Yes", "2": "Yes, and don't ask again for this workspace",
        "3": "No, and tell me what to do differently"}
    assert options(LETTERS) == {"a": "a cron job on the box", "b": "a systemd timer",
                                "c": "a Kubernetes CronJob"}
    assert options("Option A: nightly only. Option B: every PR. Which?") == {
        "a": "nightly only", "b": "every PR"}


def test_the_last_offer_is_the_question_or_else_the_announced_plan() -> None:
    assert last_offer("I'd drain node-4 tonight. Is that OK? Load is low.") == (
        "Is that OK?")
    assert last_offer("Tests pass. I'm going to split it into three modules. ETA 1h.") == (
        "I'm going to split it into three modules.")
    assert last_offer("Done, tests pass.") == ""
    assert last_offer("Fixed. Redis could be slower on that box.") == ""  # announces nothing
    assert last_offer("Merged. The plan file is in docs/.") == ""
    assert last_offer("") == ""


def test_only_a_run_counting_up_from_one_is_a_list_of_options() -> None:
    assert options("I wrote a 2-step plan: see Plan B. for details.") == {}
    assert options("Step 2. done, step 3. next") == {}  # no 1
    assert options("1. check the logs") == {}  # one item offers no choice
    assert options("") == {}


def test_a_number_picks_its_option_and_the_summary_names_it() -> None:
    p = pick("2", MERGE)
    assert p is not None and p.category == "decision" and p.confidence == CLEAR
    assert p.summary == "Chose: merge main into the branch"
    both = pick("a + c, the timer is for later", LETTERS)
    assert both is not None
    assert both.summary == ("Chose: a cron job on the box; a Kubernetes CronJob — the timer is "
                            "for later")
    assert pick("option B", LETTERS).summary == "Chose: a systemd timer"  # type: ignore[union-attr]


def test_the_chosen_option_says_whether_it_approves_or_refuses() -> None:
    yes = pick("2", PERMISSION)
    assert yes is not None and (yes.category, yes.confidence) == ("decision", CLEAR)
    assert yes.summary == "Approved: Run terraform apply on prod-eu?"
    no = pick("3 - staging first, we never apply straight to prod", PERMISSION)
    assert no is not None and no.category == "rejected"
    assert no.summary == ("Staging first, we never apply straight to prod — re: Run terraform "
                          "apply on prod-eu?")


def test_a_bare_y_or_n_answers_the_question() -> None:
    ask = "Dependencies are missing. Run `npm install`? (y/n)"
    assert pick("y", ask).category == "decision"  # type: ignore[union-attr]
    no = pick("n, I'll run it myself after lunch", ask)
    assert no is not None and (no.category, no.confidence) == ("rejected", CLEAR)
    assert no.summary == "I'll run it myself after lunch — re: Run npm install?"
    # Without a (y/n) in the question the same letters are only as sure as "yes" and "no".
    assert pick("y", "Shall I merge the PR?").confidence == TERSE  # type: ignore[union-attr]
    assert pick("👎", "Shall I merge the PR?").confidence == TERSE_NO  # type: ignore[union-attr]


@pytest.mark.parametrize("question, only", [
    ("Did that fix it?", True),
    ("Is the printer on the second floor?", True),
    ("Any dietary restrictions?", True),
    ("Did you mean the staging database?", True),
    ("**Is this for the Lisbon trip?**", True),
    ("Should I delete the old file?", False),
    ("Is it ok to restart now?", False),
    ("Do you want the summary in German?", False),
    ("Does this look right?", False),
    ("Any objections to restarting at 6?", False),
    ("Do we still need the old view?", False),
    ("Is the old view still needed?", False),  # whether it may go
    ("Can the old endpoint be removed now?", False),  # permission, not a fact
    ("Is it safe to deploy now?", False),
    ("Can you confirm the deletion of the 14 stale branches?", False),
    ("Is this the right approach?", False),
    ("Is a rewrite really necessary here?", False),
    ("Can you log in now?", True),
    ("By the way, is backup-s3 still used?", True),
    ("Is the depot closing for winter like last year?", True),
    ("Do both?", False),  # an order
    ("Is it for the whole list or only past clients?", False),  # a choice
    ("Do you need a lift to the station?", False),  # an offer
    ("Did that work?", True),  # what happened, not approval
    ("Does Friday work for you?", False),
    ("Is anyone else home who could let you in?", True),
    ("Did you send us the doctor's note?", True),  # "us" as what happened, not who acts
    ("Can I restart it now?", False),
    ("Do we ship today?", False),
    ("Which one do you prefer?", False),  # not a yes/no question
    ("Restart it now", False),  # not a question
    # what leads up to the question in the same sentence
    ("Before I switch nameservers: do you still use email there?", True),
    ("noted, i'll remind you. do the students push straight to main?", True),
    ("Copied 18 records. Should I switch the nameservers?", False),
    ("Going with C. The outro quotes Priya — has she approved the wording?", True),
    ("The menu exists in six languages — do all six?", False),  # an order, after a dash
    ("Do all of them?", False),
    # what happened, even in words of consent
    ("Did the agency really confirm that?", True),
    ("Did they agree to the price?", True),
    ("Did you want the long version?", False),  # a wish
    ("Was it the blue one or the red one?", False),  # a choice
])
def test_a_question_of_fact_or_status_asks_only(question: str, only: bool) -> None:
    assert asks_only(question) is only


def test_a_bare_y_or_n_to_a_question_of_fact_picks_nothing() -> None:
    assert pick("n", "Cleared the cache. Is it loading now?") is None
    assert pick("y", "Did the alert clear?") is None
    # an explicit (y/n) prompt is always a choice
    assert pick("n", "Is the cache cleared? (y/n)").category == "rejected"  # type: ignore[union-attr]


@pytest.mark.parametrize("previous, reply, category, chosen", [
    ("Report ready. Send it now or on Monday morning?", "Monday morning, if you please",
     "decision", "on Monday morning"),
    ("Form done. Should the picker be free text or a list?", "a list, always the same 14",
     "decision", "a list"),
    ("I can change the generator or update the tests. Which one?",
     "change the generator, some apps are picky", "decision", "change the generator"),
    ("I can split it by bed or by crop. Which one for the members' meeting?", "crop",
     "decision", "Chose: by crop"),
    ("A4 with big fonts or two columns. Which do you prefer for the gig?", "two columns",
     "decision", "Chose: two columns"),
    # two things the agent offers to do, stated rather than asked
    ("Probably not. I could print it in the back room instead, or send it as a text.",
     "text, they all have their phones on the shelf", "decision", "Chose: send it as a text"),
    ("I can refund €52 to your account or keep it as credit for April.", "refund please",
     "decision", "Chose: refund €52"),
    ("I can do A4 with large fonts, or two columns of 30 songs. I'd lean two columns.",
     "large fonts, Tom can't read without his glasses", "decision", "Chose: do A4"),
    ("Should invalid rows stop the import, or be skipped and reported?",
     "Skip and report, please.", "decision", "skipped and reported"),
    ("Hindi or English?", "both please", "decision", "Hindi; English"),
    ("Enrol her in the intensive or the regular course?", "neither, we're away", "rejected",
     "the intensive"),
    # keeping things as they are turns the other down
    ("Promote the new model or keep the old one?", "keep old", "rejected", "Promote"),
    ("Should I keep going or stop here?", "keep going", "decision", "keep going"),
    ("Would Redis or Memcached be better?", "redis", "decision", "Chose: Redis (over: Memcached)"),
    ("Card or bank transfer?", "card. never transfers to contractors", "decision", "Chose: Card"),
    ("Should I send it now, or keep it as a draft?", "keep it as a draft", "rejected",
     "send it now"),
])
def test_a_reply_naming_one_of_two_alternatives_chooses_it(
        previous: str, reply: str, category: str, chosen: str) -> None:
    got = named(reply, previous)
    assert got is not None and got.category == category and chosen in got.summary


@pytest.mark.parametrize("previous, reply", [
    ("Is the hotel in Lisbon or Porto?", "Porto"),  # a question of fact
    ("Could you check with the neighbours or a safe place?", "I checked, nothing there"),
    ("Median imputation or multiple imputation with mice?", "how long does mice take"),
    ("Debezium on our cluster, or Fivetran's connector. Which one?", "both not good"),
    ("Send it now or on Monday morning?", "whatever you think is best"),  # names neither
    ("Should I use dataclasses or attrs?", "attrs is banned here"),  # about it, no pick
    ("Debezium or Fivetran?", "fivetran's too expensive for us"),
    ("Should I add logging or metrics first?", "logging sucks here, metrics"),  # picks later
    ("Should I pin the version or use latest?", "latest broke prod last time, pin it"),
    ("Should I deploy now or wait for the review?", "both suck tbh"),
    ("Should I fix the failing test or the generator first?",
     "the generator crashes on empty input btw, can you add a guard"),
    ("Should I keep the retry logic or replace it with the helper, which retries or fails?",
     "keep the retry logic"),  # two "or"s: no two alternatives to tell apart
    ("Are you on macOS or Windows?", "neither, ubuntu 22.04"),  # a question of fact
    ("Send it now or on Monday morning?", "no, not at all, the client cancelled"),
    ("Done. The tests pass.", "Monday morning"),  # nothing was asked
    ("The job failed on Monday or Tuesday, the log is gone.", "tuesday"),  # offers nothing
])
def test_a_reply_that_names_no_single_alternative_chooses_nothing(
        previous: str, reply: str) -> None:
    assert named(reply, previous) is None


def test_the_alternatives_are_read_without_the_question_around_them() -> None:
    assert alternatives("Should I publish it to the wiki now or wait for your review?") == (
        ("publish it to the wiki now", "wait for your review"),
        "Should I publish it to the wiki now or wait for your review?")
    assert alternatives("Options: A or B.") is None  # not a question


@pytest.mark.parametrize("ask, options", [
    ("Treasure hunt theme: pirates, dinosaurs or space?", ("pirates", "dinosaurs", "space")),
    ("First-touch, last-touch, linear, or data-driven (needs GA4 360)?",
     ("First-touch", "last-touch", "linear", "data-driven (needs GA4 360)")),
    ("Size: XS (9 hours, ~$40), M (2.5 hours, ~$45) or XL (40 min, ~$60)?",
     ("XS (9 hours, ~$40)", "M (2.5 hours, ~$45)", "XL (40 min, ~$60)")),
    # an acknowledgement before the choice, or a long clause, is no option
    ("Got it, Friday or Monday?", ("Friday", "Monday")),
    ("If the server is down, should the door keep the cached list, or lock everyone out?",
     ("keep the cached list", "lock everyone out")),
])
def test_a_list_of_short_options_is_read_whole(ask: str, options: tuple[str, ...]) -> None:
    assert alternatives(ask) == (options, ask)


def test_a_reply_naming_one_of_three_options_chooses_it_over_the_others() -> None:
    ask = "Treasure hunt theme: pirates, dinosaurs or space?"
    got = named("dinosaurs, the kids loved the museum", ask)
    assert got is not None and got.category == "decision"
    assert got.summary == "Chose: dinosaurs (over: pirates, space)"
    none = named("none of them, we skip the hunt this year", ask)
    assert none is not None and none.category == "rejected"
    assert none.summary == "Declined all: pirates; dinosaurs; space"
    # "both" of three is no single pick
    assert named("both", ask) is None


def test_the_extractor_files_a_named_choice_but_keeps_the_rules_refusal() -> None:
    ask = turn("a1", "assistant", "Should I transfer the domain too, or only the DNS hosting?")
    out = LocalExtractor().extract(prepared(ask, turn("u1", "user", "only the hosting please")))
    assert [(s.category, s.summary, s.answers_entry) for s in out.state] == [
        ("decision", "Chose: only the DNS hosting (over: transfer the domain too)", "a1")]
    out = LocalExtractor().extract(prepared(ask, turn(
        "u2", "user", "only the hosting for now, let's not open that can of worms")))
    assert [s.category for s in out.state] == ["rejected"]


def test_what_is_not_a_bare_choice_is_left_to_the_rules() -> None:
    assert pick("1.9k on NAT?? what is going through there", MERGE) is None
    assert pick("a bit later, I'm in a meeting", LETTERS) is None
    assert pick("2?", MERGE) is None  # a question picks nothing
    assert pick("4", MERGE) is None  # not an option
    assert pick("y", "Done: the tests pass.") is None  # nothing was asked
    assert pick("2", "") is None
    assert pick("yes", "Shall I merge?") is None  # the phrase rules read "yes" and "no"


def test_a_bare_question_is_shown_after_the_words_that_name_it() -> None:
    assert in_context("Book it?", "Thursday 1-5pm is available. Book it?") == (
        "Thursday 1-5pm is available. Book it?")
    # "Removed." alone names nothing: the sentence before it joins
    assert in_context("Publish now?", "The pricing table is out of date. Removed. Publish now?"
                      ) == "The pricing table is out of date. Removed. Publish now?"
    long = "Should I add the index on orders.created_at?"
    assert in_context(long, f"It is slow. {long}") == long  # it names what it asks
    assert in_context("Send?", "") == "Send?"
    assert in_context("Send?", "Something else entirely?") == "Send?"  # not in the words
    # a question that only asks to go on names nothing either, however long
    plan = "Step 1 is lowering the DNS TTL on the MX record today."
    for ask in ("Want me to go ahead?", "Shall I proceed with that?", "Should I do it now?",
                "Ok, ready to start?", "Do you want me to continue?", "Shall I go?",
                "Should I go ahead and do that?"):
        assert in_context(ask, f"{plan} {ask}") == f"{plan} {ask}", ask
    for ask in ("Want me to go ahead with the DNS change?", "Shall I proceed to step 2?"):
        assert in_context(ask, f"{plan} {ask}") == ask, ask


@given(st.lists(st.text(min_size=1, max_size=60), max_size=6),
       st.sampled_from(["Send?", "Book it?", "Go ahead?", "OK?", "Should I add the index?",
                        "Want me to go ahead?"]))
def test_a_question_in_context_still_ends_with_the_question(before: list[str], ask: str
                                                             ) -> None:
    previous = " ".join([*before, ask])
    shown = in_context(ask, previous)
    assert shown.endswith(ask)
    assert len(shown) <= len(ask) + 1 + 90  # the words before it are kept short
    if len(ask.split()) > 3 and not ask.startswith("Want"):
        assert shown == ask


def test_a_bare_yes_or_no_is_filed_by_what_it_answers() -> None:
    def filed(reply: str, previous: str) -> list[str]:
        turns = prepared(turn("a1", "assistant", previous), turn("u1", "user", reply))
        return [s.summary for s in LocalExtractor().extract(turns).state
                if s.category in ("decision", "rejected")]

    # the proposal as an order, not "Approved: Shall I drop the staging table?"
    assert filed("y", "Shall I drop the staging table? (y/n)") == ["Drop the staging table"]
    assert filed("n, after the demo", "Shall I drop the staging table? (y/n)") == [
        "Rejected: dropping the staging table — after the demo"]
    # a question that names nothing is shown with the words before it
    assert filed("y", "Thursday 1-5pm is free at the garage. Book it? (y/n)") == [
        "Approved: Thursday 1-5pm is free at the garage. Book it?"]


def test_the_extractor_files_the_pick_citing_the_prompt_it_answers() -> None:
    turns = prepared(turn("a1", "assistant", MERGE), turn("u1", "user", "3"))
    out = LocalExtractor().extract(turns)
    [decision] = [s for s in out.state if s.category == "decision"]
    assert decision.summary == "Chose: squash, then rebase"
    assert (decision.source_entry, decision.answers_entry) == ("u1", "a1")
    # A prohibition after the pick is kept as well: it outlives the prompt.
    turns = prepared(turn("a1", "assistant", PERMISSION),
                     turn("u1", "user", "3 - plan only. Never apply to prod on a Friday."))
    out = LocalExtractor().extract(turns)
    summaries = sorted(s.summary for s in out.state if s.category == "rejected")
    assert summaries == ["Never apply to prod on a Friday.",
                         "Rejected: running terraform apply on prod-eu — plan only. Never "
                         "apply to prod on a Friday."]


_WORDS = st.text(alphabet=string.ascii_lowercase + " ", min_size=1, max_size=30).map(
    lambda s: " ".join(["the", *s.split()]))
"""An option's words ("the ..." neither approves nor refuses)."""


@given(st.lists(_WORDS, min_size=2, max_size=5), st.sampled_from(["{}. ", "{}) ", "({}) "]),
       st.booleans())
def test_any_numbered_or_lettered_list_is_read_back(items: list[str], mark: str,
                                                    lettered: bool) -> None:
    keys = [string.ascii_lowercase[i] if lettered else str(i + 1) for i in range(len(items))]
    text = "Which one? " + " ".join(mark.format(k) + w for k, w in zip(keys, items, strict=True))
    assert options(text) == dict(zip(keys, items, strict=True))
    for k, w in zip(keys, items, strict=True):
        got = pick(k.upper() if lettered else k, text)
        assert got is not None and got.summary == f"Chose: {w}"


@given(st.text(max_size=80), st.text(max_size=200))
def test_no_text_breaks_the_reading(text: str, previous: str) -> None:
    got = pick(text, previous)
    assert got is None or got.category in ("decision", "rejected")
    if text.rstrip().endswith("?"):
        assert got is None


def test_an_offer_stays_open_while_the_person_only_asks_about_it() -> None:
    offer = OpenOffer()
    offer.agent("I could add the index; shall I?", "a1")
    assert offer.behind("a1") == ("", None)  # asked just now
    offer.person("how long would it lock the table?")
    offer.agent("About four minutes.", "a2")
    assert offer.behind("a2") == ("I could add the index; shall I?", "a1")
    offer.person("and at night?")
    offer.agent("The same, but nobody is using it then.", "a3")
    assert offer.behind("a3")[1] == "a1"
    offer.person("then no, not this week")  # answered: closed
    assert offer.behind("a3") == ("", None)


def test_an_offer_closes_when_the_agent_moves_on_or_offers_again() -> None:
    offer = OpenOffer()
    offer.agent("Shall I rotate the logs?", "a1")
    offer.agent("Done: the backup finished.", "a2")  # nobody asked: a report closes it
    assert offer.behind("a2") == ("", None)
    offer.agent("Shall I rotate the logs?", "a3")
    offer.person("which logs?")
    offer.agent("nginx and app. Want me to gzip them too?", "a4")  # a new offer
    offer.person("what's the size?")
    offer.agent("About 2 GB.", "a5")
    assert offer.behind("a5")[1] == "a4"


def test_an_agent_that_goes_on_working_after_a_question_leaves_the_offer_behind() -> None:
    """A question the agent answers in a few words keeps the offer open; one it takes as
    the start of new work ("why are there 2 subscription handlers?", then edit after
    edit) does not, or a "go" twenty turns later would approve "Option A"."""
    offer = OpenOffer()
    offer.agent("Want me to implement Option A?", "a1")
    offer.person("why are there 2 subscription handlers?")
    offer.agent("Let me check.", "a2")
    offer.agent("One is left over from the old mode.", "a3")
    offer.agent("The other handles retries.", "a4")
    assert offer.behind("a4")[1] == "a1"  # three turns answer the question
    offer.agent("Now let me merge them into one handler:", "a5")
    assert offer.behind("a5") == ("", None)  # the fourth is at work
    offer.agent("Done, it compiles.", "a6")
    offer.person("ok")
    assert offer.behind("a6") == ("", None)


def test_a_late_answer_names_and_cites_the_offer_it_answers() -> None:
    turns = prepared(turn("a1", "assistant", "Should I add the index on orders.created_at?"),
                     turn("u1", "user", "how long would it lock the table?"),
                     turn("a2", "assistant", "About four minutes at this size."),
                     turn("u2", "user", "then no"))
    assert (turns[-1].open_offer_id, turns[-1].answering_id) == ("a1", "a1")
    out = LocalExtractor().extract(turns)
    [no] = [s for s in out.state if s.category == "rejected"]
    assert no.summary == "Rejected: adding the index on orders.created_at"
    assert (no.source_entry, no.answers_entry) == ("u2", "a1")
    # Without the question in between, "About four minutes." answers nothing: no offer.
    turns = prepared(turn("a1", "assistant", "Should I add the index on orders.created_at?"),
                     turn("u1", "user", "hmm, the table is big"),
                     turn("a2", "assistant", "About four minutes at this size."),
                     turn("u2", "user", "then no"))
    assert turns[-1].open_offer_id is None
    assert not [s for s in LocalExtractor().extract(turns).state if s.category == "rejected"]


def test_the_open_offer_is_saved_with_the_files_context_between_runs() -> None:
    ctx = FileContext()
    prepared(turn("a1", "assistant", "Shall I archive the 2019 tickets?"),
             turn("u1", "user", "how many are there?"),
             turn("a2", "assistant", "About 4,100."), ctx=ctx)
    again, _ = FileContext.load(json.dumps({"context": ctx.dump()}))
    [late] = prepared(turn("u2", "user", "then no"), ctx=again)
    assert (late.open_offer, late.open_offer_id) == ("Shall I archive the 2019 tickets?", "a1")
    # A context saved before offers were kept, or a damaged one, loads with none open.
    for offer in (None, "garbage", {"text": 3}):
        old, _ = FileContext.load(json.dumps({"context": {"previous_assistant": "x",
                                                          "offer": offer}}))
        assert old.offer.behind(old.previous_assistant_id)[1] is None
    for damaged in ([], "x", {"calls": [1], "fix_window": "3", "offer": {"answered": "x"}}):
        ctx, _ = FileContext.load(json.dumps({"context": damaged}))
        assert (ctx.calls, ctx.fix_window, ctx.offer.answered) == ({}, 0, 0)
    # The agent's turns since the person's question are saved with the offer.
    ctx, _ = FileContext.load(json.dumps({"context": again.dump()}))
    assert ctx.offer.answered == again.offer.answered


@pytest.mark.parametrize("words, asks", [
    ('Scheduled: "Where do your users drop off? Funnels in Lumen" goes out Tuesday.', ""),
    ("Posted “Is your backup tested? A checklist” to the blog.", ""),
    ('Should I send "Is it done?" to Dana?', 'Should I send "Is it done?" to Dana?'),
    ('Should I use the title "Why Lumen?', 'Should I use the title "Why Lumen?'),
    # the quotation closed before the question: it asks
    ('Draft: "We are investigating. Back soon." Post it?', 'Back soon." Post it?'),
])
def test_a_question_mark_inside_a_quoted_title_asks_nothing(words: str, asks: str) -> None:
    """The sentence splitter cuts a quoted title at its question mark; the half that ends
    there inside the quotation asks the person nothing, unless its words ask."""
    assert last_ask(words) == asks
    assert offers(words) == bool(asks)


@pytest.mark.parametrize("words, relayed", [
    ("Claim filed. Also, a customer asks if the Medium Dry is the same as last year's.", True),
    ("Booked the lessons. They ask whether she needs to borrow a hat.", True),
    ("She asks if she can bring her own dog along.", False),  # a request: a no refuses it
    ("The removal company asks if you want their packing service (£180).", False),
    ("A customer asks about the Medium Dry.", False),
])
def test_a_question_passed_on_from_someone_else(words: str, relayed: bool) -> None:
    assert relays_question(words) is relayed


def test_a_no_to_a_question_passed_on_answers_it() -> None:
    previous = "Claim filed. Also, a customer asks if the Medium Dry is the same as last year's."
    turns = prepared(turn("a1", "assistant", previous),
                     turn("u1", "user", "no it's a different blend this year, fuller"))
    assert [s.category for s in LocalExtractor().extract(turns).state] == []
    asked = prepared(turn("a1", "assistant", "She asks if she can bring her own dog along."),
                     turn("u1", "user", "no, Biscuit would take it as a declaration of war"))
    assert [s.category for s in LocalExtractor().extract(asked).state] == ["rejected"]


def test_a_question_of_fact_after_a_lead_names_no_choice() -> None:
    """"One question for them: is the car in the street overnight, or in the garage now?"
    asks a fact, after what leads up to it; "in the garage since March" chooses nothing."""
    ask = ("Quotes by tomorrow. One question for them: is the car still parked on the "
           "street overnight, or in the garage now?")
    assert alternatives(ask) is None and of_fact(ask.split(". ", 1)[1])
    assert alternatives("Quick one: send it now or on Monday morning?") == (
        ("send it now", "on Monday morning"), "Quick one: send it now or on Monday morning?")
    out = LocalExtractor().extract(prepared(turn("a1", "assistant", ask), turn(
        "u1", "user", "in the garage since March, finally we cleared it")))
    assert [s.category for s in out.state if s.category == "decision"] == []
