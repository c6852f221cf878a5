"""Per-layer linear adapters g_i: d_i → d*, the shared space that ScalarMix and LAYA mix in."""

from __future__ import annotations

import torch
from torch import nn


class LayerAdapters(nn.Module):
    """`forward(layers) -> (B, L, d*)` with z_i = g_i(h_i) = A_i h_i + c_i."""

    def __init__(self, dims: list[int], d_star: int):
        super().__init__()
        self.projections = nn.ModuleList(nn.Linear(d, d_star) for d in dims)

    def forward(self, layers: list[torch.Tensor]) -> torch.Tensor:
        return torch.stack([g(h) for g, h in zip(self.projections, layers)], dim=1)  # (B, L, d*)
