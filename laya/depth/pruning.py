"""Layer pruning: drop the k least important layers by a ranking, retrain the head on the rest, and truncate the
backbone after the deepest kept layer.

Rankings (removal order, least important first): `alpha` — mean α(x) of the trained head over the training
split; `scalarmix` — the ScalarMix head's softmax(w); `loo` — the mean leave-one-layer-out effect of the trained
head on the first training rows; `random<i>` — seeded random orders (the floor)."""

from __future__ import annotations

import numpy as np
import torch

from laya.ablation import ablation_values, leave_one_out
from laya.heads import LayerHead
from laya.storage.statistics import layer_means
from laya.storage.store import FeatureStore


@torch.no_grad()
def mean_weights(store: FeatureStore, head: LayerHead, layers: list[int], split: str = "train",
                 batch_size: int = 4096) -> np.ndarray:
    """(L,) mean over `split` of the head's own layer weights (α(x) for LAYA, softmax(w) for ScalarMix)."""
    head.eval()
    total, count = None, 0
    for feats, _ in store.batches(split, batch_size, layers=layers):
        weights = head.layer_weights(feats).double().sum(0)
        total = weights if total is None else total + weights
        count += len(feats[0])
    return (total / count).numpy()


@torch.no_grad()
def mean_loo_effects(store: FeatureStore, head: LayerHead, layers: list[int], samples: int,
                     batch_size: int = 1000) -> np.ndarray:
    """(L,) mean LOO effect (mean ablation) of each layer over the first `samples` training rows."""
    head.eval()
    values = ablation_values("mean", layer_means(store, "train", layers))
    total, seen = np.zeros(len(layers)), 0
    for feats, _ in store.batches("train", batch_size, layers=layers):
        feats = [f[:samples - seen] for f in feats]
        if len(feats[0]) == 0:
            break
        total += leave_one_out(head, feats, values).effects.double().sum(0).numpy()
        seen += len(feats[0])
    return total / seen


def removal_order(importance: np.ndarray) -> list[int]:
    """Positions 0..L−1, least important first (ties: the shallower layer first — a stable sort)."""
    return [int(i) for i in np.argsort(importance, kind="stable")]


def random_orders(num_layers: int, count: int, seed: int) -> list[list[int]]:
    rng = np.random.default_rng(np.random.SeedSequence([seed, 7]))
    return [[int(i) for i in rng.permutation(num_layers)] for _ in range(count)]


def kept_after(order: list[int], removed: int, layers: list[int]) -> tuple[int, ...]:
    """Store indices of `layers` kept once the first `removed` positions of `order` are dropped."""
    gone = set(order[:removed])
    return tuple(layer for position, layer in enumerate(layers) if position not in gone)


def pruning_curve(order: list[int], layers: list[int], accuracy: dict[tuple[int, ...], float],
                  flops: list[int], names: list[str]) -> list[dict]:
    """Per k = 0..L−1 removed: the kept layers, the retrained head's test accuracy, and the backbone FLOPs
    still computed (through the deepest kept layer) — absolute and as a fraction of the whole backbone's."""
    points = []
    for removed in range(len(layers)):
        kept = kept_after(order, removed, layers)
        deepest = max(layers.index(layer) for layer in kept)
        points.append({"removed": removed, "kept": [names[layers.index(layer)] for layer in kept],
                       "test_accuracy": round(accuracy[kept], 6), "flops": flops[deepest],
                       "flops_fraction": round(flops[deepest] / flops[-1], 6)})
    return points
