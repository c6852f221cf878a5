"""Every head × every seed from one feature store: train, score on test, save, summarise as DVC metrics."""

from __future__ import annotations

import csv
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from laya.backbones.card import BackboneCard
from laya.core.io import atomic_path, require_free_space, write_json
from laya.core.parallel import run_jobs
from laya.early_stopping import reached_cap
from laya.heads import JOINT_HEAD, build, head_folder, save
from laya.protocols.units import units
from laya.storage.statistics import layer_means
from laya.storage.store import FeatureStore
from laya.train.config import HeadsConfig, TrainConfig
from laya.train.joint import adopt_joint_head
from laya.train.loop import fit_head, layer_accuracy, predict, short_average_warning

if TYPE_CHECKING:
    from laya.settings import BackboneSettings

CURVE_FIELDS = ("epoch", "train_loss", "train_acc", "val_loss", "val_acc")


@dataclass(frozen=True)
class HeadRun:
    """One head × seed to train (a job for laya.core.parallel.run_jobs: everything it needs, picklable)."""

    store: FeatureStore
    name: str
    seed: int
    config: object  # the head's config dataclass (heads.<name>)
    layers: list[int]
    means: list[np.ndarray]  # the layers' training-set means: ablation values of heads that train on LOO effects
    cfg: TrainConfig
    out_dir: Path
    device: str


def fit_one(run: HeadRun) -> dict:
    """Train, score on test and save one head; returns {"test_accuracy", "macro_f1", "best_epoch", "history",
    "capped" (it stopped at train.epochs, not by early stopping), "layer_accuracy" ({layer: test accuracy of its
    own prediction} for per-layer probes, else None), "seconds"}."""
    store, layers = run.store, run.layers
    torch.manual_seed(run.seed)
    head = build(run.name, [store.dims[i] for i in layers], len(store.info.classes), config=run.config)
    head.set_ablation_values(run.means)
    backbone = store.info.backbone
    started = time.perf_counter()
    fit = fit_head(head, store, run.cfg, layers, run.seed, run.device, desc=f"{backbone}/{run.name} s{run.seed}")
    test = predict(head, store, "test", layers, device=run.device)
    per_layer = layer_accuracy(head, store, "test", layers, device=run.device)
    result = {"test_accuracy": test.accuracy, "macro_f1": test.macro_f1(), "best_epoch": fit.best_epoch,
              "layer_accuracy": None if per_layer is None else dict(zip([store.layers[i] for i in layers],
                                                                          per_layer)),
              "history": fit.history, "capped": reached_cap(len(fit.history), fit.best_epoch, run.cfg.epochs,
                                                            run.cfg.patience),
              "seconds": time.perf_counter() - started}
    save(head.cpu(), head_folder(run.out_dir, run.name, run.seed), backbone=backbone, seed=run.seed,
         layers=[store.layers[i] for i in layers], layer_indices=layers, cache_fingerprint=store.fingerprint.hash,
         **{k: v for k, v in result.items() if k not in ("seconds", "capped", "layer_accuracy")})
    print(f"  {backbone}/{run.name:9s} seed {run.seed}: test acc {test.accuracy:.4f}, macro-F1 "
          f"{result['macro_f1']:.4f}, best epoch {fit.best_epoch}/{len(fit.history)}"
          f"{' (stopped at train.epochs: not converged)' if result['capped'] else ''}, {result['seconds']:.1f}s",
          flush=True)
    return result


def run_cost(run: HeadRun) -> int:
    """Head passes per step: 1, plus L + 1 (in one pass of (L + 1)·B rows) for a head trained on LOO effects."""
    return 1 + (len(run.layers) + 1 if getattr(run.config, "align_weight", 0) else 0)


def train_heads(store: FeatureStore, heads: HeadsConfig, cfg: TrainConfig, out_dir: str | Path,
                device: torch.device | str = "cpu", workers: int = 1) -> dict:
    """Train heads.names × cfg.seeds on `store` (see train_units)."""
    return train_units([(store, cfg.seeds)], heads, cfg, out_dir, device, workers)


