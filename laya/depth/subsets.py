"""LAYA heads retrained from the cache on subsets of the layers — the pruned heads and the early-exit prefix
heads — one per distinct kept-layer set, in parallel processes, each returning its val and test outputs."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from laya.core.parallel import run_jobs
from laya.evaluate.failure import HeadOutputs, head_outputs
from laya.heads import build
from laya.storage.store import FeatureStore
from laya.train.config import TrainConfig
from laya.train.loop import fit_head

Kept = tuple[int, ...]  # store layer indices kept, ascending


@dataclass(frozen=True)
class SubsetRun:
    """One head to retrain on `kept` (a job for laya.core.parallel.run_jobs: picklable)."""

    store: FeatureStore
    head: str
    config: object  # the head's config dataclass (heads.<name>)
    kept: Kept
    cfg: TrainConfig
    seed: int
    batch_size: int = 4096  # prediction batches


@dataclass
class SubsetResult:
    kept: Kept
    val: HeadOutputs
    test: HeadOutputs
    best_epoch: int

    @property
    def test_accuracy(self) -> float:
        return float((self.test.probs.argmax(1) == self.test.labels).mean())


def fit_subset(run: SubsetRun) -> SubsetResult:
    """Train head `run.head` on the kept layers only (seeded), then predict val and test."""
    store, layers = run.store, list(run.kept)
    torch.manual_seed(run.seed)
    head = build(run.head, [store.dims[i] for i in layers], len(store.info.classes), config=run.config)
    fit = fit_head(head, store, run.cfg, layers, run.seed, desc=f"{store.info.backbone}/{run.head} {run.kept}")
    val = head_outputs(store, head, layers, "val", run.batch_size)
    test = head_outputs(store, head, layers, "test", run.batch_size)
    print(f"  {store.info.backbone}/{run.head} on layers {list(run.kept)}: test acc "
          f"{(test.probs.argmax(1) == test.labels).mean():.4f}, best epoch {fit.best_epoch}", flush=True)
    return SubsetResult(run.kept, val, test, fit.best_epoch)


def fit_subsets(store: FeatureStore, head: str, config, kept_sets: list[Kept], cfg: TrainConfig, seed: int,
                workers: int = 1) -> dict[Kept, SubsetResult]:
    """One retrained head per distinct kept set (in first-asked order), `workers` processes; larger sets first."""
    distinct = list(dict.fromkeys(tuple(sorted(k)) for k in kept_sets))
    runs = [SubsetRun(store, head, config, kept, cfg, seed) for kept in distinct]
    results = run_jobs(fit_subset, runs, workers, cost=lambda run: len(run.kept))
    return dict(zip(distinct, results))
