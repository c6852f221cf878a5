"""The evaluate stage's work for one backbone: LOO effects, every attribution method scored against them,
accuracy under single-layer ablation, depth patterns, and the rows the explanations are built from."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from laya.evaluate.ablation import ablation_values, deletion_curve, leave_one_out
from laya.evaluate.config import EvaluateConfig
from laya.evaluate.faithfulness import deletion_at_1, deletion_auc, faithfulness, spearman_rows
from laya.evaluate.methods import HEAD_OF, build_method
from laya.heads import load
from laya.store import FeatureStore


def layer_means(store: FeatureStore, split: str, layers: list[int]) -> list[np.ndarray]:
    """(d_i,) mean of each selected layer over a split, accumulated chunk-wise in float64."""
    sums, count = None, 0
    for feats, _ in store.batches(split, 1 << 14, layers=layers, dtype=torch.float64):
        batch_sums = [f.sum(0).numpy() for f in feats]
        sums = batch_sums if sums is None else [s + b for s, b in zip(sums, batch_sums)]
        count += len(feats[0])
    return [s / count for s in sums]


@dataclass
class Evaluation:
    layers: list[str]
    classes: list[str]
    labels: np.ndarray  # (N,)
    index: np.ndarray  # (N,) row of each sample in the test split
    probs: dict[str, np.ndarray] = field(default_factory=dict)  # head → (N, C)
    effects: dict[str, np.ndarray] = field(default_factory=dict)  # head → (N, L) LOO effects
    ablated_correct: dict[str, np.ndarray] = field(default_factory=dict)  # head → (N, L) correct when i ablated
    attributions: dict[str, np.ndarray] = field(default_factory=dict)  # method → (N, L)
    curves: dict[str, np.ndarray] = field(default_factory=dict)  # method → (N, L + 1) deletion curves
    seconds: dict[str, float] = field(default_factory=dict)  # method → total attribution time


def _append(store: dict, key: str, value: torch.Tensor) -> None:
    store.setdefault(key, []).append(value.detach().float().numpy())


def evaluate_heads(store: FeatureStore, heads_dir: str | Path, cfg: EvaluateConfig, seed: int,
                   means: list[np.ndarray] | None = None) -> Evaluation:
    """Run every method of cfg.methods on the test split (first cfg.max_samples rows) in batches, for the heads
    trained with `seed`. `means`: the layers' training-set means when already computed (`layer_means`)."""
    heads_dir = Path(heads_dir)
    needed = sorted({HEAD_OF.get(m, "laya") for m in cfg.methods})
    heads = {name: load(heads_dir / name / f"seed{seed}") for name in needed}
    layers = heads["laya" if "laya" in heads else needed[0]].config["layer_indices"]
    values = ablation_values(cfg.ablation, means if means is not None else layer_means(store, "train", layers))
    methods = {m: build_method(m, values, seed) for m in cfg.methods}
    total = min(cfg.max_samples or store.num_samples("test"), store.num_samples("test"))
    raw: dict[str, dict[str, list]] = {"probs": {}, "effects": {}, "ablated_correct": {}, "attributions": {},
                                       "curves": {}}
    seconds = dict.fromkeys(cfg.methods, 0.0)
    labels_seen, seen, warm = [], 0, False
    for feats, labels in store.batches("test", cfg.batch_size, layers=layers):
        feats, labels = [f[:total - seen] for f in feats], labels[:total - seen]
        if len(labels) == 0:
            break
        if not warm:  # first calls import Captum and fill caches: keep them out of the timings
            for method_name, method in methods.items():
                head = heads[HEAD_OF.get(method_name, "laya")]
                method.attribute(head, [f[:2] for f in feats], head([f[:2] for f in feats]).argmax(1))
            methods, warm = {m: build_method(m, values, seed) for m in cfg.methods}, True
        loo = {}
        for name, head in heads.items():
            loo[name] = leave_one_out(head, feats, values)
            _append(raw["probs"], name, loo[name].probs)
            _append(raw["effects"], name, loo[name].effects)
            _append(raw["ablated_correct"], name, loo[name].ablated_predictions == labels[:, None])
        for method_name, method in methods.items():
            head_name = HEAD_OF.get(method_name, "laya")
            target = loo[head_name].target
            started = time.perf_counter()
            attribution = method.attribute(heads[head_name], feats, target)
            seconds[method_name] += time.perf_counter() - started
            _append(raw["attributions"], method_name, attribution)
            _append(raw["curves"], method_name, deletion_curve(heads[head_name], feats, values, attribution, target))
        labels_seen.append(labels.numpy())
        seen += len(labels)
    ev = Evaluation([store.layers[i] for i in layers], list(store.attrs["classes"]), np.concatenate(labels_seen),
                    store.array("test", "index")[:seen] if "test/index" in store.root else np.arange(seen))
    for key, per_name in raw.items():
        setattr(ev, key, {name: np.concatenate(chunks) for name, chunks in per_name.items()})
    ev.seconds = seconds
    return ev


