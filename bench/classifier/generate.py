"""Templated training turns: many wordings of proposals and replies, for the train split only.

Template data measures template recall, not generalisation, so nothing generated here is
ever in the held-out split (``corpus.py`` assigns every generated turn to train). The
hand-written conversations in ``bench/data/extract-corpus/hand/`` are what is measured.
"""

from __future__ import annotations

import random

from bench.classifier.corpus import Example

# Things an agent proposes, per domain: (imperative phrase, gerund phrase).
THINGS: dict[str, list[tuple[str, str]]] = {
    "ops": [("restart the api pods", "restarting the api pods"),
            ("scale the workers to 10", "scaling the workers to 10"),
            ("roll back the last deploy", "rolling back the last deploy"),
            ("purge the CDN cache", "purging the CDN cache"),
            ("rotate the database password", "rotating the database password"),
            ("drain node-4", "draining node-4"), ("bump the redis memory", "bumping redis memory"),
            ("enable debug logging on prod", "enabling debug logging on prod")],
    "coding": [("add a caching layer", "adding a caching layer"),
               ("rewrite the module in Rust", "rewriting the module in Rust"),
               ("upgrade to pydantic 2", "upgrading to pydantic 2"),
               ("delete the legacy handlers", "deleting the legacy handlers"),
               ("add a dependency on lodash", "adding lodash"),
               ("split the file into three modules", "splitting the file"),
               ("force-push the branch", "force-pushing the branch"),
               ("turn on strict mode", "turning on strict mode")],
    "writing": [("add a section on pricing", "adding a pricing section"),
                ("cut the intro", "cutting the intro"),
                ("post it on LinkedIn", "posting it on LinkedIn"),
                ("add stock photos", "adding stock photos"),
                ("make the headline punchier", "making the headline punchier"),
                ("send the draft to legal", "sending the draft to legal"),
                ("publish it tonight", "publishing it tonight")],
    "personal": [("book the 7am train", "booking the 7am train"),
                 ("renew the magazine subscription", "renewing the magazine"),
                 ("order a birthday cake", "ordering a cake"),
                 ("reschedule the dentist", "rescheduling the dentist"),
                 ("buy travel insurance", "buying travel insurance"),
                 ("reserve a table for four", "reserving a table"),
                 ("sign you up for the premium plan", "signing up for premium")],
    "data": [("drop the null rows", "dropping the null rows"),
             ("retrain the model on last month", "retraining the model"),
             ("add the metric to the exec dashboard", "adding the metric"),
             ("switch the chart to a pie chart", "using a pie chart"),
             ("sample 10% of the events", "sampling the events"),
             ("merge the two user tables", "merging the user tables"),
             ("rerun the backfill", "rerunning the backfill")],
    "support": [("refund the customer in full", "a full refund"),
                ("escalate the ticket to tier 2", "escalating to tier 2"),
                ("close the ticket", "closing the ticket"),
                ("offer a discount code", "offering a discount"),
                ("send the apology macro", "sending the macro"),
                ("upgrade their plan for free", "a free upgrade"),
                ("reply on twitter", "replying on twitter")],
}
ASK = ["Should I {v}?", "Want me to {v}?", "I could {v}. OK?", "Shall I {v} now?",
       "I'd suggest we {v}.", "Would you like me to {v}?", "I can {v} if you want.",
       "Next step: {v}. Go ahead?", "How about I {v}?", "Plan: {v}. Sound good?"]
REASONS = ["it's friday", "we're mid-release", "the client hasn't signed off",
           "it broke things last time", "legal hasn't cleared it", "it costs too much",
           "nobody asked for it", "we're short on people this week", "it's too risky right now",
           "the numbers don't support it", "the budget is frozen"]
REJECT = ["no", "nope", "no thanks", "nah", "please don't", "don't", "not now",
          "let's not", "I'd rather not", "hold off on that", "skip that", "not this time",
          "pass", "no, leave it as is", "definitely not", "not a good idea",
          "rather not, {r}", "no - {r}", "not yet, {r}", "hmm no, {r}", "{r}, so no",
          "I don't want {g}", "no {g} please", "we're not doing that, {r}",
          "let's leave that for now", "don't bother", "I'll pass on {g}",
          "that's a no from me", "no no no", "put that on ice", "forget it, {r}",
          "not keen on {g}", "I'm going to say no to {g}", "not {g}, {r}",
          "scrap that idea", "nope, {r}", "no, and please stop suggesting {g}",
          "we won't be {g}", "that won't fly, {r}", "I'd prefer we didn't",
          "ehh no", "not comfortable with {g}", "let's park {g}", "no go", "veto"]
DECIDE = ["yes", "yes please", "go ahead", "do it", "ok do it", "sounds good, go",
          "approved", "ship it", "yep, {v}", "sure, {v}", "ok let's {v}", "go for it",
          "fine by me, go ahead", "yes {v}, today", "do it, but only on staging first",
          "ok, if the tests pass then {v}", "green light", "make it so", "works for me",
          "alright, {v}", "let's do it", "agreed, {v}", "yeah {v}",
          "go with that", "that's the plan then", "lock it in", "approved, {v} after lunch",
          "yes, {v} and tell the team", "sure thing", "deal"]
PREFER = ["I prefer {g} in general", "I'd rather you ask before {g}", "I like short answers",
          "personally I prefer bullet points", "my preference is to keep things simple",
          "I generally like smaller changes", "I prefer mornings for this kind of thing",
          "I'd like updates in the channel rather than DMs", "I'm a fan of plain text emails"]