def train_units(units: list[tuple[FeatureStore, list[int]]], heads: HeadsConfig, cfg: TrainConfig,
                out_dir: str | Path, device: torch.device | str = "cpu", workers: int = 1) -> dict:
    """Train heads.names × the seeds of every (store, seeds) unit — one for a frozen backbone, one per joint
    model — in `workers` processes (laya.core.parallel: the same bits for any count); write each head to
    out_dir/<head>/seed<k>/ (out_dir: new, or holding other seeds' heads; the stage builds it under a temporary
    name, see laya.core.io.staged). Returns results: {head: {seed: {"test_accuracy", "macro_f1", "best_epoch",
    "history", "seconds"}}}."""
    out_dir = Path(out_dir)
    runs = []
    for store, seeds in units:
        layers = store.layer_indices(heads.layers)
        dims, num_classes = [store.dims[i] for i in layers], len(store.info.classes)
        weights = sum(4 * sum(p.numel() for p in build(n, dims, num_classes, config=heads.config(n)).parameters())
                      for n in heads.names) * len(seeds)  # float32 safetensors
        require_free_space(out_dir.parent, weights + (1 << 20) * len(heads.names) * len(seeds),
                           f"train@{store.info.backbone} ({len(heads.names)} heads × {len(seeds)} seeds)",
                           "free space first")
        warning = short_average_warning(cfg, store.num_samples("train"), f"train@{store.info.backbone}")
        if warning:
            print(warning, file=sys.stderr)
        store.keep_in_memory(cfg.memory_mb << 20)
        means = layer_means(store, "train", layers)
        runs += [HeadRun(store, name, seed, heads.config(name), layers, means, cfg, out_dir, str(device))
                 for name in heads.names for seed in seeds]
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[int, dict]] = {}
    for run, result in zip(runs, run_jobs(fit_one, runs, workers, cost=run_cost)):
        results.setdefault(run.name, {})[run.seed] = result
    write_json(out_dir / "params.json", {"heads": heads.to_dict(), "train": asdict(cfg)})
    return results


def train_backbone(settings: BackboneSettings, features: str | Path, backbone_dir: str | Path, out_dir: str | Path,
                   device: torch.device | str = "cpu", workers: int = 1) -> dict:
    """The stage train@<name>: every head of the entry × the train seeds on each unit's cache (checked against
    the backbone card it was built from); protocol joint: the heads of seed k on joint model k's cache, and each
    co-trained `laya_joint` head scored on its cache (laya.train.joint). Returns train_units's results."""
    heads, cfg, bb, key = settings.heads, settings.train, settings.backbone, settings.backbone_key
    stores = []
    for unit in units(bb, key):
        store = FeatureStore.open(unit.path(features))
        store.check_built_from(BackboneCard.load(unit.path(backbone_dir)))
        stores.append((store, unit.head_seeds(cfg.seeds)))
        print(f"train@{settings.name}: {len(heads.names)} heads × {len(stores[-1][1])} seeds on {store.path} "
              f"({len(store.layers)} layers {store.dims})")
    seeds = sorted({seed for _, unit_seeds in stores for seed in unit_seeds})
    runs = len(heads.names) * len(seeds)
    print(f"train@{settings.name}: {runs} runs in {min(workers, runs)} worker(s)", flush=True)
    results = train_units(stores, heads, replace(cfg, seeds=seeds), out_dir, device, workers)
    if bb.protocol == "joint":
        for unit, (store, _) in zip(units(bb, key), stores):
            seed, run = adopt_joint_head(unit.path(Path(backbone_dir)), store, out_dir, settings.name)
            results.setdefault(JOINT_HEAD, {})[seed] = run
            print(f"  {JOINT_HEAD} seed {seed}: test acc {run['test_accuracy']:.4f} on the cache")
    return results


def write_curves(results: dict, out_dir: str | Path) -> None:
    """One CSV per head trained on the cache: every seed's per-epoch train/val curves (columns seed, epoch, …) for
    `report` (a joint head's curve is its backbone's history, in the backbone card)."""
    with atomic_path(out_dir) as tmp:
        tmp.mkdir(parents=True)
        for name, runs in results.items():
            if name == JOINT_HEAD:
                continue
            with open(tmp / f"{name}.csv", "w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=("seed", *CURVE_FIELDS))
                writer.writeheader()
                for seed, run in sorted(runs.items()):
                    for row in run["history"]:
                        writer.writerow({"seed": seed, **{k: round(row[k], 6) if k != "epoch" else row[k]
                                                           for k in CURVE_FIELDS}})
