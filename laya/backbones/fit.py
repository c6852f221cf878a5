"""Train a backbone once with its linear classifier (Adam, early stopping on val accuracy), then freeze it."""

from __future__ import annotations

import copy
import time

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from laya.backbones.config import BackboneConfig


class Preprocess(nn.Module):
    """uint8 (B, H, W, C) → float (B, C, S, S): x/255, (x − mean)/std per channel, bilinear resize to S."""

    def __init__(self, mean: list[float], std: list[float], side: int):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, -1, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, -1, 1, 1), persistent=False)
        self.side = side

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = images.permute(0, 3, 1, 2).float().div_(255.0)  # (B, C, H, W)
        if x.shape[-1] != self.side or x.shape[-2] != self.side:
            x = nn.functional.interpolate(x, size=(self.side, self.side), mode="bilinear", align_corners=False)
        return (x - self.mean) / self.std


@torch.no_grad()
def accuracy(model: nn.Module, prep: Preprocess, images: np.ndarray, labels: np.ndarray, device: torch.device,
             batch_size: int = 512) -> float:
    """Top-1 accuracy of `model` on uint8 images, in eval mode."""
    model.eval()
    correct = 0
    for start in range(0, len(images), batch_size):
        x = prep(torch.from_numpy(images[start:start + batch_size]).to(device))
        pred = model(x).argmax(1).cpu().numpy()
        correct += int((pred == labels[start:start + batch_size]).sum())
    return correct / max(1, len(images))


def trainable_parameters(model: nn.Module, cfg: BackboneConfig) -> list[nn.Parameter]:
    """All parameters when cfg.train, else only the classifier's (a linear probe on the frozen body)."""
    if cfg.train:
        return list(model.parameters())
    model.requires_grad_(False)
    classifier = model.get_classifier()
    classifier.requires_grad_(True)
    return list(classifier.parameters())


def fit_backbone(model: nn.Module, prep: Preprocess, splits: dict[str, tuple[np.ndarray, np.ndarray]],
                 cfg: BackboneConfig, device: torch.device, name: str) -> dict:
    """Train on splits['train'], early-stop on splits['val'], restore the best epoch; returns the history."""
    torch.manual_seed(cfg.seed)
    model.to(device)
    prep.to(device)
    params = trainable_parameters(model, cfg)
    optimizer = torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, cfg.epochs) if cfg.schedule == "cosine" else None
    images, labels = splits["train"]
    labels_t = torch.from_numpy(labels.astype(np.int64))
    generator = torch.Generator().manual_seed(cfg.seed)
    best = {"val_accuracy": -1.0, "epoch": 0, "state": None}
    history = []
    for epoch in range(1, cfg.epochs + 1):
        model.train(cfg.train)
        start, total_loss = time.perf_counter(), 0.0
        order = torch.randperm(len(images), generator=generator)
        batches = range(0, len(images), cfg.batch_size)
        for first in tqdm(batches, desc=f"backbone@{name} epoch {epoch}", unit="batch", leave=False):
            rows = order[first:first + cfg.batch_size]
            x = prep(torch.from_numpy(images[rows.numpy()]).to(device))
            loss = nn.functional.cross_entropy(model(x), labels_t[rows].to(device))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total_loss += loss.item() * len(rows)
        if schedule is not None:
            schedule.step()
        val_acc = accuracy(model, prep, *splits["val"], device)
        history.append({"epoch": epoch, "train_loss": total_loss / len(images), "val_accuracy": val_acc,
                        "seconds": time.perf_counter() - start})
        tqdm.write(f"backbone@{name} epoch {epoch}: loss {history[-1]['train_loss']:.4f} val acc {val_acc:.4f} "
                   f"({history[-1]['seconds']:.1f}s)")
        if val_acc > best["val_accuracy"]:
            best = {"val_accuracy": val_acc, "epoch": epoch, "state": copy.deepcopy(model.state_dict())}
        elif epoch - best["epoch"] >= cfg.patience:
            break
    model.load_state_dict(best["state"])
    model.eval().requires_grad_(False)
    return {"history": history, "best_epoch": best["epoch"], "val_accuracy": best["val_accuracy"]}