TASK = ["can you {v}", "please {v}", "{v}", "next, {v}", "could you {v} by tomorrow",
        "I need you to {v}", "also {v}", "{v} when you get a chance", "pls {v} asap",
        "go and {v}", "remind me to {v} on friday", "todo: {v}"]
FACT = ["fyi the staging db is at db-stg.internal", "our team is 6 people",
        "the budget for this quarter is $20k", "my manager is Priya",
        "we use Postgres 15 for everything", "the deadline is march 3rd",
        "the office closes at 6pm", "our biggest customer is Acme",
        "the repo lives under github.com/acme/core", "the launch date is the 14th",
        "my flight number is LH 1234", "the api rate limit is 100 req/s"]
LEARN = ["from now on {v} only after asking me", "next time, check with me before {g}",
         "always run the tests before {g}", "going forward, never {v} on fridays",
         "remember to tag me whenever you {v}", "in the future, double-check before {g}",
         "rule of thumb: {v} only in the morning", "from now on always {v} on staging first",
         "make it a habit to write down why before {g}"]
CORRECT = ["not that one, the other {n}", "you got the number wrong, it's 12 not 21",
           "small correction: it's Tuesday, not Thursday", "actually it's spelled Okafor",
           "wrong file, I meant the config in /etc", "it's the eu region, not us",
           "close, but the limit is 50", "no wait, I meant the staging one",
           "the date should be the 4th", "typo: it's 'receive'"]
DISCOVER = ["oh interesting, so it was the cache all along", "ah that explains the spikes",
            "turns out the vendor changed the api", "huh, so the error only happens on mobile",
            "so the root cause was the timezone", "wait, the numbers were doubled all along?"]
NONE = ["ok", "k", "thanks", "thank you!", "cool", "nice", "hm", "sure, whatever", "lol",
        "got it", "great", "ok thanks", "👍", "wow, amazing. really.", "yeah yeah",
        "ok whatever you say", "interesting", "hmm ok", "right", "brb", "one sec",
        "sorry, was in a meeting", "haha", "fine.", "as if that would work",
        "oh great, another outage, just what I needed", "thanks, that's all",
        "no worries", "no problem", "no rush", "not bad", "never mind"]
QUESTION = ["how long would {g} take?", "what would {g} cost us?", "is {g} reversible?",
            "would {g} affect anything else?", "what's the risk with {g}?",
            "did you already {v}?", "why do you want to {v}?", "when would you {v}?",
            "what happens if we {v}?", "can you explain what {g} involves?",
            "is that the only option?", "what's the alternative?", "how did you find that?",
            "are the tests green?", "are we all done?", "is this used anywhere?",
            "why are there two of them?", "which file is that in?", "did you update the docs?",
            "what does the error say?", "how many are left?", "is it deployed yet?",
            "where is that configured?", "what changed since yesterday?",
            "could you show me the diff first?", "wait, what does {g} mean for the team?",
            "any other issues like that?", "what was the root cause?"]
NEUTRAL_PREV = ["Done. Anything else?", "Here's the summary you asked for.",
                "I've finished the first pass.", "The job completed in 4 minutes.",
                "I updated the file.", "Here are the numbers for last week.", ""]


def _noise(rng: random.Random, s: str) -> str:
    """Real people: lower case, no full stop, a typo now and then, an emphatic capital."""
    r = rng.random()
    if r < 0.35:
        s = s.lower()
    elif r < 0.45:
        s = s[:1].upper() + s[1:] + "."
    if rng.random() < 0.12 and len(s) > 8:
        i = rng.randrange(1, len(s) - 1)
        s = s[:i] + s[i + 1] + s[i] + s[i + 2:]
    if rng.random() < 0.08:
        s += rng.choice(["!", "!!", " 🙏", " tbh", " thx"])
    return s


def generate(n_per_domain: int = 250, seed: int = 7) -> list[Example]:
    """About ``n_per_domain`` templated turns per domain, all for the train split."""
    rng = random.Random(seed)
    out: list[Example] = []
    # Questions are what people send agents most, after instructions: asking about a
    # proposal is not turning it down (a hand-written corpus of replies has few of them).
    mix = [("rejected", REJECT, 0.26), ("decision", DECIDE, 0.2), ("none", NONE, 0.16),
           ("none", QUESTION, 0.12),
           ("task", TASK, 0.1), ("preference", PREFER, 0.05), ("fact", FACT, 0.06),
           ("learning", LEARN, 0.07), ("correction", CORRECT, 0.05),
           ("discovery", DISCOVER, 0.05)]
    for domain, things in THINGS.items():
        for i in range(n_per_domain):
            label, pool, _ = rng.choices(mix, weights=[m[2] for m in mix])[0]
            v, g = rng.choice(things)
            asks = label in ("rejected", "decision") or rng.random() < (
                0.6 if pool is QUESTION else 0.4)
            prev = rng.choice(ASK).format(v=v) if asks else rng.choice(NEUTRAL_PREV)
            text = rng.choice(pool).format(v=v, g=g, r=rng.choice(REASONS), n=domain)
            if label == "none" and text.lower().startswith(("no worries", "no problem", "no rush")):
                prev = rng.choice(NEUTRAL_PREV)
            out.append(Example(id=f"gen/{domain}/{i}", conv=f"gen-{domain}-{i // 8}",
                               domain=domain, source="generated", prev=prev,
                               text=_noise(rng, text), label=label))
    return out
