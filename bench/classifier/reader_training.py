"""Fine-tuning the reader: low-rank adapters on MiniLM over (context, turn) pairs, in torch.

Shared by ``bench/train_classifier.py``. The pairs are tokenised by
``memtui.extract.classify.reader.pair_ids`` with the model's own ``tokenizer.json``, the
same ids the shipped reader builds, and the pooled vector is normalised and scaled
(``SCALE``) exactly as it reads. Only the adapters and the output layer are trained,
once per seed (``SEEDS``: the shipped reader averages its members); ``export`` writes
them to ``reader.npz``. CPU only, no network: about a minute and a half an epoch on
6,000 turns on two cores, with batches of pairs of like length (``batches``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from bench.classifier.corpus import LABELS, Example
from memtui.extract.classify.features import context_of
from memtui.extract.classify.reader import ADAPTED, SCALE, member_key, tokenise, turn_start
from memtui.search.encoders.embedder import local_model_path

RANK = 16
ALPHA = 2.0
"""The adapters' scale: the merged weight is W + ALPHA · B A."""
EPOCHS = 3
LR = 1e-3
BATCH = 32
POOL = 50
"""Batches sorted by length together (``batches``)."""
SEEDS = (0, 1)
"""One member of the shipped reader per seed (``reader.py``)."""


def _torch() -> Any:
    import torch

    torch.set_num_threads(2)
    return torch


class Tokens:
    """(context, turn) pairs to padded id, mask and segment tensors."""

    def __init__(self, model: str) -> None:
        from tokenizers import Tokenizer

        path = local_model_path(model)
        self.tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tok.no_truncation()
        self.tok.no_padding()
        self.sep = self.tok.token_to_id("[SEP]")

    def ids(self, example: Example) -> list[int]:
        return tokenise(self.tok, context_of(example.answering), example.text)

    def batch(self, rows: list[list[int]]) -> dict[str, Any]:
        torch = _torch()
        n = max(len(r) for r in rows)
        ids = torch.zeros((len(rows), n), dtype=torch.long)
        mask = torch.zeros((len(rows), n), dtype=torch.long)
        types = torch.zeros((len(rows), n), dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, :len(r)] = torch.tensor(r)
            mask[i, :len(r)] = 1
            start = turn_start(r, self.sep)
            if start is not None:
                types[i, start:len(r)] = 1
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def _network(model: str) -> Any:
    torch = _torch()
    from transformers import AutoModel

    class LoRA(torch.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self, base: Any) -> None:
            super().__init__()
            self.base = base
            for p in base.parameters():
                p.requires_grad = False
            self.a = torch.nn.Parameter(torch.randn(RANK, base.in_features) * 0.01)
            self.b = torch.nn.Parameter(torch.zeros(base.out_features, RANK))

        def forward(self, x: Any) -> Any:
            return self.base(x) + (x @ self.a.T @ self.b.T) * ALPHA

    class Net(torch.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.enc = AutoModel.from_pretrained(str(local_model_path(model)))
            for p in self.enc.parameters():
                p.requires_grad = False
            self.adapted: dict[str, Any] = {}
            for i, layer in enumerate(self.enc.encoder.layer):
                for name in ADAPTED:
                    *parents, leaf = name.split(".")
                    owner = layer
                    for p in parents:
                        owner = getattr(owner, p)
                    wrapped = LoRA(getattr(owner, leaf))
                    setattr(owner, leaf, wrapped)
                    self.adapted[f"encoder.layer.{i}.{name}.weight"] = wrapped
            self.drop = torch.nn.Dropout(0.1)
            self.out = torch.nn.Linear(self.enc.config.hidden_size, len(LABELS))

        def forward(self, batch: dict[str, Any]) -> Any:
            h = self.enc(**batch).last_hidden_state
            m = batch["attention_mask"].unsqueeze(-1).float()
            pooled = torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1)
            return self.out(self.drop(pooled * SCALE))

    return Net()


def train(examples: list[Example], weights: np.ndarray, tokens: Tokens, model: str,
          log: Any = print) -> list[Any]:
    """One member per seed (``SEEDS``), each fitted to the examples."""
    return [train_one(examples, weights, tokens, model, seed, log) for seed in SEEDS]


