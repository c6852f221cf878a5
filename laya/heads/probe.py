"""Per-layer linear probes: one linear classifier per layer, trained side by side, each reading its layer alone.

    logits_i = W_i h_i + b_i    (B, C) per layer i;    forward: Σ_i log softmax(logits_i) / L

Training minimises the mean of the L cross-entropies (`training_logits`); the probes share no parameter, so with
Adam each learns as it would alone, except that early stopping keeps one epoch for all (the best of the forward's
val accuracy). The forward — the probes' product of experts, the mean of their log-probabilities — is what the
train stage scores; `layer_logits` gives each probe's own prediction: its accuracy per layer is the "which layer
can already decode the class" curve, and p_c from layer i's probe is the `probe` layer attribution
(laya.evaluate.methods).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from laya.heads.base import LayerHead


@dataclass(frozen=True)
class ProbeConfig:
    """params `heads.probe`: no hyper-parameters."""


class LayerProbes(LayerHead):
    """L independent probes W_i h_i + b_i; forward = the mean of their log-probabilities (B, C)."""

    name = "probe"

    def __init__(self, dims: list[int], num_classes: int, config: ProbeConfig):
        super().__init__(dims, num_classes, config)
        self.probes = nn.ModuleList(nn.Linear(d, num_classes) for d in self.dims)

    def layer_logits(self, layers: list[torch.Tensor]) -> torch.Tensor:
        """(B, L, C): each probe's logits from its own layer."""
        self._check(layers)
        return torch.stack([probe(h) for probe, h in zip(self.probes, layers)], dim=1)

    def training_logits(self, layers: list[torch.Tensor]) -> torch.Tensor:
        return self.layer_logits(layers)

    def forward(self, layers: list[torch.Tensor]) -> torch.Tensor:
        return torch.log_softmax(self.layer_logits(layers), dim=-1).mean(dim=1)
