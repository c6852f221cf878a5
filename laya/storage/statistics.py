"""Statistics of a feature store, read chunk-wise: what an ablation replaces a layer with."""

from __future__ import annotations

import numpy as np
import torch

from laya.storage.store import FeatureStore


def layer_means(store: FeatureStore, split: str, layers: list[int]) -> list[np.ndarray]:
    """(d_i,) mean of each selected layer over a split, accumulated chunk-wise in float64."""
    sums, count = None, 0
    for feats, _ in store.batches(split, 1 << 14, layers=layers, dtype=torch.float64):
        batch_sums = [f.sum(0).numpy() for f in feats]
        sums = batch_sums if sums is None else [s + b for s, b in zip(sums, batch_sums)]
        count += len(feats[0])
    return [s / count for s in sums]
