"""Which earlier layers build each layer's MLP output, according to the CLT.

For target layer j and source i ≤ j the share of ŷ_j explained by source i is
    c_{i→j}(t) = |⟨v_{i→j}, ŷ_j⟩| / Σ_{i'≤j} |⟨v_{i'→j}, ŷ_j⟩|,   v_{i→j} = z_i W_dec^{i→j},  ŷ_j = Σ_i v_{i→j}
(standardised units, decoder bias excluded), and the heatmap is its mean over tokens t: C[j, i], zero above
the diagonal, rows summing to 1.
"""

from __future__ import annotations

import numpy as np
import torch

from laya.clt.model import CrossLayerTranscoder, contribution_shares
from laya.clt.tokens import Tokens


@torch.no_grad()
def mean_contributions(model: CrossLayerTranscoder, tokens: Tokens, batch_size: int = 4096,
                       device: torch.device | str = "cpu") -> np.ndarray:
    """(L, L) matrix C[target j, source i] of mean shares over `tokens`."""
    model.eval()
    L = model.num_layers
    total = np.zeros((L, L))
    for x, y in tokens.batches(batch_size):
        z = model(model.encoder_input(x, y).to(device)).z
        codes = [z[:, i] for i in range(L)]
        for j in range(L):
            total[j, :j + 1] += contribution_shares(model.source_terms(j, codes)).sum(0).double().cpu().numpy()
    return total / len(tokens)
