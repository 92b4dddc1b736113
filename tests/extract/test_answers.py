"""A reply cites two messages: the person's own words and the assistant's proposal it answers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from memtui.db import Database
from memtui.extract import stenographer as steno
from memtui.extract.candidates import Extraction, PreparedTurn
from memtui.extract.classify.apply import refine
from memtui.extract.classify.head import Verdict
from memtui.extract.local import LocalExtractor
from memtui.extract.prepare import FileContext, Preparer
from memtui.home import Home
from memtui.mcp.server import build
from memtui.schema import MIGRATIONS
from memtui.search.recall import recall
from memtui.stores import episodes, sources, state
from memtui.transcripts import Turn
from tests.conftest import run_cli
from tests.mcp.conftest import payload

ASK = "Would you like me to sign up for the paid newsletter plan?"
TH = {"rejected": 0.6, "veto": 0.15, "decision": 0.6}


def turn(tid: str, role: str, text: str) -> Turn:
    return Turn(id=tid, session="s", timestamp=None, role=role,  # type: ignore[arg-type]
                text=text, source="t.jsonl", line=1, offset=0, end_offset=1,
                format="claude-code", author="person" if role == "user" else "agent")


def prepared(*turns: Turn, ctx: FileContext | None = None) -> list[PreparedTurn]:
    preparer, ctx = Preparer(None), ctx or FileContext()
    out = [preparer.prepare(t, ctx).turn for t in turns]
    return [pt for pt in out if pt is not None]


def test_preparation_carries_the_id_of_the_words_a_reply_answers() -> None:
    ctx = FileContext()
    first = prepared(turn("u1", "user", "hi"), turn("a1", "assistant", ASK),
                     turn("u2", "user", "No."), ctx=ctx)
    assert [pt.previous_assistant_id for pt in first] == [None, None, "a1"]
    # Saved between runs (the watermark's reader state), and read back.
    again, _ = FileContext.load(json.dumps({"context": ctx.dump()}))
    [later] = prepared(turn("u3", "user", "No."), ctx=again)
    assert (later.previous_assistant, later.previous_assistant_id) == (ASK, "a1")
    # A context saved before the id was kept still loads: the words, and no id.
    old, _ = FileContext.load(json.dumps({"context": {"previous_assistant": ASK,
                                                      "fix_window": 0, "calls": {}}}))
    [reply] = prepared(turn("u4", "user", "No."), ctx=old)
    assert (reply.previous_assistant, reply.previous_assistant_id) == (ASK, None)


def test_the_rules_cite_the_proposal_a_rejection_or_decision_answers() -> None:
    ask = "I can add Redis as a cache. Should I set it up?"
    turns = prepared(turn("a1", "assistant", ask), turn("u1", "user", "No."),
                     turn("a2", "assistant", "Shall I ship the Hugo site on Friday?"),
                     turn("u2", "user", "ok, go ahead"),
                     turn("a3", "assistant", "Done, the report is in your inbox."),
                     turn("u3", "user", "Never deploy on Fridays, by the way."))
    out = LocalExtractor().extract(turns)
    cited = {(s.category, s.source_entry, s.answers_entry) for s in out.state}
    assert cited == {("rejected", "u1", "a1"), ("decision", "u2", "a2"),
                     ("rejected", "u3", None)}  # "Done." proposed nothing
    assert {(e.kind, e.source_entry, e.answers_entry) for e in out.episodes} == {
        ("rejection", "u1", "a1"), ("decision", "u2", "a2"), ("rejection", "u3", None)}


def test_a_rejection_only_the_classifier_read_cites_both_messages() -> None:
    [_, pt] = prepared(turn("a7", "assistant", ASK),
                       turn("u8", "user", "the paid plan? pass, the free one covers me"))
    one = Extraction()
    LocalExtractor().extract_turn(pt, one)
    assert one.state == []  # no phrase rule knows it
    refine(pt, one, Verdict("rejected", 0.93, 0.93, 0.01), TH, 0.7)
    [entry] = one.state
    assert entry.summary == "Rejected: signing up for the paid newsletter plan"
    assert (entry.source_entry, entry.answers_entry) == ("u8", "a7")


def test_a_verdict_alone_is_named_by_the_proposal_it_answers() -> None:
    """The issue's own example: the rules read "That's a no on the paid plan" now, and
    name what it refused from the proposal, citing both messages; the words are kept."""
    [_, pt] = prepared(turn("a7", "assistant", ASK),
                       turn("u8", "user", "That's a no on the paid plan"))
    one = Extraction()
    LocalExtractor().extract_turn(pt, one)
    [entry] = one.state
    assert entry.category == "rejected"
    assert entry.summary == "Rejected: signing up for the paid newsletter plan"
    assert entry.detail == "That's a no on the paid plan"
    assert (entry.source_entry, entry.answers_entry) == ("u8", "a7")
    assert [(e.kind, e.answers_entry) for e in one.episodes] == [("rejection", "a7")]


def test_a_verdict_that_names_what_it_turns_down_is_filed_by_its_words() -> None:
    """"Rewriting history is a no" turns down part of "rotate the key and rewrite
    history": the summary says which part, not the whole proposal."""
    ask = "The key is in the repo. I'd rotate the key and rewrite history to remove it."
    [_, pt] = prepared(turn("a1", "assistant", ask),
                       turn("u1", "user", "rewriting history on a shared repo is a no. "
                                          "rotate the key and remove it going forward"))
    one = Extraction()
    LocalExtractor().extract_turn(pt, one)
    [entry] = [s for s in one.state if s.category == "rejected"]
    assert entry.summary == "Rejected: rewriting history on a shared repo"
    assert entry.answers_entry == "a1"
    # a price is why, not what: the proposal names it
    [_, pt] = prepared(turn("a2", "assistant", "I could move the heaviest jobs to the "
                                               "serverless tier. It costs about 15% more."),
                       turn("u2", "user", "15% more for convenience is a no"))
    one = Extraction()
    LocalExtractor().extract_turn(pt, one)
    assert [s.summary for s in one.state if s.category == "rejected"] == [
        "Rejected: moving the heaviest jobs to the serverless tier"]


