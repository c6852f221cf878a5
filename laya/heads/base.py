"""What every head shares: the layer list it reads, its build spec, and the `layer_weights` verb."""

from __future__ import annotations

import torch
from torch import nn

from laya.config import ConfigError


class LayerHead(nn.Module):
    """Base class: `forward(layers) -> logits (B, C)`, `layer_weights(layers) -> (B, L) | None`.

    `layers` is a list of L tensors (B, d_i), one per selected layer in depth order. `spec` holds what
    `laya.heads.build` needs to rebuild the head (name, dims, num_classes, params).
    """

    name = ""

    def __init__(self, dims: list[int], num_classes: int, params: dict):
        super().__init__()
        if not dims or any(int(d) <= 0 for d in dims):
            raise ConfigError(f"heads: layer widths must be positive, got {dims}; check the feature store.")
        self.dims = [int(d) for d in dims]
        self.num_classes = int(num_classes)
        self.spec = {"name": self.name, "dims": self.dims, "num_classes": self.num_classes, "params": params}

    def _check(self, layers: list[torch.Tensor]) -> None:
        widths = [int(t.shape[-1]) for t in layers]
        if widths != self.dims:
            raise ValueError(f"{self.name} head expects {len(self.dims)} layers of widths {self.dims}, got {widths}.")

    def layer_weights(self, layers: list[torch.Tensor]) -> torch.Tensor | None:
        """(B, L) per-input weight of each layer, rows summing to 1; None for heads without one."""
        return None


def positive(value, key: str, kind=int):
    """`value` as `kind` if > 0, else a ConfigError naming the key."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 or kind(value) != value:
        raise ConfigError(f"{key}: expected a positive {kind.__name__}, got {value!r}; fix it in params.yaml.")
    return kind(value)
