"""Fine-tuning the reader: low-rank adapters on MiniLM over (context, turn) pairs, in torch.

Shared by ``bench/train_classifier.py``. The pairs are tokenised by
``memtui.extract.classify.reader.pair_ids`` with the model's own ``tokenizer.json``, the
same ids the shipped reader builds, and the pooled vector is normalised and scaled
(``SCALE``) exactly as it reads. Only the adapters and the output layer are trained;
``export`` writes them to ``reader.npz``. CPU only, no network: about two minutes an
epoch on 3,500 turns on two cores.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from bench.classifier.corpus import LABELS, Example
from memtui.extract.classify.features import context_of
from memtui.extract.classify.reader import ADAPTED, SCALE, tokenise, turn_start
from memtui.search.encoders.embedder import local_model_path

RANK = 16
ALPHA = 2.0
"""The adapters' scale: the merged weight is W + ALPHA · B A."""
EPOCHS = 3
LR = 1e-3
BATCH = 32
SEED = 0


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
        return tokenise(self.tok, context_of(example.prev), example.text)

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
          log: Any = print) -> Any:
    """Adapters and output layer fitted to the examples (class-balanced, weighted)."""
    torch = _torch()
    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
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
    for epoch in range(EPOCHS):
        total = 0.0
        order = rng.permutation(len(y))
        for k in range(0, len(order), BATCH):
            rows = order[k:k + BATCH]
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
        log(f"  reader epoch {epoch + 1}/{EPOCHS}: mean loss {total / len(y):.3f}")
    net.eval()
    return net


def logits(net: Any, examples: list[Example], tokens: Tokens) -> np.ndarray:
    torch = _torch()
    out = []
    with torch.no_grad():
        for k in range(0, len(examples), 64):
            rows = [tokens.ids(e) for e in examples[k:k + 64]]
            out.append(net(tokens.batch(rows)).numpy())
    return np.vstack(out) if out else np.zeros((0, len(LABELS)))


def export(net: Any, path: Path, temperature: float, model: str) -> None:
    """The adapters (float16) and the output layer, as ``reader.Adapter.load`` reads them."""
    names = sorted(net.adapted)
    arrays: dict[str, Any] = {}
    for i, name in enumerate(names):
        lora = net.adapted[name]
        arrays[f"a{i}"] = lora.a.detach().numpy().astype(np.float16)
        arrays[f"b{i}"] = lora.b.detach().numpy().astype(np.float16)
    np.savez_compressed(
        path, names=np.array(names), labels=np.array(LABELS), scale=np.float32(ALPHA),
        w=net.out.weight.detach().numpy().astype(np.float32),
        b=net.out.bias.detach().numpy().astype(np.float32),
        temperature=np.float32(temperature), model=np.array(model), **arrays)
