"""Params section `evaluate`: how layers are ablated, which attribution methods, how many explanations."""

from __future__ import annotations

from dataclasses import dataclass, field

from laya.config import ConfigError, choice, require
from laya.evaluate.ablation import ABLATIONS
from laya.evaluate.methods import METHODS


@dataclass(frozen=True)
class EvaluateConfig:
    ablation: str = "mean"  # replace an ablated layer by its training-set mean | zero
    methods: list[str] = field(default_factory=lambda: ["laya", "scalarmix", "ig", "grad_x_act", "saliency",
                                                        "random", "loo"])
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2, 3, 4])  # trained seeds evaluated; metrics are
    # means (and stds) over them; explanations, depth patterns and figures come from the first
    max_samples: int | None = None  # test samples evaluated; null = the whole test split
    batch_size: int = 1000
    explain_n: int = 100  # WIA-AI-009 explanations written for the first explain_n test inputs
    confidence: list[float] = field(default_factory=lambda: [0.6, 0.9])  # low < 0.6 ≤ medium < 0.9 ≤ high

    def validate(self, key: str) -> None:
        choice(self.ablation, ABLATIONS, f"{key}.ablation")
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown or not self.methods:
            raise ConfigError(f"{key}.methods: unknown method(s) {unknown or '(empty list)'}; "
                              f"valid: {sorted(METHODS)}.")
        require(len(self.seeds) > 0 and len(set(self.seeds)) == len(self.seeds), f"{key}.seeds", self.seeds,
                "a non-empty list of distinct trained seeds")
        require(self.max_samples is None or self.max_samples > 0, f"{key}.max_samples", self.max_samples,
                "null or a positive integer")
        require(self.batch_size > 0, f"{key}.batch_size", self.batch_size, "a positive integer")
        require(self.explain_n >= 0, f"{key}.explain_n", self.explain_n, "an integer ≥ 0")
        low, high = (self.confidence + [None, None])[:2]
        require(len(self.confidence) == 2 and 0 < low < high < 1, f"{key}.confidence", self.confidence,
                "[low, high] thresholds with 0 < low < high < 1")
