"""Linear baselines: LastLayer (a probe on the deepest selected layer) and Concat (on all of them)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from laya.heads.base import LayerHead, Readout


@dataclass(frozen=True)
class LinearConfig:
    """params `heads.last` / `heads.concat`: no hyper-parameters."""


class LastLayer(LayerHead):
    """logits = W h_L + b."""

    name = "last"

    def __init__(self, dims: list[int], num_classes: int, config: LinearConfig):
        super().__init__(dims, num_classes, config)
        self.classifier = nn.Linear(self.dims[-1], num_classes)

    def forward(self, layers: list[torch.Tensor]) -> torch.Tensor:
        self._check(layers)
        return self.classifier(layers[-1])  # (B, C)

    def readout(self, layers: list[torch.Tensor]) -> Readout:
        """Everything on the last layer: weights (0, …, 0, 1), values W h_L in the last slot."""
        self._check(layers)
        last = layers[-1] @ self.classifier.weight.T  # (B, C)
        values = torch.zeros(last.shape[0], len(layers), last.shape[1], dtype=last.dtype, device=last.device)
        values[:, -1] = last
        weights = torch.zeros(last.shape[0], len(layers), dtype=last.dtype, device=last.device)
        weights[:, -1] = 1.0
        return Readout.single(weights, values, self.classifier.bias)


class Concat(LayerHead):
    """logits = W [h_1; …; h_L] + b."""

    name = "concat"

    def __init__(self, dims: list[int], num_classes: int, config: LinearConfig):
        super().__init__(dims, num_classes, config)
        self.classifier = nn.Linear(sum(self.dims), num_classes)

    def forward(self, layers: list[torch.Tensor]) -> torch.Tensor:
        self._check(layers)
        return self.classifier(torch.cat(layers, dim=-1))  # (B, C)

    def readout(self, layers: list[torch.Tensor]) -> Readout:
        """logits = Σ_i W_i h_i + b, W_i the columns of W that read layer i; weights all 1."""
        self._check(layers)
        blocks = self.classifier.weight.split(self.dims, dim=1)  # (C, d_i) each
        values = torch.stack([h @ w.T for h, w in zip(layers, blocks)], dim=1)  # (B, L, C)
        return Readout.single(torch.ones(values.shape[:2], dtype=values.dtype, device=values.device), values,
                              self.classifier.bias)
