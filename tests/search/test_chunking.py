"""Chunking invariants: every line covered, size bound, overlap, whole messages only."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.search.chunking import Message, chunk_markdown, chunk_messages, sha256

line_text = st.text(alphabet=st.characters(exclude_categories=["Cs"],
                                           exclude_characters="\r\n"), max_size=90)
documents = st.lists(line_text, min_size=1, max_size=80).map("\n".join)


@settings(max_examples=150, deadline=None)
@given(doc=documents, tokens=st.integers(8, 60), overlap=st.integers(0, 30))
def test_markdown_chunks_cover_every_line_within_the_bound(doc: str, tokens: int,
                                                           overlap: int) -> None:
    overlap = min(overlap, tokens - 1)
    chunks = chunk_markdown(doc, tokens=tokens, overlap=overlap)
    if not doc:
        assert chunks == []
        return
    lines = doc.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # a final newline ends the last line; it opens no new one
    max_chars = max(32, tokens * 4)
    covered: set[int] = set()
    for chunk in chunks:
        assert len(chunk.text) <= max_chars
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        covered.update(range(chunk.start_line, chunk.end_line + 1))
        assert chunk.hash == sha256(chunk.text)
        if all(len(line) <= max_chars for line in lines):
            assert chunk.text == "\n".join(lines[chunk.start_line - 1:chunk.end_line])
    assert covered == set(range(1, len(lines) + 1))
    starts = [c.start_line for c in chunks]
    assert starts == sorted(starts)


@settings(max_examples=100, deadline=None)
@given(lines=st.lists(st.text(alphabet="abcdefgh ", min_size=1, max_size=30), min_size=2,
                      max_size=60), tokens=st.integers(10, 40), overlap=st.integers(1, 9))
def test_markdown_overlap_repeats_trailing_lines_within_budget(lines: list[str], tokens: int,
                                                               overlap: int) -> None:
    chunks = chunk_markdown("\n".join(lines), tokens=tokens, overlap=overlap)
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        assert nxt.start_line > prev.start_line
        assert nxt.start_line <= prev.end_line + 1  # no gap
        shared = lines[nxt.start_line - 1:prev.end_line]
        assert len("\n".join(shared)) <= overlap * 4
        # The overlap is the longest run of trailing lines that fits the budget and
        # leaves room for the next line.
        if nxt.start_line > 1 and prev.end_line < len(lines):
            before = lines[nxt.start_line - 2]
            nxt_line = lines[prev.end_line]
            grown = len("\n".join([before, *shared]))
            assert (nxt.start_line - 1 < prev.start_line or grown > overlap * 4
                    or grown + 1 + len(nxt_line) > tokens * 4)


def test_markdown_numbers_lines_from_one_and_splits_long_lines() -> None:
    doc = "# Title\n\n" + "x" * 100 + "\nlast"
    chunks = chunk_markdown(doc, tokens=10, overlap=0)  # 40 characters a chunk
    assert chunks[0].start_line == 1
    assert sum(c.text.count("x") for c in chunks) == 100  # no overlap: each x once
    assert [c.start_line for c in chunks if "x" in c.text] == [3, 3, 3]
    assert chunks[-1].end_line == 4 and chunks[-1].text.endswith("last")
    assert chunk_markdown("") == []


def test_markdown_default_is_400_tokens_with_80_overlap() -> None:
    doc = "\n".join(f"line {i} " + "word " * 12 for i in range(400))
    chunks = chunk_markdown(doc)
    assert all(len(c.text) <= 1600 for c in chunks)
    assert max(len(c.text) for c in chunks) > 1400
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        shared = "\n".join(doc.split("\n")[nxt.start_line - 1:prev.end_line])
        assert 0 < len(shared) <= 320


def _messages(texts: list[str], sessions: list[str] | None = None) -> list[Message]:
    when = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    return [Message(id=f"m{i}", session=(sessions or ["s"] * len(texts))[i], role="user",
                    name="Ana" if i % 2 else "Ben", text=t, line=i + 1, end_line=i + 1,
                    timestamp=when) for i, t in enumerate(texts)]


@settings(max_examples=100, deadline=None)
@given(texts=st.lists(st.text(alphabet="abc xyz", min_size=1, max_size=300), min_size=1,
                      max_size=40),
       sessions=st.lists(st.sampled_from(["s1", "s2"]), min_size=40, max_size=40))
def test_window_chunks_never_split_a_message(texts: list[str], sessions: list[str]) -> None:
    messages = _messages(texts, sessions[:len(texts)])
    chunks = chunk_messages(messages, path="/t.jsonl", mode="window", tokens=50, overlap=10)
    seen: set[str] = set()
    by_id = {m.id: m for m in messages}
    for chunk in chunks:
        assert chunk.message_ids
        members = [by_id[i] for i in chunk.message_ids]
        assert len({m.session for m in members}) == 1
        for m in members:
            assert m.labelled in chunk.text
        if len(members) > 1:
            assert len(chunk.text) <= 200
        assert chunk.start_line == members[0].line
        assert chunk.end_line == members[-1].end_line
        seen.update(chunk.message_ids)
    assert seen == set(by_id)


def test_message_mode_gives_each_message_its_own_chunk_with_context() -> None:
    messages = _messages(["I adopted a kitten", "What is her name?", "Pixel"])
    chunks = chunk_messages(messages, path="/t.jsonl", mode="message", context_chars=200)
    assert [c.message_ids for c in chunks] == [("m0",), ("m1",), ("m2",)]
    assert chunks[2].text == "Ben: Pixel"
    assert "What is her name?" in chunks[2].embed_text  # neighbouring context is embedded
    assert "1 May 2024" in chunks[2].embed_text
    assert "What is her name?" not in chunks[2].text  # but not indexed as its own text
    no_context = chunk_messages(messages, path="/t.jsonl", mode="message", context_chars=0)
    assert "What is her name?" not in no_context[2].embed_text
