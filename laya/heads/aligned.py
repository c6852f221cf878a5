"""An aligned LAYA: α trained to rank layers the way removing them does.

    loss = CE(logits, y) + λ · KL(softmax(e / T) ‖ α)

e (B, L) are the current head's leave-one-layer-out effects on the batch (laya.ablation.leave_one_out: the drop
of the predicted class's probability when layer i becomes its ablation value), computed under no_grad from
L + 1 head passes, so the target is a constant of each step and the gradient reaches the scorer through α only.
The ablation values (the training-set mean of each layer, or zeros) are buffers of the head, saved with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from laya.ablation import ABLATIONS, leave_one_out
from laya.core.config import choice, require
from laya.heads.attention import LAYA, LAYAConfig


@dataclass(frozen=True)
class AlignedLAYAConfig(LAYAConfig):
    """params `heads.laya_aligned`: LAYA's keys plus the alignment's λ, T and ablation."""

    align_weight: float = 0.1  # λ ≥ 0 (0 = plain LAYA)
    align_temperature: float = 0.05  # T > 0: the target softmax(e / T); small T → nearly one-hot on the top layer
    ablation: str = "mean"  # the ablation value of e: training-set mean | zero (as evaluate.ablation)

    def validate(self, key: str) -> None:
        super().validate(key)
        require(self.align_weight >= 0, f"{key}.align_weight", self.align_weight, "a number ≥ 0 (λ; 0 = plain LAYA)")
        require(self.align_temperature > 0, f"{key}.align_temperature", self.align_temperature,
                "a positive number (T)")
        choice(self.ablation, ABLATIONS, f"{key}.ablation")


class AlignedLAYA(LAYA):
    """LAYA whose training adds λ · KL(softmax(e / T) ‖ α) (`auxiliary_loss`); at inference it is plain LAYA."""

    name = "laya_aligned"

    def __init__(self, dims: list[int], num_classes: int, config: AlignedLAYAConfig):
        super().__init__(dims, num_classes, config)
        for i, d in enumerate(self.dims):
            self.register_buffer(f"ablation_value_{i}", torch.zeros(d))

    @property
    def ablation_values(self) -> list[torch.Tensor]:
        return [getattr(self, f"ablation_value_{i}") for i in range(len(self.dims))]

    def set_ablation_values(self, means: list) -> None:
        """Use the layers' training-set means (config.ablation = mean; zero keeps the zeros)."""
        if self.config.ablation == "mean":
            for value, mean in zip(self.ablation_values, means, strict=True):
                value.copy_(torch.as_tensor(mean, dtype=value.dtype))

    def alignment_target(self, layers: list[torch.Tensor]) -> torch.Tensor:
        """softmax(e / T): (B, L), no gradient."""
        effects = leave_one_out(self, layers, self.ablation_values).effects  # (B, L), under no_grad
        return torch.softmax(effects / self.config.align_temperature, dim=-1)

    def alignment_loss(self, layers: list[torch.Tensor], target: torch.Tensor) -> torch.Tensor:
        """KL(target ‖ α) averaged over the batch: Σ_i t_i (log t_i − log α_i)."""
        log_alpha = torch.log_softmax(self.scorer(self.psi(self.adapters(layers)).flatten(1)) / self.tau, dim=-1)
        return nn.functional.kl_div(log_alpha, target, reduction="batchmean")

    def auxiliary_loss(self, layers: list[torch.Tensor]) -> torch.Tensor | None:
        if self.config.align_weight == 0:
            return None
        return self.config.align_weight * self.alignment_loss(layers, self.alignment_target(layers))
