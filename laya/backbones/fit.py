"""The one training loop for backbones: a frozen backbone with its linear classifier (`fit_backbone`) and a
backbone trained end to end with its LAYA head (laya.protocols.joint.fit_joint) — Adam on cross-entropy, early
stopping on val accuracy with the best epoch's weights restored, then frozen."""

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


def fit_model(model: nn.Module, prep: Preprocess, splits: dict[str, tuple[np.ndarray, np.ndarray]],
              parameters: list[nn.Parameter], recipe, seed: int, device: torch.device | str, desc: str,
              train_mode: bool = True, cosine: bool = False, val_batch_size: int = 512) -> dict:
    """Train `parameters` of `model` (logits (B, C) from a preprocessed batch) on splits['train'], shuffled by
    `seed`; early-stop on splits['val'] accuracy, restore the best epoch, freeze. `recipe`: lr, weight_decay,
    batch_size, epochs, patience (BackboneConfig or JointConfig). `train_mode`: the mode of the model while it
    trains (False: a frozen body keeps its batch-norm statistics); `cosine`: cosine-annealed lr over the epochs.
    Returns {"history" (per epoch: train_loss, val_accuracy — deterministic; seconds go to the log only),
    "best_epoch", "val_accuracy"}."""
    torch.manual_seed(seed)
    model.to(device)
    prep.to(device)
    optimizer = torch.optim.Adam(parameters, lr=recipe.lr, weight_decay=recipe.weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, recipe.epochs) if cosine else None
    images, labels = splits["train"]
    labels_t = torch.from_numpy(labels.astype(np.int64))
    generator = torch.Generator().manual_seed(seed)
    stopping = EarlyStopping(recipe.patience)
    history = []
    for epoch in range(1, recipe.epochs + 1):
        model.train(train_mode)
        start, total_loss = time.perf_counter(), 0.0
        order = torch.randperm(len(images), generator=generator)
        for first in tqdm(range(0, len(images), recipe.batch_size), desc=f"{desc} epoch {epoch}", unit="batch",
                          leave=False):
            rows = order[first:first + recipe.batch_size]
            x = prep(torch.from_numpy(images[rows.numpy()]).to(device))
            loss = nn.functional.cross_entropy(model(x), labels_t[rows].to(device))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total_loss += loss.item() * len(rows)
        if schedule is not None:
            schedule.step()
        val_acc = accuracy(model, *splits["val"], prep, batch_size=val_batch_size, device=device)
        history.append({"epoch": epoch, "train_loss": total_loss / len(images), "val_accuracy": val_acc})
        tqdm.write(f"{desc} epoch {epoch}: loss {history[-1]['train_loss']:.4f} val acc {val_acc:.4f} "
                   f"({time.perf_counter() - start:.1f}s)")
        if stopping.step(epoch, val_acc, model):
            break
    stopping.restore(model)
    model.eval().requires_grad_(False)
    return {"history": history, "best_epoch": stopping.best_epoch, "val_accuracy": stopping.best_score}


def fit_backbone(model: nn.Module, prep: Preprocess, splits: dict[str, tuple[np.ndarray, np.ndarray]],
                 cfg: BackboneConfig, device: torch.device, name: str) -> dict:
    """The backbone with its own classifier (all of it when cfg.train, else the classifier alone): fit_model."""
    return fit_model(model, prep, splits, trainable_parameters(model, cfg), cfg, cfg.seed, device,
                     f"backbone@{name}", train_mode=cfg.train, cosine=cfg.schedule == "cosine")
