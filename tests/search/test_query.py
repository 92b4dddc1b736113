"""Any query text is safe in FTS5; the keyword score is a correct monotone map of bm25.

``query.fts_query`` is the expression the searcher's keyword side runs
(``KeywordSide.match`` only narrows its words on big indexes; a test in test_index
pins that the two agree).
"""

from __future__ import annotations

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.search.query import content_terms, fts_query, terms
from memtui.search.scoring import keyword_score, snippet

NASTY = ['"', '""', "'", "NEAR(a b)", "a NEAR b", "col:value", "text:deploy", "*", "deploy*",
         "AND", "a AND b", "NOT x", "OR", "(", ")", "^start", "-minus", "+plus", "{a b}",
         "a:b:c", "\x00", "ß", "日本語の検索", "émoji 🎉 test", "", "   ", "\\", "%_", "NEAR/3",
         "'; DROP TABLE chunks; --", "a" * 5000]


@pytest.fixture(scope="module")
def fts() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
    conn.executemany("INSERT INTO t(text) VALUES (?)", [
        ("deploy the service with NEAR zero downtime",), ("col value text and more",),
        ("日本語 の 検索",), ("émoji test",), ("straße strasse",)])
    return conn


def _run(conn: apsw.Connection, query: str) -> list[tuple[object, ...]]:
    match = fts_query(query)
    if match is None:
        return []
    return conn.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY rank",
                        (match,)).fetchall()


@pytest.mark.parametrize("query", NASTY)
def test_operator_text_is_matched_literally_never_raises(fts: apsw.Connection,
                                                         query: str) -> None:
    _run(fts, query)


@settings(max_examples=300, deadline=None)
@given(query=st.text(max_size=200))
def test_any_text_is_a_valid_match_expression(fts: apsw.Connection, query: str) -> None:
    _run(fts, query)


def test_operators_become_words() -> None:
    assert fts_query("NEAR(deploy service)") == '"near" OR "deploy" OR "service"'
    assert fts_query('say "hi"') == '"say" OR "hi"'
    assert fts_query("") is None and fts_query("  *  ") is None
    # Stopwords and question words go unless nothing else is left.
    assert content_terms("what is the deploy key") == ["deploy", "key"]
    assert content_terms("what is it") == ["what", "is", "it"]
    assert terms("Straße ＡＢＣ") == ["straße", "abc"]  # NFKC folds full-width letters


def test_keyword_matches_use_the_words(fts: apsw.Connection) -> None:
    rows = _run(fts, "how do I deploy?")
    assert [r[0] for r in rows] == [1]


@settings(max_examples=200, deadline=None)
@given(a=st.floats(-50, 0), b=st.floats(-50, 0))
def test_keyword_score_is_monotone_and_bounded(a: float, b: float) -> None:
    sa, sb = keyword_score(a), keyword_score(b)
    assert 0.0 <= sa < 1.0 and 0.0 <= sb < 1.0
    if a < b:  # more negative bm25 = better match = higher score
        assert sa >= sb


def test_keyword_score_does_not_flatten_hits_like_the_seed() -> None:
    # The seed's 1/(1+max(0, rank)) gives 1.0 to every (negative) rank.
    scores = {keyword_score(r) for r in (-0.5, -2.0, -8.0)}
    assert len(scores) == 3 and max(scores) < 1.0


def test_snippet_is_bounded_and_centred_on_a_query_word() -> None:
    text = "filler " * 300 + "the PostgreSQL migration finished " + "tail " * 300
    cut = snippet(text, ["postgresql"])
    assert len(cut) <= 700
    assert "PostgreSQL migration" in cut
    assert snippet("short text", ["x"]) == "short text"
