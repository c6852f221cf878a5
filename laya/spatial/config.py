"""Params `evaluate.spatial`: the spatial maps of the explained inputs and their deletion check."""

from __future__ import annotations

from dataclasses import dataclass

from laya.core.config import require


@dataclass(frozen=True)
class SpatialConfig:
    fraction: float = 0.1  # share of the input's cells (pixels) deleted by the check
    random_masks: int = 10  # random cell sets per input: the check's baseline
    top_cells: int = 5  # cells per layer named in each WIA-AI-009 payload's `spatial` entry
    figures: int = 4  # first explained inputs drawn, one figure each
    seed: int = 0  # the random cell sets

    def validate(self, key: str) -> None:
        require(0 < self.fraction < 1, f"{key}.fraction", self.fraction, "a share in (0, 1), e.g. 0.1")
        require(isinstance(self.random_masks, int) and self.random_masks >= 1, f"{key}.random_masks",
                self.random_masks, "an integer ≥ 1")
        require(isinstance(self.top_cells, int) and self.top_cells >= 1, f"{key}.top_cells", self.top_cells,
                "an integer ≥ 1")
        require(isinstance(self.figures, int) and self.figures >= 0, f"{key}.figures", self.figures,
                "an integer ≥ 0")
