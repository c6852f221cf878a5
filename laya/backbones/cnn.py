"""A small convolutional net: [Conv3×3 → BatchNorm → GELU (→ MaxPool 2×2)] blocks, GAP, linear classifier."""

from __future__ import annotations

import torch
from torch import nn


class CNNBackbone(nn.Module):
    """Each block's output map (B, C_i, H_i, W_i), global-average-pooled to (B, C_i), is one cached layer.

    Blocks listed in `pool_after` halve the resolution (28 → 14 → 7 for the default).
    """

    def __init__(self, in_chans: int, num_classes: int, channels: list[int] = (32, 64, 96, 128),
                 pool_after: list[int] = (0, 1)):
        super().__init__()
        widths = [in_chans, *channels]
        self.blocks = nn.ModuleList()
        for i, (c_in, c_out) in enumerate(zip(widths[:-1], widths[1:])):
            layers = [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.GELU()]
            if i in pool_after:
                layers.append(nn.MaxPool2d(2))
            self.blocks.append(nn.Sequential(*layers))
        self.head = nn.Linear(widths[-1], num_classes)
        self.hook_layers = [f"blocks.{i}" for i in range(len(channels))]

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x.mean(dim=(2, 3))  # (B, C_last)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.forward_features(x))

    def get_classifier(self) -> nn.Module:
        return self.head
