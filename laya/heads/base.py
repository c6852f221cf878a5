"""What every head shares: the layer list it reads, its typed config, and the `layer_weights` verb."""

from __future__ import annotations

import torch
from torch import nn

from laya.core.config import ConfigError


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

    def auxiliary_loss(self, layers: list[torch.Tensor]) -> torch.Tensor | None:
        """A training loss term added to the cross-entropy (laya_aligned's alignment); None for most heads."""
        return None

    def set_ablation_values(self, means: list) -> None:
        """Called by the train stage with the layers' training-set means, (d_i,) each; a no-op for most heads."""
