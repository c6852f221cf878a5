"""ScalarMix (ELMo; AllenNLP's ScalarMix): one learned, input-independent weight per layer."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from laya.core.config import require
from laya.heads.adapters import LayerAdapters
from laya.heads.base import LayerHead, Readout


@dataclass(frozen=True)
class ScalarMixConfig:
    """params `heads.scalarmix`."""

    d_star: int = 96  # width of the shared space the layers are projected to

    def validate(self, key: str) -> None:
        require(self.d_star > 0, f"{key}.d_star", self.d_star, "a positive integer")


class ScalarMix(LayerHead):
    """h = γ Σ_i softmax(w)_i z_i, z_i = g_i(h_i); logits = W h + b.  w ∈ R^L starts at 0, γ at 1."""

    name = "scalarmix"

    def __init__(self, dims: list[int], num_classes: int, config: ScalarMixConfig):
        super().__init__(dims, num_classes, config)
        d_star = config.d_star
        self.adapters = LayerAdapters(self.dims, d_star)
        self.scalars = nn.Parameter(torch.zeros(len(self.dims)))  # w
        self.gamma = nn.Parameter(torch.ones(()))  # γ
        self.classifier = nn.Linear(d_star, num_classes)

    def forward(self, layers: list[torch.Tensor]) -> torch.Tensor:
        self._check(layers)
        z = self.adapters(layers)  # (B, L, d*)
        weights = torch.softmax(self.scalars, dim=0)  # (L,)
        mixed = self.gamma * torch.einsum("l,bld->bd", weights, z)  # (B, d*)
        return self.classifier(mixed)  # (B, C)

    def layer_weights(self, layers: list[torch.Tensor]) -> torch.Tensor:
        """softmax(w), the same for every input: (B, L)."""
        return torch.softmax(self.scalars, dim=0).expand(layers[0].shape[0], -1)

    def readout(self, layers: list[torch.Tensor]) -> Readout:
        """logits = Σ_i γ softmax(w)_i · W z_i + b."""
        self._check(layers)
        z = self.adapters(layers)  # (B, L, d*)
        weights = (self.gamma * torch.softmax(self.scalars, dim=0)).expand(z.shape[0], -1)
        return Readout.single(weights, z @ self.classifier.weight.T, self.classifier.bias)
