"""Layer-wise relevance through a convolutional backbone (zennit): where in the image, and at which block, the
explained logit's relevance lies.

The head's part is exact: pooled feature k of layer l gets R_l[k] = p_l[k] · ∂T_l/∂p_l[k], T_l = w_l(x) · v_l(p_l)[c]
layer l's term of logit c (laya.heads.base.Readout, the head's own weights w held: LRP-0 through its linear maps, so
Σ_k R_l[k] = T_l up to the adapters' biases). zennit's EpsilonPlusFlat composite (BatchNorm merged into its
convolution) carries it down the backbone: each block's global average pool by the Norm rule
(R_A[k, i, j] = A[k, i, j] / Σ_ij A[k] · R_l[k]), convolutions by z⁺, the first one by the flat rule, GELU and
max-pooling passing it on. What arrives at block l's output A_l (its own term and what the deeper blocks send back),
summed over channels, is layer l's map (B, h_l, w_l); what arrives at the input, summed over channels, the pixel
map (B, H, W).
"""

from __future__ import annotations

import torch
from torch import nn

from laya.heads import LayerHead
from laya.spatial.live import LiveModel


class _PooledBlocks(nn.Module):
    """The backbone's block outputs and their global average pools, the pools as modules so zennit gives them the
    Norm rule (the same values as the cache's spatial mean)."""

    def __init__(self, backbone: nn.Module, blocks: int):
        super().__init__()
        self.backbone = backbone
        self.pools = nn.ModuleList(nn.AdaptiveAvgPool2d(1) for _ in range(blocks))

    def forward(self, x: torch.Tensor) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        maps = self.backbone.forward_intermediates(x, intermediates_only=True)
        return maps, [pool(a).flatten(1) for pool, a in zip(self.pools, maps)]


def pooled_relevance(head: LayerHead, pooled: list[torch.Tensor], target: torch.Tensor) -> list[torch.Tensor] | None:
    """R_l (B, d_l) per layer: each pooled feature's share of its layer's term of logit `target`; None for a head
    without a linear readout."""
    inputs = [t.detach().requires_grad_(True) for t in pooled]
    with torch.enable_grad():
        readout = head.readout(inputs)
        if readout is None:
            return None
        held = readout.__class__(readout.weights.detach(), readout.values, readout.bias)
        grads = torch.autograd.grad(held.terms(target).sum(), inputs, allow_unused=True)  # LastLayer reads one
    return [torch.zeros_like(t) if g is None else (g * t).detach() for g, t in zip(grads, inputs)]


def lrp_maps(live: LiveModel, images: torch.Tensor, target: torch.Tensor
             ) -> tuple[list[torch.Tensor], torch.Tensor] | None:
    """(L maps (B, h_l, w_l) in the head's layer order, the pixel map (B, H, W)) of uint8 `images` (B, H, W, C) for
    classes `target`; None when the head has no linear readout."""
    from zennit.canonizers import SequentialMergeBatchNorm  # imported here: only CNN backbones need it
    from zennit.composites import EpsilonPlusFlat

    x = live.preprocess(images).detach().requires_grad_(True)
    net = _PooledBlocks(live.backbone, len(live.tap.names))
    composite = EpsilonPlusFlat(canonizers=[SequentialMergeBatchNorm()])
    with composite.context(net) as hooked, torch.enable_grad():
        maps, pooled = hooked(x)
        chosen = [pooled[i] for i in live.layer_indices]
        relevance = pooled_relevance(live.head, chosen, target)
        if relevance is None:
            return None
        for a in maps:
            a.retain_grad()
        torch.autograd.backward(chosen, relevance)
    return [maps[i].grad.sum(1).detach() for i in live.layer_indices], x.grad.sum(1).detach()
