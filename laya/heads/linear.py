"""Linear baselines: LastLayer (a probe on the deepest selected layer) and Concat (on all of them)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from laya.heads.base import LayerHead


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


class Concat(LayerHead):
    """logits = W [h_1; …; h_L] + b."""

    name = "concat"

    def __init__(self, dims: list[int], num_classes: int, config: LinearConfig):
        super().__init__(dims, num_classes, config)
        self.classifier = nn.Linear(sum(self.dims), num_classes)

    def forward(self, layers: list[torch.Tensor]) -> torch.Tensor:
        self._check(layers)
        return self.classifier(torch.cat(layers, dim=-1))  # (B, C)
