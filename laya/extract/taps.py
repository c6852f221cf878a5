"""Read a frozen backbone's per-layer activations in one forward pass.

Layers come from `forward_intermediates` (timm's models and laya's own MLP and CNN all have it); forward hooks
on named modules are only for a third-party model without it (params `backbones.<name>.layers`). Each layer is
pooled to one vector per input: (B, C, H, W) maps by global average, (B, T, d) token sequences by the CLS token
or the mean of the patch tokens, (B, d) vectors as they are. For ViTs the tap can also
record each block's MLP input (after norm2) and MLP output for every token — the transcoder's training data.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from laya.core.config import ConfigError

BlockSink = Callable[[int, torch.Tensor, torch.Tensor], None]  # (block index, MLP input, MLP output (B, N, d))


@dataclass
class TapOutput:
    layers: list[torch.Tensor]  # L tensors (B, d_i)
    mlp_in: torch.Tensor | None = None  # (B, N, L, d): every token's MLP input (after norm2) per block
    mlp_out: torch.Tensor | None = None  # (B, N, L, d): every token's MLP output per block


def has_vit_blocks(model: nn.Module) -> bool:
    """True for timm-style ViTs: `blocks[i].mlp` and `blocks[i].norm2` plus a `num_prefix_tokens`."""
    blocks = getattr(model, "blocks", None)
    return (blocks is not None and hasattr(model, "num_prefix_tokens") and len(blocks) > 0
            and all(hasattr(b, "mlp") and hasattr(b, "norm2") for b in blocks))


class LayerTap:
    """Callable `tap(x) -> TapOutput` over a frozen model; `names` are the layer names in depth order."""

    def __init__(self, model: nn.Module, pooling: str = "cls", hook_layers: list[str] | None = None,
                 mlp_io: bool = False):
        """`pooling` (validated by ExtractConfig): cls | mean. `hook_layers`: module names to hook — only for a
        third-party model without `forward_intermediates` (params backbones.<name>.layers)."""
        self.model = model.eval()
        self.pooling = pooling
        self.prefix = int(getattr(model, "num_prefix_tokens", 0))
        if hook_layers is None and not hasattr(model, "forward_intermediates"):
            raise ConfigError(f"{type(model).__name__} has no forward_intermediates; list module names to hook "
                              f"in backbones.<name>.layers (see model.named_modules()).")
        self.hook_layers = hook_layers
        self.mlp_io = mlp_io and has_vit_blocks(model)
        if self.hook_layers is not None:
            modules = dict(model.named_modules())
            missing = [n for n in self.hook_layers if n not in modules]
            if missing:
                raise ConfigError(f"backbones.<name>.layers: no module(s) {missing} in {type(model).__name__}; "
                                  f"valid names include {list(modules)[1:8]}…")
            self.names = list(self.hook_layers)
        else:
            self.names = self._intermediate_names()

    def _intermediate_names(self) -> list[str]:
        """Module names of what forward_intermediates returns, from timm's feature_info when present."""
        info = getattr(self.model, "feature_info", None)
        if info:
            return [entry["module"] for entry in info]
        return [f"blocks.{i}" for i in range(len(self.model.blocks))]

    def _pool(self, t: torch.Tensor | tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        if isinstance(t, tuple):  # ViT intermediates: (patch tokens (B, N, d), prefix tokens (B, p, d))
            spatial, prefix = t
            return prefix[:, 0] if self.pooling == "cls" else spatial.mean(1)  # (B, d)
        if t.ndim == 4:
            return t.mean(dim=(2, 3))  # (B, C)
        if t.ndim == 3:
            if self.pooling == "cls" and self.prefix > 0:
                return t[:, 0]  # (B, d)
            return t[:, self.prefix:].mean(1)
        return t.flatten(1)

    @torch.inference_mode()
    def __call__(self, x: torch.Tensor, sink: BlockSink | None = None) -> TapOutput:
        """Layers of a batch x; with mlp_io, each block's MLP input and output (B, N, d), every token.

        Without `sink` they are returned stacked, (B, N, L, d). With it, each goes to sink(block, mlp_in,
        mlp_out) as the forward pass reaches it (the caller keeps the tokens it wants; nothing is stacked) and
        TapOutput holds layers only."""
        captured: dict[str, torch.Tensor] = {}
        mlp_in: list[torch.Tensor] = []
        mlp_out: list[torch.Tensor] = []
        handles = []
        if self.hook_layers is not None:
            modules = dict(self.model.named_modules())
            for name in self.hook_layers:
                handles.append(modules[name].register_forward_hook(
                    lambda _m, _i, out, name=name: captured.__setitem__(name, out) or None))
        if self.mlp_io:
            def keep_all(_block: int, block_in: torch.Tensor, block_out: torch.Tensor) -> None:
                mlp_in.append(block_in)
                mlp_out.append(block_out)

            record = sink or keep_all
            for i, block in enumerate(self.model.blocks):  # a hook returning None keeps the output unchanged
                handles.append(block.mlp.register_forward_hook(
                    lambda _m, inputs, output, i=i: record(i, inputs[0], output)))
        try:
            if self.hook_layers is not None:
                self.model(x)
                layers = [self._pool(captured[n]) for n in self.hook_layers]
            else:
                layers = self.pooled(x)
        finally:
            for handle in handles:
                handle.remove()
        if self.mlp_io and sink is None:
            return TapOutput(layers, torch.stack(mlp_in, 2), torch.stack(mlp_out, 2))  # (B, N, L, d)
        return TapOutput(layers)

    def pooled(self, x: torch.Tensor) -> list[torch.Tensor]:
        """The L pooled layers (B, d_i) of x with autograd on — the same values `tap(x).layers` caches, for
        training a backbone together with a head (forward_intermediates models only)."""
        if self.hook_layers is not None:
            raise ConfigError("training through the tap needs a model with forward_intermediates.")
        return [self._pool(t) for t in self._intermediates(x)]

    def _intermediates(self, x: torch.Tensor) -> list:
        params = inspect.signature(self.model.forward_intermediates).parameters
        if "return_prefix_tokens" in params and self.prefix > 0:
            return self.model.forward_intermediates(x, return_prefix_tokens=True, output_fmt="NLC",
                                                    intermediates_only=True)  # [(spatial, prefix), …]
        return self.model.forward_intermediates(x, intermediates_only=True)