def metrics(ev: Evaluation) -> dict:
    """DVC metrics: faithfulness/deletion per method, ms per explanation, accuracy intact and per ablated layer."""
    out: dict[str, dict] = {"faithfulness": {}, "faithfulness_undefined": {}, "deletion_at_1": {},
                            "deletion_auc": {}, "ms_per_explanation": {}, "accuracy": {}, "ablated_accuracy": {}}
    n = len(ev.labels)
    for method, attribution in ev.attributions.items():
        effects = ev.effects[HEAD_OF.get(method, "laya")]
        scores = faithfulness(attribution, effects)
        out["faithfulness"][method] = round(scores["faithfulness"], 6)
        out["faithfulness_undefined"][method] = scores["faithfulness_undefined"]
        out["deletion_at_1"][method] = round(deletion_at_1(attribution, effects), 6)
        out["deletion_auc"][method] = round(deletion_auc(ev.curves[method]), 6)
        out["ms_per_explanation"][method] = round(1000 * ev.seconds[method] / n, 4)
    for head, probs in ev.probs.items():
        out["accuracy"][head] = round(float((probs.argmax(1) == ev.labels).mean()), 6)
        out["ablated_accuracy"][head] = {layer: round(float(ev.ablated_correct[head][:, i].mean()), 6)
                                         for i, layer in enumerate(ev.layers)}
    if "laya" in ev.attributions:
        alpha = ev.attributions["laya"]
        out["alpha_entropy"] = round(float(-(alpha * np.log(np.clip(alpha, 1e-12, None))).sum(1).mean()), 6)
    return out


def summarise_seeds(per_seed: list[dict]) -> dict:
    """Metrics over several seeds: every number becomes its mean; `<group>_std` holds the sample std of the
    faithfulness and Deletion@1 groups (ddof=1)."""
    def mean_of(values):
        if isinstance(values[0], dict):
            return {k: mean_of([v[k] for v in values]) for k in values[0]}
        return round(float(np.mean(values)), 6) if isinstance(values[0], float) else int(np.sum(values))

    out = mean_of(per_seed)
    for group in ("faithfulness", "deletion_at_1"):
        out[f"{group}_std"] = {m: round(float(np.std([s[group][m] for s in per_seed], ddof=1)), 6)
                               if len(per_seed) > 1 else 0.0 for m in per_seed[0][group]}
    out["seeds"] = len(per_seed)
    return out


def depth_patterns(ev: Evaluation) -> dict:
    """Per-class mean α (class × layer), split by correct/wrong prediction; method agreement (mean Spearman)."""
    patterns: dict = {"layers": ev.layers, "classes": ev.classes}
    if "laya" in ev.attributions:
        alpha, predicted = ev.attributions["laya"], ev.probs["laya"].argmax(1)
        correct = predicted == ev.labels
        patterns["alpha_mean"] = alpha.mean(0).tolist()
        patterns["alpha_std"] = alpha.std(0).tolist()

        def by_class(mask):
            return [alpha[mask & (ev.labels == c)].mean(0).tolist() if (mask & (ev.labels == c)).any() else None
                    for c in range(len(ev.classes))]

        patterns["alpha_by_class"] = by_class(np.ones_like(correct))
        patterns["alpha_by_class_correct"] = by_class(correct)
        patterns["alpha_by_class_wrong"] = by_class(~correct)
    names = list(ev.attributions)
    agreement = np.eye(len(names))
    for i, a in enumerate(names):
        for j in range(i + 1, len(names)):
            rho = spearman_rows(ev.attributions[a], ev.attributions[names[j]])
            agreement[i, j] = agreement[j, i] = float(np.nanmean(rho)) if not np.isnan(rho).all() else float("nan")
    patterns["agreement"] = {"methods": names, "spearman": agreement.round(6).tolist()}
    patterns["deletion_curves"] = {m: c.mean(0).round(6).tolist() for m, c in ev.curves.items()}
    return patterns