def test_a_yes_to_a_design_question_decides_what_it_asked() -> None:
    """"yes" to "Should the alert also fire at night?" decides that it does, not
    "Approved: Should the alert …?"."""
    [_, pt] = prepared(turn("a1", "assistant", "Threshold set to 90%. Should the alert also "
                                               "fire at night?"), turn("u1", "user", "yes"))
    one = Extraction()
    LocalExtractor().extract_turn(pt, one)
    assert [(s.category, s.summary, s.answers_entry) for s in one.state] == [
        ("decision", "The alert should also fire at night", "a1")]


def test_taking_back_what_the_agent_did_unasked_refuses_it() -> None:
    """"revert the rename" after "I also renamed …" turns down what the agent did on its
    own, named as the act and citing the message that reported it; the same order after
    no such report is a request or an approval, not a refusal."""
    did = ("Fixed the booking bug. While I was in there I also renamed slot_start to "
           "start_at across the models, so the diff touches 9 files.")
    cases = [
        (did, "revert the rename, the phone app still reads slot_start",
         "Rejected: renaming slot_start to start_at across the models — revert the rename"),
        ("Done. I also added a 10% discount code at the end to boost opens.",
         "take the code out, we don't do discounts",
         "Rejected: adding a 10% discount code at the end to boost opens — take the code"),
        ("I also set up an uptime check that texts you when the site is down.",
         "please turn that off, pingdom already does it",
         "Rejected: setting up an uptime check that texts you when the site is down — "),
        # of several changes, the one the words name
        ("Tests pass. I also added retry logic to the payment and SMS clients, and "
         "upgraded the Stripe SDK from 7 to 9.", "please roll back the stripe upgrade",
         "Rejected: upgrading the Stripe SDK from 7 to 9 — please roll back"),
        # both named, or neither: the words, and the report they answer
        ("I also rewrote three long paragraphs and moved the ethics statement to the start.",
         "please revert the rewriting and the ethics move",
         "Please revert the rewriting and the ethics move — re: I also rewrote three"),
        ("Done. I also switched the export from CSV to XLSX.",
         "give me the CSV back, the district only imports CSV",
         "Rejected: switching the export from CSV to XLSX — give me the CSV back"),
        # a change that may be what was asked for: a request to change it refuses nothing
        ("Done: I added the /export endpoint and its tests.",
         "take the print statements out, they spam CI", None),
        # no change of the agent's reported: an order, not a refusal
        ("Their tool allows a downgrade within 7 days.", "ok, roll back all except bike 3",
         None),
        ("boa", "take the dev dependencies out of the final stage too", None),
    ]
    for i, (agent, reply, want) in enumerate(cases):
        [_, pt] = prepared(turn(f"a{i}", "assistant", agent), turn(f"u{i}", "user", reply))
        one = Extraction()
        LocalExtractor().extract_turn(pt, one)
        got = [s for s in one.state if s.category == "rejected"]
        if want is None:
            assert got == [], reply
            continue
        [entry] = got
        assert entry.summary.startswith(want), (entry.summary, want)
        assert entry.answers_entry == f"a{i}", reply
        assert [(e.kind, e.answers_entry) for e in one.episodes] == [("rejection", f"a{i}")]


