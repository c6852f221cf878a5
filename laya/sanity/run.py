"""Sanity checks for layer attributions (Adebayo et al. 2018, adapted from pixels to layers).

Model randomisation: ρ_step = mean over test inputs of Spearman(A_trained(x), A_step(x)) across layers, where
A_step is the same method on the head with its weights re-initialised from the output layer down (laya.sanity.
randomise.cascade); both explain the trained head's predicted class. Data randomisation: the same ρ against a
head of the same architecture trained on permuted training labels. An attribution whose ρ stays near 1 when
the weights (or the labels) it claims to explain are destroyed fails the check.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from laya.ablation import ablation_values
from laya.core.config import ConfigError
from laya.core.parallel import run_jobs
from laya.evaluate.config import EvaluateConfig, SanityConfig
from laya.evaluate.faithfulness import spearman_rows
from laya.evaluate.methods import build_method
from laya.heads import LayerHead, build
from laya.protocols import units
from laya.records.sanity import HeadSanity, SanityRecord
from laya.sanity.randomise import PermutedLabels, cascade
from laya.settings import BackboneSettings
from laya.storage.statistics import layer_means
from laya.storage.store import FeatureStore
from laya.train.config import TrainConfig
from laya.train.loop import fit_head
from laya.trained import load_heads, trained_heads, trained_seeds


def similarity(a: np.ndarray, b: np.ndarray) -> tuple[float, int]:
    """(mean Spearman of the rows of a and b (N, L) over the rows where it is defined, undefined rows)."""
    rho = spearman_rows(a, b)
    defined = ~np.isnan(rho)
    return (round(float(rho[defined].mean()), 6) if defined.any() else float("nan")), int((~defined).sum())


def attributions(head: LayerHead, feats: list[torch.Tensor], target: torch.Tensor,
                 methods: dict[str, object]) -> dict[str, np.ndarray]:
    """{name: (N, L) attributions} of `head` by each built method (laya.evaluate.methods.build_method)."""
    head.eval()
    return {m: method.attribute(head, feats, target).float().cpu().numpy() for m, method in methods.items()}


def _accuracy(head: LayerHead, feats: list[torch.Tensor], labels: torch.Tensor) -> float:
    with torch.no_grad():
        return round(float((head(feats).argmax(1) == labels).float().mean()), 6)


def random_label_head(head: LayerHead, store: FeatureStore, layers: list[int], means: list[np.ndarray],
                      train: TrainConfig, cfg: SanityConfig, device) -> tuple[LayerHead, float]:
    """A fresh head of `head`'s kind and config trained on permuted training labels for cfg.label_epochs (the
    weights of its best validation epoch, all near chance); returns it and its last training accuracy."""
    torch.manual_seed(cfg.seed)
    fresh = build(head.name, head.dims, head.num_classes, config=head.config)
    fresh.set_ablation_values(means)
    recipe = replace(train, epochs=cfg.label_epochs, patience=cfg.label_epochs, seeds=[cfg.seed])
    fit = fit_head(fresh, PermutedLabels(store, cfg.seed), recipe, layers, cfg.seed, device,
                   desc=f"{head.name} on permuted labels")
    return fresh.eval(), round(float(fit.history[-1]["train_acc"]), 6)


def check_head(head: LayerHead, store: FeatureStore, layers: list[int], means: list[np.ndarray],
               train: TrainConfig, evaluate: EvaluateConfig, device: torch.device | str = "cpu") -> HeadSanity:
    """Both checks (params evaluate.sanity; the methods with evaluate's ablation and ig_steps) for one trained head
    on the first evaluate.sanity.max_samples test inputs."""
    cfg = evaluate.sanity_config()
    head = head.to(device).eval()
    values = ablation_values(evaluate.ablation, means, device)
    methods = {m: build_method(m, values, cfg.seed, evaluate.ig_steps) for m in cfg.methods}
    feats, labels = next(iter(store.batches("test", cfg.max_samples, layers=layers)))
    feats, labels = [f.to(device) for f in feats], labels.to(device)
    with torch.no_grad():
        target = head(feats).argmax(1)
    trained = attributions(head, feats, target, methods)
    out: dict = {"samples": len(labels), "accuracy": {"trained": _accuracy(head, feats, labels)},
                 "model_randomisation": {m: {} for m in cfg.methods}, "data_randomisation": {},
                 "undefined": {m: {} for m in cfg.methods}}
    for step, randomised in cascade(head.cpu(), cfg.seed):
        randomised = randomised.to(device)
        out["accuracy"][step] = _accuracy(randomised, feats, labels)
        for method, a in attributions(randomised, feats, target, methods).items():
            out["model_randomisation"][method][step], out["undefined"][method][step] = similarity(trained[method], a)
    shuffled, train_accuracy = random_label_head(head.cpu(), store, layers, means, train, cfg, device)
    shuffled = shuffled.to(device)
    out["accuracy"]["random_labels"] = _accuracy(shuffled, feats, labels)
    out["random_labels_train_accuracy"] = train_accuracy
    for method, a in attributions(shuffled, feats, target, methods).items():
        out["data_randomisation"][method], out["undefined"][method]["random_labels"] = similarity(trained[method], a)
    return HeadSanity.model_validate(out)


@dataclass(frozen=True)
class SanityRun:
    """Both checks for one head (a job for laya.core.parallel.run_jobs)."""

    head: LayerHead
    store: FeatureStore
    layers: list[int]
    means: list[np.ndarray]
    train: TrainConfig
    evaluate: EvaluateConfig
    device: str


def check_run(run: SanityRun) -> HeadSanity:
    return check_head(run.head, run.store, run.layers, run.means, run.train, run.evaluate, run.device)


def sanity_checks(settings: BackboneSettings, evaluate: EvaluateConfig, features: str | Path,
                  heads_dir: str | Path, device: torch.device | str = "cpu", workers: int = 1) -> SanityRecord:
    """The stage sanity@<name>: both checks for each of evaluate.sanity.heads trained for the backbone, on the
    first evaluated seed's heads (protocol joint: the first joint model whose cache has one), heads side by side
    in `workers` processes (laya.core.parallel)."""
    cfg = evaluate.sanity_config()
    made = trained_heads(heads_dir) or []
    heads = [h for h in cfg.heads if h in made]
    if not heads:
        raise ConfigError(f"evaluate.sanity.heads: none of {cfg.heads} was trained for {settings.name} (trained: "
                          f"{made}); add one of them to heads.names.")
    store, seed = next((FeatureStore.open(unit.path(features)), seeds[0])
                       for unit in units(settings.backbone, settings.backbone_key)
                       if (seeds := trained_seeds(evaluate.seeds, heads_dir, evaluate.heads[0], unit.seeds)))
    loaded, _, layers = load_heads(heads_dir, heads, seed, store, settings.name)
    means = layer_means(store, "train", layers)
    runs = [SanityRun(head, store, layers, means, settings.train, evaluate, str(device)) for head in loaded.values()]
    return SanityRecord(seed=seed, ablation=evaluate.ablation, heads=dict(zip(loaded, run_jobs(check_run, runs,
                                                                                                workers))))
