"""ALF: attentive multi-layer fusion (Ciernik et al., "Beyond the Final Layer", arXiv 2601.09322) — a learned
query attends over one token per layer."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from laya.core.config import require
from laya.heads.adapters import LayerAdapters
from laya.heads.base import LayerHead, Readout


@dataclass(frozen=True)
class ALFConfig:
    """params `heads.alf`."""

    width: int = 96  # shared token width d the layers are projected to
    num_heads: int = 4  # attention heads of the query (width must be a multiple)

    def validate(self, key: str) -> None:
        require(self.width > 0, f"{key}.width", self.width, "a positive integer")
        require(self.num_heads > 0 and self.width % self.num_heads == 0, f"{key}.num_heads", self.num_heads,
                f"a positive divisor of {key}.width ({self.width})")


class ALF(LayerHead):
    """x_i = LN(P_i h_i) + e_i ∈ R^d (P_i a linear projection, e_i a learned layer embedding); a learned query q
    attends over x_1 … x_L with H-head attention: a_h = softmax(q_h · K_h x_i / √(d/H)) over i;
    o = W_o [Σ_i a_{h,i} V_h x_i]_h + b_o; logits = W o + b.

    Its attention over the layers, averaged over the heads (`layer_weights`, (B, L)), is its intrinsic layer
    attribution; the logits decompose exactly over the layers (`readout`: per head, a_{h,i} times layer i's value
    through W_o and W)."""

    name = "alf"

    def __init__(self, dims: list[int], num_classes: int, config: ALFConfig):
        super().__init__(dims, num_classes, config)
        width = config.width
        self.projections = LayerAdapters(self.dims, width)
        self.norm = nn.LayerNorm(width)
        self.layer_embedding = nn.Parameter(torch.randn(len(self.dims), width) * 0.02)
        self.query = nn.Parameter(torch.randn(1, 1, width) * 0.02)
        self.attention = nn.MultiheadAttention(width, config.num_heads, batch_first=True)
        self.classifier = nn.Linear(width, num_classes)

    def _tokens(self, layers: list[torch.Tensor]) -> torch.Tensor:
        """(B, L, d): each layer's token, a function of that layer alone."""
        self._check(layers)
        return self.norm(self.projections(layers)) + self.layer_embedding

    def _attend(self, layers: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The tokens (B, L, d), the attention output (B, d) and each head's weights (B, H, L)."""
        tokens = self._tokens(layers)
        query = self.query.expand(tokens.shape[0], -1, -1)
        out, weights = self.attention(query, tokens, tokens, need_weights=True, average_attn_weights=False)
        return tokens, out.squeeze(1), weights.squeeze(2)

    def forward(self, layers: list[torch.Tensor]) -> torch.Tensor:
        return self.classifier(self._attend(layers)[1])  # (B, C)

    def layer_weights(self, layers: list[torch.Tensor]) -> torch.Tensor:
        """The query's attention over the layers, mean over heads: (B, L), rows sum to 1."""
        return self._attend(layers)[2].mean(1)

    def readout(self, layers: list[torch.Tensor]) -> Readout:
        """logits = Σ_h Σ_i a_{h,i} · W W_o[:, h] (V_h x_i + b_{v,h}) + (W b_o + b): the value bias rides with each
        term (the weights of a head sum to 1), the output biases form the bias."""
        tokens, _, weights = self._attend(layers)
        heads, width = self.attention.num_heads, self.attention.embed_dim
        w_v, b_v = self.attention.in_proj_weight[2 * width:], self.attention.in_proj_bias[2 * width:]
        values = (tokens @ w_v.T + b_v).unflatten(-1, (heads, width // heads))  # (B, L, H, d/H)
        through = (self.classifier.weight @ self.attention.out_proj.weight).unflatten(1, (heads, width // heads))
        per_head = torch.einsum("blhk,chk->bhlc", values, through)  # (B, H, L, C)
        bias = self.classifier.weight @ self.attention.out_proj.bias + self.classifier.bias
        return Readout(weights, per_head, bias)