def train_one(examples: list[Example], weights: np.ndarray, tokens: Tokens, model: str,
              seed: int, log: Any = print) -> Any:
    """Adapters and output layer fitted to the examples (class-balanced, weighted)."""
    torch = _torch()
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    if any(ex.split == "heldout" for ex in examples):
        raise RuntimeError("a held-out example reached training or tuning")
    net = _network(model)
    net.train()
    ids = [tokens.ids(e) for e in examples]
    y = np.array([LABELS.index(e.label) for e in examples])
    counts = np.bincount(y, minlength=len(LABELS)).astype(np.float64)
    cw = torch.tensor(len(y) / (len(LABELS) * np.maximum(counts, 1)), dtype=torch.float32)
    params = [p for p in net.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=LR, weight_decay=0.01)
    steps = EPOCHS * math.ceil(len(y) / BATCH)
    warm = max(1, int(0.06 * steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (steps - s) / steps))
    lengths = np.array([len(r) for r in ids])
    for epoch in range(EPOCHS):
        total = 0.0
        for rows in batches(lengths, rng):
            logits = net(tokens.batch([ids[i] for i in rows]))
            yy = torch.tensor(y[rows])
            ww = torch.tensor(weights[rows], dtype=torch.float32) * cw[yy]
            loss = (torch.nn.functional.cross_entropy(logits, yy, reduction="none")
                    * ww).sum() / ww.sum()
            loss.backward()
            opt.step()
            sched.step()
            opt.zero_grad()
            total += float(loss.detach()) * len(rows)
        log(f"  reader seed {seed}, epoch {epoch + 1}/{EPOCHS}: "
            f"mean loss {total / len(y):.3f}")
    net.eval()
    return net


def batches(lengths: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """One epoch's batches: shuffled, then sorted by length within pools of ``POOL``
    batches, the batches themselves in random order. A batch is padded to its longest
    pair: random batches of the corpus padded to 2.6 times its tokens, these to about
    1.1, which halves an epoch's time."""
    order = rng.permutation(len(lengths))
    out = []
    for k in range(0, len(order), BATCH * POOL):
        pool = order[k:k + BATCH * POOL]
        pool = pool[np.argsort(lengths[pool], kind="stable")]
        out.extend(pool[j:j + BATCH] for j in range(0, len(pool), BATCH))
    return [out[i] for i in rng.permutation(len(out))]


def logits(nets: list[Any], examples: list[Example], tokens: Tokens) -> np.ndarray:
    """The members' mean logits (before any temperature), as ``reader.Reader`` reads."""
    torch = _torch()
    ids = [tokens.ids(e) for e in examples]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    out = np.zeros((len(ids), len(LABELS)), dtype=np.float32)
    with torch.no_grad():
        for k in range(0, len(order), 64):
            rows = order[k:k + 64]
            batch = tokens.batch([ids[i] for i in rows])
            out[rows] = np.mean([net(batch).numpy() for net in nets], axis=0)
    return out


def export(nets: list[Any], path: Path, temperature: float, model: str) -> None:
    """Each member's adapters (float16) and output layer, as ``reader.Adapter.load``
    reads them."""
    names = sorted(nets[0].adapted)
    arrays: dict[str, Any] = {}
    for m, net in enumerate(nets):
        for i, name in enumerate(names):
            lora = net.adapted[name]
            arrays[member_key(m, f"a{i}")] = lora.a.detach().numpy().astype(np.float16)
            arrays[member_key(m, f"b{i}")] = lora.b.detach().numpy().astype(np.float16)
        arrays[member_key(m, "w")] = net.out.weight.detach().numpy().astype(np.float32)
        arrays[member_key(m, "bias")] = net.out.bias.detach().numpy().astype(np.float32)
    np.savez_compressed(
        path, names=np.array(names), labels=np.array(LABELS), scale=np.float32(ALPHA),
        members=np.int32(len(nets)), temperature=np.float32(temperature),
        model=np.array(model), **arrays)


def merge(paths: list[Path], path: Path) -> None:
    """One reader file of the single-member files ``export`` wrote, member m from the
    m-th path (the files of one run share their names, labels, scale and model)."""
    if not paths:
        raise ValueError("merge needs at least one member")
    arrays: dict[str, Any] = {}
    shared: dict[str, Any] = {}
    prefix = member_key(0, "")
    for m, one in enumerate(paths):
        with np.load(one, allow_pickle=False) as z:
            if int(z["members"]) != 1:
                raise ValueError(f"{one}: {int(z['members'])} members, merge reads one")
            these = {k: z[k] for k in ("names", "labels", "scale", "temperature", "model")}
            if shared and any(not np.array_equal(shared[k], v) for k, v in these.items()):
                raise ValueError(f"{one}: not fine-tuned like {paths[0]}")
            shared = shared or these
            arrays.update({member_key(m, k[len(prefix):]): z[k] for k in z.files
                           if k.startswith(prefix)})
    np.savez_compressed(path, **shared, members=np.int32(len(paths)), **arrays)
