"""Leave-one-layer-out (LOO): how much the predicted class's probability drops when one layer is ablated.

effect_i(x) = p_c(x) − p_c(x with h_i replaced by its ablation value), c = argmax p(x). The ablation value is the
layer's training-set mean (default) or zeros. A head that attends (LAYA) recomputes its attention on the
ablated input, because the whole head is rerun.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

ABLATIONS = ("mean", "zero")


def ablation_values(kind: str, means: list[np.ndarray], device: torch.device | str = "cpu") -> list[torch.Tensor]:
    """(d_i,) replacement vector per layer: the training-set mean, or zeros of the same width (`kind` is
    validated by EvaluateConfig)."""
    assert kind in ABLATIONS, kind
    return [(torch.as_tensor(m, dtype=torch.float32) if kind == "mean" else torch.zeros(len(m))).to(device)
            for m in means]


def ablate(layers: list[torch.Tensor], index: list[int] | int, values: list[torch.Tensor]) -> list[torch.Tensor]:
    """A copy of `layers` with every layer in `index` replaced by its ablation value, for all rows."""
    index = {index} if isinstance(index, int) else set(index)
    return [values[i].expand_as(t) if i in index else t for i, t in enumerate(layers)]


@dataclass
class LeaveOneOut:
    probs: torch.Tensor  # (B, C) softmax of the intact input
    target: torch.Tensor  # (B,) the predicted class c
    effects: torch.Tensor  # (B, L) p_c(x) − p_c(x without layer i)
    ablated_predictions: torch.Tensor  # (B, L) argmax class with layer i ablated


@torch.no_grad()
def leave_one_out(head: torch.nn.Module, layers: list[torch.Tensor], values: list[torch.Tensor],
                  target: torch.Tensor | None = None) -> LeaveOneOut:
    """LOO effects of every layer for a batch; `target` defaults to the predicted class.

    One head pass over (L + 1)·B rows — the intact batch, then the batch with layer i ablated for i = 1..L —
    instead of L + 1 passes (heads are row-wise: no batch statistics, no dropout)."""
    batch, num_layers = len(layers[0]), len(layers)
    stacked = [torch.cat([t] + [values[j].expand_as(t) if i == j else t for i in range(num_layers)])
               for j, t in enumerate(layers)]
    probs = torch.softmax(head(stacked), dim=-1).unflatten(0, (num_layers + 1, batch))  # (L + 1, B, C)
    target = probs[0].argmax(1) if target is None else target
    p_target = probs.gather(2, target[None, :, None].expand(num_layers + 1, batch, 1))[..., 0]  # (L + 1, B)
    return LeaveOneOut(probs[0], target, (p_target[:1] - p_target[1:]).T, probs[1:].argmax(2).T)


@torch.no_grad()
def deletion_curve(head: torch.nn.Module, layers: list[torch.Tensor], values: list[torch.Tensor],
                   attribution: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """(B, L + 1): p_c after ablating the k top-ranked layers (by `attribution`, descending), k = 0..L."""
    order = attribution.argsort(dim=1, descending=True)  # (B, L)
    curve = [torch.softmax(head(layers), -1).gather(1, target[:, None])[:, 0]]
    num_layers = len(layers)
    for k in range(1, num_layers + 1):
        removed = torch.zeros(len(target), num_layers, dtype=torch.bool, device=target.device)
        removed.scatter_(1, order[:, :k], True)  # (B, L): which layers are ablated, per row
        mixed = [torch.where(removed[:, i:i + 1], values[i].expand_as(t), t) for i, t in enumerate(layers)]
        curve.append(torch.softmax(head(mixed), -1).gather(1, target[:, None])[:, 0])
    return torch.stack(curve, 1)
