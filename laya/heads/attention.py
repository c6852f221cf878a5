"""LAYA: Layer-wise Attention Aggregation (arXiv 2511.12723) — input-conditioned softmax weights over layers."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from laya.core.config import choice, require
from laya.heads.adapters import LayerAdapters
from laya.heads.base import LayerHead, Readout

PSI = ("identity", "mlp")


@dataclass(frozen=True)
class LAYAConfig:
    """params `heads.laya` (the LAYA paper's Fashion-MNIST reference by default)."""

    d_star: int = 96  # shared width d*
    tau: float = 1.5  # softmax temperature τ
    psi: str = "identity"  # ψ: identity | mlp (a 2-layer GELU MLP shared by all layers)
    scorer_hidden: int = 192  # hidden width of the scorer MLP that scores each layer

    def validate(self, key: str) -> None:
        require(self.d_star > 0, f"{key}.d_star", self.d_star, "a positive integer")
        require(self.tau > 0, f"{key}.tau", self.tau, "a positive number")
        choice(self.psi, PSI, f"{key}.psi")
        require(self.scorer_hidden > 0, f"{key}.scorer_hidden", self.scorer_hidden, "a positive integer")


class LAYA(LayerHead):
    """z_i = g_i(h_i) ∈ R^d*; u_i = ψ(z_i); s = Scorer([u_1; …; u_L]) ∈ R^L; α = softmax(s / τ);
    h_agg = Σ_i α_i z_i; logits = W h_agg + b.

    ψ: identity, or a 2-layer GELU MLP shared by all layers. Scorer: Linear(L·d*, hidden) → GELU → Linear(hidden, L).
    α(x) (`layer_weights`) is the head's intrinsic per-input layer attribution.
    """

    name = "laya"

    def __init__(self, dims: list[int], num_classes: int, config: LAYAConfig):
        super().__init__(dims, num_classes, config)
        d_star, psi, scorer_hidden = config.d_star, config.psi, config.scorer_hidden
        self.tau = config.tau
        num_layers = len(self.dims)
        self.adapters = LayerAdapters(self.dims, d_star)
        self.psi = nn.Identity() if psi == "identity" else nn.Sequential(
            nn.Linear(d_star, d_star), nn.GELU(), nn.Linear(d_star, d_star))
        self.scorer = nn.Sequential(nn.Linear(num_layers * d_star, scorer_hidden), nn.GELU(),
                                    nn.Linear(scorer_hidden, num_layers))
        self.classifier = nn.Linear(d_star, num_classes)

    def _attend(self, layers: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        self._check(layers)
        z = self.adapters(layers)  # (B, L, d*)
        scores = self.scorer(self.psi(z).flatten(1))  # (B, L)
        return z, torch.softmax(scores / self.tau, dim=-1)  # (B, L, d*), α (B, L)

    def forward(self, layers: list[torch.Tensor]) -> torch.Tensor:
        z, alpha = self._attend(layers)
        h_agg = torch.einsum("bl,bld->bd", alpha, z)  # (B, d*)
        return self.classifier(h_agg)  # (B, C)

    def layer_weights(self, layers: list[torch.Tensor]) -> torch.Tensor:
        """α(x): (B, L), rows sum to 1."""
        return self._attend(layers)[1]

    def readout(self, layers: list[torch.Tensor]) -> Readout:
        """logits = Σ_i α_i(x) · W z_i + b: α held as the weights (the rule AttnLRP applies to attention)."""
        z, alpha = self._attend(layers)
        return Readout.single(alpha, z @ self.classifier.weight.T, self.classifier.bias)


class JointLAYA(LAYA):
    """A LAYA head trained end to end with its backbone (protocol joint, laya.protocols.joint): the same model,
    registered under its own name so its metrics never mix with those of LAYA trained on a frozen cache."""

    name = "laya_joint"
