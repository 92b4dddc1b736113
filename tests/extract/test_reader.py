"""The reader: pair tokenisation, adapters merged into the encoder, the mean with the head."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtui.extract.classify.features import context_of
from memtui.extract.classify.head import READER_GATE, Classifier, Head, softmax
from memtui.extract.classify.reader import (
    ADAPTED,
    MAX_TOKENS,
    READER,
    Adapter,
    Reader,
    member_key,
    pair_ids,
    tokenise,
)

CLS, SEP = 101, 102


def fake_encode(text: str) -> list[int]:
    return [1000 + len(w) for w in text.split()]


@given(st.text(max_size=400), st.text(max_size=400), st.integers(8, 160))
def test_a_pair_keeps_the_turn_and_the_end_of_its_context(context: str, turn: str,
                                                          limit: int) -> None:
    ids = pair_ids(fake_encode, CLS, SEP, context, turn, limit)
    said, asked = fake_encode(turn), fake_encode(context)
    assert ids[0] == CLS and ids[-1] == SEP and len(ids) <= max(limit, 2)
    if len(said) <= limit - 2:
        assert ids[-len(said) - 1:-1] == said or not said
    if context and len(ids) > len(said) + 2:  # some context fitted: its end, then [SEP]
        first = ids.index(SEP)
        kept = ids[1:first]
        assert kept == asked[len(asked) - len(kept):] and ids[first + 1:-1] == said
    else:
        assert ids == [CLS, *said[:limit - 2], SEP]


def test_the_shipped_reader_is_small_and_read_the_heads_corpus() -> None:
    if not READER.is_file():
        pytest.skip("no reader shipped")
    members = Adapter.load()
    assert len(members) >= 1 and READER.stat().st_size < 1_600_000 * len(members)
    for adapter in members:
        assert adapter.labels == Head.load().labels
        assert {n.split(".", 3)[3].rsplit(".", 1)[0] for n in adapter.deltas} == set(ADAPTED)
    assert len({m.digest for m in members}) == len(members)  # a graph of its own each
    manifest = json.loads(READER.with_name("head-manifest.json").read_text())
    assert manifest["reader_temperature"] is not None


def _adapter(tmp_path: Path, seeds: tuple[int, ...] = (0,), name: str = "reader.npz") -> Path:
    """A reader with a member per seed, random deltas on every adapted weight (as
    training writes one)."""
    arrays: dict[str, np.ndarray] = {}
    names = [f"encoder.layer.{i}.{n}.weight" for i in range(6) for n in ADAPTED]
    labels = Head.load().labels
    for m, seed in enumerate(seeds):
        rng = np.random.default_rng(seed)
        for i, name_ in enumerate(names):
            out, into = (1536, 384) if "intermediate" in name_ else \
                (384, 1536) if name_.endswith("output.dense.weight") and \
                "attention" not in name_ else (384, 384)
            arrays[member_key(m, f"a{i}")] = (rng.standard_normal((4, into)) * 0.05
                                              ).astype(np.float16)
            arrays[member_key(m, f"b{i}")] = (rng.standard_normal((out, 4)) * 0.05
                                              ).astype(np.float16)
        arrays[member_key(m, "w")] = rng.standard_normal((len(labels), 384)).astype(np.float32)
        arrays[member_key(m, "bias")] = np.zeros(len(labels), np.float32)
    path = tmp_path / name
    np.savez_compressed(path, names=np.array(names), labels=np.array(labels),
                        scale=np.float32(2.0), members=np.int32(len(seeds)),
                        temperature=np.float32(1.5), model=np.array("all-MiniLM-L6-v2"),
                        **arrays)
    return path


PAIRS = [("Should I restart the pod now?", "nah leave it, the deploy finishes soon"),
         ("", "from now on, squash merges only"),
         ("I can cancel both subscriptions. Want me to?", "keep the music one, the kids use it")]


@pytest.mark.slow
def test_the_merged_encoder_reads_as_the_fine_tuned_torch_model(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    """The numpy forward pass with the deltas merged and the turn in segment 1 gives the
    probabilities of the torch model with the adapters, as it was trained."""
    import torch
    from transformers import AutoModel

    from memtui.search.encoders import onnx_query
    from memtui.search.encoders.embedder import local_model_path

    path = _adapter(tmp_path)
    [adapter] = Adapter.load(path)
    monkeypatch.setattr(onnx_query, "available", lambda: False)
    got = softmax(Reader(path).logits(PAIRS))

    model = AutoModel.from_pretrained(str(local_model_path(adapter.model)))
    state = model.state_dict()
    with torch.no_grad():
        for name, (a, b) in adapter.deltas.items():
            state[name] += torch.from_numpy(adapter.scale * (b @ a))
    model.load_state_dict(state)
    tok = Reader(path)._load()[0][1].tokenizer
    rows = [tokenise(tok, c, t) for c, t in PAIRS]
    want = []
    with torch.no_grad():
        for ids in rows:
            first = ids.index(SEP)
            types = [0] * (first + 1) + [1] * (len(ids) - first - 1)
            h = model(input_ids=torch.tensor([ids]),
                      token_type_ids=torch.tensor([types])).last_hidden_state[0]
            pooled = torch.nn.functional.normalize(h.mean(0), dim=-1).numpy() * 10.0
            want.append(pooled @ adapter.w.T + adapter.b)
    expected = softmax(np.array(want) / adapter.temperature)
    assert np.abs(got - expected).max() < 1e-4
    # and the reader is not the plain model: the deltas changed what it reads
    plain = softmax(Reader(_zeroed(path, tmp_path)).logits(PAIRS))
    assert np.abs(plain - got).max() > 1e-3


def test_a_pair_is_read_once_per_process(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same reply to the same proposal (a resumed session's copy, a file extracted
    again) is read from the reader's cache: encoded once, the same reading."""
    from memtui.search.encoders import onnx_query

    monkeypatch.setattr(onnx_query, "available", lambda: False)
    reader = Reader(_adapter(tmp_path))
    encoder = reader._load()[0][1]
    encoded: list[int] = []
    real = encoder.encode_many

    def counted(batch: list[tuple[int, ...]]) -> np.ndarray:
        encoded.append(len(batch))
        return np.asarray(real(batch))

    monkeypatch.setattr(encoder, "encode_many", counted)
    first = reader.logits([*PAIRS, PAIRS[0]])
    assert encoded == [len(set(PAIRS))] and np.array_equal(first[0], first[-1])
    again = reader.logits(list(reversed(PAIRS)))
    assert encoded == [len(set(PAIRS))]  # nothing new to encode
    assert np.allclose(again, first[:len(PAIRS)][::-1])
    fresh = Reader(tmp_path / "reader.npz").logits(PAIRS)
    assert np.allclose(fresh, first[:len(PAIRS)], atol=1e-6)


