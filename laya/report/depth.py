"""The depth stage's tables and headline (depth@<name>): accuracy as layers are pruned by each ranking, and the
early-exit rules' accuracy vs FLOPs — α's rows beside their baselines'."""

from __future__ import annotations

import numpy as np

from laya.records.depth import RANDOM
from laya.report.document import Block, Table
from laya.report.inputs import ReportInputs

PRUNING_TEXT = (
    "Layer pruning: layers removed least important first by each ranking — mean α of the trained LAYA head over the "
    "training split, the ScalarMix head's weights, the mean leave-one-layer-out effect, and random orders — with the "
    "LAYA head retrained on the kept layers from the cache (test accuracy, one seed) and the backbone truncated "
    "after the deepest kept layer (FLOPs counted by torch). `random` is the mean of the random orders. The "
    "retrained heads (pruned sets and early-exit prefixes) train for `depth.epochs` with `depth.patience`: one "
    "short budget shared by every ranking, so the rankings compare fairly, but these heads are not trained to "
    "convergence like the heads above.")
EXIT_TEXT = (
    "Early exit: prefix heads over layers 1..k; an input leaves at the first head whose score reaches the threshold "
    "(swept over [0, 1]). `msp`: the prefix head's maximum softmax probability (BranchyNet-style, the baseline); "
    "`calibrated`: P(right | MSP), fitted per depth on val; `alpha`: P(right | MSP, α, H(α)), the same with the "
    "prefix head's attention. Area: mean accuracy over the FLOPs range the sweep spans; FLOPs@tol: the least mean "
    "backbone FLOPs (fraction of the full forward) that stays within the tolerance of the last head's accuracy.")


def _fraction(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def depth_tables(inputs: ReportInputs) -> list[Block]:
    pruning, exits = [], []
    for name in inputs.backbones:
        d = inputs.depth(name)
        if d is None:
            continue
        curves, summary = d.pruning.curves, d.pruning.summary
        for ranking, points in curves.items():
            if ranking.startswith(RANDOM):
                continue
            pruning.append([name, ranking, " → ".join(d.pruning.orders[ranking]),
                            " / ".join(f"{p.test_accuracy:.4f}" for p in points),
                            _fraction(summary[ranking].flops_within_tolerance)])
        randoms = [r for r in curves if r.startswith(RANDOM)]
        pruning.append([name, f"random (mean of {len(randoms)})", "—",
                        " / ".join(f"{a:.4f}" for a in d.pruning.random_mean()),
                        _fraction(float(np.mean([summary[r].flops_within_tolerance for r in randoms])))])
        full = d.early_exit.full_accuracy
        for rule, found in d.early_exit.rules.items():
            exits.append([name, rule, f"{found.area:.4f}", _fraction(found.flops_within_tolerance), f"{full:.4f}"])
    if not pruning:
        return []
    return [PRUNING_TEXT,
            Table(["backbone", "ranking", "removal order", "accuracy with 0 / 1 / … layers removed",
                   "FLOPs@tol"], pruning),
            EXIT_TEXT, Table(["backbone", "rule", "area", "FLOPs@tol", "all layers"], exits)]

