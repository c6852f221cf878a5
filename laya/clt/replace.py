"""Replacement: the frozen ViT run with some MLP outputs swapped for the CLT's reconstructions.

Forward hooks on `blocks[j].mlp` see the MLP input of block j (after norm2) as the hook's input, encode the
chosen token positions to z_j (an SAE encodes the MLP output instead), and return the MLP output with those
positions replaced by ŷ_j = decode(z_0 … z_j). Errors therefore propagate: later blocks see inputs built from
reconstructions.

Options: which tokens (CLS or patch), from which layer on, and, per token and target layer, which source layers
the decoder may use (`keep_top`: only the k sources with the largest contribution shares; `drop_top`: all but the
one with the largest share).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from laya.clt.config import TOKEN_POSITIONS
from laya.clt.model import CrossLayerTranscoder, contribution_shares


@dataclass(frozen=True)
class Replacement:
    tokens: str  # cls | patch
    from_layer: int = 0  # replace blocks j ≥ from_layer; earlier blocks still feed their codes to later ones
    keep_top: int | None = None  # keep only the k largest-share sources per target layer
    drop_top: bool = False  # drop the largest-share source per target layer


def _source_mask(shares: torch.Tensor, plan: Replacement) -> torch.Tensor | None:
    """(B, S) bool mask of the sources kept, from the per-token shares (B, S)."""
    if plan.keep_top is None and not plan.drop_top:
        return None
    order = shares.argsort(dim=1, descending=True)
    positions = torch.arange(shares.shape[1], device=order.device).expand_as(order)
    rank = torch.empty_like(order).scatter_(1, order, positions)
    if plan.drop_top:
        return rank != 0
    return rank < plan.keep_top


class ReplacedViT:
    """`logits(images)` of a timm ViT whose MLP outputs at `plan.tokens` come from the CLT."""

    def __init__(self, vit: nn.Module, clt: CrossLayerTranscoder, plan: Replacement):
        if plan.tokens not in TOKEN_POSITIONS:
            raise ValueError(f"tokens must be one of {TOKEN_POSITIONS}, got {plan.tokens!r}")
        self.vit, self.clt, self.plan = vit.eval(), clt.eval(), plan
        self.prefix = int(getattr(vit, "num_prefix_tokens", 1))
        self._codes: list[torch.Tensor] = []

    def _positions(self, tokens: int) -> slice:
        return slice(0, 1) if self.plan.tokens == "cls" else slice(self.prefix, tokens)

    def _hook(self, j: int):
        def replace(_module, inputs, output):
            pos = self._positions(output.shape[1])
            x = (output if self.clt.reads_outputs else inputs[0])[:, pos]  # (B, P, d): what the encoder reads
            batch, count, width = x.shape
            self._codes.append(self.clt.encode_layer(j, x.reshape(-1, width)))  # (B·P, F)
            if j < self.plan.from_layer:
                return None
            terms = self.clt.source_terms(j, self._codes)
            keep = _source_mask(contribution_shares(terms), self.plan)
            out = output.clone()
            out[:, pos] = self.clt.decode_layer(j, self._codes, keep).reshape(batch, count, width)
            return out

        return replace

    @torch.no_grad()
    def logits(self, images: torch.Tensor) -> torch.Tensor:
        handles = [block.mlp.register_forward_hook(self._hook(j)) for j, block in enumerate(self.vit.blocks)]
        try:
            self._codes = []
            return self.vit(images)
        finally:
            self._codes = []
            for handle in handles:
                handle.remove()
