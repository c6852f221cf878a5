"""The paper's protocol: a backbone and a LAYA head trained end to end as one model.

    logits = head([pool(h_1(x)), …, pool(h_L(x))])

The head reads each layer through the same pooling the extraction caches (`LayerTap.pooled`), so once the
backbone is frozen the co-trained head explains its cached activations exactly as it explained them in training
(up to the cache's float16 rounding) and is evaluated on the cache like every other head.
Recipe defaults are the LAYA reference notebook's: Adam 3e-4, batch 128, up to 50 epochs, early stopping on val
accuracy with patience 5, best weights restored.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from laya.backbones.config import JointConfig
from laya.early_stopping import EarlyStopping
from laya.extract.taps import LayerTap
from laya.images import Preprocess


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


@torch.no_grad()
def joint_accuracy(model: JointModel, images: np.ndarray, labels: np.ndarray, prep: Preprocess,
                   batch_size: int = 1000, device: torch.device | str = "cpu") -> float:
    model.eval()
    correct = 0
    for lo in range(0, len(images), batch_size):
        x = prep(torch.from_numpy(images[lo:lo + batch_size]).to(device))
        correct += int((model(x).argmax(1).cpu() == torch.from_numpy(labels[lo:lo + batch_size])).sum())
    return correct / len(images)


def fit_joint(model: JointModel, prep: Preprocess, splits: dict[str, tuple[np.ndarray, np.ndarray]],
              cfg: JointConfig, seed: int = 0, device: torch.device | str = "cpu", desc: str = "joint") -> dict:
    """Train backbone and head together on splits['train'] (cross-entropy, Adam), early-stop on splits['val'],
    restore the best epoch and freeze. Returns {"history", "best_epoch", "val_accuracy"} (deterministic)."""
    torch.manual_seed(seed)
    model.to(device)
    prep.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    images, labels = splits["train"]
    labels_t = torch.from_numpy(labels.astype(np.int64))
    generator = torch.Generator().manual_seed(seed)
    stopping = EarlyStopping(cfg.patience)
    history = []
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        total = 0.0
        order = torch.randperm(len(images), generator=generator)
        for first in tqdm(range(0, len(images), cfg.batch_size), desc=f"{desc} epoch {epoch}", leave=False):
            rows = order[first:first + cfg.batch_size]
            x = prep(torch.from_numpy(images[rows.numpy()]).to(device))
            loss = nn.functional.cross_entropy(model(x), labels_t[rows].to(device))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(rows)
        val = joint_accuracy(model, *splits["val"], prep, device=device)
        history.append({"epoch": epoch, "train_loss": total / len(images), "val_accuracy": val})
        tqdm.write(f"{desc} epoch {epoch}: loss {history[-1]['train_loss']:.4f} val acc {val:.4f}")
        if stopping.step(epoch, val, model):
            break
    stopping.restore(model)
    model.eval().requires_grad_(False)
    return {"history": history, "best_epoch": stopping.best_epoch, "val_accuracy": stopping.best_score}
