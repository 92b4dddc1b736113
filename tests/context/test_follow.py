"""status --follow: each poll reads only what was appended and agrees with a full report."""

from __future__ import annotations

from pathlib import Path

import anthropic
import httpx2
import pytest

from memtui.context.follow import ContextFollower
from memtui.context.report import context_report
from memtui.home import Home
from tests.context.conftest import OPS_COMPACTED, SUBAGENT, configure


def grow(src: Path, dst: Path, step: int) -> list[int]:
    """Line counts at which to poll: every ``step`` lines, and the end."""
    total = len(src.read_bytes().splitlines())
    return [*range(step, total, step), total]


@pytest.mark.parametrize("src,step", [(OPS_COMPACTED, 3), (SUBAGENT, 17)])
def test_follow_matches_a_full_report_at_every_step(home: Home, tmp_path: Path, src: Path,
                                                   step: int) -> None:
    raw = src.read_bytes().splitlines(keepends=True)
    live = tmp_path / src.name
    live.write_bytes(b"".join(raw[:2]))
    follower = ContextFollower(home, "ops", live)
    first = follower.poll()
    assert first is not None
    assert follower.poll() is None  # nothing appended: nothing to report
    written = 2
    for upto in grow(src, live, step):
        if upto <= written:
            continue
        with live.open("ab") as fh:
            fh.write(b"".join(raw[written:upto]))
        written = upto
        report = follower.poll()
        assert report is not None
        full = context_report(home, "ops", live)
        assert (report.used, report.exact_tokens, report.compactions, report.model) == (
            full.used, full.exact_tokens, full.compactions, full.model), upto
        assert report.by_kind == full.by_kind
    assert follower.offset <= live.stat().st_size


def test_a_rewritten_file_is_read_again_from_the_start(home: Home, tmp_path: Path) -> None:
    raw = OPS_COMPACTED.read_bytes().splitlines(keepends=True)
    live = tmp_path / "s.jsonl"
    live.write_bytes(b"".join(raw))
    follower = ContextFollower(home, "ops", live)
    assert follower.poll() is not None
    live.write_bytes(b"".join(raw[:5]))
    report = follower.poll()
    assert report is not None and report.compactions == 0
    assert report.used == context_report(home, "ops", live).used


def test_anthropic_counter_counts_the_part_without_usage(home: Home) -> None:
    seen: list[dict[str, object]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        import json

        body = json.loads(request.content)
        seen.append({"path": request.url.path, **body})
        return httpx2.Response(200, json={"input_tokens": 77})

    client = anthropic.Anthropic(api_key="test", max_retries=0, http_client=httpx2.Client(
        transport=httpx2.MockTransport(handler)))
    estimated = context_report(home, "ops", OPS_COMPACTED)
    configure(home, '[context]\ntoken_counter = "anthropic"')
    counted = context_report(home, "ops", OPS_COMPACTED, client=client)
    assert estimated.estimated_tokens > 0 and not estimated.exact
    assert counted.exact and counted.counted_by == "usage+anthropic"
    assert counted.used == counted.exact_tokens == estimated.exact_tokens + 77
    [body] = seen
    assert body["path"] == "/v1/messages/count_tokens"
    assert body["model"] == "claude-sonnet-4-5"


def test_a_failed_count_falls_back_to_the_estimate(home: Home, tmp_path: Path) -> None:
    live = tmp_path / "s.jsonl"
    raw = OPS_COMPACTED.read_bytes().splitlines(keepends=True)
    live.write_bytes(b"".join(raw[:3]))  # header, model change, user: no usage yet

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(529, json={"type": "error", "error": {
            "type": "overloaded_error", "message": "Overloaded"}})

    client = anthropic.Anthropic(api_key="test", max_retries=0, http_client=httpx2.Client(
        transport=httpx2.MockTransport(handler)))
    configure(home, '[context]\ntoken_counter = "anthropic"')
    report = context_report(home, "ops", live, client=client)
    assert not report.exact and report.counted_by == "estimate"
    assert any("token counting failed" in n for n in report.notes)


def test_without_a_session_the_follower_moves_to_a_newer_transcript(home: Home) -> None:
    import os

    from tests.context.conftest import OPS_PLAIN, register

    [old] = register(home, "ops", OPS_COMPACTED)
    os.utime(old, (1_000, 1_000))
    now = [0.0]
    follower = ContextFollower(home, "ops", rescan_seconds=5, clock=lambda: now[0])
    first = follower.poll()
    assert first is not None and first.session == old
    [new] = register(home, "ops", OPS_PLAIN)
    now[0] = 2.0
    assert follower.poll() is None  # not time to look yet
    now[0] = 6.0
    moved = follower.poll()
    assert moved is not None and moved.session == new
    assert moved.used == context_report(home, "ops", new).used


def test_a_branched_session_counts_only_the_branch_it_is_on(home: Home, tmp_path: Path) -> None:
    import json

    from tests.context.synth import Writer

    w = Writer()
    head = [*w.header(), *w.exchange()]
    fork = head[-1]["id"]
    abandoned = w.exchange(big=True)
    w.parent = fork  # /tree: back to the fork, a new branch
    kept = w.exchange()
    path = tmp_path / "tree.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [*head, *abandoned, *kept]))
    linear = tmp_path / "linear.jsonl"
    linear.write_text("".join(json.dumps(e) + "\n" for e in [*head, *kept]))
    tree, straight = context_report(home, "main", path), context_report(home, "main", linear)
    assert tree.messages == straight.messages == len(head) - 2 + len(kept)
    assert tree.by_kind == straight.by_kind
    # Followed: the branch switch arrives in a later poll and the window is rebuilt.
    live = tmp_path / "live.jsonl"
    live.write_text("".join(json.dumps(e) + "\n" for e in [*head, *abandoned]))
    follower = ContextFollower(home, "main", live)
    assert follower.poll() is not None
    with live.open("a") as fh:
        fh.write("".join(json.dumps(e) + "\n" for e in kept))
    report = follower.poll()
    assert report is not None and report.by_kind == straight.by_kind


def test_reports_in_one_process_read_only_what_changed(home: Home, tmp_path: Path) -> None:
    from memtui.context import live
    from memtui.context.window import account

    raw = OPS_COMPACTED.read_bytes().splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(raw[:10]))
    first = context_report(home, "ops", path)
    window, _ = live.current(path)
    with path.open("ab") as fh:
        fh.write(b"".join(raw[10:]))
    grown = context_report(home, "ops", path)
    assert live.current(path)[0] is window and window.offset == path.stat().st_size
    assert grown.used != first.used
    assert grown.by_kind == context_report(home, "ops", OPS_COMPACTED).by_kind
    # Rewritten in place (shorter): read again from the start.
    path.write_bytes(b"".join(raw[:6]))
    again = context_report(home, "ops", path)
    acct, _ = account(path)
    assert dict(again.by_kind).items() >= acct.by_kind().items()
    assert again.compactions == 0
