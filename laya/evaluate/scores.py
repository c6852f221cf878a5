"""One seed's heads scored on a store: LOO effects, every attribution method scored against them, accuracy
under single-layer ablation, depth patterns, and the rows the explanations are built from."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from laya.ablation import ablation_values, deletion_curve, leave_one_out
from laya.core.seeds import mean_std
from laya.evaluate.config import EvaluateConfig
from laya.evaluate.failure import HeadOutputs, alpha_shift_test, detection_metrics, head_outputs
from laya.evaluate.faithfulness import deletion_at_1, deletion_auc, faithfulness, spearman_rows
from laya.evaluate.methods import INTRINSIC, PROBE, build_method
from laya.heads import LayerHead
from laya.storage.statistics import layer_means
from laya.storage.store import FeatureStore

Pair = tuple[str, str]  # (method, head): what explains, and what is explained


def pair_label(pair: Pair) -> str:
    """'ig@laya': method ig explaining the laya head (figure labels, depth-pattern keys)."""
    return f"{pair[0]}@{pair[1]}"


@dataclass
class Evaluation:
    layers: list[str]
    classes: list[str]
    labels: np.ndarray  # (N,)
    index: np.ndarray  # (N,) row of each sample in the test split
    probs: dict[str, np.ndarray] = field(default_factory=dict)  # head → (N, C)
    effects: dict[str, np.ndarray] = field(default_factory=dict)  # head → (N, L) LOO effects
    ablated_correct: dict[str, np.ndarray] = field(default_factory=dict)  # head → (N, L) correct when i ablated
    attributions: dict[Pair, np.ndarray] = field(default_factory=dict)  # (method, head) → (N, L)
    curves: dict[Pair, np.ndarray] = field(default_factory=dict)  # (method, head) → (N, L + 1) deletion curves
    seconds: dict[Pair, float] = field(default_factory=dict)  # (method, head) → total attribution time
    explained: str | None = None  # the head whose α the failure detectors read (cfg.explain)
    val: HeadOutputs | None = None  # that head's probabilities and α on the whole val split (detectors' fit)

    def test_outputs(self) -> HeadOutputs | None:
        """The explained head's probabilities and α on the evaluated test rows."""
        if self.explained is None:
            return None
        return HeadOutputs(self.probs[self.explained], self.attributions[(INTRINSIC, self.explained)], self.labels)


def _append(store: dict, key, value: torch.Tensor) -> None:
    store.setdefault(key, []).append(value.detach().float().cpu().numpy())


def evaluate_heads(store: FeatureStore, heads: dict[str, LayerHead], layers: list[int], cfg: EvaluateConfig,
                   seed: int, means: list[np.ndarray] | None = None,
                   device: torch.device | str = "cpu") -> Evaluation:
    """Run every (method, head) pair of cfg.methods on the test split (first cfg.max_samples rows) in batches, for
    `heads` (name → head trained with `seed`, all reading the store's `layers`). `means`: the layers'
    training-set means when already computed (`layer_means`)."""
    heads = {name: head.to(device).eval() for name, head in heads.items()}
    values = ablation_values(cfg.ablation, means if means is not None else layer_means(store, "train", layers),
                             device)
    pairs = cfg.pairs
    total = min(cfg.max_samples or store.num_samples("test"), store.num_samples("test"))
    raw: dict[str, dict] = {"probs": {}, "effects": {}, "ablated_correct": {}, "attributions": {}, "curves": {}}
    seconds = dict.fromkeys(pairs, 0.0)
    methods, labels_seen, seen = None, [], 0
    for feats, labels in store.batches("test", cfg.batch_size, layers=layers):
        feats, labels = [f[:total - seen].to(device) for f in feats], labels[:total - seen].to(device)
        if len(labels) == 0:
            break
        if methods is None:  # first calls import Captum and fill caches: keep them out of the timings
            probes = heads.get(PROBE)
            for method, head in pairs:
                warm = [f[:2] for f in feats]
                build_method(method, values, seed, cfg.ig_steps, probes).attribute(heads[head], warm,
                                                                                   heads[head](warm).argmax(1))
            methods = {pair: build_method(pair[0], values, seed, cfg.ig_steps, probes) for pair in pairs}
        loo = {}
        for name in cfg.heads:
            loo[name] = leave_one_out(heads[name], feats, values)
            _append(raw["probs"], name, loo[name].probs)
            _append(raw["effects"], name, loo[name].effects)
            _append(raw["ablated_correct"], name, loo[name].ablated_predictions == labels[:, None])
        for pair, method in methods.items():
            head, target = heads[pair[1]], loo[pair[1]].target
            started = time.perf_counter()
            attribution = method.attribute(head, feats, target)
            if attribution.is_cuda:
                torch.cuda.synchronize()
            seconds[pair] += time.perf_counter() - started
            _append(raw["attributions"], pair, attribution)
            _append(raw["curves"], pair, deletion_curve(head, feats, values, attribution, target))
        labels_seen.append(labels.cpu().numpy())
        seen += len(labels)
    ev = Evaluation([store.layers[i] for i in layers], list(store.info.classes), np.concatenate(labels_seen),
                    store.source_rows("test")[:seen])
    for key, per_name in raw.items():
        setattr(ev, key, {name: np.concatenate(chunks) for name, chunks in per_name.items()})
    ev.seconds = seconds
    if cfg.explain is not None and (INTRINSIC, cfg.explain) in pairs:
        ev.explained = cfg.explain
        ev.val = head_outputs(store, heads[cfg.explain], layers, "val", cfg.batch_size, device)
    return ev


