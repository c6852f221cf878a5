"""The whole `evaluate@<backbone>` stage: every (method, head) pair over every evaluated seed, the summary
metrics, depth patterns, WIA-AI-009 explanations and figures — written atomically, all or nothing."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from laya import trained
from laya.core import plots
from laya.core.config import ConfigError
from laya.core.io import staged, write_json
from laya.core.parallel import run_jobs
from laya.evaluate.config import EvaluateConfig
from laya.evaluate.explain import explanations, payload_validator
from laya.evaluate.failure import roc_points
from laya.evaluate.methods import INTRINSIC
from laya.evaluate.scores import (
    Evaluation,
    depth_patterns,
    evaluate_heads,
    layer_means,
    metrics,
    pair_label,
    summarise_seeds,
    timings,
)
from laya.heads import HeadCard, LayerHead
from laya.records.evaluate import GROUPS, EvaluateRecord
from laya.spatial.config import SpatialConfig
from laya.storage.store import FeatureStore
from laya.trained import load_heads, trained_heads

if TYPE_CHECKING:  # the spatial maps import the backbone code: only the evaluate stage itself loads them
    from laya.spatial.explanations import SpatialResult


@dataclass
class Outcome:
    scores: EvaluateRecord  # means over seeds (+ stds)
    timings: dict  # ms per explanation, mean over seeds (not a DVC output)
    patterns: dict  # depth patterns of the first seed
    payloads: list[dict]  # WIA-AI-009 explanations of the first seed
    first: Evaluation  # the first seed's evaluation (figures)
    seeds: list[int]  # the seeds evaluated, in order
    spatial: SpatialResult | None = None  # maps of the explained inputs (backbones with spatial layers)


@dataclass(frozen=True)
class LiveSources:
    """What the spatial maps need to run the backbone live: the prepared images the cache was built from (the
    head's view: laya.protocols.head_data) and one backbone folder per unit, in the units' order."""

    data: object  # PreparedData | ClassSubset
    backbones: list[Path]


def for_trained(cfg: EvaluateConfig, heads_dir: str | Path) -> tuple[EvaluateConfig, list[str]]:
    """cfg without the pairs of heads not trained for this backbone (laya_joint outside the joint protocol, a
    heads.extra head of another backbone); returns (cfg, the heads dropped). The explained head stays required."""
    made = trained_heads(heads_dir)
    if made is None:
        return cfg, []
    dropped = [h for h in cfg.heads if h not in made and h != cfg.explain]
    return cfg.without_heads(dropped), dropped


def trained_seeds(cfg: EvaluateConfig, heads_dir: str | Path, candidates: list[int] | None = None) -> list[int]:
    """The seeds of cfg.seeds (and of `candidates`, a joint unit's) whose heads are in `heads_dir`."""
    return trained.trained_seeds(cfg.seeds, heads_dir, cfg.heads[0], candidates)


@dataclass(frozen=True)
class SeedRun:
    """The heads of one seed to evaluate on one store (a job for laya.core.parallel.run_jobs)."""

    store: FeatureStore
    heads: dict[str, LayerHead]
    layers: list[int]
    cfg: EvaluateConfig
    seed: int
    means: list
    device: str


def evaluate_seed(run: SeedRun) -> Evaluation:
    return evaluate_heads(run.store, run.heads, run.layers, run.cfg, run.seed, run.means, run.device)


def _seed_runs(backbone: str, units: list[tuple[FeatureStore, list[int]]], heads_dir: str | Path,
               cfg: EvaluateConfig, device: str) -> tuple[list[SeedRun], dict[str, HeadCard] | None,
                                                          FeatureStore | None]:
    """One SeedRun per (unit, seed), the heads checked against their store; the first seed's cards and store."""
    runs, first_cards, first_store = [], None, None
    for store, seeds in units:
        if not seeds:
            continue
        loaded = [load_heads(heads_dir, cfg.heads, seed, store, backbone) for seed in seeds]
        layers = loaded[0][2]
        means = layer_means(store, "train", layers)  # the same for every seed of this store
        runs += [SeedRun(store, heads, layers, cfg, seed, means, device) for seed, (heads, _, _) in zip(seeds, loaded)]
        if first_cards is None:
            first_cards, first_store = loaded[0][1], store
    return runs, first_cards, first_store


def evaluate_backbone(backbone: str, units: list[tuple[FeatureStore, list[int]]], heads_dir: str | Path,
                      cfg: EvaluateConfig, device: torch.device | str = "cpu", workers: int = 1,
                      live: LiveSources | None = None) -> Outcome:
    """Evaluate every (store, head seeds) unit — one for a frozen backbone, one per joint model — for the seeds of
    cfg.seeds trained on it, seeds in `workers` processes (laya.core.parallel); metrics are summarised over all seeds,
    the rest comes from the first. cfg.crossed()'s pairs (the cross_ablation heads under the other ablation) run
    in the same pool; their scores go to scores["cross_ablation"]. With `live`, the explained inputs also get
    spatial maps per layer (a backbone whose layers have spatial axes), in the payloads and scores["spatial"]."""
    runs, first_cards, first_store = _seed_runs(backbone, units, heads_dir, cfg, str(device))
    if not runs:
        raise ConfigError(f"{heads_dir}: none of evaluate.seeds {cfg.seeds} was trained for {backbone}; add one of "
                          f"its trained seeds to evaluate.seeds.")
    crossed = cfg.crossed()
    crossed_runs = [replace(run, cfg=crossed) for run in runs] if crossed is not None else []
    done = run_jobs(evaluate_seed, runs + crossed_runs, workers, cost=lambda run: len(run.cfg.pairs))
    evaluations, crossed_evaluations = done[:len(runs)], done[len(runs):]
    first = evaluations[0]
    payloads, spatial = [], None
    if cfg.explain is not None and live is not None and cfg.explain_n > 0:
        unit = next(i for i, (store, _) in enumerate(units) if store is first_store)
        spatial = spatial_maps(live.backbones[unit], runs[0].heads[cfg.explain], runs[0].layers, first_store,
                               live.data, first, cfg)
    if cfg.explain is not None:
        payloads = explanations(first, backbone, first_cards[cfg.explain], first_store.fingerprint.hash,
                                cfg.ablation, cfg.explain_n, cfg.confidence, spatial,
                                cfg.spatial_config().top_cells)
        validator = payload_validator()
        for payload in payloads:
            validator.validate(payload)
    scores = summarise_seeds([metrics(e) for e in evaluations])
    if crossed_evaluations:
        other = summarise_seeds([metrics(e) for e in crossed_evaluations])
        scores["cross_ablation"] = {"ablation": crossed.ablation,
                                    **{k: other[k] for k in ("faithfulness", "faithfulness_std", "deletion_at_1",
                                                             "deletion_at_1_std")}}
    if spatial is not None:
        scores["spatial"] = spatial.metrics(cfg.spatial_config())
    patterns = depth_patterns(first, cfg.explain, cfg.shift_resamples, runs[0].seed)
    return Outcome(EvaluateRecord.model_validate(scores), summarise_seeds([timings(e) for e in evaluations]),
                   patterns, payloads, first, [run.seed for run in runs], spatial)


def spatial_maps(backbone_dir: Path, head: LayerHead, layers: list[int], store: FeatureStore, data,
                 first: Evaluation, cfg: EvaluateConfig) -> SpatialResult | None:
    """The SpatialResult of the first explain_n test inputs, or None when the backbone's layers have no spatial
    axes (an MLP). The prepared images must be the cached rows: their labels are compared."""
    from laya.spatial.explanations import spatial_explanations
    from laya.spatial.live import LiveModel
    from laya.spatial.maps import map_kind

    n = min(cfg.explain_n, len(first.labels))
    images, labels = data.images("test", 0, n), data.labels("test", 0, n)
    if not np.array_equal(labels, first.labels[:n]):
        raise ConfigError(f"{store.path}: the prepared test images are not the rows this cache holds (labels "
                          f"differ); rerun `dvc repro extract@{store.info.backbone}`.")
    live = LiveModel.load(backbone_dir, head, layers, store.info.extract.get("pooling", "cls"))
    kind = map_kind(live, torch.from_numpy(images[:1]))
    return None if kind is None else spatial_explanations(live, images, kind, cfg.spatial_config())


def flat_pairs(group: dict[str, dict[str, float]]) -> dict[str, float]:
    """{head: {method: v}} → {'method@head': v} (figure labels)."""
    return {pair_label((method, head)): v for head, methods in group.items() for method, v in methods.items()}


def write_outcome(out: Outcome, backbone: str, cfg: EvaluateConfig, metrics_path: str | Path,
                  patterns_path: str | Path, explanations_path: str | Path, figures_dir: str | Path) -> None:
    """Write every output under a temporary name first, then move them all into place."""
    with staged(metrics_path, patterns_path, explanations_path, figures_dir) as (metrics, patterns, payloads, tmp):
        out.scores.write(metrics)
        write_json(patterns, out.patterns)
        payloads.write_text("".join(json.dumps(p, sort_keys=True, ensure_ascii=False) + "\n" for p in out.payloads))
        tmp.mkdir(parents=True)
        patterns = out.patterns
        if "alpha_mean" in patterns:
            head = patterns["alpha_head"]
            title = f"{backbone}: {head} head (seed {out.seeds[0]}), {len(out.first.labels)} test inputs"
            plots.alpha_per_layer(patterns, f"{title} — α per layer", tmp / "alpha_per_layer.png")
            plots.class_layer_heatmap(patterns, f"{backbone}: mean α of {head} by true class",
                                      tmp / "alpha_by_class.png")
            plots.correct_vs_wrong_heatmaps(patterns, f"{backbone}: mean α of {head} by true class",
                                            tmp / "alpha_by_class_correct_vs_wrong.png")
        if out.first.val is not None:
            roc = roc_points(out.first.val, out.first.test_outputs())
            if roc:
                title = f"{backbone}: error detection on test, {out.first.explained} (seed {out.seeds[0]})"
                plots.failure_roc(roc, title, tmp / "failure_roc.png")
        scores = {key: flat_pairs(getattr(out.scores, key)) for key in GROUPS}
        spread = {key: flat_pairs(getattr(out.scores, f"{key}_std")) for key in GROUPS}
        plots.method_scores(scores, f"{backbone}: attribution methods vs leave-one-layer-out ({cfg.ablation}, "
                            f"mean of {len(out.seeds)} seeds)", tmp / "methods.png",
                            highlight=[pair_label(p) for p in cfg.pairs if p[0] == INTRINSIC], spread=spread,
                            seeds=len(out.seeds))
        plots.deletion_curves(patterns, f"{backbone}: deletion curves", tmp / "deletion_curves.png")
        if out.spatial is not None:
            _spatial_figures(out, backbone, cfg.spatial_config(), tmp / "where")
        plots.agreement_matrix(patterns, f"{backbone}: method agreement", tmp / "agreement.png")


def _spatial_figures(out: Outcome, backbone: str, cfg: SpatialConfig, folder: Path) -> None:
    """where/test_<row>.png for the first cfg.figures explained inputs."""
    from laya.spatial.figure import input_figure

    folder.mkdir()
    result = out.spatial
    for row in range(min(cfg.figures, len(result.target))):
        index = int(out.first.index[row])
        title = (f"{backbone}: where and at which depth, test/{index} — {result.kind} per layer, weighted by "
                 f"α(x) of {out.first.explained}")
        input_figure(result, row, out.first.classes, title, folder / f"test_{index}.png")
