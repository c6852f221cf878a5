"""A small convolutional net: [Conv3×3 → BatchNorm → GELU (→ MaxPool 2×2)] blocks, GAP, linear classifier."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from laya.backbones.intermediates import BlockStack
from laya.core.config import require


@dataclass(frozen=True)
class CNNConfig:
    """params `backbones.<name>.model` for arch cnn."""

    channels: list[int] = field(default_factory=lambda: [32, 64, 96, 128])  # one block (cached layer) each
    pool_after: list[int] = field(default_factory=lambda: [0, 1])  # blocks followed by a 2×2 max-pool

    def validate(self, key: str) -> None:
        require(len(self.channels) > 0 and all(c > 0 for c in self.channels), f"{key}.channels", self.channels,
                "a non-empty list of positive channel counts, e.g. [16, 32, 64, 96]")
        require(all(0 <= i < len(self.channels) for i in self.pool_after), f"{key}.pool_after", self.pool_after,
                f"block indices in 0..{len(self.channels) - 1}")


class CNNBackbone(BlockStack):
    """Each block's output map (B, C_i, H_i, W_i), global-average-pooled to (B, C_i), is one cached layer.

    Blocks listed in `pool_after` halve the resolution (28 → 14 → 7 for the default).
    """

    def __init__(self, in_chans: int, num_classes: int, cfg: CNNConfig):
        super().__init__()
        widths = [in_chans, *cfg.channels]
        self.blocks = nn.ModuleList()
        for i, (c_in, c_out) in enumerate(zip(widths[:-1], widths[1:])):
            layers = [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.GELU()]
            if i in cfg.pool_after:
                layers.append(nn.MaxPool2d(2))
            self.blocks.append(nn.Sequential(*layers))
        self.head = nn.Linear(widths[-1], num_classes)

    def pool(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=(2, 3))  # (B, C_last)
