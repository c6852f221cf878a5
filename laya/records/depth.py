"""The depth stage's record (reports/details/depth_<name>.json): layers pruned by each ranking, and early exit
over prefix heads by each rule, for one backbone's cache and one retrained head kind."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from laya.core.record import Part, Record

RANDOM = "random"  # the random orders' rankings are random0, random1, …


class PrunePoint(Part):
    removed: int  # layers removed so far
    kept: list[str]
    test_accuracy: float  # of the head retrained on the kept layers
    flops: int  # backbone FLOPs per input through the deepest kept layer
    flops_fraction: float  # of the full forward


class PruneSummary(Part):
    accuracy_one_removed: float | None
    mean_accuracy_removed: float | None  # over 1 … L − 1 layers removed
    flops_within_tolerance: float  # least FLOPs fraction within the tolerance of the full accuracy


class Pruning(Part):
    full_accuracy: float
    importance: dict[str, list[float]]  # {ranking: importance per layer} (not for the random orders)
    orders: dict[str, list[str]]  # {ranking: layers, least important first}
    summary: dict[str, PruneSummary]
    curves: dict[str, list[PrunePoint]]

    def random_mean(self) -> list[float]:
        """Test accuracy with 0, 1, … layers removed, mean over the random orders ([] when there are none)."""
        randoms = [[p.test_accuracy for p in points] for name, points in self.curves.items()
                   if name.startswith(RANDOM)]
        return [float(v) for v in np.mean(randoms, 0)] if randoms else []


class ExitPoint(Part):
    threshold: float
    accuracy: float
    mean_flops: float
    flops_fraction: float
    exits: list[int]  # inputs leaving at each prefix head


class ExitRule(Part):
    area: float  # mean accuracy over the FLOPs range the sweep spans
    flops_within_tolerance: float | None  # None: no threshold stays within the tolerance
    points: list[ExitPoint]


class EarlyExit(Part):
    full_accuracy: float
    prefix_accuracy: list[float]  # of the prefix heads over layers 1..k
    rules: dict[str, ExitRule]  # msp, calibrated, alpha


class DepthRecord(Record):
    STAGE: ClassVar[str] = "depth@<name>"

    backbone: str  # the entry
    head: str  # the head kind retrained on layer subsets (depth.head)
    seed: int  # the trained seed whose α ranks the layers
    layers: list[str]  # in depth order
    flops: list[int]  # per input, through each layer
    tolerance: float  # depth.tolerance
    pruning: Pruning  # layers removed by each ranking
    early_exit: EarlyExit  # the early-exit rules
