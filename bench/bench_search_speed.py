"""Search speed: warm query latency at 10k / 100k / 1M chunks, indexing throughput, no-op sync.

Prints medians and ratios; asserts nothing. Run from the project root:

    .venv/bin/python bench/bench_search_speed.py                  # 10k and 100k
    .venv/bin/python bench/bench_search_speed.py --sizes 10000,100000,1000000
    .venv/bin/python bench/bench_search_speed.py --only indexing,noop

Query latency: an index of N chunks is written straight into the index tables (texts
are LoCoMo turns with a few words swapped in, vectors are real MiniLM vectors of those
turns plus noise, so they cluster like real data). A warm searcher (model and vectors
in memory) then answers LoCoMo questions; every query is embedded afresh (the query
cache is cleared), so the figure includes the query embedding. Above
``vectors.QUANTISE_ABOVE`` rows the vector side uses sign-bit prefiltering with exact
rescoring; its recall@10 against exact search is printed.

Indexing: the same chunks embedded by sentence-transformers alone (its own batch
throughput) versus a full ``memtui index`` of them (read, chunk, embed, write).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVAL = REPO.parent / "shared" / "eval"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(EVAL))

import numpy as np  # noqa: E402

from memtui.home import Home  # noqa: E402
from memtui.search import vectors  # noqa: E402
from memtui.search.chunking import sha256  # noqa: E402
from memtui.search.embeddings import LocalEmbedder  # noqa: E402
from memtui.search.hybrid import Searcher, SearchOptions  # noqa: E402
from memtui.search.index import SearchIndex  # noqa: E402
from memtui.stores import sources as source_store  # noqa: E402

CACHE = REPO / ".bench" / "speed"


def locomo() -> tuple[list[str], list[str]]:
    """(turn texts, questions) of the LoCoMo dev slice."""
    samples = json.loads((EVAL / "locomo-dev.json").read_text(encoding="utf-8"))
    turns, questions = [], []
    for s in samples:
        conv = s["conversation"]
        for key, value in conv.items():
            if key.startswith("session_") and isinstance(value, list):
                turns += [f"{t['speaker']}: {t['text']}" for t in value]
        questions += [qa["question"] for qa in s["qa"]]
    return turns, questions


def median_ms(samples: list[float]) -> float:
    return round(1000 * statistics.median(samples), 2)


def build_synthetic(path: Path, n: int, base_texts: list[str], base_vecs: np.ndarray) -> None:
    """An index file of n chunks, written directly (sync would embed them all)."""
    if path.exists():
        return
    rng = np.random.default_rng(7)
    words = sorted({w for t in base_texts for w in t.split()})
    home = Home(path.parent / f"home-{n}")
    home.init(["bench"])
    idx = SearchIndex(home, "bench", embedder=_Dims(base_vecs.shape[1]))
    db = idx.db
    batch = 20_000
    for start in range(0, n, batch):
        rows, vecs = [], []
        for i in range(start, min(n, start + batch)):
            j = i % len(base_texts)
            extra = " ".join(random.Random(i).sample(words, 3))
            text = f"{base_texts[j]} {extra}"
            rows.append((i + 1, "bench", "sessions", "/bench.jsonl", i + 1, i + 1, sha256(text),
                         f"k{i}", sha256(text), None, text, json.dumps([f"m{i}"]), "s",
                         None, None, 1, "{}", 1))
            v = base_vecs[j] + rng.normal(0, 0.35 / np.sqrt(base_vecs.shape[1]),
                                          base_vecs.shape[1])
            vecs.append((i + 1, (v / np.linalg.norm(v)).astype(np.float32).tobytes(),
                         "sessions"))
        with db.write():
            db.executemany("INSERT INTO chunks(id, file, source, path, start_line, end_line, "
                           "hash, key, embed_hash, embed_text, text, message_ids, session, ts, "
                           "ref, current, meta, embedded) VALUES "
                           "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            db.executemany("INSERT INTO chunks_vec(rowid, embedding, source) VALUES (?,?,?)",
                           vecs)
        print(f"  built {min(n, start + batch)}/{n}", file=sys.stderr, end="\r")
    with db.write():
        SearchIndex.set_meta(db, "fingerprint", json.dumps({"bench": n}))
    idx.close()
    built = home.index_path("bench")
    built.rename(path)
    for suffix in ("-wal", "-shm"):
        Path(f"{built}{suffix}").unlink(missing_ok=True)


class _Dims:
    """Just enough of an embedder to create the vector table."""

    provider, model, max_tokens = "bench", "bench", 512

    def __init__(self, dims: int) -> None:
        self.dims = dims


def base_vectors(embedder: LocalEmbedder, texts: list[str]) -> np.ndarray:
    cache = CACHE / "base.npy"
    if cache.exists():
        return np.load(cache)
    vecs = embedder.embed_documents(texts)
    np.save(cache, vecs)
    return vecs


def bench_queries(n: int, embedder: LocalEmbedder, turns: list[str], questions: list[str],
                  base: np.ndarray) -> None:
    path = CACHE / f"index-{n}.sqlite"
    t0 = time.perf_counter()
    build_synthetic(path, n, turns, base)
    home = Home(CACHE / f"home-{n}")
    home.settings.search.sync_before_search = False
    home.index_dir.mkdir(parents=True, exist_ok=True)
    target = home.index_path("bench")
    if not target.exists():
        target.symlink_to(path)
    idx = SearchIndex(home, "bench", embedder=embedder)
    searcher = Searcher(idx, warm=True)
    t1 = time.perf_counter()
    matrix = searcher.matrix()
    load_s = time.perf_counter() - t1
    opts = SearchOptions(sources=("sessions",), max_results=6, min_score=0.0)
    qs = questions[:60]
    for q in qs[:5]:
        searcher.search(q, opts)  # warm-up: BLAS, caches, statement cache
    full, embed, cached = [], [], []
    for q in qs:
        embedder._query_cache.clear()
        t = time.perf_counter()
        embedder.embed_query(q)
        embed.append(time.perf_counter() - t)
        embedder._query_cache.clear()
        t = time.perf_counter()
        searcher.search(q, opts)
        full.append(time.perf_counter() - t)
        t = time.perf_counter()
        searcher.search(q, opts)  # the query vector is cached now
        cached.append(time.perf_counter() - t)
    print(f"{n:>9} chunks | warm query {median_ms(full):>6} ms median (embedding "
          f"{median_ms(embed)} ms; {median_ms(cached)} ms with the query vector cached) | "
          f"vectors loaded in {load_s:.1f} s (built in {t1 - t0:.0f} s)")
    if n > matrix.quantise_above:
        hits = []
        for q in qs[:40]:
            qv = embedder.embed_query(q)
            exact = set(np.argsort(-(matrix.vectors @ qv))[:10].tolist())
            got = {matrix.row_of(c) for c, _ in matrix.search(qv, 10)}
            hits.append(len(exact & got) / 10)
        print(f"{'':>9}        | binary prefilter + exact rescoring: recall@10 vs exact "
              f"{statistics.fmean(hits):.3f}")
    idx.close()


def bench_indexing(embedder: LocalEmbedder, turns: list[str], count: int) -> None:
    texts = turns[:count]
    model = embedder._model()
    model.encode(texts[:64], batch_size=32)
    t = time.perf_counter()
    model.encode(texts, batch_size=embedder.batch_size, normalize_embeddings=True)
    own = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp) / "home")
        home.init(["bench"])
        home.settings.search.session_chunking = "message"
        path = Path(tmp) / "t.jsonl"
        with path.open("w") as out:
            for i, text in enumerate(texts):
                out.write(json.dumps({"type": "message", "id": f"m{i}", "session": "s",
                                      "role": "user", "content": text}) + "\n")
        db = home.open_db()
        source_store.add(db, str(path), agent="bench", fmt="generic", actor="cli")
        db.close()
        idx = SearchIndex(home, "bench", embedder=embedder)
        t = time.perf_counter()
        report = idx.sync()
        ours = time.perf_counter() - t
        idx.close()
    print(f"indexing {len(texts)} chunks: model alone {len(texts) / own:.1f} chunks/s, "
          f"memtui index {report.embedded / ours:.1f} chunks/s -> ratio {own / ours:.2f}")


def bench_noop(embedder: LocalEmbedder, turns: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp) / "home")
        home.init(["bench"])
        ws = home.workspace("bench")
        for d in range(60):
            (ws / "memory" / f"2025-01-{d % 28 + 1:02d}-{d}.md").write_text(
                "\n".join(turns[d * 5:(d + 1) * 5]) + "\n")
        paths = []
        for f in range(5):
            path = Path(tmp) / f"t{f}.jsonl"
            with path.open("w") as out:
                for i, text in enumerate(turns[f * 200:(f + 1) * 200]):
                    out.write(json.dumps({"type": "message", "id": f"m{i}", "session": "s",
                                          "role": "user", "content": text}) + "\n")
            paths.append(path)
        db = home.open_db()
        for path in paths:
            source_store.add(db, str(path), agent="bench", fmt="generic", actor="cli")
        db.close()
        idx = SearchIndex(home, "bench", embedder=embedder)
        idx.sync()
        syncs, checks = [], []
        for _ in range(30):
            t = time.perf_counter()
            idx.sync()
            syncs.append(time.perf_counter() - t)
            t = time.perf_counter()
            idx.check()
            checks.append(time.perf_counter() - t)
        st = idx.status()
        print(f"no-op sync ({sum(st.files.values())} inputs, {sum(st.chunks.values())} chunks): "
              f"{median_ms(syncs)} ms median; cheap check {median_ms(checks)} ms")
        idx.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--only", default="queries,indexing,noop")
    ap.add_argument("--index-chunks", type=int, default=1000)
    args = ap.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    turns, questions = locomo()
    embedder = LocalEmbedder()
    only = set(args.only.split(","))
    print(f"quantise above {vectors.QUANTISE_ABOVE} rows; {len(turns)} base turns")
    if "queries" in only:
        base = base_vectors(embedder, turns)
        for n in [int(s) for s in args.sizes.split(",")]:
            bench_queries(n, embedder, turns, questions, base)
    if "indexing" in only:
        bench_indexing(embedder, turns, args.index_chunks)
    if "noop" in only:
        bench_noop(embedder, turns)


if __name__ == "__main__":
    main()
