"""The transcoder's data: per-token MLP inputs and outputs of every ViT block, from the feature cache.

The `vit` store holds, per split, `mlp_in_cls`/`mlp_out_cls` (N, L, d) and `mlp_in_patch`/`mlp_out_patch`
(N, P, L, d) for P sampled patch tokens per image. They are read a shard at a time into float16 arrays
(~0.4 GB for the whole Fashion-MNIST training split) and batched from memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from laya.clt.config import TOKEN_KINDS, TOKEN_POSITIONS
from laya.core.config import ConfigError
from laya.storage.shards import ShardPlan
from laya.storage.store import FeatureStore


@dataclass
class Tokens:
    x: torch.Tensor  # (T, L, d) float16: block MLP inputs (after norm2)
    y: torch.Tensor  # (T, L, d) float16: block MLP outputs

    def __len__(self) -> int:
        return self.x.shape[0]

    def batches(self, batch_size: int, shuffle: bool = False,
                seed: int | tuple[int, ...] = 0) -> Iterator[tuple[torch.Tensor, ...]]:
        """(x, y) float32 batches; with shuffle a seeded permutation (seed: e.g. (run seed, epoch)), each token once."""
        order = torch.from_numpy(np.random.default_rng(seed).permutation(len(self))) if shuffle else None
        for lo in range(0, len(self), batch_size):
            if order is None:
                yield self.x[lo:lo + batch_size].float(), self.y[lo:lo + batch_size].float()
            else:
                pick = order[lo:lo + batch_size]
                yield self.x.index_select(0, pick).float(), self.y.index_select(0, pick).float()

    def standardisation(self, chunk: int = 65536) -> tuple[np.ndarray, ...]:
        """Per-layer mean (L, d) and RMS of the centred values (L,), for x and for y (float64 sums)."""
        stats = []
        for data in (self.x, self.y):
            total = np.zeros(data.shape[1:])
            for lo in range(0, len(self), chunk):
                total += data[lo:lo + chunk].double().sum(0).numpy()
            mean = total / len(self)
            sq = np.zeros(data.shape[1])
            for lo in range(0, len(self), chunk):
                sq += ((data[lo:lo + chunk].double().numpy() - mean) ** 2).sum((0, 2))
            stats += [mean, np.sqrt(sq / (len(self) * data.shape[2]))]
        return tuple(stats)  # x_mean, x_scale, y_mean, y_scale


def _read(store: FeatureStore, split: str, name: str, rows: int | None) -> np.ndarray:
    """The first `rows` images (all: None), one shard-aligned slice at a time; patch arrays flattened to (N·P, L, d)."""
    array = store.array(split, name)
    plan = ShardPlan(array.shape[0] if rows is None else min(rows, array.shape[0]), store.info.shard_size)
    out = np.empty((plan.num_rows, *array.shape[1:]), dtype=np.float16)
    for shard in plan:
        out[plan.slice(shard)] = store.read(array, plan.slice(shard))
    return out.reshape(-1, *array.shape[-2:])


def load_tokens(store: FeatureStore, split: str, kind: str, limit: int | None = None) -> Tokens:
    """Tokens of `kind` (cls | patch | both) of `split`; `limit` keeps the first images only."""
    assert kind in TOKEN_KINDS, kind  # validated by CLTConfig
    if not store.info.mlp_io:
        raise ConfigError(f"{store.path}: the cache holds no MLP inputs/outputs; set clt.backbone: "
                          f"{store.info.backbone} (extract.mlp_io: auto caches them for it) or extract.mlp_io: true, "
                          f"and rerun `dvc repro extract@{store.info.backbone}`.")
    parts = list(TOKEN_POSITIONS) if kind == "both" else [kind]
    xs, ys = [], []
    for part in parts:
        xs.append(_read(store, split, f"mlp_in_{part}", limit))
        ys.append(_read(store, split, f"mlp_out_{part}", limit))
    return Tokens(torch.from_numpy(np.concatenate(xs)), torch.from_numpy(np.concatenate(ys)))
