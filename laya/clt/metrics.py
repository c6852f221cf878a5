"""How well a CLT reconstructs the MLP outputs, per layer j (over test tokens t):

    R²_j      = 1 − Σ_t ‖y_tj − ŷ_tj‖² / Σ_t ‖y_tj − ȳ_j‖²          explained variance
    cosine_j  = mean_t cos(y_tj, ŷ_tj)
    l0_j      = mean_t #{f : z_tjf ≠ 0}                            active features per token
    fvu_j     = 1 − R²_j                                          fraction of variance unexplained
    dead_j    = #{f : z_tjf = 0 for every t}                      features that never fire on these tokens
    dense_j   = #{f : P_t(z_tjf ≠ 0) > DENSE}                      features that fire on more than 10 % of tokens
"""

from __future__ import annotations

import numpy as np
import torch

from laya.clt.model import CrossLayerTranscoder
from laya.clt.tokens import Tokens

DENSE = 0.1  # a feature firing on more than this share of tokens is dense (sparsify's and circuit-tracer's sense)


@torch.no_grad()
def reconstruction_metrics(model: CrossLayerTranscoder, tokens: Tokens, batch_size: int = 4096,
                           device: torch.device | str = "cpu") -> dict:
    """Per-layer lists and overall values (means over layers; dead and dense summed, also as fractions of the
    L·F features) of R², FVU, cosine, L0, dead and dense features."""
    model.eval()
    L, F = model.num_layers, model.dict_size
    sse, y_sum, y_sq, cos, l0 = (np.zeros(L), np.zeros((L, model.d_model)), np.zeros(L), np.zeros(L), np.zeros(L))
    fires = torch.zeros(L, F, dtype=torch.float64, device=device)  # tokens each feature fired on
    for x, y in tokens.batches(batch_size):
        x, y = x.to(device), y.to(device)
        out = model(model.encoder_input(x, y))
        sse += ((out.y - y) ** 2).sum((0, 2)).double().cpu().numpy()
        y_sum += y.sum(0).double().cpu().numpy()
        y_sq += (y.double() ** 2).sum((0, 2)).cpu().numpy()
        cos += torch.nn.functional.cosine_similarity(out.y, y, dim=-1).sum(0).double().cpu().numpy()
        active = out.z != 0
        l0 += active.sum((0, 2)).double().cpu().numpy()
        fires += active.sum(0, dtype=torch.float64)
    n = len(tokens)
    sst = y_sq - (y_sum ** 2).sum(1) / n
    frequency = (fires / n).cpu().numpy()
    per_layer = {"r2": 1 - sse / sst, "fvu": sse / sst, "cosine": cos / n, "l0": l0 / n,
                 "dead": (frequency == 0).sum(1).astype(float), "dense": (frequency > DENSE).sum(1).astype(float)}
    overall = {name: float(values.mean()) for name, values in per_layer.items() if name not in ("dead", "dense")}
    for name in ("dead", "dense"):
        overall[name] = int(per_layer[name].sum())
        overall[f"{name}_fraction"] = overall[name] / (L * F)
    return {**overall, "per_layer": {name: [round(float(v), 6) for v in values]
                                     for name, values in per_layer.items()}}
