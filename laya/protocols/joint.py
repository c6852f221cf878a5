"""The paper's protocol: a backbone and a LAYA head trained end to end as one model.

    logits = head([pool(h_1(x)), …, pool(h_L(x))])

The head reads each layer through the same pooling the extraction caches (`LayerTap.pooled`), so once the
backbone is frozen the co-trained head explains its cached activations exactly as it explained them in training
(up to the cache's float16 rounding) and is evaluated on the cache like every other head.
Trained by the backbones' one loop (laya.backbones.fit.fit_model). Recipe defaults are the LAYA reference
notebook's: Adam 3e-4, batch 128, up to 50 epochs, early stopping on val accuracy with patience 5, best weights
restored.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from laya.backbones.config import JointConfig
from laya.backbones.fit import fit_model
from laya.extract.taps import LayerTap
from laya.images import Preprocess, accuracy


class JointModel(nn.Module):
    """backbone → pooled per-layer features → head; `layers(x)` gives the pooled features, (B, d_i) each."""

    def __init__(self, backbone: nn.Module, head: nn.Module, pooling: str = "cls",
                 hook_layers: list[str] | None = None):
        super().__init__()
        self.backbone, self.head = backbone, head
        self._tap = LayerTap(backbone, pooling, hook_layers=hook_layers)

    @property
    def layer_names(self) -> list[str]:
        return self._tap.names

    def layers(self, x: torch.Tensor) -> list[torch.Tensor]:
        return self._tap.pooled(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.layers(x))


JOINT_BATCH = 1000  # images per forward pass when the joint model is scored (val and test)


def joint_accuracy(model: JointModel, images: np.ndarray, labels: np.ndarray, prep: Preprocess,
                   device: torch.device | str = "cpu") -> float:
    return accuracy(model, images, labels, prep, batch_size=JOINT_BATCH, device=device)


def fit_joint(model: JointModel, prep: Preprocess, splits: dict[str, tuple[np.ndarray, np.ndarray]],
              cfg: JointConfig, seed: int = 0, device: torch.device | str = "cpu", desc: str = "joint") -> dict:
    """Train backbone and head together (laya.backbones.fit.fit_model on all their parameters); returns
    {"history", "best_epoch", "val_accuracy"} (deterministic)."""
    return fit_model(model, prep, splits, list(model.parameters()), cfg, seed, device, desc,
                     val_batch_size=JOINT_BATCH)
