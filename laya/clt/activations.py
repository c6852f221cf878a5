"""The CLT's sparse nonlinearities σ, applied to pre-activations of shape (..., F).

- `relu_topk`: keep the k largest pre-activations, ReLU them, zero the rest (TopK SAE).
- `abs_topk`: keep the k pre-activations of largest |value| with their signs, zero the rest.
- `jumprelu`: z = p · H(p − θ) with a learned per-feature threshold θ = exp(log θ) > 0 (Rajamanoharan et al. 2024).
  H has no useful derivative, so θ is trained through a straight-through estimator: in the backward pass
  ∂H(p − θ)/∂θ ≈ −K((p − θ)/ε)/ε with the rectangle kernel K(u) = 1{|u| < ½} and bandwidth ε. The same estimator
  gives the L0 penalty Σ_f H(p_f − θ_f) its gradient. TopK needs no penalty: its L0 is k by construction.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


def _rectangle(u: torch.Tensor) -> torch.Tensor:
    return (u.abs() < 0.5).to(u.dtype)


def _sum_to(grad: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    """Sum a (..., *shape) gradient over its leading (batch) axes."""
    return grad.reshape(-1, *shape).sum(0)


class _JumpReLU(torch.autograd.Function):
    """z = p · 1{p > θ}; ∂z/∂p = 1{p > θ}; ∂z/∂θ = −(θ/ε) K((p − θ)/ε)."""

    @staticmethod
    def forward(ctx, pre, threshold, bandwidth):
        ctx.save_for_backward(pre, threshold)
        ctx.bandwidth = bandwidth
        return pre * (pre > threshold)

    @staticmethod
    def backward(ctx, grad):
        pre, threshold = ctx.saved_tensors
        eps = ctx.bandwidth
        grad_pre = grad * (pre > threshold)
        grad_threshold = grad * -(threshold / eps) * _rectangle((pre - threshold) / eps)
        return grad_pre, _sum_to(grad_threshold, threshold.shape), None


class _Step(torch.autograd.Function):
    """H(p − θ) = 1{p > θ}; ∂/∂p = 0; ∂/∂θ = −K((p − θ)/ε)/ε — the L0 count's straight-through gradient."""

    @staticmethod
    def forward(ctx, pre, threshold, bandwidth):
        ctx.save_for_backward(pre, threshold)
        ctx.bandwidth = bandwidth
        return (pre > threshold).to(pre.dtype)

    @staticmethod
    def backward(ctx, grad):
        pre, threshold = ctx.saved_tensors
        eps = ctx.bandwidth
        grad_threshold = grad * -(1.0 / eps) * _rectangle((pre - threshold) / eps)
        return None, _sum_to(grad_threshold, threshold.shape), None


class JumpReLU(nn.Module):
    """Per-(layer, feature) thresholds θ of shape `shape` (e.g. (L, F)); `l0(pre)` is the differentiable count."""

    def __init__(self, shape: tuple[int, ...], threshold: float, bandwidth: float):
        super().__init__()
        self.log_threshold = nn.Parameter(torch.full(shape, float(threshold)).log())
        self.bandwidth = float(bandwidth)

    @classmethod
    def from_config(cls, shape: tuple[int, ...], cfg) -> JumpReLU:
        return cls(shape, cfg.threshold, cfg.bandwidth)

    def _thresholds(self, layer: int | None) -> torch.Tensor:
        return self.log_threshold.exp() if layer is None else self.log_threshold[layer].exp()

    def forward(self, pre: torch.Tensor, layer: int | None = None) -> torch.Tensor:
        """pre (..., L, F) → codes; with `layer`, pre is one layer's (..., F) and uses that layer's θ."""
        return _JumpReLU.apply(pre, self._thresholds(layer), self.bandwidth)

    def l0(self, pre: torch.Tensor) -> torch.Tensor:
        """Active features per position: (..., L) summed over F, differentiable in θ."""
        return _Step.apply(pre, self._thresholds(None), self.bandwidth).sum(-1)


class TopK(nn.Module):
    """Keep k entries of the last axis — the largest (`by_abs=False`, then ReLU) or the largest in |value|."""

    def __init__(self, k: int, by_abs: bool):
        super().__init__()
        self.k = int(k)
        self.by_abs = by_abs

    @classmethod
    def relu(cls, shape: tuple[int, ...], cfg) -> TopK:
        return cls(cfg.k, by_abs=False)

    @classmethod
    def absolute(cls, shape: tuple[int, ...], cfg) -> TopK:
        return cls(cfg.k, by_abs=True)

    def forward(self, pre: torch.Tensor, layer: int | None = None) -> torch.Tensor:
        """pre (..., F) → codes; the same for every layer."""
        k = min(self.k, pre.shape[-1])
        if self.by_abs:
            index = pre.abs().topk(k, dim=-1).indices
            return torch.zeros_like(pre).scatter(-1, index, pre.gather(-1, index))
        values, index = pre.topk(k, dim=-1)
        return torch.zeros_like(pre).scatter(-1, index, torch.relu(values))


# name (params clt.activation) → builder(shape (L, F), CLTConfig); a new σ is a class plus one line here
ACTIVATIONS: dict[str, Callable[..., nn.Module]] = {
    "jumprelu": JumpReLU.from_config,
    "relu_topk": TopK.relu,
    "abs_topk": TopK.absolute,
}


def build_activation(name: str, shape: tuple[int, ...], cfg) -> nn.Module:
    """σ by name (validated by CLTConfig); `shape` = (L, F) sizes JumpReLU's thresholds."""
    return ACTIVATIONS[name](shape, cfg)
