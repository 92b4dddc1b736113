"""Many short texts through the query encoder: one run each versus batched (encode_many).

Run: .venv/bin/python bench/bench_encode_many.py [--texts 500] [--repeat 7]

The texts are the person's turns of the hand-written extraction corpus
(bench/data/extract-corpus/hand/*.txt), the classifier's kind of text. In alternating
rounds the int8 ONNX encoder embeds them one by one (``encode_ids``) and all at once
(``encode_many``: texts of one length share a run of the batched graph); then the same
through the embedder with its query cache cleared (``embed_query`` per text versus
``embed_queries``). Prints the median milliseconds per text, the ratio, and the largest
difference between the two sets of vectors. Asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from memtui.search.encoders.embedder import LocalEmbedder  # noqa: E402

CORPUS = ROOT / "bench/data/extract-corpus/hand"


def person_turns(limit: int) -> list[str]:
    """The person's turns ("X text", X a label letter) of the corpus, in file order."""
    out = []
    for path in sorted(CORPUS.glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if len(line) > 2 and line[0].isalpha() and line[0].isupper() and line[1] == " ":
                out.append(line[2:].strip())
    return out[:limit]


def timed(rounds: list[float], fn: Callable[[], np.ndarray]) -> np.ndarray:
    start = time.perf_counter()
    result = fn()
    rounds.append(time.perf_counter() - start)
    return result


def compare(label: str, one: Callable[[], np.ndarray], many: Callable[[], np.ndarray],
            n: int, repeat: int) -> None:
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeat):
        single = timed(a, one)
        batched = timed(b, many)
    ms_one = statistics.median(a) / n * 1e3
    ms_many = statistics.median(b) / n * 1e3
    print(f"{label:<34} one by one {ms_one:6.3f} ms/text   batched {ms_many:6.3f} ms/text   "
          f"{ms_one / ms_many:4.2f}x   max |difference| {np.abs(single - batched).max():.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    texts = person_turns(args.texts)
    embedder = LocalEmbedder()
    encoder = embedder.query_encoder()
    batch = [encoder.token_ids(t) for t in texts]
    encoder.encode_many(batch[:4])  # open (or build) the batched graph outside the timing
    lengths = [len(ids) for ids in batch]
    print(f"{len(texts)} texts, {statistics.mean(lengths):.1f} word pieces on average "
          f"({min(lengths)}-{max(lengths)}), {len(set(lengths))} distinct lengths; "
          f"query encoder: {embedder.query_encoder_name}")
    compare("encoder (encode_ids/encode_many)",
            lambda: np.vstack([encoder.encode_ids(ids) for ids in batch]),
            lambda: encoder.encode_many(batch), len(texts), args.repeat)

    def uncached(fn: Callable[[], np.ndarray]) -> Callable[[], np.ndarray]:
        def run() -> np.ndarray:
            embedder.clear_query_cache()
            return fn()
        return run

    compare("embedder (embed_query/_queries)",
            uncached(lambda: np.vstack([embedder.embed_query(t) for t in texts])),
            uncached(lambda: embedder.embed_queries(texts)), len(texts), args.repeat)


if __name__ == "__main__":
    main()
