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

As in any warm process over 5,000 chunks, the keyword side runs on the calling thread
while the query embedding and the in-memory vector scan run on memtui's worker thread;
docs/search.md has the breakdown per stage.

Indexing: the texts memtui embeds for the chunks (message chunks are "speaker: text")
encoded by sentence-transformers alone (its own batch throughput) versus a full
``memtui index`` of them (read, chunk, embed, write), in alternating rounds; the wall
clock ratio swings with the other jobs on the box, so the CPU-time ratio and the share
of time spent outside the model are printed too.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from locomo_data import DEV, load  # noqa: E402

from memtui.home import Home  # noqa: E402
from memtui.search import vectors  # noqa: E402
from memtui.search.chunking import sha256  # noqa: E402
from memtui.search.encoders.embedder import Embedder, LocalEmbedder, Progress  # noqa: E402
from memtui.search.hybrid import Searcher, SearchOptions  # noqa: E402
from memtui.search.index import SearchIndex  # noqa: E402
from memtui.stores import sources as source_store  # noqa: E402

CACHE = REPO / ".bench" / "speed"
RESULTS: list[dict[str, float]] = []
"""Query medians of this process (printed as JSON for --runs)."""


def locomo(data: Path) -> tuple[list[str], list[str]]:
    """(turn texts, questions) of a LoCoMo file (the dev slice by default)."""
    samples = load(data)
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


class _Timed:
    """The embedder, counting the seconds spent in embed_documents."""

    def __init__(self, inner: LocalEmbedder) -> None:
        self.inner = inner
        self.provider, self.model = inner.provider, inner.model
        self.dims, self.max_tokens = inner.dims, inner.max_tokens
        self.seconds = 0.0

    def embed_documents(self, texts: Sequence[str], *,
                        progress: Progress | None = None) -> np.ndarray:
        t = time.perf_counter()
        try:
            return self.inner.embed_documents(texts, progress=progress)
        finally:
            self.seconds += time.perf_counter() - t

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)


class _Dims:
    """Just enough of an embedder to create the vector table."""

    provider, model, max_tokens = "bench", "bench", 512

    def __init__(self, dims: int) -> None:
        self.dims = dims

    def embed_documents(self, texts: Sequence[str], *,
                        progress: Progress | None = None) -> np.ndarray:
        raise NotImplementedError

    def embed_query(self, text: str) -> np.ndarray:
        raise NotImplementedError


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
    matrix = searcher.vectors.matrix()
    load_s = time.perf_counter() - t1
    opts = SearchOptions(sources=("sessions",), max_results=6, min_score=0.0)
    qs = questions[:60]
    for q in qs[:5]:
        searcher.search(q, opts)  # warm-up: BLAS, caches, statement cache
    full, embed, cached = [], [], []
    for q in qs * 3:
        embedder.clear_query_cache()
        t = time.perf_counter()
        embedder.embed_query(q)
        embed.append(time.perf_counter() - t)
        embedder.clear_query_cache()
        t = time.perf_counter()
        searcher.search(q, opts)
        full.append(time.perf_counter() - t)
        t = time.perf_counter()
        searcher.search(q, opts)  # the query vector is cached now
        cached.append(time.perf_counter() - t)
    RESULTS.append({"chunks": n, "query_ms": median_ms(full), "embed_ms": median_ms(embed),
                    "cached_ms": median_ms(cached)})
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


def _index_once(embedder: Embedder, texts: list[str]
                ) -> tuple[float, float, list[str]]:
    """A full `memtui index` of the texts as one transcript: (seconds, CPU seconds,
    embedded inputs)."""
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
        t, c = time.perf_counter(), time.process_time()
        idx.sync()
        seconds, cpu = time.perf_counter() - t, time.process_time() - c
        inputs = [str(r[0]) for r in idx.db.rows(
            "SELECT coalesce(embed_text, text) FROM chunks ORDER BY id")]
        idx.close()
    return seconds, cpu, inputs