def test_the_members_of_a_reader_are_averaged_before_the_temperature(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two members read as the mean of their logits, each member as it reads alone."""
    from memtui.search.encoders import onnx_query

    monkeypatch.setattr(onnx_query, "available", lambda: False)
    one = Reader(_adapter(tmp_path, (0,), "one.npz")).logits(PAIRS)
    two = Reader(_adapter(tmp_path, (1,), "two.npz")).logits(PAIRS)
    both = Reader(_adapter(tmp_path, (0, 1), "both.npz")).logits(PAIRS)
    assert np.allclose(both, (one + two) / 2, atol=1e-5)
    assert np.abs(one - two).max() > 1e-2  # the members differ: the mean is not either


def test_members_trained_apart_merge_into_the_reader_trained_together(tmp_path: Path) -> None:
    """``train_classifier`` caches each member on its own (a stopped run resumes, a new seed
    trains alone); merged, they are the file a run writing both at once would have
    written, member for member."""
    from bench.classifier.reader_training import merge

    one = _adapter(tmp_path, (0,), "one.npz")
    two = _adapter(tmp_path, (1,), "two.npz")
    merge([one, two], tmp_path / "merged.npz")
    with np.load(_adapter(tmp_path, (0, 1), "both.npz")) as want, \
            np.load(tmp_path / "merged.npz") as got:
        assert sorted(got.files) == sorted(want.files)
        for key in want.files:
            assert np.array_equal(got[key], want[key]), key
    with pytest.raises(ValueError, match="2 members"):
        merge([tmp_path / "both.npz"], tmp_path / "again.npz")
    with np.load(two) as z:  # a member of another model does not join
        np.savez_compressed(tmp_path / "other.npz", **{**{k: z[k] for k in z.files},
                                                       "model": np.array("another-model")})
    with pytest.raises(ValueError, match="not fine-tuned like"):
        merge([one, tmp_path / "other.npz"], tmp_path / "again.npz")


def _zeroed(path: Path, tmp_path: Path) -> Path:
    with np.load(path) as z:
        arrays = {k: (np.zeros_like(z[k]) if k.startswith("m0.b") and k[4:].isdigit()
                      else z[k]) for k in z.files}
    out = tmp_path / "zero.npz"
    np.savez_compressed(out, **arrays)
    return out


@pytest.mark.slow
def test_a_verdict_is_the_mean_of_the_head_and_the_reader() -> None:
    if not READER.is_file():
        pytest.skip("no reader shipped")
    pairs = [("Should I restart the pod now?", "nah leave it, the deploy finishes soon"),
             ("Want me to book the 7:05 flight?", "yes book it")]
    both = Classifier().verdicts(pairs)
    alone = Classifier(reader=False).verdicts(pairs)
    reader = softmax(Reader().logits([(context_of(p), t) for p, t in pairs]))
    labels = Head.load().labels
    for b, a, r in zip(both, alone, reader, strict=True):
        assert b.rejected == pytest.approx((a.rejected + r[labels.index("rejected")]) / 2,
                                           abs=1e-5)
        assert b.decision == pytest.approx((a.decision + r[labels.index("decision")]) / 2,
                                           abs=1e-5)
    assert [v.label for v in both] == ["rejected", "decision"]
    # Where the head sees no refusal or decision at all, the reader is not asked.
    chat = [("Done, the report is in your inbox.", "thanks! how was your weekend?")]
    head_alone = Classifier(reader=False).verdicts(chat)
    assert max(head_alone[0].rejected, head_alone[0].decision) < READER_GATE
    assert Classifier().verdicts(chat) == head_alone
    assert MAX_TOKENS >= 64


def test_a_damaged_reader_file_leaves_the_head_reading_alone(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    if not READER.is_file():
        pytest.skip("no reader shipped")
    broken = tmp_path / "reader.npz"
    broken.write_bytes(READER.read_bytes()[:5000])
    with pytest.raises(ValueError, match=str(broken)):
        Adapter.load(broken)
    clf = Classifier(reader=Reader(broken))
    pairs = [("Should I restart the pod now?", "nah leave it")]
    assert clf.thresholds() == Head.load().thresholds  # fitted for the mean, until...
    got = clf.verdicts(pairs)
    assert got == Classifier(reader=False).verdicts(pairs) and clf.reader is None
    # ...the reader turns out damaged: the head reads with the thresholds fitted for it
    assert clf.thresholds() == (Head.load().alone or Head.load().thresholds)
    assert "the head reads alone" in caplog.text and str(broken) in caplog.text


@given(st.lists(st.integers(3, 128), min_size=1, max_size=400), st.integers(0, 2**32 - 1))
def test_an_epochs_batches_read_every_pair_once_in_pairs_of_like_length(
        lengths: list[int], seed: int) -> None:
    from bench.classifier.reader_training import BATCH, batches

    got = batches(np.array(lengths), np.random.default_rng(seed))
    rows = np.concatenate(got)
    assert sorted(rows.tolist()) == list(range(len(lengths)))
    assert all(1 <= len(b) <= BATCH for b in got)
    assert len(got) == -(-len(lengths) // BATCH)  # as many steps as random batches
    # padded to each batch's longest pair: never more than random batches of the same rows,
    # but for the short last batch of the sorted rows, which holds the longest pairs (a
    # random one may hold short ones: lengths 4, 7, 31, 31, 33 in threes pad to 159 sorted,
    # 113 as [33, 31, 31] [4, 7])
    padded = sum(max(lengths[i] for i in b) * len(b) for b in got)
    shuffled = np.random.default_rng(seed).permutation(len(lengths))
    random_pad = sum(max(lengths[i] for i in shuffled[k:k + BATCH]) * len(shuffled[k:k + BATCH])
                     for k in range(0, len(lengths), BATCH))
    assert padded <= random_pad + len(lengths) % BATCH * max(lengths)


def test_finished_members_are_kept_where_git_tracks_them(tmp_path: Path) -> None:
    """A retraining takes longer than a session on a new machine: its finished members
    live in a folder git keeps (a half-written one does not), keyed by the corpus."""
    import shutil
    import subprocess

    from bench.classifier.corpus import Example
    from bench.train_classifier import MEMBERS, reader_cache

    corpus = [Example(id="hand/x/0", conv="hand/x", domain="ops", source="hand",
                      prev="Should I?", text="no", label="rejected", split="train")]
    folder = reader_cache(corpus)
    assert folder.parent == MEMBERS and folder.name.startswith("reader-")
    other = reader_cache([dataclasses.replace(corpus[0], label="none")])
    assert other != folder  # a relabelled turn is another key
    root = MEMBERS.parents[3]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")

    def ignored(path: Path) -> bool:
        return subprocess.run(["git", "-C", str(root), "check-ignore", "-q", str(path)],
                              check=False).returncode == 0

    assert not ignored(folder / "fold1-seed0.npy")
    assert not ignored(folder / "final-seed0.npz")
    assert ignored(folder / "fold1-seed0.part.npy")
