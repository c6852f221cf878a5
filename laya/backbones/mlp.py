"""The LAYA reference MLP: flatten → [Linear → LayerNorm → GELU] per hidden width → linear classifier.

Optional dropout after each block regularises training only; the frozen (eval-mode) backbone is unaffected.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from laya.backbones.intermediates import BlockStack
from laya.core.config import require


@dataclass(frozen=True)
class MLPConfig:
    """params `backbones.<name>.model` for arch mlp."""

    hidden: list[int] = field(default_factory=lambda: [512, 256, 128])  # one cached layer per width
    dropout: float = 0.0  # after each block, training only

    def validate(self, key: str) -> None:
        require(len(self.hidden) > 0 and all(h > 0 for h in self.hidden), f"{key}.hidden", self.hidden,
                "a non-empty list of positive widths, e.g. [512, 256, 128] (each block is one cached layer)")
        require(0 <= self.dropout < 1, f"{key}.dropout", self.dropout, "a number in [0, 1)")


class MLPBackbone(BlockStack):
    """784 → 512 → 256 → 128 by default; each block's output (B, d_i) is one cached layer."""

    def __init__(self, in_features: int, num_classes: int, cfg: MLPConfig):
        super().__init__()
        widths = [in_features, *cfg.hidden]
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(d_in, d_out), nn.LayerNorm(d_out), nn.GELU())
            for d_in, d_out in zip(widths[:-1], widths[1:])
        )
        self.dropout = nn.Dropout(cfg.dropout)
        self.head = nn.Linear(widths[-1], num_classes)

    def stem(self, x: torch.Tensor) -> torch.Tensor:
        return x.flatten(1)  # (B, C·H·W)

    def between_blocks(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(x)
