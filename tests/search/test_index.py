"""The index: sync (full, incremental, purge), fingerprint rebuilds, fallbacks, hybrid search."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui import timeutil
from memtui.home import Home
from memtui.search import engine, keyword_side, results, schema, scoring, sync
from memtui.search.hybrid import Searcher, SearchOptions
from memtui.search.index import SearchIndex
from tests.search.conftest import FakeEmbedder, add_transcript, write_transcript


def _write(home: Home, rel: str, text: str, agent: str = "main") -> Path:
    path = home.workspace(agent) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _touch_later(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


@pytest.fixture
def indexed(home: Home, transcript: Path, fake: FakeEmbedder) -> SearchIndex:
    _write(home, "MEMORY.md", "# Long-term memory\n\n- The deploy key lives in vault ops/deploy\n")
    _write(home, "memory/2024-05-01.md", "# 2024-05-01\n\n- Rotated the TLS certificates\n")
    add_transcript(home, transcript)
    idx = SearchIndex(home, "main", embedder=fake)
    idx.sync()
    return idx


def test_sync_indexes_memory_and_transcripts_with_message_ids(indexed: SearchIndex) -> None:
    st = indexed.status()
    assert st.files["memory"] == 2 and st.files["sessions"] == 1
    assert st.chunks["memory"] == 2 and st.chunks["sessions"] == 2  # two sessions, window mode
    assert st.pending_vectors == 0 and not st.dirty
    rows = indexed.db.query("SELECT message_ids, start_line, end_line FROM chunks "
                            "WHERE source = 'sessions' ORDER BY id")
    assert [json.loads(r["message_ids"]) for r in rows] == [["m1", "m2", "m3"], ["m4", "m5"]]
    assert (rows[0]["start_line"], rows[0]["end_line"]) == (1, 3)


def test_hits_carry_the_contract_fields(indexed: SearchIndex) -> None:
    res = Searcher(indexed).search("PostgreSQL migration", SearchOptions(min_score=0.0))
    top = res.results[0]
    assert top.source == "sessions" and top.message_ids == ["m4", "m5"]
    d = res.as_dict(explain=True)
    for key in ("path", "start_line", "end_line", "score", "snippet", "source", "message_ids"):
        assert key in d["results"][0]
    assert d["provider"] == "fake" and d["model"] == "fake-hash-64" and d["fallback"] is None
    assert d["weights"] == {"vector": pytest.approx(0.7), "text": pytest.approx(0.3)}
    assert d["results"][0]["vector_score"] is not None and d["results"][0]["text_score"] > 0


def test_nothing_changed_means_nothing_done(indexed: SearchIndex, fake: FakeEmbedder) -> None:
    before = fake.texts
    report = indexed.sync()
    assert (report.files_changed, report.chunks_added, report.chunks_removed) == (0, 0, 0)
    assert fake.texts == before and not report.rebuilt
    assert not indexed.check()


def test_incremental_sync_rewrites_only_what_changed(home: Home, indexed: SearchIndex,
                                                     fake: FakeEmbedder,
                                                     transcript: Path) -> None:
    ids_before = dict(indexed.db.rows("SELECT key, id FROM chunks WHERE source = 'sessions'"))
    with transcript.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"type": "message", "id": "m6", "session": "s2", "role": "user",
                              "name": "Ana", "content": "The replica is gone now."}) + "\n")
    _touch_later(transcript)
    assert indexed.check()
    before = fake.texts
    report = indexed.sync()
    assert report.files_changed == 1
    assert fake.texts - before == report.embedded == 1  # only the changed window
    ids_after = dict(indexed.db.rows("SELECT key, id FROM chunks WHERE source = 'sessions'"))
    kept = set(ids_before) & set(ids_after)
    assert len(kept) == 1 and all(ids_before[k] == ids_after[k] for k in kept)


def test_a_touched_but_equal_file_is_not_rechunked(home: Home, indexed: SearchIndex) -> None:
    path = home.workspace("main") / "MEMORY.md"
    _touch_later(path)
    assert indexed.check()
    report = indexed.sync()
    assert report.chunks_added == 0 and report.chunks_removed == 0
    assert not indexed.check()


def test_deleted_files_are_purged(home: Home, indexed: SearchIndex) -> None:
    (home.workspace("main") / "memory" / "2024-05-01.md").unlink()
    report = indexed.sync()
    assert report.files_removed == 1 and report.chunks_removed == 1
    assert indexed.db.scalar("SELECT count(*) FROM chunks WHERE path LIKE 'memory/%'") == 0
    res = Searcher(indexed).search("TLS certificates", SearchOptions(min_score=0.0))
    assert all(h.path != "memory/2024-05-01.md" for h in res.results)
    assert indexed.db.scalar("SELECT count(*) FROM chunks_vec") == indexed.db.scalar(
        "SELECT count(*) FROM chunks")


def test_fingerprint_change_rebuilds_and_reuses_cached_embeddings(
        home: Home, indexed: SearchIndex, fake: FakeEmbedder) -> None:
    gen = indexed.generation()
    reader = SearchIndex(home, "main", embedder=fake)  # an open reader during the swap
    assert reader.db.scalar("SELECT count(*) FROM chunks") == 4
    indexed.settings.chunk_overlap = 10
    assert indexed.check()
    before = fake.texts
    report = indexed.sync()
    assert report.rebuilt and report.embedded == 0 and report.cached == 4
    assert fake.texts == before
    stored = indexed.stored_fingerprint()
    assert stored is not None and stored["chunk_overlap"] == 10
    assert indexed.generation() > gen
    assert reader.db.scalar("SELECT count(*) FROM chunks") == 4  # sees the new index whole
    assert not list(indexed.path.parent.glob(".*rebuild*"))


def test_memory_dirty_flag_and_remember(home: Home, indexed: SearchIndex) -> None:
    from memtui.workspace.memoryfiles import remember

    assert not indexed.check()
    remember(home, "main", "the backup window is 02:00 UTC")
    assert indexed.get_meta(indexed.db, "dirty") == "1" and indexed.check()
    indexed.sync()
    res = Searcher(indexed).search("backup window", SearchOptions(min_score=0.0))
    assert res.results[0].path.startswith("memory/")


def _add_episodes_and_facts(home: Home) -> None:
    db = home.open_db()
    now = timeutil.iso(timeutil.now())
    with db.write():
        db.execute("INSERT INTO episodes(agent, at, kind, summary, detail, session, "
                   "source_file, source_entry, created_at) VALUES "
                   "('main','2024-05-03T08:00:00Z','deploy','Deployed release 4.2 to prod',"
                   "'canary first','s9','/t.jsonl','e7',?)", (now,))
        old = db.execute("INSERT INTO facts(agent, key, value, created_at, superseded_at, "
                         "source_file, source_entry) VALUES ('main','db.primary','MySQL on "
                         "db1',?,?,'/t.jsonl','e1')", (now, now))
        new = db.execute("INSERT INTO facts(agent, key, value, created_at, source_file, "
                         "source_entry) VALUES ('main','db.primary','PostgreSQL on db2',?,"
                         "'/t.jsonl','e9')", (now,))
        db.execute("UPDATE facts SET superseded_by = ? WHERE id = ?", (new, old))
    db.close()


def test_episodes_and_facts_are_indexed_current_facts_only(home: Home, indexed: SearchIndex
                                                           ) -> None:
    _add_episodes_and_facts(home)
    assert indexed.check()
    indexed.sync()
    s = Searcher(indexed)
    facts = s.search("db.primary database", SearchOptions(sources=("facts",), min_score=0.0))
    assert [h.snippet for h in facts.results] == ["db.primary: PostgreSQL on db2"]
    assert facts.results[0].message_ids == ["e9"]
    history = s.search("db.primary database", SearchOptions(
        sources=("facts",), min_score=0.0, include_superseded=True))
    assert {h.current for h in history.results} == {True, False}
    ep = s.search("release deployed", SearchOptions(sources=("episodes",), min_score=0.0))
    assert ep.results[0].ts == "2024-05-03T08:00:00Z" and ep.results[0].ref == "episode:1"


def test_memory_db_without_stenographer_tables_is_fine(home: Home, fake: FakeEmbedder) -> None:
    db = home.open_db()
    with db.write():
        db.conn.execute("DROP TABLE facts; DROP TABLE episodes")
    db.close()
    _write(home, "MEMORY.md", "- only notes\n")
    idx = SearchIndex(home, "main", embedder=fake)
    idx.sync()
    assert idx.status().chunks["memory"] == 1


def test_no_model_is_keyword_only_and_says_so(home: Home, indexed: SearchIndex) -> None:
    idx = SearchIndex(home, "main", embedder=None)
    assert not idx.check()  # a model that cannot load does not force a rebuild
    res = Searcher(idx).search("PostgreSQL", SearchOptions(min_score=0.0))
    assert res.fallback == "no-vector" and res.provider is None
    assert res.results[0].message_ids == ["m4", "m5"]
    assert res.results[0].vector_score is None and res.weights == {"vector": 0.0, "text": 1.0}


def test_without_sqlite_vec_numpy_gives_the_same_ranking(home: Home, indexed: SearchIndex,
                                                         fake: FakeEmbedder,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    want = Searcher(indexed).search("kitten feather toy", SearchOptions(min_score=0.0))
    indexed.close()
    monkeypatch.setattr(schema, "vec_available", lambda db: False)
    idx = SearchIndex(home, "main", embedder=fake)
    assert idx.check()  # the vector store is part of the fingerprint
    idx.sync()
    got = Searcher(idx).search("kitten feather toy", SearchOptions(min_score=0.0))
    assert got.fallback == "no-sqlite-vec"
    assert [h.path for h in got.results] == [h.path for h in want.results]
    assert [round(h.score, 4) for h in got.results] == [round(h.score, 4) for h in want.results]


def test_without_fts5_search_is_vector_only(home: Home, indexed: SearchIndex,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema, "fts5_available", lambda db: False)
    res = Searcher(indexed).search("PostgreSQL migration", SearchOptions(min_score=0.0))
    assert res.fallback == "no-fts5" and res.results
    assert res.weights == {"vector": 1.0, "text": 0.0}
    assert all(h.text_score is None for h in res.results)


def test_limits_and_filters(indexed: SearchIndex) -> None:
    s = Searcher(indexed)
    assert len(s.search("the", SearchOptions(max_results=1, min_score=0.0)).results) == 1
    assert s.search("PostgreSQL", SearchOptions(min_score=0.99)).results == []
    only = s.search("deploy key vault", SearchOptions(sources=("memory",), min_score=0.0))
    assert {h.source for h in only.results} == {"memory"}
    since = s.search("kitten PostgreSQL", SearchOptions(since="2024-05-02", min_score=0.0))
    assert all((h.ts or "") >= "2024-05-02" for h in since.results)


def test_weighted_and_rrf_fusion_both_rank_the_obvious_hit_first(indexed: SearchIndex) -> None:
    for fusion in ("weighted", "rrf"):
        indexed.settings.fusion = fusion
        res = Searcher(indexed).search("PostgreSQL migration noon", SearchOptions(min_score=0))
        assert res.results[0].message_ids == ["m4", "m5"], fusion
        assert 0 < res.results[0].score <= 1.0


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=120) | st.sampled_from(['"', "NEAR(a b)", "col:x", "*", "NOT",
                                                      "a AND", "", "日本語", "\x00"]))
def test_search_never_raises(indexed: SearchIndex, query: str) -> None:
    res = Searcher(indexed).search(query, SearchOptions(min_score=0.0))
    assert all(len(h.snippet) <= 700 for h in res.results)


def test_engine_search_syncs_first(home: Home, fake: FakeEmbedder, transcript: Path) -> None:
    add_transcript(home, transcript)
    res = engine.search(home, "main", "grey kitten shelter", engine.options(home, min_score=0),
                        embedder=fake)
    assert res.results and res.results[0].message_ids[0] == "m1"
    later = write_transcript(transcript.parent / "later.jsonl", [
        {"id": "x1", "content": "zebra crossing incident report"}])
    add_transcript(home, later)
    res = engine.search(home, "main", "zebra crossing", engine.options(home, min_score=0),
                        embedder=fake)
    assert res.results[0].message_ids == ["x1"]


def test_watcher_marks_dirty_once_after_a_burst(home: Home, indexed: SearchIndex) -> None:
    import time

    from memtui.search.watch import IndexWatcher

    watcher = IndexWatcher(home, "main", interval=0.05, debounce=0.3).start()
    try:
        path = home.workspace("main") / "MEMORY.md"
        for i in range(4):  # a burst of writes is one change
            path.write_text(path.read_text() + f"- burst {i}\n")
            _touch_later(path)
            time.sleep(0.08)
        assert watcher.marked == 0  # still inside the debounce window
        deadline = time.monotonic() + 5
        while watcher.marked == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        watcher.stop()
    assert watcher.marked == 1
    assert indexed.get_meta(indexed.db, "dirty") == "1"


def test_big_indexes_drop_very_common_words_from_the_keyword_query(
        indexed: SearchIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    s = Searcher(indexed)
    assert s.keywords.match("Ana PostgreSQL") == '"ana" OR "postgresql"'  # small index: all words
    monkeypatch.setattr(keyword_side, "PRUNE_ABOVE", 1)
    monkeypatch.setattr(keyword_side, "COMMON_SHARE", 0.3)
    assert s.keywords.match("Ana PostgreSQL") == '"postgresql"'  # "ana" is in half the chunks
    assert s.keywords.match("Ana Ben") in ('"ana"', '"ben"')  # all common: the rarest stays
    assert s.search("Ana PostgreSQL", SearchOptions(min_score=0)).results[0].message_ids == [
        "m4", "m5"]


def test_keyword_budget_keeps_the_rarest_words_it_can_afford(
        indexed: SearchIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword_side, "PRUNE_ABOVE", 1)
    monkeypatch.setattr(keyword_side, "COMMON_SHARE", 1.0)
    s = Searcher(indexed)
    df = {w: s.keywords.doc_freq(w) for w in ("ana", "postgresql", "kitten")}
    assert df["postgresql"] == df["kitten"] == 1 and df["ana"] == 2
    indexed.settings.keyword_budget = 2
    assert s.keywords.match("Ana kitten PostgreSQL") == '"kitten" OR "postgresql"'  # 1 + 1 rows
    indexed.settings.keyword_budget = 1
    assert s.keywords.match("Ana kitten PostgreSQL") == '"kitten"'  # rarest first, ties by order
    indexed.settings.keyword_budget = 0  # no limit
    assert s.keywords.match("Ana kitten PostgreSQL") == '"ana" OR "kitten" OR "postgresql"'


def test_keyword_side_without_join_equals_the_joined_query(indexed: SearchIndex) -> None:
    s = Searcher(indexed)
    everything = SearchOptions(min_score=0.0)
    assert s.keywords.unfiltered(everything)
    assert not s.keywords.unfiltered(SearchOptions(sources=("sessions",)))  # memory chunks
    assert not s.keywords.unfiltered(SearchOptions(since="2024-05-02"))
    match = s.keywords.match("kitten PostgreSQL deploy")
    assert match is not None
    fast = s.keywords.bm25(match, 50, everything)
    where, params = results.filters(everything)
    joined = indexed.db.rows(
        f"SELECT f.rowid, bm25(chunks_fts) FROM chunks_fts f JOIN chunks c ON c.id = f.rowid "
        f"WHERE chunks_fts MATCH ? {where} ORDER BY bm25(chunks_fts) LIMIT 50", (match, *params))
    assert fast == {int(c): float(b) for c, b in joined}
    only = s.keywords.bm25(match, 50, SearchOptions(sources=("memory",)))
    assert only and set(only) < set(fast)


def test_worker_thread_gives_the_same_results_and_degrades(
        indexed: SearchIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    import memtui.search.hybrid as hybrid
    from memtui.search.encoders.embedder import EmbeddingUnavailable

    opts = SearchOptions(min_score=0.0)
    inline = Searcher(indexed, warm=True).search("kitten feather toy", opts)
    monkeypatch.setattr(hybrid, "PARALLEL_ABOVE", 0)
    for warm in (True, False):
        threaded = Searcher(indexed, warm=warm).search("kitten feather toy", opts)
        assert [(h.chunk_id, round(h.score, 6)) for h in threaded.results] == [
            (h.chunk_id, round(h.score, 6)) for h in inline.results]

    def broken(text: str) -> None:
        raise EmbeddingUnavailable("model files vanished")

    monkeypatch.setattr(indexed.embedder, "embed_query", broken)
    res = Searcher(indexed, warm=True).search("PostgreSQL", opts)
    assert res.fallback == "no-vector" and res.results[0].message_ids == ["m4", "m5"]
    assert indexed.embedder is None  # disabled for the rest of the process


def test_warm_searcher_locates_candidates_in_memory_and_follows_syncs(
        indexed: SearchIndex, home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    import memtui.search.hybrid as hybrid

    monkeypatch.setattr(hybrid, "PARALLEL_ABOVE", 0)
    indexed.settings.session_chunking = "message"  # neighbours within sessions matter
    indexed.sync()
    warm = Searcher(indexed, warm=True)
    # the last two match no keyword: every candidate is located from memory
    queries = ["kitten feather toy", "PostgreSQL replica", "deploy key vault", "certificates",
               "zqxj wvut", "adopted"[::-1]]
    option_sets = [SearchOptions(min_score=0.0),
                   SearchOptions(min_score=0.0, sources=("sessions",)),
                   SearchOptions(min_score=0.0, since="2024-05-02")]  # filtered: SQL path

    def hits(searcher: Searcher, q: str, opts: SearchOptions) -> list[dict[str, object]]:
        # in-memory float32 dot products and sqlite-vec distances differ by ~1e-7
        return [{**h.as_dict(), "score": round(h.score, 4),
                 "vector_score": round(h.vector_score or 0, 4)}
                for h in searcher.search(q, opts).results]

    def same_as_cold() -> None:
        for q in queries:
            for opts in option_sets:
                assert hits(warm, q, opts) == hits(Searcher(indexed), q, opts), (q, opts)

    same_as_cold()
    assert warm.vectors.places.generation is not None  # the in-memory locations were used
    assert warm.vectors.matrix().scanner is not None  # a small warm matrix: exact in onnxruntime
    _write(home, "memory/2024-05-03.md", "# 2024-05-03\n\n- The kitten knocked over the vault\n")
    indexed.sync()
    same_as_cold()  # new chunks located after the index generation changed
    top = warm.search("kitten vault", SearchOptions(min_score=0.0)).results[0]
    assert top.path == "memory/2024-05-03.md"


def test_a_transcript_grown_across_syncs_ranks_like_a_fresh_index(
        tmp_path: Path, fake: FakeEmbedder) -> None:
    """Neighbours are positions in the input, not chunk ids: chunks appended in a later
    sync (their ids come after other inputs' chunks) stay adjacent to the earlier ones."""
    from tests.search.conftest import CONVERSATION

    def build(name: str, grow: bool) -> Searcher:
        home = Home(tmp_path / name)
        home.init(["main"])
        home.settings.search.session_chunking = "message"
        path = tmp_path / f"{name}.jsonl"
        one_session = [{**m, "session": "s1"} for m in CONVERSATION]
        write_transcript(path, one_session[:3] if grow else one_session)
        add_transcript(home, path)
        idx = SearchIndex(home, "main", embedder=fake)
        if grow:
            idx.sync()
            _write(home, "MEMORY.md", "# Memory\n\n- The replica lives in rack 4\n")
            idx.sync()  # the memory chunk takes the next id
            write_transcript(path, one_session)
        else:
            _write(home, "MEMORY.md", "# Memory\n\n- The replica lives in rack 4\n")
        idx.sync()
        return Searcher(idx)

    grown, fresh = build("grown", True), build("fresh", False)
    ids = grown.index.db.rows("SELECT id, pos FROM chunks WHERE source = 'sessions' "
                              "ORDER BY pos")
    assert [p for _, p in ids] == [0, 1, 2, 3, 4] and ids[3][0] - ids[2][0] > 1  # id gap
    opts = SearchOptions(min_score=0.0, max_results=10)
    for query in ("feather toy sofa", "PostgreSQL migration", "retire the replica"):
        got = [(h.message_ids, round(h.score, 6)) for h in grown.search(query, opts).results]
        want = [(h.message_ids, round(h.score, 6)) for h in fresh.search(query, opts).results]
        assert got == want, query


def test_kept_chunks_move_to_their_new_places(indexed: SearchIndex) -> None:
    from memtui.search.chunking import Chunk
    from memtui.search.documents import Loaded, SourceFile

    def chunk(text: str, line: int) -> Chunk:
        return Chunk(source="memory", path="x.md", start_line=line, end_line=line, text=text)

    a, b, c, x, y = (chunk(t, n) for n, t in enumerate("abcxy", start=1))
    item = SourceFile(key="x.md", source="memory", signature="s",
                      loader=lambda: Loaded(hash="h", chunks=[]))
    db = indexed.db

    def places() -> list[tuple[str, int]]:
        return [(str(t), int(p)) for t, p in db.rows(
            "SELECT text, pos FROM chunks WHERE file = 'x.md' ORDER BY pos")]

    with db.write():
        assert sync.replace_chunks(db, item, [a, b, c]) == (3, 0, 0)
    with db.write():  # a window split in two before b: b and c keep their rows, move on
        assert sync.replace_chunks(db, item, [x, y, b, c]) == (2, 1, 2)
    assert places() == [("x", 0), ("y", 1), ("b", 2), ("c", 3)]


def test_reordered_chunks_move_and_warm_searchers_notice(
        home: Home, tmp_path: Path, fake: FakeEmbedder) -> None:
    from tests.search.conftest import CONVERSATION

    home.settings.search.session_chunking = "message"
    path = tmp_path / "t.jsonl"
    turns = [{**m, "session": "s1"} for m in CONVERSATION]
    write_transcript(path, turns)
    add_transcript(home, path)
    idx = SearchIndex(home, "main", embedder=fake)
    idx.sync()
    warm = Searcher(idx, warm=True)
    opts = SearchOptions(min_score=0.0)
    warm.search("feather toy", opts)
    generation = idx.generation()
    write_transcript(path, [turns[2], turns[0], turns[1], turns[3], turns[4]])
    idx.sync()
    assert idx.generation() > generation
    assert [json.loads(m)[0] for (m,) in idx.db.rows(
        "SELECT message_ids FROM chunks WHERE source = 'sessions' ORDER BY pos")] == [
        "m3", "m1", "m2", "m4", "m5"]
    assert ([(h.message_ids, round(h.score, 6)) for h in warm.search("feather toy", opts).results]
            == [(h.message_ids, round(h.score, 6))
                for h in Searcher(idx).search("feather toy", opts).results])


def test_an_index_from_before_positions_gets_them_in_place(indexed: SearchIndex) -> None:
    db = indexed.db
    before = db.rows("SELECT id, file, pos FROM chunks ORDER BY id")
    with db.write():  # what an index made before the pos column looks like
        db.execute("ALTER TABLE chunks DROP COLUMN pos")
    indexed.close()
    reopened = SearchIndex(indexed.home, "main", embedder=indexed.embedder)
    assert reopened.db.rows("SELECT id, file, pos FROM chunks ORDER BY id") == before
    assert not reopened.status().stale_fingerprint  # no rebuild needed


def test_context_two_places_away_is_a_bonus(home: Home, tmp_path: Path,
                                            fake: FakeEmbedder) -> None:
    where = {i: ("t.jsonl", "s1", "sessions", i - 1) for i in range(1, 6)}
    where[9] = ("MEMORY.md", "", "memory", 0)
    scored = [(1, 0.9), (3, 0.5), (5, 0.5), (9, 0.5)]
    smoothed = dict(scoring.smooth(scored, where, 0.3, (0.4, 0.2)))
    assert smoothed[3] > smoothed[5]  # 3 is two places from the strong hit 1
    isolated = (0.5 + 0.3 * 0.5 / 3) / 1.7
    assert smoothed[9] == pytest.approx(isolated)  # no context: as without the bonus
    assert dict(scoring.smooth(scored, where, 0.3, (0.4, 0.0)))[9] == pytest.approx(isolated)
    assert max(dict(scoring.smooth([(1, 1.0), (2, 1.0), (3, 1.0)], where, 0.3,
                              (0.4, 0.2))).values()) == 1.0  # capped


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=80))
def test_the_keyword_side_runs_the_tested_match_expression(indexed: SearchIndex,
                                                           query: str) -> None:
    from memtui.search.query import fts_query

    assert Searcher(indexed).keywords.match(query) == fts_query(query)  # small index
