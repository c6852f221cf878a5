"""Train a backbone once with its linear classifier (Adam, early stopping on val accuracy), then freeze it."""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from laya.backbones.config import BackboneConfig
from laya.early_stopping import EarlyStopping
from laya.images import Preprocess, accuracy


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
    """Train on splits['train'], early-stop on splits['val'], restore the best epoch; returns the history
    (per epoch: train_loss, val_accuracy — deterministic; each epoch's seconds go to the log only)."""
    torch.manual_seed(cfg.seed)
    model.to(device)
    prep.to(device)
    params = trainable_parameters(model, cfg)
    optimizer = torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, cfg.epochs) if cfg.schedule == "cosine" else None
    images, labels = splits["train"]
    labels_t = torch.from_numpy(labels.astype(np.int64))
    generator = torch.Generator().manual_seed(cfg.seed)
    stopping = EarlyStopping(cfg.patience)
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
        val_acc = accuracy(model, *splits["val"], prep, device=device)
        history.append({"epoch": epoch, "train_loss": total_loss / len(images), "val_accuracy": val_acc})
        tqdm.write(f"backbone@{name} epoch {epoch}: loss {history[-1]['train_loss']:.4f} val acc {val_acc:.4f} "
                   f"({time.perf_counter() - start:.1f}s)")
        if stopping.step(epoch, val_acc, model):
            break
    stopping.restore(model)
    model.eval().requires_grad_(False)
    return {"history": history, "best_epoch": stopping.best_epoch, "val_accuracy": stopping.best_score}