def _by_head(values: dict[Pair, float]) -> dict[str, dict[str, float]]:
    """{(method, head): v} → {head: {method: v}}, the layout of the metrics files."""
    out: dict[str, dict[str, float]] = {}
    for (method, head), value in values.items():
        out.setdefault(head, {})[method] = value
    return out


def metrics(ev: Evaluation) -> dict:
    """DVC metrics, per head and method: faithfulness, undefined samples, Deletion@1, deletion AUC; per head:
    accuracy intact and with each layer ablated, the entropy of its own layer weights (intrinsic pairs); the
    explained head's error detection on test by MSP, α and both (laya.evaluate.failure)."""
    groups: dict[str, dict[Pair, float]] = {"faithfulness": {}, "faithfulness_undefined": {}, "deletion_at_1": {},
                                            "deletion_auc": {}}
    for pair, attribution in ev.attributions.items():
        effects = ev.effects[pair[1]]
        scores = faithfulness(attribution, effects)
        groups["faithfulness"][pair] = round(scores["faithfulness"], 6)
        groups["faithfulness_undefined"][pair] = scores["faithfulness_undefined"]
        groups["deletion_at_1"][pair] = round(deletion_at_1(attribution, effects), 6)
        groups["deletion_auc"][pair] = round(deletion_auc(ev.curves[pair]), 6)
    out: dict[str, dict] = {name: _by_head(values) for name, values in groups.items()}
    out["accuracy"], out["ablated_accuracy"], out["alpha_entropy"] = {}, {}, {}
    for head, probs in ev.probs.items():
        out["accuracy"][head] = round(float((probs.argmax(1) == ev.labels).mean()), 6)
        out["ablated_accuracy"][head] = {layer: round(float(ev.ablated_correct[head][:, i].mean()), 6)
                                         for i, layer in enumerate(ev.layers)}
    agreement = probe_agreement(ev.attributions)
    if agreement:
        out["probe_agreement"] = agreement
    for (method, head), alpha in ev.attributions.items():
        if method == INTRINSIC:
            out["alpha_entropy"][head] = round(float(-(alpha * np.log(np.clip(alpha, 1e-12, None))).sum(1).mean()), 6)
    if ev.val is not None:
        out["failure_detection"] = {"head": ev.explained, **detection_metrics(ev.val, ev.test_outputs())}
    return out


