"""Cross-layer transcoder (CLT): a sparse, causal stand-in for a ViT's MLP blocks (arXiv 2604.13304).

Shapes: B tokens, L blocks, d model width, F features per layer.

    x̃_i = (x_i − μ^x_i) / s^x_i                    block i's MLP input (after norm2), standardised
    z_i = σ(x̃_i W_enc^i + b_enc^i) ∈ R^F            sparse code of layer i
    ỹ_j = Σ_{i≤j} z_i W_dec^{i→j} + b_dec^j           triangular decoder: no path from a later layer to an earlier one
    ŷ_j = s^y_j ỹ_j + μ^y_j                           reconstruction of block j's MLP output

μ is a per-layer mean vector and s a per-layer scalar (the RMS of the centred activations), both from the
training tokens, so the standardised MSE of layer j is its unexplained variance 1 − R²_j. The decoder of source
i is one matrix (F, L − i, d) that writes to layers i…L−1 at once: causality is structural, not a mask.

The same class holds the per-layer baselines (CLTConfig.architecture): `transcoder` keeps only the decoder's
diagonal, ỹ_j = z_j W_dec^{j→j} + b_dec^j (block j's output from its own input alone), and `sae` also encodes
the MLP output itself, z_j = σ(ỹ_j W_enc^j + b_enc^j) with ỹ_j = standardise(y_j) — an SAE per layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from laya.clt.activations import JumpReLU, build_activation
from laya.clt.config import CLTConfig


@dataclass
class CLTOutput:
    y_std: torch.Tensor  # (B, L, d) standardised reconstructions ỹ (what the loss compares)
    z: torch.Tensor  # (B, L, F) sparse codes
    pre: torch.Tensor  # (B, L, F) pre-activations (JumpReLU's L0 penalty needs them)
    y_mean: torch.Tensor  # (L, d) μ^y
    y_scale: torch.Tensor  # (L,) s^y

    @property
    def y(self) -> torch.Tensor:
        """(B, L, d) reconstructions ŷ = s^y ỹ + μ^y in the activations' own units."""
        return self.y_std * self.y_scale[:, None] + self.y_mean


