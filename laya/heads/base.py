"""What every head shares: the layer list it reads, its typed config, and the `layer_weights` verb."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from laya.core.config import ConfigError


@dataclass(frozen=True)
class Readout:
    """A linear readout split over the layers: logits = Σ_h Σ_i weights[:, h, i] · values[:, h, i] + bias.

    weights (B, H, L): what the head multiplies layer i's contribution by in each of its H mixing paths (LAYA's
    α(x) and ScalarMix's γ·softmax(w)_i with H = 1, 1 for Concat, ALF's attention of each head); values
    (B, H, L, C): layer i's class logits before weighting, a function of h_i alone (W z_i with z_i = g_i(h_i), or
    W's block of layer i times h_i); bias (C,). `single` builds one with H = 1."""

    weights: torch.Tensor
    values: torch.Tensor
    bias: torch.Tensor

    @classmethod
    def single(cls, weights: torch.Tensor, values: torch.Tensor, bias: torch.Tensor) -> Readout:
        """From weights (B, L) and values (B, L, C) of a head with one mixing path."""
        return cls(weights.unsqueeze(1), values.unsqueeze(1), bias)

    def terms(self, target: torch.Tensor) -> torch.Tensor:
        """(B, L): each layer's share of the target class's logit; they sum to logit_c − bias_c."""
        b, h, layers, _ = self.values.shape
        picked = self.values.gather(3, target.view(-1, 1, 1, 1).expand(b, h, layers, 1)).squeeze(3)  # (B, H, L)
        return (self.weights * picked).sum(1)


class LayerHead(nn.Module):
    """Base class: `forward(layers) -> logits (B, C)`, `layer_weights(layers) -> (B, L) | None`.

    `layers` is a list of L tensors (B, d_i), one per selected layer in depth order. `config` is the head's typed
    hyper-parameters (its registered Config dataclass, params `heads.<name>`).
    """

    name = ""

    def __init__(self, dims: list[int], num_classes: int, config):
        super().__init__()
        if not dims or any(int(d) <= 0 for d in dims):
            raise ConfigError(f"heads: layer widths must be positive, got {dims}; check the feature store.")
        if int(num_classes) < 2:
            raise ConfigError(f"heads: num_classes must be ≥ 2, got {num_classes}; check the feature store's classes.")
        self.dims = [int(d) for d in dims]
        self.num_classes = int(num_classes)
        self.config = config

    def _check(self, layers: list[torch.Tensor]) -> None:
        widths = [int(t.shape[-1]) for t in layers]
        if widths != self.dims:
            raise ValueError(f"{self.name} head expects {len(self.dims)} layers of widths {self.dims}, got {widths}.")

    def layer_weights(self, layers: list[torch.Tensor]) -> torch.Tensor | None:
        """(B, L) per-input weight of each layer, rows summing to 1; None for heads without one."""
        return None

    def readout(self, layers: list[torch.Tensor]) -> Readout | None:
        """The logits as a sum over layers, for heads with a linear readout: logits = Σ_i w_i(x) · v_i(h_i) + b
        (Readout); None for a head whose logits do not decompose so."""
        return None

    def layer_logits(self, layers: list[torch.Tensor]) -> torch.Tensor | None:
        """(B, L, C) logits of a separate prediction from each layer alone (per-layer probes); None for most."""
        return None

    def training_logits(self, layers: list[torch.Tensor]) -> torch.Tensor:
        """(B, K, C): the K predictions the training loss fits, each by cross-entropy with the label (mean over
        them): the forward's logits (K = 1) for most heads, each probe's for per-layer probes."""
        return self(layers).unsqueeze(1)

    def auxiliary_loss(self, layers: list[torch.Tensor]) -> torch.Tensor | None:
        """A training loss term added to the cross-entropy (laya_aligned's alignment); None for most heads."""
        return None

    def set_ablation_values(self, means: list) -> None:
        """Called by the train stage with the layers' training-set means, (d_i,) each; a no-op for most heads."""
