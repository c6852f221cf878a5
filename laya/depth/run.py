"""The whole `depth@<name>` stage's work: layer rankings, the heads retrained on layer subsets (pruned sets and
early-exit prefixes share them), the pruning curves and the early-exit sweeps, with backbone FLOPs counted."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from laya.backbones import load_backbone
from laya.depth.config import DepthConfig
from laya.depth.early_exit import RULES, exit_scores, flops_within, frontier_area, sweep
from laya.depth.flops import cumulative_flops
from laya.depth.pruning import (
    kept_after,
    mean_loo_effects,
    mean_weights,
    pruning_curve,
    random_orders,
    removal_order,
)
from laya.depth.subsets import SubsetResult, fit_subsets
from laya.heads import LayerHead
from laya.records.depth import DepthRecord
from laya.storage.store import FeatureStore
from laya.train.config import HeadsConfig, TrainConfig
from laya.trained import load_checked

NEVER = 1.01  # an exit threshold above every score: no input leaves early


def load_trained(heads_dir: str | Path, name: str, seed: int, store: FeatureStore, backbone: str
                 ) -> tuple[LayerHead, list[int]]:
    """Head `name` trained with `seed` on this very store, and the store layers it reads."""
    head, card = load_checked(heads_dir, name, seed, store, backbone,
                              "depth.head must be among heads.names and depth.seed among train.seeds")
    return head, list(card.layer_indices)


def backbone_flops(backbone_dir: str | Path, names: list[str]) -> dict[str, int]:
    """Per-input FLOPs of the frozen backbone through each of the cached layers `names` (laya.depth.flops)."""
    model, card = load_backbone(backbone_dir)
    example = torch.zeros(1, card.in_chans, card.img_size, card.img_size)
    return dict(zip(names, cumulative_flops(model, example, names)))


def rankings(store: FeatureStore, heads_dir: str | Path, cfg: DepthConfig, heads: list[str], head: LayerHead,
             layers: list[int], backbone: str) -> tuple[dict[str, list[int]], dict[str, list[float]]]:
    """Removal orders (positions in `layers`, least important first) and the importances they sort; `head` is the
    trained cfg.head that reads `layers`."""
    importance = {"alpha": mean_weights(store, head, layers)}
    if "scalarmix" in heads:
        scalarmix, scalarmix_layers = load_trained(heads_dir, "scalarmix", cfg.seed, store, backbone)
        if scalarmix_layers == layers:
            importance["scalarmix"] = mean_weights(store, scalarmix, layers)
    importance["loo"] = mean_loo_effects(store, head, layers, cfg.loo_samples)
    orders = {name: removal_order(values) for name, values in importance.items()}
    for i, order in enumerate(random_orders(len(layers), cfg.random_orders, cfg.seed)):
        orders[f"random{i}"] = order
    return orders, {name: [round(float(v), 6) for v in values] for name, values in importance.items()}


def retrain_recipe(train: TrainConfig, cfg: DepthConfig) -> TrainConfig:
    """The backbone's train recipe (overrides applied), shortened to depth.epochs / depth.patience, one seed."""
    return replace(train, epochs=cfg.epochs, patience=min(cfg.patience, cfg.epochs), seeds=[cfg.seed])


def early_exit(prefix: list[SubsetResult], flops: list[int], cfg: DepthConfig) -> dict:
    """Every rule's sweep over the thresholds, its area and the FLOPs it needs to stay within tolerance."""
    labels = prefix[-1].test.labels
    correct = np.stack([r.test.probs.argmax(1) == labels for r in prefix], 1)  # (N, L)
    full = float(correct[:, -1].mean())
    thresholds = np.append(np.linspace(0, 1, cfg.thresholds), NEVER)
    out = {"full_accuracy": round(full, 6), "prefix_accuracy": [round(float(c), 6) for c in correct.mean(0)],
           "rules": {}}
    for rule in RULES:
        points = sweep(exit_scores([r.val for r in prefix], [r.test for r in prefix], rule), correct, flops,
                       thresholds)
        out["rules"][rule] = {"area": round(frontier_area(points), 6),
                              "flops_within_tolerance": flops_within(points, full, cfg.tolerance), "points": points}
    return out


def depth_uses(backbone: str, store: FeatureStore, heads_dir: str | Path, layer_flops: dict[str, int],
               cfg: DepthConfig, heads: HeadsConfig, train: TrainConfig, workers: int = 1) -> DepthRecord:
    """The stage's record: rankings, pruning curves and early-exit sweeps for one backbone's cache, from
    heads retrained on layer subsets. `layer_flops`: the backbone's FLOPs per input through each store layer
    (`backbone_flops`)."""
    head, layers = load_trained(heads_dir, cfg.head, cfg.seed, store, backbone)
    names = [store.layers[i] for i in layers]
    flops = [layer_flops[name] for name in names]
    orders, importance = rankings(store, heads_dir, cfg, heads.names, head, layers, backbone)
    pruned = [kept_after(order, k, layers) for order in orders.values() for k in range(len(layers))]
    prefixes = [tuple(layers[:k]) for k in range(1, len(layers) + 1)]
    print(f"depth@{backbone}: {len(layers)} layers, FLOPs per input through each {flops}; retraining "
          f"{len(set(pruned + prefixes))} {cfg.head} heads ({len(orders)} pruning orders, {len(prefixes)} prefixes)",
          flush=True)
    results = fit_subsets(store, cfg.head, heads.config(cfg.head), pruned + prefixes, retrain_recipe(train, cfg),
                          cfg.seed, workers)
    accuracy = {kept: r.test_accuracy for kept, r in results.items()}
    curves = {name: pruning_curve(order, layers, accuracy, flops, names) for name, order in orders.items()}
    full = accuracy[tuple(layers)]
    summary = {name: {"accuracy_one_removed": points[1]["test_accuracy"] if len(points) > 1 else None,
                      "mean_accuracy_removed": round(float(np.mean([p["test_accuracy"] for p in points[1:]])), 6)
                      if len(points) > 1 else None,
                      "flops_within_tolerance": min(p["flops_fraction"] for p in points
                                                    if p["test_accuracy"] >= full - cfg.tolerance)}
               for name, points in curves.items()}
    metrics = {"backbone": backbone, "head": cfg.head, "seed": cfg.seed, "layers": names, "flops": flops,
               "tolerance": cfg.tolerance,
               "pruning": {"full_accuracy": round(full, 6), "importance": importance,
                           "orders": {name: [names[i] for i in order] for name, order in orders.items()},
                           "summary": summary, "curves": curves},
               "early_exit": early_exit([results[p] for p in prefixes], flops, cfg)}
    return DepthRecord.model_validate(metrics)
