"""Train one head from a feature store: Adam on shuffled chunk-wise mini-batches, early stopping on val."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from laya.heads import LayerHead
from laya.store import FeatureStore
from laya.train.config import TrainConfig


@dataclass
class Predictions:
    logits: np.ndarray  # (N, C) float32
    labels: np.ndarray  # (N,) int64

    @property
    def accuracy(self) -> float:
        return float((self.logits.argmax(1) == self.labels).mean())

    def macro_f1(self) -> float:
        from sklearn.metrics import f1_score  # sklearn takes seconds to import; only needed here

        return float(f1_score(self.labels, self.logits.argmax(1), average="macro"))


@dataclass
class FitResult:
    history: list[dict] = field(default_factory=list)  # per epoch: train_loss, train_acc, val_loss, val_acc
    best_epoch: int = 0


@torch.no_grad()
def predict(head: LayerHead, store: FeatureStore, split: str, layers: list[int], batch_size: int = 4096,
            device: torch.device | str = "cpu") -> Predictions:
    """Logits of `head` on every sample of `split`, in store order."""
    head.eval()
    logits, labels = [], []
    for feats, y in store.batches(split, batch_size, layers=layers):
        logits.append(head([f.to(device) for f in feats]).float().cpu())
        labels.append(y)
    return Predictions(torch.cat(logits).numpy(), torch.cat(labels).numpy())


def epoch_seed(seed: int, epoch: int) -> int:
    """A distinct, reproducible shuffling seed per (run seed, epoch)."""
    return int(np.random.SeedSequence([seed, epoch]).generate_state(1)[0])


def train_epoch(head: LayerHead, optimizer: torch.optim.Optimizer, loss_fn: nn.Module,
                batches: Iterable[tuple[list[torch.Tensor], torch.Tensor]], input_dropout: float = 0.0,
                device: torch.device | str = "cpu") -> tuple[float, float]:
    """One pass of Adam steps over `batches` of (layers, labels); returns (mean loss, accuracy)."""
    head.train()
    total_loss, correct, seen = torch.zeros(()), torch.zeros((), dtype=torch.long), 0
    for feats, y in batches:
        feats = [nn.functional.dropout(f.to(device), input_dropout) for f in feats]
        y = y.to(device)
        logits = head(feats)
        loss = loss_fn(logits, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total_loss += loss.detach().cpu() * len(y)
        correct += (logits.argmax(1) == y).sum().cpu()
        seen += len(y)
    return float(total_loss) / seen, int(correct) / seen


def fit_head(head: LayerHead, store: FeatureStore, cfg: TrainConfig, layers: list[int], seed: int,
             device: torch.device | str = "cpu", desc: str = "train") -> FitResult:
    """Train `head` in place; on return it holds the weights of the epoch with the best val accuracy."""
    head.to(device)
    optimizer = torch.optim.Adam(head.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=cfg.label_smoothing)
    result, best_acc, best_state = FitResult(), -1.0, None
    bar = tqdm(range(1, cfg.epochs + 1), desc=desc, unit="epoch", leave=False)
    for epoch in bar:
        batches = store.batches("train", cfg.batch_size, shuffle=True, seed=epoch_seed(seed, epoch), layers=layers,
                                window_blocks=cfg.window_blocks)
        train_loss, train_acc = train_epoch(head, optimizer, loss_fn, batches, cfg.input_dropout, device)
        val = predict(head, store, "val", layers, device=device)
        val_loss = float(nn.functional.cross_entropy(torch.from_numpy(val.logits), torch.from_numpy(val.labels)))
        result.history.append({"epoch": epoch, "train_loss": train_loss, "train_acc": train_acc,
                               "val_loss": val_loss, "val_acc": val.accuracy})
        bar.set_postfix(val_acc=f"{val.accuracy:.4f}")
        if val.accuracy > best_acc:
            best_acc, best_state, result.best_epoch = val.accuracy, copy.deepcopy(head.state_dict()), epoch
        elif epoch - result.best_epoch >= cfg.patience:
            break
    head.load_state_dict(best_state)
    return result