def probe_agreement(attributions: dict[Pair, np.ndarray]) -> dict[str, dict[str, float]]:
    """{head: {method: mean over inputs of Spearman(the method's attribution, the probe attribution)}} for every
    head the `probe` method explains: does an attribution say more than "which layer alone decodes the class"?"""
    out: dict[str, dict[str, float]] = {}
    for (method, head), attribution in attributions.items():
        probe = attributions.get((PROBE, head))
        if probe is not None and method != PROBE:
            rho = spearman_rows(attribution, probe)
            out.setdefault(head, {})[method] = round(float(np.nanmean(rho)), 6) if np.isfinite(rho).any() else None
    return out


def timings(ev: Evaluation) -> dict:
    """Wall-clock cost per explanation, {head: {method: ms}} — not a DVC output (it differs run to run)."""
    n = len(ev.labels)
    return {"ms_per_explanation": _by_head({pair: round(1000 * s / n, 4) for pair, s in ev.seconds.items()})}


SUMMED = ("faithfulness_undefined",)  # counts of samples: they add up over seeds; every other number is a mean
WITH_STD = ("faithfulness", "deletion_at_1", "failure_detection")  # groups that also get `<group>_std` over seeds


def summarise_seeds(per_seed: list[dict]) -> dict:
    """Metrics over several seeds: counts (SUMMED groups) are summed, every other number becomes its mean;
    `<group>_std` holds the sample std of the WITH_STD groups (laya.core.seeds.mean_std). Decided by group, never
    by Python type."""
    def combine(values: list, reduce):
        if isinstance(values[0], dict):
            return {k: combine([v[k] for v in values], reduce) for k in values[0]}
        return reduce(values)

    def undefined(values):  # a number missing in some seed (None), or a label such as a head's name
        return any(v is None for v in values) or isinstance(values[0], str)

    def total(values):
        return int(np.sum(values))

    def mean(values):
        return values[0] if undefined(values) else mean_std(values)[0]

    def std(values):
        return values[0] if undefined(values) else mean_std(values)[1]

    out = {}
    for group in per_seed[0]:
        values = [s[group] for s in per_seed]
        out[group] = combine(values, total if group in SUMMED else mean)
        if group in WITH_STD:
            out[f"{group}_std"] = combine(values, std)
    out["seeds"] = len(per_seed)
    return out


def depth_patterns(ev: Evaluation, explain: str | None, shift_resamples: int = 1000, seed: int = 0) -> dict:
    """Per-class mean α of head `explain` (class × layer), split by correct/wrong prediction, and per class a
    permutation test of that shift (`shift_resamples` relabellings); the agreement of every pair of attributions
    (mean Spearman); mean deletion curves."""
    patterns: dict = {"layers": ev.layers, "classes": ev.classes}
    if explain is not None and (INTRINSIC, explain) in ev.attributions:
        alpha, predicted = ev.attributions[(INTRINSIC, explain)], ev.probs[explain].argmax(1)
        correct = predicted == ev.labels
        patterns["alpha_head"] = explain
        patterns["alpha_mean"] = alpha.mean(0).tolist()
        patterns["alpha_std"] = alpha.std(0).tolist()

        def by_class(mask):
            return [alpha[mask & (ev.labels == c)].mean(0).tolist() if (mask & (ev.labels == c)).any() else None
                    for c in range(len(ev.classes))]

        patterns["alpha_by_class"] = by_class(np.ones_like(correct))
        patterns["alpha_by_class_correct"] = by_class(correct)
        patterns["alpha_by_class_wrong"] = by_class(~correct)
        patterns["alpha_shift_by_class"] = alpha_shift_test(alpha, ev.labels, ~correct, len(ev.classes),
                                                            shift_resamples, seed)
    pairs = list(ev.attributions)
    agreement = np.eye(len(pairs))
    for i, a in enumerate(pairs):
        for j in range(i + 1, len(pairs)):
            rho = spearman_rows(ev.attributions[a], ev.attributions[pairs[j]])
            agreement[i, j] = agreement[j, i] = float(np.nanmean(rho)) if not np.isnan(rho).all() else float("nan")
    patterns["agreement"] = {"methods": [pair_label(p) for p in pairs], "spearman": agreement.round(6).tolist()}
    patterns["deletion_curves"] = {pair_label(p): c.mean(0).round(6).tolist() for p, c in ev.curves.items()}
    return patterns
