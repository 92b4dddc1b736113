"""The offline extractor: rejections in many phrasings, apart from preferences and decisions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtui.extract.candidates import CallView, Extraction, PreparedTurn, ResultView
from memtui.extract.local import NO_BUT, LocalExtractor
from memtui.text import clean, domain_of, sentences
from memtui.transcripts import Turn


def turn(text: str, role: str = "user", *, previous: str = "", tid: str = "m1",
         calls: tuple[CallView, ...] = (), results: tuple[ResultView, ...] = (),
         after_error: bool = False) -> PreparedTurn:
    t = Turn(id=tid, session="s", timestamp=None, role=role,  # type: ignore[arg-type]
             text=text, source="x", line=1, offset=0, end_offset=1, format="generic")
    return PreparedTurn(turn=t, text=text, calls=calls, results=results,
                        previous_assistant=previous, after_tool_error=after_error)


def categories(text: str, **kw: object) -> list[str]:
    out = LocalExtractor().extract([turn(text, **kw)])  # type: ignore[arg-type]
    return [s.category for s in out.state]


ASK = "I can add Redis as a cache for the funnel queries. Should I set it up?"


@pytest.mark.parametrize("text", [
    "No, don't add Redis, Postgres is enough for now.",
    "no. use the existing cache",
    "Don't touch the staging database.",
    "Please don't push to main directly.",
    "Never deploy on Fridays.",
    "Stop adding emojis to commit messages.",
    "I'd rather not add another moving part.",
    "Let's not rewrite the parser this week.",
    "I don't want a pricing table in launch posts.",
    "I don't want to be paged for staging alerts.",
    "We're not posting to HN this time.",
    "That's wrong, the offsite is in December.",
    "Revert that change.",
    "No pricing in launch posts.",
    "Absolutely not.",
])
def test_rejections_in_many_phrasings(text: str) -> None:
    assert categories(text, previous=ASK)[:1] == ["rejected"]


@pytest.mark.parametrize("text", [
    "not now, the cluster is mid-upgrade",
    "not yet, legal hasn't seen the wording",
    "not in this release, it needs a migration",
    "hmm, not during office hours I think",
    "not before the backup has been verified",
    "overkill",
    "that's way too much for a side project",
    "not worth it, nobody reads the old posts",
    "the cache stays, the reports depend on it",
])
def test_a_refusal_of_the_time_place_or_worth_of_an_offer(text: str) -> None:
    """A deferral, a narrowing, a judgement of its worth or keeping what it would change,
    in reply to an offer, refuses it as a "no, but": it is recorded, and waits below the
    confidence that makes a standing rule."""
    [(summary, confidence)] = rejections(text, previous=ASK)
    assert confidence == NO_BUT
    said, _, offer = summary.partition(" — re: ")
    assert text.endswith(said) and offer == "Should I set it up?"  # lead words dropped


@pytest.mark.parametrize("text, previous", [
    ("not now, the cluster is mid-upgrade", "Upgraded the cluster to 1.31."),  # no offer
    ("not that I know of", ASK),
    ("not sure, what would it cost?", ASK),
    ("not bad at all", "Here is the new logo."),
    ("too slow, it took 40 minutes", "The nightly export finished."),  # a report, no offer
])
def test_a_not_that_refuses_nothing(text: str, previous: str) -> None:
    assert "rejected" not in categories(text, previous=previous)


PLAN = "The module is 2,400 lines. I'm going to split it into auth, profile and billing."


def test_a_deferral_of_an_announced_plan_refuses_it() -> None:
    """A plan the agent only announces is an offer too: "not in this PR" turns it down,
    and names it."""
    [(summary, confidence)] = rejections("not in this PR, it's a bugfix", previous=PLAN)
    assert confidence == NO_BUT
    assert summary == ("not in this PR, it's a bugfix — re: I'm going to split it into "
                       "auth, profile and billing.")


@pytest.mark.parametrize("text, previous", [
    ("keep the view, finance's spreadsheet reads from it", "Done. Should I drop the old view?"),
    ("leave it, comms handles twitter", "Should I reply to the angry tweet?"),
    ("keep headspace, I only paused it. audible can go", "Audible and Headspace. Cancel both?"),
    ("please keep C4, I want to decide the outliers myself", "Shall I drop well C4?"),
    ("I'd stay with the current one, the cheap one has no coverage", "A cheaper plan. Switch?"),
    ("i'd keep them daily honestly, a lost week would kill us", "Should I cut them to weekly?"),
    # a plan the agent only announced
    ("leave it open, they're mid-migration", "No reply in 6 days. I'll auto-close it."),
    ("keep netflix, my girlfriend watches on my account", "I could also cancel Netflix."),
])
def test_keeping_what_an_offer_would_change_refuses_it(text: str, previous: str) -> None:
    [(summary, confidence)] = rejections(text, previous=previous)
    assert confidence == NO_BUT and summary.startswith(text.rstrip("."))


@pytest.mark.parametrize("text, previous", [
    ("dm them instead, discount codes never go public", "I can reply publicly. Should I?"),
    ("the pilot is our only evidence, cut the methods paragraph instead",
     "It's 1,180 words. I'd cut the paragraph on the pilot study."),
    ("Thursday evening I'm on shift. Friday 14:00 instead", "Shall I set a reminder for "
     "Thursday evening?"),
])
def test_putting_something_in_the_offers_place_refuses_it(text: str, previous: str) -> None:
    """A substitute for what the agent offered or announced turns it down, and the summary
    names the offer."""
    [(summary, confidence)] = rejections(text, previous=previous)
    assert confidence == NO_BUT and " — re: " in summary
    assert summary.rpartition(" — re: ")[2] in previous


@pytest.mark.parametrize("text, previous", [
    ("yes decline it and propose friday instead", "Want me to decline the vendor call?"),
    ("use the blue one instead", "Done, the banner is live."),  # no offer: an instruction
    ("not all, the old runs have complete.txt instead", "Do all runs have a DONE marker?"),
    ("should I use February instead?", "The January numbers look high."),
])
def test_an_instead_that_refuses_nothing(text: str, previous: str) -> None:
    assert "rejected" not in categories(text, previous=previous)


@pytest.mark.parametrize("text, previous", [
    ("keep it, nobody reads that far anyway", "I'd close with a quote. Keep it?"),  # asked
    ("keep going", "Tests pass. Shall I do the next module?"),
    ("keep me posted", "Should I watch the queue overnight?"),
    ("keep up the good work", "Tests pass. Shall I do the next module?"),
    ("keep them coming", "Want me to find more?"),
    ("keep the tone casual", "Here is the reply to the customer."),  # no offer: a lesson
    ("keep the tone casual", "Here is the reply. Let me know if it works."),  # nothing to change
    ("keep it short", "Shall I draft the reply?"),  # a style for what it offers
    ("keep in mind the board meets friday", "Should I drop the old view?"),
    ("leave at 8 then", "Shall I book the taxi for tomorrow?"),
    # approving with a condition
    ("ok, but keep the sentence about the cooperatives", "It's 287 words; I'll cut it below "
     "250."),
    ("Yes, remove that one. But keep the partner sentence.", "I can cut the paragraph."),
    ("sure, cut the intro and use the quote instead", "I'd cut the history section."),
])
def test_keeping_that_refuses_nothing(text: str, previous: str) -> None:
    assert "rejected" not in categories(text, previous=previous)


@pytest.mark.parametrize("text, previous", [
    ("go, but don't deploy it yourself, send me the comparison first",
     "Retrained. Should I proceed with the rollout?"),
    ("yes, map them. don't touch the raw files though", "I can add a mapping. Want me to?"),
    ("yeah do that but only for the night window dont touch the daytime one",
     "I could raise the alert threshold to 2,000."),  # an offer stated, not asked
])
def test_a_prohibition_inside_an_approval_is_its_condition(text: str, previous: str) -> None:
    out = LocalExtractor().extract([turn(text, previous=previous)])
    [entry] = out.state
    assert entry.category == "decision" and entry.confidence == 0.75
    assert text in entry.summary or text[:40] in entry.summary


def test_a_no_with_only_a_reason_names_the_plan_it_refuses() -> None:
    plan = "The drive is 95% full. Planned: delete recordings older than 2 years tonight " \
        "unless you object."
    out = LocalExtractor().extract([turn("please no, the old recordings are for the "
                                         "anniversary film next year", previous=plan)])
    [entry] = out.state
    assert entry.category == "rejected"
    assert entry.summary.startswith("Rejected: deleting recordings older than 2 years tonight — "
                                    "the old recordings")


def test_a_prohibition_to_a_bare_want_me_to_names_the_offer_before_it() -> None:
    offer = "CI is red. I can mark it xfail to unblock the pipeline. Want me to?"
    [entry] = LocalExtractor().extract([turn("no xfail. fix it", previous=offer)]).state
    assert entry.category == "rejected"
    assert entry.summary.endswith("— re: mark it xfail to unblock the pipeline")


def test_a_no_word_asked_back_is_a_question() -> None:
    offer = "The proration gives negative amounts. I can split the month into two periods."
    assert categories("negative? how much", previous=offer) == []


@pytest.mark.parametrize("text, previous", [
    ("let me think about it over the weekend", "I can send the reminder to all 40 parents."),
    ("wait for Ana's review, she owns the blog", "Publish it now?"),
    ("hold off until I've talked to Ines", "I'll drop the six old indexes tonight."),
    ("not a chance with this budget", "Shall I order the bigger server?"),
    ("skip the warranty, the battery is what wears out", "Add the 3-year warranty for €49?"),
    ("please not whole folder, it makes a huge diff", "I'll reformat the whole folder."),
    ("please no migration now, the shop is open until 10pm", "Then I run the migrations on "
     "prod. Go ahead?"),  # not a task: it stops one
    ("pls no newsletter, i see everything in discord", "I'll also sign you up for the "
     "newsletter."),
    ("oh please not publicly, that's their private info", "I could reply publicly."),
    ("That's very kind, but the singers get enough emails from me", "I could send them a "
     "weekly digest."),
    ("i never use hashtags, tags make it look desperate", "Shall I add hashtags?"),
    ("we don't blame vendors in public replies", "I'd mention the vendor's outage."),
    ("god no, that defeats the point of snapshots", "Should I update all snapshots?"),
    ("I'd rather water on a timer, I don't trust these sensors", "Shall I add soil sensors?"),
    ("neither, we're in Croatia from the 6th", "Want me to enrol Zosia in the July course?"),
    ("none of them, sorry, they're a bit generic", "Three taglines above. Let me know which "
     "one you like, or I can write more."),
    ("weder noch. cancel please", "We can offer 3 months at 50% off, or a pause."),
    ("Thank you, but my daughter will drive me.", "I can also order a taxi both ways."),
    ("not worth the hassle with inheritance", "I'd also like to add __slots__ to save memory."),
    ("no way, that test has caught two real bugs", "Should I mark it xfail?"),
    ("that's a no from me, it trains people to threaten",
     "I'd suggest a 10% discount for anyone who threatens to cancel."),
    ("i'll just rotate it myself, it's two minutes", "Want me to open a ticket for ops?"),
    ("Not the board. Just me first.", "Should the final report go to the board?"),
    ("I already said no offers for him. stop", "The client emailed again."),  # no offer
    ("then skip it, I only bump when I submit to CRAN", "0.4.2 → 0.4.3, a bugfix."),
    ("hold on, the director sees it first", "I'm going to send the report to the list now."),
    ("we tried that in 2022 and it was a mess", "I'd move alerting to Alertmanager."),
    ("nobody here wants to babysit 20 containers", "I propose we self-host Sentry."),
    ("one at a time please, or we lose the jobs", "I'm going to restart all 8 workers."),
    ("better not, her mum will be there", "Shall I add the line about the burnt pierogi?"),
    ("15% more for convenience is a no from me", "Could I move the workloads to Redshift?"),
    ("I haven't been since october, let it lapse", "Your membership renews on the 1st. Renew?"),
    ("maybe later in the year", "Would you be open to doing it for the credentials?"),
    ("I'm not convinced, the VM has been rock solid", "I'd suggest moving the cron jobs."),
    ("hmm I'd hold off, we don't know yet whether it's a leak", "Should I bump the memory?"),
    ("decline, fridays after 3 are my no-meeting time", "Priscila invited you. Accept?"),
    ("Heavens no, they're volunteers", "Want me to send reminders to the low attenders?"),
    ("not that garage, they overcharged me", "The garage you used has Tuesday free. Book it?"),
])
def test_putting_off_or_waving_off_an_offer_refuses_it(text: str, previous: str) -> None:
    assert "rejected" in categories(text, previous=previous)


@pytest.mark.parametrize("text, previous", [
    ("let me think out loud for a second", "I could use Redis for the queue."),
    ("I never know with these numbers", "The model's AUC is 0.78. Shall I ship it?"),
    ("skip the footer in future drafts", "Sent the newsletter."),  # nothing offered
    ("wait for it to finish, then tell me", "The build is running."),
    ("we don't know yet", "Did the vendor reply?"),
    ("I'd rather the 10:00 one", "Shall I book the 9:00 or the 10:00 slot?"),  # a pick
    ("I'd rather use tabs than spaces.", ""),  # a preference
    ("neither, it's the Hilton", "Is your hotel the Fita or the Ibis?"),  # a fact
    ("ok, but not the pricing one, I'm writing that myself",
     "Then I'd reassign 3 of your posts to Mateo. OK?"),  # the approval's condition
    ("thank you. what if they find something though", "I'll remind you Sunday evening."),
    ("hold on, on a call with the kiln guy, ten minutes", "Should I send them now?"),  # busy
    ("refund the duplicate now, that's a no-brainer", "I can refund the duplicate now."),
    ("decline the demo, keep the design review", "I can decline the vendor demo."),
    ("neither, it was the staging box", "Did the error come from prod or from CI?"),
])
def test_the_same_words_without_an_offer_refuse_nothing(text: str, previous: str) -> None:
    assert "rejected" not in categories(text, previous=previous)


@pytest.mark.parametrize("text, previous, category", [
    ("yes, I'm sure, Davi changes it anyway and he likes it where it is",
     "Are you sure about the price table? Moving it to JSON would let you edit prices.",
     "rejected"),
    ("Yes, quite sure. The translations stay.",
     "Are you certain? Dropping them saves about 90 € at the print shop.", "rejected"),
    ("yes ok, you're right, add the dry run",
     "Are you sure? A dry run would have caught last month's double booking.", None),
    ("yes, I'm sure", "Are you sure? This deletes the 2019 backups for good.", None),
    ("yes", "Are you sure you want to force-push to main?", "decision"),
])
def test_holding_firm_after_are_you_sure_refuses_what_the_agent_argued(
        text: str, previous: str, category: str | None) -> None:
    out = LocalExtractor().extract([turn(text, previous=previous)])
    found = [e for e in out.state if e.category in ("rejected", "decision")]
    if category is None:
        assert not [e for e in found if e.category == "rejected"]
    else:
        [entry] = found
        assert entry.category == category
    if category == "rejected":  # the summary names what the agent argued for
        assert previous.split("? ", 1)[1][:20] in found[0].summary


@pytest.mark.parametrize("text, previous, category", [
    ("a docstring is fine", "OK. Should I at least add a docstring explaining what it returns?",
     "decision"),
    ("Wednesday is fine.", "Thanks. Wednesday 20:00 then?", "decision"),
    ("those are fine, turn them on", "What about the hourly stand-up nudges?", "decision"),
    ("economy is fine, the kids love the big windows",
     "Should I book first class on the train instead, for more comfort?", "rejected"),
    ("local is enough, sync has that tiny quota",
     "I'll store it in chrome.storage.sync so it follows the user.", "rejected"),
    ("wednesday noon works", "Will do. Draft deck by Wednesday noon?", "decision"),
    ("ok that works", "I'll prune only dangling images. That frees ~60 GB.", "decision"),
    ("the flashback only works after we've met Ines",
     "I suggest moving the flashback to the opening.", None),  # a reason, not consent
    ("ZaloPay works on 3.4?", "I could suggest paying with ZaloPay until the fix.", None),
    ("Baraka says the queue is fine.", "Sure, I'll hold off.", None),  # reports
    ("the slogan is ok but maybe it promises too much?", "I can write three alternatives.",
     None),
    ("the weather is fine today", "Is it raining there?", None),  # nothing offered
])
def test_x_is_fine_approves_what_was_offered_or_keeps_what_it_would_change(
        text: str, previous: str, category: str | None) -> None:
    found = [c for c in categories(text, previous=previous) if c in ("rejected", "decision")]
    assert found == ([category] if category else [])


@pytest.mark.parametrize("text, previous, decided", [
    ("book him, Zosia saw him at Antek's party",
     "Home party it is. I can book the entertainer Magik Tomek for 15:00-17:00.", True),
    ("squash it, keep the first line as the message", "Should I squash the 23 commits?", True),
    ("refund the duplicate now, that's a no-brainer", "I can refund the duplicate now.", True),
    ("sign from the team, the CEO thing feels fake", "Should I sign them from the CEO?",
     False),  # something else in the offer's place
    ("add a test for it", "Done. Is the fix in main now?", False),  # asks only
    # how much of the offer: an approval of part of it
    ("refund half. he still rode it for 4 hours", "Should I refund the €140?", True),
    ("schedule three, the vet intro waits", "Indeed. Shall I schedule all four?", True),
    ("refund 3 of them, the Hughes family rebooked", "I can refund all 4 in full.", True),
    ("archive half our logs somewhere", "I can archive the share to cloud storage.", False),
])
def test_ordering_the_offer_in_its_own_verb_approves_it(text: str, previous: str,
                                                        decided: bool) -> None:
    out = LocalExtractor().extract([turn(text, previous=previous)])
    found = [e for e in out.state if e.category == "decision"]
    assert bool(found) is decided
    if decided:  # the summary states the action decided, the person's words after it
        assert found[0].summary.split(" — ")[0].lower().startswith(text.split()[0])


@pytest.mark.parametrize("text, previous, decided", [
    ("ok, do both", "I'll cache the instance at module level and switch to read_fwf. OK?", True),
    ("All 12.", "Noted, 12 shops. All 12 for the stollen reward?", True),
    ("both, co-productions are a third of the programme",
     "Should films with two countries show under both?", True),
    ("both in one PR or separate?", "I can fix the dedupe and the late rows.", False),
    ("all good", "Sorry, fixed. I'll address her correctly from now on.", False),
    ("both not good, the cluster is overloaded", "Debezium or Fivetran? Which one?", False),
])
def test_taking_every_part_of_an_offer_approves_it(text: str, previous: str,
                                                   decided: bool) -> None:
    assert ("decision" in categories(text, previous=previous)) is decided


@pytest.mark.parametrize("text, previous, category", [
    ("Please do. It keeps blocking Thiago's merges.",
     "Looks timing-dependent. Want me to investigate?", "decision"),
    ("send", "Fixed the date. Send?", "decision"),
    ("ok do that", "I'd move the insertion into the loop.", "decision"),  # a plan, ordered
    ("go for it", "I can add caching for node_modules.", "decision"),
    ("please do not disable it, he takes the disk home", "I'll disable the USB task.",
     "rejected"),
    ("send to her dorm in Delft, she is there already",
     "I'll ship it to your home address.", None),  # something else in its place
    ("merge it.", "PR #482 is up. CI is green.", "task"),  # no offer: still an order
    ("pls", "The kiln log shows firing #212 peaked low. Message Tom about it?", "decision"),
    ("please, not now", "Message Tom about it?", "rejected"),
    ("pls", "Done, the report is in your inbox.", None),
])
def test_an_order_to_go_on_approves_what_was_asked_or_announced(
        text: str, previous: str, category: str | None) -> None:
    found = categories(text, previous=previous)
    if category is None:
        assert "decision" not in found
    else:
        assert found[:1] == [category]


@pytest.mark.parametrize("text, previous, refused", [
    ("cant, bank export starts 4:30", "Would you like me to move the nightly batch to 04:00?",
     True),
    ("We cannot use Let's Encrypt, the bank requires an OV certificate.",
     "I'd switch the site to Let's Encrypt.", True),
    ("can't talk, on the bus with the kids", "I can book the flight now.", False),
    ("cant log in to the app, says card invalid", "What's going on? Can I help?", False),
    ("can't hurt, try it", "I could ask for a retention offer.", False),
])
def test_a_cannot_after_an_offer_turns_it_down(text: str, previous: str,
                                               refused: bool) -> None:
    assert ("rejected" in categories(text, previous=previous)) is refused


@pytest.mark.parametrize("text, previous, decided", [
    ("Yes, but to Herr Brandt, not the lab manager.",
     "I could add a check that emails the lab manager whenever a backup fails.",
     "Add a check that emails the lab manager whenever a backup fails"),
    ("oh yes please", "If useful, I can show attendance by week alongside the dates.",
     "Show attendance by week alongside the dates"),
    ("sounds good, but keep the old one for a week", "I'll move the backups to S3 tonight.",
     "Move the backups to S3 tonight"),
])
def test_an_approval_of_an_offer_the_agent_stated_decides(text: str, previous: str,
                                                          decided: str) -> None:
    out = LocalExtractor().extract([turn(text, previous=previous)])
    [entry] = out.state
    assert entry.category == "decision" and entry.summary.startswith(decided)


@pytest.mark.parametrize("text, previous", [
    ("ok", "I'll chart Eastside separately."),  # may only hear a plan out
    ("fine, I'll pin it up myself", "I can't reach the board, so I made a printable A4."),
    ("oh sure, because the trial went so well", "I can enable auto-translate for agents."),
    ("yes because what that dashboard needs is more numbers", "Shall I add six more tiles?"),
])
def test_what_approves_no_offer(text: str, previous: str) -> None:
    assert "decision" not in categories(text, previous=previous)


@pytest.mark.parametrize("text, previous", [
    ("ok, please don't touch those 28, one of them is the old wiki",
     "I can delete everything older than 180 days."),  # "ok" only hears it out
    ("ok, but not now, people are working", "Shall I restart it now?"),  # puts it off
    ("ok, actually don't, the client is still on it", "Shall I drop the table?"),
])
def test_an_approval_word_before_a_refusal_approves_nothing(text: str, previous: str) -> None:
    assert "rejected" in categories(text, previous=previous)
    assert "decision" not in categories(text, previous=previous)


@pytest.mark.parametrize("text, previous", [
    ("not yet", "Build is green. The plan file is in docs/."),  # a report that names a plan
    ("not in my experience", "Fixed. Redis could be slower on that box."),
    ("not at all, go ahead", "I'd restart the server now."),
    ("not in a hurry, tomorrow is fine", "I'll do the migration tomorrow morning."),
])
def test_a_not_after_a_report_or_in_consent_refuses_nothing(text: str, previous: str) -> None:
    assert "rejected" not in categories(text, previous=previous)



def test_a_bare_no_rejects_the_question_it_answers() -> None:
    out = LocalExtractor().extract([turn("No.", previous=ASK)])
    [rej] = out.state
    assert rej.category == "rejected"
    assert rej.summary == "Rejected: adding Redis as a cache for the funnel queries"
    assert [e.kind for e in out.episodes] == ["rejection"]


@pytest.mark.parametrize("text, expected", [
    ("I prefer short commit messages.", "context"),
    ("I'd rather use tabs than spaces.", "context"),
    ("We like small pull requests.", "context"),
    ("Let's go with Caddy for the proxy.", "decision"),
    ("We decided to keep SQLite for the index.", "decision"),
    ("Stay on nginx, just fix certbot.", "decision"),
    ("Always run the migrations dry first.", "learning"),
    ("Keep launch posts under 700 words.", "learning"),
    ("Can you check the box is ready?", "task"),
    ("Add a health check endpoint to the API.", "task"),
    ("The export test fails on CI since this morning.", "task"),
    ("FYI the staging box reboots at midnight.", "context"),
])
def test_preferences_decisions_and_the_rest_are_not_rejections(text: str, expected: str) -> None:
    assert categories(text) == [expected]


@pytest.mark.parametrize("text", [
    "Why don't you run the tests first?",
    "Don't worry about the docs.",
    "There is no config file yet.",
    "No problem, thanks!",
    "no hurry, I'll read it at the weekend",
    "No need to rush, tomorrow is fine.",
    "no pressure, whenever you can",
    "I don't know which one is faster.",
    "thanks",
])
def test_not_rejections(text: str) -> None:
    assert "rejected" not in categories(text)


CLOSING = "Deleted the old branch. Anything else for today?"


@pytest.mark.parametrize("text, previous", [
    # nothing more is wanted: a "no" to a closing question refuses nothing
    ("nope, that's it", CLOSING),
    ("nah", CLOSING),
    ("No. Have a nice weekend!", "Is there anything else I can help with?"),
    ("nope that's all for now, cheers", "Noted in the runbook."),
    ("no I think it's good", "Fixed both typos."),
    # "oh no" is dismay, not a refusal
    ("oh no, that's the payment retry bug from Tuesday", ASK),
    ("oh no. is it getting worse?", "Six customers mentioned slow responses."),
    # a question that opens with "no" asks
    ("free really? no contract change?", "I can add a free data bundle. Want it?"),
    # conceding a point refuses nothing
    ("ok no you're right, the invoice is from March", "The invoice is dated 3 March."),
    ("no that's true, we never tested it on ARM", "Nobody ran it on ARM yet."),
    # a worry about how it looks or what it breaks refuses nothing
    ("is the reply too blunt? I don't want to sound like a robot", "Draft ready. Send it?"),
    ("who else reads that table? we don't want to break their report", ASK),
    # a "no" to a question of fact, status or clarification answers it
    ("no, still the same 500", "Restarted the worker. Did that fix it?"),
    ("nope still broken", "Cleared the cache. Is it loading now?"),
    ("no, the Porto one", "Did you mean the Lisbon booking?"),
    ("no", "Any dietary restrictions for the caterer?"),
    ("not yet, still shows yesterday", "Rerun done. Did the dashboards refresh for you?"),
    ("not right now", "Hang in there. Anything else?"),
    ("neither, ubuntu 22.04", "Are you on macOS or Windows?"),
    ("non-blocking is fine", "Should the upload block the UI?"),
])
def test_a_no_that_refuses_nothing(text: str, previous: str) -> None:
    assert "rejected" not in categories(text, previous=previous)


@pytest.mark.parametrize("text, previous", [
    ("no, but don't deploy before Monday", CLOSING),  # the rest refuses
    ("no thanks, just cancel", "Before you go, I can offer 3 months at 50% off."),
    ("No.", "Would you like something more formal for the invitation?"),  # an offer
    ("No thank you, my card covers it", "Would you like travel insurance for €34?"),
    ("no more materialized views, we have too many. can you tune the query?", ASK),
    ("no, that's all wrong, the dates are from last year", "Done: the report is drafted."),
    # the same "no" to a question that seeks consent turns it down
    ("no", "Is it ok to restart the worker now?"),
    ("no", "Does this look right to you?"),
    ("nope", "Do you want the long version too?"),
    ("neither tbh, both look like a waiting room", "The grey sofa or the green one. Which?"),
    ("nein, Montag. nobody is on call this weekend", "Shall I switch the app tonight?"),
    ("não, sizing goes in the separate table", "Should I add sizing notes to each item?"),
])
def test_a_no_that_still_refuses(text: str, previous: str) -> None:
    assert categories(text, previous=previous)[:1] == ["rejected"]


@pytest.mark.parametrize("text", [
    "we use western digits, marketing decided this last year",
    "$2,000 for 48 hours, I can't decide which",
    "when does he decide",
    "the second one sounds like a cooking video. the internet will decide",
    "people who already decided to churn open a ticket",
    "should I use February instead or strip the bonuses? which is cleaner",
])
def test_deciding_that_is_not_a_decision(text: str) -> None:
    assert "decision" not in categories(text)


@pytest.mark.parametrize("text", [
    "We've decided to keep SQLite for the index.",
    "I finally chose the blue theme.",
    "Decided: the launch moves to May.",
    "Final decision is Hetzner.",
])
def test_a_decision_the_person_made(text: str) -> None:
    assert "decision" in categories(text)


@pytest.mark.parametrize("text", [
    "could you tell me where the extra rows come from?",
    "can you even restore a single table from that dump",
    "Thanks. Would you happen to know who owns the billing bucket?",
    "can you show me the draft again",
    "who set that up, can you see who created the key?",
    "why does the nightly job always pull this on fridays",  # no question mark, still asks
    "hmm who would run cron as root when the container is failing",
    "bump it to what",  # asks back about the request
    "and then it restarts itself? who thought of that",
    "wait, does the email go out under my name or the shared one",
    "can people keep the room instead of checking out, or is that extra",
    "is everyone on the new VPN already",
])
def test_a_question_or_a_request_for_an_answer_sets_no_task(text: str) -> None:
    """Asking for information or about the request is a question, not work to track."""
    assert categories(text, previous=ASK) == []


@pytest.mark.parametrize("text", [
    "could you draft the renewal email to the landlord",  # no question mark
    "um can you add the linked ticket as a column too",
    "TODO rotate the staging certificate",
    "ok so now add a retry to the webhook",
    "look at the quiz-export warning tomorrow, no rush",
])
def test_requests_for_work_are_still_tasks(text: str) -> None:
    assert categories(text) == ["task"]


def test_a_polite_prohibition_without_its_question_mark_still_refuses() -> None:
    assert categories("could you stop adding emojis to the commit messages") == ["rejected"]
    # a sentence that drops its subject is no question either
    assert categories("should be dimmer, don't modify the theme") == ["rejected"]


@pytest.mark.parametrize("text", [
    "look at you, next you will want a raise",  # an idiom, not "look at the logs"
    "gracias por todo",  # Spanish "todo" is "everything"
    "port 443 was closed all along",  # the noun with its number, not "port the script"
    "release 2.1 is out since monday",
    "please, no rush",  # a kindness, not an order
    "ok, take your time",
])
def test_words_that_look_like_orders_but_are_not(text: str) -> None:
    assert "task" not in categories(text)


def test_a_request_after_the_problem_is_a_task() -> None:
    """Split at its question mark, the request is still read ("…, can you fix it?")."""
    text = "the export test fails on CI since this morning, can you fix it? tests/test_export"
    assert categories(text) == ["task"]


@pytest.mark.parametrize("text", [
    "do i need to fast for the blood work? i always forget",
    "he'll take a week, he always does",
    "so it's always been bad and nobody looked",
    "oh great, the board meeting is tomorrow. perfect timing as always",
    "keep me posted",
    "keep it up",  # cheering the work on sets no rule
    "ok, keep going, good pace",
    "they always move my appointments, this practice \U0001F644",  # venting about a habit
    "the committee meetings are always so long lol",
    "the committee meetings are always so long hahaha",
    "always changing, these operators \U0001F629",
])
def test_a_habit_or_a_sigh_is_not_a_lesson(text: str) -> None:
    assert categories(text) == []


@pytest.mark.parametrize("text", [
    "the old vendor always sent the invoices late",  # a past habit
    "the interns always asked for the wifi password",
    "I don't remember that meeting at all",  # not remembering is no lesson
    "we can talk til 5 tomorrow",  # "til" is until; TIL is a lesson
    "the harbour car park is always full on Saturdays",  # how a thing always is
    "in winter the ferry was always late",  # or was
    "printers are always a nightmare",
    "the car park is almost always full",
    "my boss is always wrong lol",  # venting about a person
    "I have learned that the server is down.",  # news, not what experience taught
    "Please book a lesson for me with the swim coach on Saturday.",  # a note asked for
    "Write a note for the team about the new VPN setup.",
    "Add the budget for the future office to the sheet.",
])
def test_a_past_habit_or_a_lapse_of_memory_is_not_a_lesson(text: str) -> None:
    assert "learning" not in categories(text)


@pytest.mark.parametrize("text, expected", [
    ("TIL the backup job skips sockets", "learning"),
    ("you always need a cushion in these budgets", "learning"),  # "need" is no past tense
    ("and next time page me before any rollback", "learning"),  # "next time" is no lead word
    ("remember to rotate the key before it expires", "learning"),
    ("note: always test the background case", "learning"),
    ("fixed sleeps in tests are always wrong eventually", "learning"),
    ("Keep launch posts under 700 words.", "learning"),
    ("keep it under 700 words, always", "learning"),
    ("note to self: the vendor always rate-limits us lol", "learning"),  # a lesson, laughing
    ("ugh, always check the timezone before scheduling", "learning"),  # an order, groaning
    ("always pin your dependencies lol, learned that the hard way", "learning"),
    ("keep it up to date", "learning"),  # not "keep it up"
    ("fixed sleeps always break eventually \U0001F605 remember that", "learning"),
    ("I always prefer tables by default", "context"),  # a preference, said as a habit
    ("a lesson for us: never edit the routing table on a Friday", "learning"),
    ("lesson for me - read the whole contract before signing", "learning"),
    ("We have learned the hard way that the carrier loses parcels to Crete.", "learning"),
    ("Note for the future: the bakery order must go in before noon.", "learning"),
    ("a cancelled order with a successful payment is always a bug", "learning"),
    ("the fix is always to restart the worker first", "learning"),
    ("I’ve learned to check the timezone first.", "learning"),
    ("Saving on packaging is never saving, note for me.", "learning"),
    ("For the future, we send a revised quote whenever a client adds material.", "learning"),
])
def test_always_still_teaches(text: str, expected: str) -> None:
    assert categories(text)[:1] == [expected]


@pytest.mark.parametrize("text", [
    "oh, that's why the disk filled up every sunday",
    "turns out the cron was running twice",
    "I just noticed the backups skip the sockets directory",
    "so the culprit was the old proxy config all along",
])
def test_what_the_person_finds_out_is_a_discovery(text: str) -> None:
    assert categories(text, previous="Disk usage is back to 40%.") == ["discovery"]


def test_preference_is_context_with_a_label() -> None:
    [entry] = LocalExtractor().extract([turn("I prefer short commit messages.")]).state
    assert entry.summary == "Preference: I prefer short commit messages."
    assert entry.domain == "git"


@pytest.mark.parametrize("text", [
    "I'd always rather have a slower build than a surprise bill",
    "mornings are my worst time btw, i'd always rather have calls after 10",
    "Generally I'd much rather alert on what users feel than on resource percentages.",
])
def test_a_preference_with_an_adverb_is_still_a_preference(text: str) -> None:
    """"always" in "I'd always rather" is the preference's, not a lesson's: 9 of the 9
    such turns in the corpus's non-held-out part are preferences, and 7 were read as
    lessons."""
    assert categories(text, previous="Deployed the autoscaler, min 2, max 10.") == ["context"]


@pytest.mark.parametrize("text, refused", [
    ("please stop doing that", True),
    ("stop it, the server is down", True),
    ("note for me: every test which starts a thread must stop it in teardown", False),
    ("third blurred one this year, we should stop doing hands", False),
])
def test_stop_after_a_modal_is_a_resolution_not_an_order(text: str, refused: bool) -> None:
    assert ("rejected" in categories(text, previous="Done.")) is refused


def test_yes_to_a_question_is_an_approval_decision() -> None:
    [entry] = LocalExtractor().extract([turn("ok, go ahead", previous=ASK)]).state
    # the decision itself: what "Should I set it up?" proposed, named by the sentence before
    assert entry.category == "decision"
    assert entry.summary == "Add Redis as a cache for the funnel queries"
    [entry] = LocalExtractor().extract([turn("yes, but only on staging until Friday",
                                             previous=ASK)]).state
    assert entry.summary == ("Add Redis as a cache for the funnel queries — yes, but only on "
                             "staging until Friday")
    # a design question is decided as the statement it makes true
    [entry] = LocalExtractor().extract([turn("yes, but only more than 4 hours before",
                                             previous="Should cancelled slots go back "
                                             "into online booking?")]).state
    assert entry.summary == ("Cancelled slots should go back into online booking "
                             "— yes, but only more than 4 hours before")
    # one that neither proposes an act nor asks with a verb it knows is quoted
    [entry] = LocalExtractor().extract([turn("yes, all of them", previous="Should the "
                                             "legacy tenants migrate too?")]).state
    assert entry.summary == "Approved: Should the legacy tenants migrate too?"
    assert LocalExtractor().extract([turn("ok", previous="Done, all tests pass.")]).state == []
    # A bare "go" approves as "ok" does; "go home" or "go to the docs" approves nothing.
    for said in ("go", "go, but payments last", "Go."):
        [entry] = LocalExtractor().extract([turn(said, previous=ASK)]).state
        assert entry.category == "decision", said
    for said in ("go home", "go to the docs first"):
        assert "decision" not in categories(said, previous=ASK), said
    # formal or grudging consent approves as "ok" does, with its condition
    for said in ("Very well, proceed. Keep the last four weekly fulls, please.",
                 "fine, but only on staging", "alright.", "works for me", "deal!"):
        assert categories(said, previous=ASK)[:1] == ["decision"], said
    for said in ("fine dining is overrated", "that works badly on mobile"):
        assert "decision" not in categories(said, previous=ASK), said
    # "is that all right?" asks for consent; "anything else?" closes, and a "yeah, …" to it
    # asks for something new
    assert categories("Yes, that is fine.", previous="I'd normalise the phone numbers, is "
                      "that all right?") == ["decision"]
    assert "decision" not in categories("yeah, rename the field artist_fk to artist",
                                        previous="Noted. Anything else before I push?")


@pytest.mark.parametrize("text", [
    "the invoice pdf shows boxes instead of amharic letters. fix it",
    "Herr Albers may well reply by telephone rather than email.",
])
def test_an_instead_of_decides_nothing_by_itself(text: str) -> None:
    """"instead of" and "rather than" describe as often as they choose (on the non-held-out
    corpus, 3 of the 18 turns the rules read as decisions by them alone were)."""
    assert "decision" not in categories(text)


@pytest.mark.parametrize("text, key, value", [
    ("My timezone is Europe/Berlin.", "timezone", "Europe/Berlin"),
    ("The staging server is at 10.0.0.5.", "staging server", "10.0.0.5"),
    ("We use pnpm for package management.", "package management", "pnpm"),
    ("Set the log level to debug.", "log level", "debug"),
    ("We switched the database from MySQL to Postgres 16.", "database", "Postgres 16"),
    ("Mei's company is Northwind Books, not Northwind Press.", "mei's company",
     "Northwind Books"),
    ("Call me Dana.", "name", "Dana"),
])
def test_facts(text: str, key: str, value: str) -> None:
    facts = LocalExtractor().extract([turn(text)]).facts
    assert [(f.key, f.value) for f in facts] == [(key, value)]


@pytest.mark.parametrize("text", ["The problem is that the cache is cold.",
                                  "The answer is in the logs somewhere, I think.",
                                  # someone's words, and passing states, are no setting
                                  "my landlord says the boiler is fine",
                                  "thanks, my hands are still shaking",
                                  "my sister is flying in from Lisbon",
                                  # judgements and states of the moment
                                  "ok thats enough for tonight, my battery is dying",
                                  "does it need the internet on? the wifi in the barn is "
                                  "terrible",
                                  # "me to" names nobody
                                  "lol they'd call me to ask where the status page is"])
def test_no_facts_from_explanations(text: str) -> None:
    assert LocalExtractor().extract([turn(text)]).facts == []


def test_tool_calls_refusals_and_errors() -> None:
    call = CallView("c1", "Bash", "Bash: git push origin main")
    ex = LocalExtractor()
    out = Extraction()
    ex.extract_turn(turn("", role="assistant", calls=(call,), tid="a1"), out)
    refused = ResultView("c1", "Bash", "The user doesn't want to proceed with this tool use.",
                         True, True, call)
    ex.extract_turn(turn("", role="tool", results=(refused,), tid="t1"), out)
    failed = ResultView("c2", "Read", "ENOENT: no such file\nmore", True, False, None)
    ex.extract_turn(turn("", role="tool", results=(failed,), tid="t2"), out)
    assert [(e.kind, e.source_entry) for e in out.episodes] == [
        ("tool_call", "a1"), ("rejection", "t1"), ("incident", "t2")]
    assert out.episodes[0].ref == "c1" and out.episodes[0].tool == "Bash"
    [rej] = out.state
    assert (rej.category, rej.summary, rej.source_entry) == (
        "rejected", "Refused tool use: Bash: git push origin main", "t1")
    assert out.outcomes == [("c1", "refused"), ("c2", "error")]
    assert out.episodes[2].summary == "Read failed: ENOENT: no such file"


def test_assistant_prose_is_read_conservatively() -> None:
    text = ("Let me check the config. I found that the index was built without CONCURRENTLY. "
            "We decided against a rollback because the data is intact. "
            "Status: migrations applied, waiting for your review.")
    out = LocalExtractor().extract([turn(text, role="assistant")])
    assert sorted(s.category for s in out.state) == ["agent_state", "discovery", "rejected"]


def test_a_fix_after_a_tool_error_is_a_learning() -> None:
    text = "The fix was to quote the glob so the shell leaves it alone."
    out = LocalExtractor().extract([turn(text, role="assistant", after_error=True)])
    assert [s.category for s in out.state] == ["learning"]
    assert [e.kind for e in out.episodes] == ["fix"]
    assert LocalExtractor().extract([turn(text, role="assistant")]).state == []


def test_code_blocks_and_harness_tags_are_not_read() -> None:
    text = ("Here:\n```\n# don't touch this\nrm -rf build\n```\n"
            "<system-reminder>never stop</system-reminder>")
    assert LocalExtractor().extract([turn(text)]).state == []


def test_helpers() -> None:
    assert sentences("One. Two! three\nFour?") == ["One.", "Two!", "three", "Four?"]
    # lower case after a question starts a sentence; after a full stop it does not
    assert sentences("use February? which is cleaner") == ["use February?", "which is cleaner"]
    assert sentences("e.g. this one. and that") == ["e.g. this one. and that"]
    assert domain_of("Don't restart postgres in business hours") == "database"
    assert domain_of("Lunch at noon") == "general"


def rejections(text: str, previous: str = "") -> list[tuple[str, float]]:
    out = LocalExtractor().extract([turn(text, previous=previous)])
    return [(s.summary, s.confidence) for s in out.state if s.category == "rejected"]


@pytest.mark.parametrize("text, previous", [
    ("actually hold off on all of it, the mobile team still hits those endpoints",
     "I'll rewrite them as route handlers next."),
    ("wait, don't book yet, I need to ask Dan first", "I'll book them for the 28th."),
    ("Actually, scrap the sponsor page. The wine shop hasn't paid yet", "Reminder set."),
    ("ok, forget the 14:00 call, I'll ring her myself", "All 12 shops use the same bags."),
    ("oh wait, about the venue: forget confirming, the date clashes", "ok good to know"),
])
def test_taking_back_a_plan_refuses_it(text: str, previous: str) -> None:
    [(_, confidence)] = rejections(text, previous=previous)
    assert confidence == 0.9


@pytest.mark.parametrize("text", [
    "wait, don't forget to cc Ana",
    "actually, leaving now, back at 3",
    "hold on, what does the second graph show?",
    "actually the 14th works better",
    "actually, kill the process on port 3000 first",  # a step, not a plan taken back
    "wait, drop the test table first and then run it",
    "actually, leave a comment there explaining why",
    "wait, stop the watcher before you commit",
    "wait, don't you need to run migrations first",
])
def test_a_wait_or_actually_that_takes_nothing_back(text: str) -> None:
    assert "rejected" not in categories(text, previous="I'll book them for the 28th.")


@pytest.mark.parametrize("text, previous", [
    ("nope", "I'll restart the pod at 18:00. Any objections?"),
    ("no, go ahead", "Do you mind if I rebase the branch?"),
    ("not at all", "Would you mind if I moved the call to Friday?"),
    ("no objections from me", "Plan: archive the 2019 folders tonight. Any objections?"),
])
def test_a_no_to_any_objections_approves(text: str, previous: str) -> None:
    assert categories(text, previous=previous)[:1] == ["decision"]


def test_what_follows_a_no_to_a_question_of_fact_is_read_on_its_own() -> None:
    """"no, revert that" to "Did that fix it?" answers the question and refuses the work:
    the no is an answer, the rest a reading of its own."""
    assert categories("no, revert that and go back to v1",
                      previous="Patched it. Did that fix it?")[:1] == ["rejected"]
    assert categories("no, still the same 500", previous="Patched it. Did that fix it?") == []


def test_a_rejection_keeps_what_was_rejected() -> None:
    text = "No, don't add Redis. I'd rather not run another stateful service"
    found = rejections(text)
    assert found[0] == ("Don't add Redis.", 0.9)
    assert found[1] == ("I'd rather not run another stateful service", 0.9)
    # Answering a question, it names the question too.
    [(summary, confidence), _] = rejections(text, previous=ASK)
    assert summary == "Don't add Redis — re: Should I set it up?"
    assert confidence == 0.9


@pytest.mark.parametrize("text, low", [
    ("No.", True),
    ("No rollback.", True),
    ("Revert that", True),
    ("apply it to the local dev db only, and don't touch staging", True),
    ("No, I think Postgres is enough for now.", True),
    ("No, don't add Redis.", False),
    ("Never deploy on Fridays.", False),
    ("Please don't push to main directly.", False),
    ("Don't touch the staging database.", False),
    ("I'd rather not run another stateful service.", False),
    ("We're not posting to HN this time.", False),
    ("No pricing in launch posts.", False),
])
def test_rejection_confidence_says_how_clear_it_is(text: str, low: bool) -> None:
    [(_, confidence)] = rejections(text, previous=ASK)[:1]
    # The nightly maintenance promotes rejections of confidence >= 0.7 to CRITICAL rules.
    assert (confidence < 0.7) is low, confidence
    if not low and not text.startswith("No "):
        assert confidence >= 0.9


HARNESS = ("The user doesn't want to proceed with this tool use. The tool use was rejected "
           "(eg. if it was a file edit, the new_string was NOT written to the file). STOP what "
           "you are doing and wait for the user to tell you how to proceed.")


def test_a_refused_tool_use_is_a_short_summary_without_the_harness_text() -> None:
    call = CallView("c1", "Bash", "Bash: mix phx.server 2>&1 | head -80 " + "x" * 150)
    refused = ResultView("c1", "Bash", HARNESS, True, True, call)
    out = LocalExtractor().extract([turn("", role="tool", results=(refused,))])
    [rej] = out.state
    assert rej.summary.startswith("Refused tool use: Bash: mix phx.server")
    assert len(rej.summary) <= 120 and rej.summary.endswith("…")
    assert rej.detail == "" and rej.confidence == 0.95
    assert out.episodes[0].summary == rej.summary
    # What the human typed with the refusal is worth keeping.
    said = HARNESS.replace(" STOP what you are doing and wait for the user to tell you how "
                           "to proceed.", " To tell you how to proceed, the user said:\n"
                           "use the dev server on port 4001 instead")
    refused = ResultView("c1", "Bash", said, True, True, call)
    [rej] = LocalExtractor().extract([turn("", role="tool", results=(refused,))]).state
    assert rej.detail == "use the dev server on port 4001 instead"


@pytest.mark.parametrize("text", [
    "from now on partition new tables by event date",
    "Going forward, every service gets a canary stage.",
    "from now on, the weekly report goes out at 9:00 on mondays",
])
def test_a_standing_instruction_is_a_learning_and_a_dated_decision(text: str) -> None:
    """The learning becomes a rule; the decision records that it was decided, and when."""
    out = LocalExtractor().extract([turn(text)])
    assert sorted(s.category for s in out.state) == ["decision", "learning"]
    assert len({s.summary for s in out.state}) == 1
    assert [e.kind for e in out.episodes] == ["decision"]


def test_a_lesson_without_a_from_now_on_stays_a_learning() -> None:
    assert categories("always run the migrations on a copy first") == ["learning"]


def test_pasted_json_lines_are_a_programs_words_not_the_persons() -> None:
    record = ('{"type":"message","message":{"role":"toolResult","content":[{"type":"text",'
              '"text":"Checked 10 files. No fixes applied.\\n\\n> pkg check"}]}}')
    text = f"then we need to tackle this bash issue:\n\n{record}\n  {record}\n[{record}]"
    assert categories(text) == ["task"]
    # The person's own words around the paste are still read.
    assert "rejected" in categories(f"{record}\nNo, don't add Redis, Postgres is enough.")
    # Prose that starts with a bracket is not JSON.
    assert "rejected" in categories("[urgent] Don't touch the staging database.")


def test_lines_copied_off_a_terminal_screen_are_a_programs_words() -> None:
    """A paste from a terminal pads every line to the screen's width: "crash" in a
    changelog the person copied is no problem of theirs; their own words still count."""
    screen = "\n".join(line.ljust(80) for line in (
        " + 15 - **Theme loading**: invalid themes no longer crash the app; the",
        " application falls back to the dark theme and shows the error.",
        " + 16 - **Deploy**: always deploy with the new pipeline from now on.")) + "\n + 17   "
    assert categories(screen) == []
    assert clean(f"{screen}\n\nremove that").strip() == "remove that"
    assert categories(f"{screen}\n\nNo, don't add Redis, Postgres is enough.") == ["rejected"]
    # Lines of prose never share one padded width, whatever their trailing spaces.
    prose = "No, don't add Redis.  \nPostgres is enough for now.  \nWe revisit in May.  "
    assert categories(prose) == ["rejected"]


_CHAT = st.lists(st.sampled_from(
    ["ok", "so", "hmm", "um", "and", "then", "next", "time", "no", "not", "don't", "always",
     "remember", "TIL", "til", "TODO", "todo", "can", "could", "you", "tell", "me", "what",
     "why", "does", "it", "my", "boiler", "is", "still", "port", "80", "was", "keep", "it",
     "short", "we", "use", "pnpm", "for", "builds", "?", ".", ",", "!", "from", "now", "on",
     "🙂", "wait", "look", "at", "you're", "right"]), max_size=25).map(" ".join)


@given(_CHAT, st.sampled_from(["", ASK, "Done, all tests pass.", "Anything else?"]))
def test_any_chat_reads_without_error_and_every_entry_cites_its_turn(text: str,
                                                                      previous: str) -> None:
    """Whatever the words, the rules read them: every entry cites the turn, says
    something, and has a confidence in (0, 1]; a fact has a key and a value."""
    out = LocalExtractor().extract([turn(text, previous=previous, tid="u9")])
    for entry in out.state:
        assert entry.source_entry == "u9" and entry.summary.strip()
        assert 0 < entry.confidence <= 1
    for fact in out.facts:
        assert fact.source_entry == "u9" and fact.key and fact.value