class CrossLayerTranscoder(nn.Module):
    """Built from `num_layers`, `d_model` and the CLT params (CLTConfig: dict_size, activation, k, threshold,
    bandwidth — the one place their defaults live)."""

    def __init__(self, num_layers: int, d_model: int, cfg: CLTConfig):
        super().__init__()
        self.cfg = cfg
        L, d, F = num_layers, d_model, cfg.dict_size
        self.num_layers, self.d_model, self.dict_size = L, d, F
        self.diagonal = cfg.architecture != "clt"  # per-layer: each source decodes to its own layer only
        self.reads_outputs = cfg.architecture == "sae"  # the encoder reads the MLP output, not its input
        bound = 1 / math.sqrt(d)
        self.w_enc = nn.Parameter(torch.empty(L, d, F).uniform_(-bound, bound))
        self.b_enc = nn.Parameter(torch.zeros(L, F))
        # source i decodes to targets i..L-1; start each W_dec^{i→i} at W_enc^iᵀ (scaled), later targets at 0
        self.w_dec = nn.ParameterList()
        for i in range(L):
            w = torch.zeros(F, 1 if self.diagonal else L - i, d)
            w[:, 0] = self.w_enc.data[i].T * (d / F) ** 0.5
            self.w_dec.append(nn.Parameter(w))
        self.b_dec = nn.Parameter(torch.zeros(L, d))
        self.sigma = build_activation(cfg.activation, (L, F), cfg)
        for name in ("x_mean", "y_mean"):
            self.register_buffer(name, torch.zeros(L, d))
        for name in ("x_scale", "y_scale"):
            self.register_buffer(name, torch.ones(L))

    @property
    def activation(self) -> str:
        return self.cfg.activation

    def set_standardisation(self, x_mean, x_scale, y_mean, y_scale) -> None:
        """Per-layer μ (L, d) and s (L,) of the MLP inputs (x) and outputs (y), from the training tokens."""
        for name, value in zip(("x_mean", "x_scale", "y_mean", "y_scale"), (x_mean, x_scale, y_mean, y_scale)):
            getattr(self, name).copy_(torch.as_tensor(value, dtype=torch.float32))

    def encoder_input(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """What the encoder reads of (MLP inputs x, outputs y): y for an SAE, else x."""
        return y if self.reads_outputs else x

    def standardise_y(self, y: torch.Tensor) -> torch.Tensor:
        return (y - self.y_mean) / self.y_scale[:, None]

    def pre_activations(self, x: torch.Tensor) -> torch.Tensor:
        """(B, L, d) MLP inputs → (B, L, F) pre-activations."""
        x = (x - self.x_mean) / self.x_scale[:, None]
        return torch.einsum("bld,ldf->blf", x, self.w_enc) + self.b_enc

    def decode_standardised(self, z: torch.Tensor) -> torch.Tensor:
        """(B, L, F) codes → (B, L, d) standardised reconstructions ỹ."""
        out = self.b_dec.expand(z.shape[0], -1, -1).clone()
        for i, w in enumerate(self.w_dec):
            out[:, i:i + w.shape[1]] += torch.einsum("bf,fkd->bkd", z[:, i], w)
        return out

    def forward(self, x: torch.Tensor) -> CLTOutput:
        """x (B, L, d): what the encoder reads (`encoder_input`)."""
        pre = self.pre_activations(x)
        z = self.sigma(pre)
        return CLTOutput(self.decode_standardised(z), z, pre, self.y_mean, self.y_scale)

    def l0(self, out: CLTOutput) -> torch.Tensor:
        """(B, L) active features per token and layer; differentiable in θ for JumpReLU."""
        if isinstance(self.sigma, JumpReLU):
            return self.sigma.l0(out.pre)
        return (out.z != 0).sum(-1).to(out.z.dtype)

    # -- one layer at a time: what the replacement forward pass and the contribution scores use --

    def encode_layer(self, i: int, x_i: torch.Tensor) -> torch.Tensor:
        """(B, d) MLP input of block i (its output, for an SAE) → (B, F) code z_i."""
        x = (x_i - self.x_mean[i]) / self.x_scale[i]
        return self.sigma(x @ self.w_enc[i] + self.b_enc[i], layer=i)

    def source_terms(self, j: int, codes: list[torch.Tensor]) -> torch.Tensor:
        """v_{i→j} = z_i W_dec^{i→j} for every source i ≤ j: (B, j+1, d), standardised units, bias excluded (zero
        for i < j in a per-layer model)."""
        return torch.stack([codes[i] @ self.w_dec[i][:, j - i] if j - i < self.w_dec[i].shape[1]
                            else codes[i].new_zeros(len(codes[i]), self.d_model) for i in range(j + 1)], dim=1)

    def decode_layer(self, j: int, codes: list[torch.Tensor], keep: torch.Tensor | None = None) -> torch.Tensor:
        """ŷ_j (B, d) from the codes z_0…z_j; `keep` (B, j+1) bool drops the sources it marks False."""
        terms = self.source_terms(j, codes)
        if keep is not None:
            terms = terms * keep[..., None]
        return (terms.sum(1) + self.b_dec[j]) * self.y_scale[j] + self.y_mean[j]


def contribution_shares(terms: torch.Tensor) -> torch.Tensor:
    """Share of ŷ_j explained by each source: |⟨v_i, ŷ⟩| / Σ_i' |⟨v_i', ŷ⟩| with ŷ = Σ_i v_i.

    terms (B, S, d) → (B, S), rows sum to 1 (a row of all-zero terms gives zeros).
    """
    total = terms.sum(1, keepdim=True)  # (B, 1, d)
    projections = (terms * total).sum(-1).abs()  # (B, S)
    return projections / projections.sum(1, keepdim=True).clamp_min(1e-12)
