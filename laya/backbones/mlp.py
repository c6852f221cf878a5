"""The LAYA reference MLP: flatten → [Linear → LayerNorm → GELU] per hidden width → linear classifier.

Optional dropout after each block regularises training only; the frozen (eval-mode) backbone is unaffected.
"""

from __future__ import annotations

import torch
from torch import nn


class MLPBackbone(nn.Module):
    """784 → 512 → 256 → 128 by default; each block's output (B, d_i) is one cached layer."""

    def __init__(self, in_features: int, num_classes: int, hidden: list[int] = (512, 256, 128), dropout: float = 0.0):
        super().__init__()
        widths = [in_features, *hidden]
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(d_in, d_out), nn.LayerNorm(d_out), nn.GELU())
            for d_in, d_out in zip(widths[:-1], widths[1:])
        )
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(widths[-1], num_classes)
        self.hook_layers = [f"blocks.{i}" for i in range(len(hidden))]

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        x = x.flatten(1)  # (B, C·H·W)
        for block in self.blocks:
            x = self.dropout(block(x))
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.forward_features(x))

    def get_classifier(self) -> nn.Module:
        return self.head
