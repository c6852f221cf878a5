"""Backbone FLOPs up to each cached layer, counted by torch's FlopCounterMode (matmuls and convolutions).

flops[i] = FLOPs of one input's forward pass through the backbone up to and including layer i (the module the
feature store names `layers[i]`): what an input costs when every layer after i is never computed."""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode


class _Reached(Exception):
    """Raised by a forward hook to stop the pass once the deepest wanted layer has run."""


def flops_through(model: nn.Module, example: torch.Tensor, layer: str) -> int:
    """FLOPs of model(example) until module `layer` has returned (everything after it is never run)."""
    module = dict(model.named_modules()).get(layer)
    if module is None:
        raise ValueError(f"no module {layer!r} in {type(model).__name__}: the cache's layer names must be module "
                         f"paths of the backbone")

    def stop(_module, _inputs, _output):
        raise _Reached

    handle = module.register_forward_hook(stop)
    try:
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            try:
                model(example)
            except _Reached:
                pass
            else:
                raise ValueError(f"{type(model).__name__}'s forward never ran module {layer!r}")
    finally:
        handle.remove()
    return int(counter.get_total_flops())


def cumulative_flops(model: nn.Module, example: torch.Tensor, layers: list[str]) -> list[int]:
    """(L,) FLOPs per input through each of `layers` (depth order): non-decreasing, the last one the deepest
    layer's cost. `example`: one preprocessed input batch of size 1."""
    model = model.eval()
    return [flops_through(model, example, name) for name in layers]
