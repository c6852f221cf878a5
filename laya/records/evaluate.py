"""The evaluate stage's record (reports/details/evaluate_<name>.json): every (method, head) pair's scores over
the evaluated seeds, the heads' accuracy with each layer ablated, error detection and the spatial check."""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict

from laya.core.record import Part, Record

ByPair = dict[str, dict[str, float]]  # {head: {method: value}}
GROUPS = ("faithfulness", "deletion_at_1")  # the scores with a `<group>_std` beside their mean


class Detection(Part):
    auroc: float | None  # None: undefined (no test error, or no detector)
    aupr: float | None


class FailureDetection(Part):
    """The explained head's error detection on test: {detector: Detection} for msp, alpha, msp_alpha (the
    detectors of laya.evaluate.failure) beside the error counts (means over seeds, or their stds)."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, Detection]

    head: str
    test_errors: float
    val_errors: float

    def detector(self, name: str) -> Detection:
        return self.__pydantic_extra__[name]


class Score(Part):
    """One (method, head) pair's number of one group: mean and sample std over the seeds."""

    mean: float
    std: float


class PairScores(Part):
    """Faithfulness and Deletion@1 per (method, head) pair: means over the seeds and their sample stds."""

    faithfulness: ByPair  # {head: {method: mean Spearman(attribution, LOO effect)}}
    faithfulness_std: ByPair  # their sample std over the seeds
    deletion_at_1: ByPair  # {head: {method: drop of p_c, top layer ablated}}
    deletion_at_1_std: ByPair  # their sample std over the seeds

    def pairs(self) -> list[tuple[str, str]]:
        """Every (method, head) pair scored, in the file's order."""
        return [(method, head) for head, methods in self.faithfulness.items() for method in methods]

    def score(self, group: str, head: str, method: str) -> Score | None:
        """`group` (faithfulness or deletion_at_1) of one pair, or None when the pair was not scored."""
        if group not in GROUPS:
            raise ValueError(f"group {group!r}: expected one of {GROUPS}")
        means = getattr(self, group).get(head, {})
        if method not in means:
            return None
        return Score(mean=means[method], std=getattr(self, f"{group}_std")[head][method])


class CrossAblation(PairScores):
    """The cross_ablation heads' scores under the ablation they were not evaluated with."""

    ablation: str


class SpatialScores(Part):
    """laya.spatial's deletion check of the explained inputs' maps (one seed)."""

    kind: str  # gradcam | attention
    inputs: int
    cells: int
    cells_deleted: int
    fraction: float
    random_masks: int
    drop: dict[str, float]  # {map: mean drop of p_c}
    drop_sem: dict[str, float]
    beats_random: dict[str, float]


class EvaluateRecord(PairScores, Record):
    """Means over `seeds` (faithfulness_undefined: summed), `<group>_std` their sample std."""

    STAGE: ClassVar[str] = "evaluate@<name>"

    faithfulness_undefined: dict[str, dict[str, int]]  # inputs whose Spearman is undefined (constant ranks)
    deletion_auc: ByPair  # {head: {method: area under the deletion curve}}
    accuracy: dict[str, float]  # {head: test accuracy}
    ablated_accuracy: dict[str, dict[str, float]]  # {head: {layer: accuracy with it ablated}}
    alpha_entropy: dict[str, float]  # {head: mean entropy of its own layer weights}
    seeds: int  # seeds evaluated
    probe_agreement: dict[str, dict[str, float | None]] | None = None  # {head: {method: mean Spearman(its
    # attribution, the per-layer probes' p_c)}} for heads the probe method explains (None: undefined everywhere)
    failure_detection: FailureDetection | None = None  # error detection of the explained head (means)
    failure_detection_std: FailureDetection | None = None  # their sample std over the seeds
    cross_ablation: CrossAblation | None = None  # the cross_ablation heads under the other ablation
    spatial: SpatialScores | None = None  # the spatial maps' pixel-deletion check (CNN, ViT)