def bench_indexing(embedder: LocalEmbedder, turns: list[str], count: int, rounds: int) -> None:
    """The model's own batch throughput against a full `memtui index` of the same chunks.

    "The same chunks": the model alone encodes exactly the texts memtui embeds (a message
    chunk is "speaker: text", a few word pieces longer than the raw turn). Runs alternate
    (the box is shared: one pair of runs is mostly noise) and the median ratio is printed,
    with the share of the index run spent outside ``embed_documents``, which load hardly
    moves.
    """
    model = embedder.sentence_model()
    timed = _Timed(embedder)
    _, _, inputs = _index_once(timed, turns[:count])  # warm-up; what memtui embeds
    model.encode(inputs[:64], batch_size=32)
    own_s, ours_s, own_cpu, ours_cpu, outside = [], [], [], [], []
    for _ in range(rounds):
        t, c = time.perf_counter(), time.process_time()
        model.encode(inputs, batch_size=embedder.batch_size, normalize_embeddings=True)
        own_s.append(time.perf_counter() - t)
        own_cpu.append(time.process_time() - c)
        timed.seconds = 0.0
        ours, cpu, _ = _index_once(timed, turns[:count])
        ours_s.append(ours)
        ours_cpu.append(cpu)
        outside.append((ours - timed.seconds) / ours)
    own, ours = statistics.median(own_s), statistics.median(ours_s)
    n = len(inputs)
    print(f"indexing {n} chunks, median of {rounds} alternating rounds: model alone "
          f"{n / own:.1f} chunks/s, memtui index {n / ours:.1f} chunks/s -> ratio "
          f"{own / ours:.2f} (rounds: "
          f"{', '.join(f'{a / b:.2f}' for a, b in zip(own_s, ours_s, strict=True))})")
    cpu_ratio = statistics.median(own_cpu) / statistics.median(ours_cpu)
    print(f"{'':>9} by CPU time: ratio {cpu_ratio:.2f}; wall time outside the model "
          f"{100 * statistics.median(outside):.1f}%")


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


def runs_in_processes(sizes: str, runs: int, data: Path) -> None:
    """The query benchmark in ``runs`` fresh processes: each run's medians, then theirs."""
    import subprocess

    per_size: dict[int, list[dict[str, float]]] = {}
    for i in range(runs):
        out = subprocess.run([sys.executable, __file__, "--sizes", sizes, "--only", "queries",
                              "--data", str(data), "--json"],
                             capture_output=True, text=True, check=True).stdout
        line = next(x for x in out.splitlines() if x.startswith("RESULTS "))
        for r in json.loads(line[len("RESULTS "):]):
            per_size.setdefault(int(r["chunks"]), []).append(r)
            print(f"run {i + 1}: {int(r['chunks']):>9} chunks | warm query {r['query_ms']:>6} ms "
                  f"(embedding {r['embed_ms']} ms; cached vector {r['cached_ms']} ms)")
    for n, rs in per_size.items():
        q = sorted(r["query_ms"] for r in rs)
        print(f"{n:>9} chunks | warm query, median of {len(rs)} processes: "
              f"{statistics.median(q)} ms (fastest {q[0]}, slowest {q[-1]}); embedding "
              f"{statistics.median(r['embed_ms'] for r in rs)} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--only", default="queries,indexing,noop")
    ap.add_argument("--index-chunks", type=int, default=1000)
    ap.add_argument("--index-rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=1,
                    help="query latency: run the query benchmark in this many fresh processes "
                         "and print the median of their medians (on this box a process can "
                         "land in a slow phase: one in four or five runs 30-60%% slower)")
    ap.add_argument("--data", type=Path, default=DEV,
                    help="a LoCoMo JSON file (default: the dev slice in bench/data/locomo/)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    if args.runs > 1 and "queries" in args.only.split(","):
        runs_in_processes(args.sizes, args.runs, args.data)
        args.only = ",".join(x for x in args.only.split(",") if x != "queries")
        if not args.only:
            return
    turns, questions = locomo(args.data)
    embedder = LocalEmbedder()
    only = set(args.only.split(","))
    print(f"quantise above {vectors.QUANTISE_ABOVE} rows; {len(turns)} base turns")
    if "queries" in only:
        base = base_vectors(embedder, turns)
        for n in [int(s) for s in args.sizes.split(",")]:
            bench_queries(n, embedder, turns, questions, base)
    if args.json:
        print("RESULTS " + json.dumps(RESULTS))
    if "indexing" in only:
        bench_indexing(embedder, turns, args.index_chunks, args.index_rounds)
    if "noop" in only:
        bench_noop(embedder, turns)


if __name__ == "__main__":
    main()