def _write(path: Path, rows: list[dict[str, Any]], mode: str = "w") -> None:
    with path.open(mode, encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    os.utime(path, (1_700_000_000, 1_700_000_000))  # idle: its last message is read too


def test_a_refusal_of_a_plan_the_agent_only_announced_cites_it() -> None:
    """"I'm going to split it" offers as much as "Should I split it?": turning it down
    cites the message that announced it."""
    turns = prepared(turn("a1", "assistant", "Tests pass. I'm going to split the module "
                                             "into auth and billing."),
                     turn("u1", "user", "not in this PR, it's a bugfix"))
    out = LocalExtractor().extract(turns)
    assert [(s.category, s.source_entry, s.answers_entry) for s in out.state] == [
        ("rejected", "u1", "a1")]


def _message(i: int, role: str, content: str) -> dict[str, Any]:
    return {"type": "message", "id": f"m{i}", "session": "s1", "role": role,
            "ts": f"2026-03-01T10:00:{i:02d}Z", "content": content}


def test_a_rejection_shows_both_messages_where_people_and_agents_read_it(
        tmp_path: Path, home: Home, db: Database) -> None:
    path = tmp_path / "session.jsonl"
    _write(path, [_message(1, "user", "Can you tidy the newsletter settings?"),
                  _message(2, "assistant", f"Tidied. {ASK}")])
    sources.add(db, str(path), agent="main", fmt="generic", actor="test")
    steno.run(home, db, steno.Options(), extractor=LocalExtractor())
    # The answer comes in a later run: the proposal's id was kept in between.
    _write(path, [_message(3, "user", "No, not the paid plan.")], mode="a")
    steno.run(home, db, steno.Options(), extractor=LocalExtractor())
    [rej] = state.list_entries(db, state.StateFilter(category="rejected"))
    assert (rej.source_entry, rej.answers_entry) == ("m3", "m2")
    assert rej.cite == f"{path}#m3 (answers #m2)"
    [ep] = [e for e in episodes.for_entry(db, "m3") if e.kind == "rejection"]
    assert ep.answers_entry == "m2"

    shown = run_cli("state", "show", str(rej.id), home=home)
    assert shown.returncode == 0 and "answers_entry m2" in " ".join(shown.stdout.split())
    as_json = json.loads(run_cli("state", "show", str(rej.id), "--json", home=home).stdout)
    assert as_json["entry"]["answers_entry"] == "m2"

    async def served() -> dict[str, Any]:
        async with Client(build(home, use_service=False)) as client:
            return payload(await client.call_tool("active_state", {}))

    [item] = [i for i in anyio.run(served)["items"] if i["id"] == f"state:{rej.id}"]
    assert item["cite"] == f"{path}#m3 (answers #m2)"
    [hit] = [h for h in recall(home, "main", "paid plan", layer="state",
                               embedder=None).hits if h.ref == f"state:{rej.id}"]
    assert hit.message_ids == ["m3", "m2"] and "answers #m2" in hit.cite


def test_the_migration_keeps_rows_and_answers_nothing_for_them(tmp_path: Path) -> None:
    db = Database(tmp_path / "memory.db")
    try:
        db.migrate([m for m in MIGRATIONS if m[0] <= 7])
        db.execute("INSERT INTO state(created_at, updated_at, agent, category, summary) "
                   "VALUES ('2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'main', "
                   "'rejected', 'no redis')")
        db.migrate(MIGRATIONS)
        [entry] = state.list_entries(db, state.StateFilter())
        assert entry.summary == "no redis" and entry.answers_entry is None
    finally:
        db.close()
