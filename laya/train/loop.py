"""Train one head from a feature store: Adam on shuffled chunk-wise mini-batches, early stopping on val."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from tqdm import tqdm

from laya.early_stopping import EarlyStopping
from laya.heads import LayerHead
from laya.storage.store import FeatureStore
from laya.train.config import TrainConfig
from laya.train.dropout import InputDropout


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


@torch.no_grad()
def layer_accuracy(head: LayerHead, store: FeatureStore, split: str, layers: list[int], batch_size: int = 4096,
                   device: torch.device | str = "cpu") -> list[float] | None:
    """Accuracy of each per-layer prediction (`head.layer_logits`, e.g. per-layer probes) on `split`, in layer
    order; None for a head without them."""
    head.eval()
    correct, seen = None, 0
    for feats, y in store.batches(split, batch_size, layers=layers):
        logits = head.layer_logits([f.to(device) for f in feats])
        if logits is None:
            return None
        hits = (logits.argmax(2).cpu() == y[:, None]).sum(0)  # (L,)
        correct, seen = hits if correct is None else correct + hits, seen + len(y)
    return [float(c) / seen for c in correct]


def epoch_seed(seed: int, epoch: int) -> int:
    """A distinct, reproducible shuffling seed per (run seed, epoch)."""
    return int(np.random.SeedSequence([seed, epoch]).generate_state(1)[0])


def mix(feats: list[torch.Tensor], y: torch.Tensor, alpha: float, rng: np.random.Generator
        ) -> tuple[list[torch.Tensor], torch.Tensor, torch.Tensor, float]:
    """Mixup (Zhang et al. 2018) on a batch of layer activations: h_i ← λ h_i + (1 − λ) h_i[π] for every layer i
    with one λ ~ Beta(α, α) and one permutation π; returns (mixed feats, y, y[π], λ)."""
    lam = float(rng.beta(alpha, alpha))
    perm = torch.from_numpy(rng.permutation(len(y)))
    return [lam * f + (1 - lam) * f[perm] for f in feats], y, y[perm], lam


def train_epoch(head: LayerHead, optimizer: torch.optim.Optimizer, loss_fn: nn.Module,
                batches: Iterable[tuple[list[torch.Tensor], torch.Tensor]], input_dropout: float = 0.0,
                device: torch.device | str = "cpu", mixup: float = 0.0, rng: np.random.Generator | None = None,
                average: AveragedModel | None = None) -> tuple[float, float]:
    """One pass of Adam steps over `batches` of (layers, labels); returns (mean loss, accuracy).

    Per step: dropout(input_dropout) on every layer, then mixup with Beta(mixup, mixup) (0 = off; loss and
    accuracy are λ-weighted over both labels); the cross-entropy of the head's training_logits (mean over its K
    predictions; accuracy too), plus its auxiliary loss if it has one, the step, and the weights' moving average
    `average` if given. `rng` draws the dropout masks and the mixup pairs."""
    head.train()
    rng = rng if rng is not None else np.random.default_rng(0)
    dropout = InputDropout(input_dropout, rng)
    total_loss, correct, seen = torch.zeros(()), torch.zeros(()), 0
    for feats, y in batches:
        feats = dropout([f.to(device) for f in feats])
        y = y.to(device)
        if mixup > 0:
            feats, y_a, y_b, lam = mix(feats, y, mixup, rng)
        else:
            y_a, y_b, lam = y, y, 1.0
        predictions = head.training_logits(feats)  # (B, K, C)
        k = predictions.shape[1]
        logits, y_a, y_b = predictions.flatten(0, 1), y_a.repeat_interleave(k), y_b.repeat_interleave(k)
        loss = lam * loss_fn(logits, y_a) + (1 - lam) * loss_fn(logits, y_b) if lam < 1 else loss_fn(logits, y_a)
        auxiliary = head.auxiliary_loss(feats)  # e.g. laya_aligned's λ·KL(softmax(e/T) ‖ α)
        if auxiliary is not None:
            loss = loss + auxiliary
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if average is not None:
            average.update_parameters(head)
        pred = logits.detach().argmax(1)
        total_loss += loss.detach().cpu() * len(y)
        correct += (lam * (pred == y_a).sum() + (1 - lam) * (pred == y_b).sum()).cpu() / k
        seen += len(y)
    return float(total_loss) / seen, float(correct) / seen


def adam(head: nn.Module, lr: float, weight_decay: float = 0.0) -> torch.optim.Adam:
    """Adam with torch's fused kernel (CPU and CUDA): one pass over every parameter per step instead of a loop of
    small ops per tensor."""
    return torch.optim.Adam(head.parameters(), lr=lr, weight_decay=weight_decay, fused=True)


def moving_average(head: LayerHead, decay: float) -> AveragedModel | None:
    """θ̄ ← θ after the first step, then θ̄ ← decay·θ̄ + (1 − decay)·θ after every step (Polyak averaging over a
    horizon of ~1 / (1 − decay) steps; keep it well below the run's steps). None when decay is 0."""
    return AveragedModel(head, multi_avg_fn=get_ema_multi_avg_fn(decay)) if decay > 0 else None


def short_average_warning(cfg: TrainConfig, train_samples: int, who: str) -> str | None:
    """A one-line warning when the moving average cannot forget its start: after S steps (epochs × batches) the
    first step's weights keep a share decay^(S − 1) of it; above one half, the kept head is mostly untrained.
    None when cfg.ema is 0 or the run is long enough."""
    if cfg.ema == 0:
        return None
    steps = cfg.epochs * -(-train_samples // cfg.batch_size)
    share = cfg.ema ** (steps - 1)
    if share <= 0.5:
        return None
    return (f"warning: {who}: train.ema {cfg.ema} averages over ~{1 / (1 - cfg.ema):.0f} steps, but {cfg.epochs} "
            f"epochs of {train_samples} samples are {steps} steps: {share:.0%} of the kept weights stay those of "
            f"the first step; lower train.ema (0 = off) for runs this short")


def fit_head(head: LayerHead, store: FeatureStore, cfg: TrainConfig, layers: list[int], seed: int,
             device: torch.device | str = "cpu", desc: str = "train") -> FitResult:
    """Train `head` in place; on return it holds the weights (their moving average when cfg.ema > 0) of the epoch
    with the best val accuracy."""
    head.to(device)
    optimizer = adam(head, cfg.lr, cfg.weight_decay)
    average = moving_average(head, cfg.ema)
    kept = average.module if average is not None else head  # the weights that are validated and returned
    loss_fn = nn.CrossEntropyLoss(label_smoothing=cfg.label_smoothing)
    result, stopping = FitResult(), EarlyStopping(cfg.patience)
    bar = tqdm(range(1, cfg.epochs + 1), desc=desc, unit="epoch", leave=False)
    for epoch in bar:
        batches = store.batches("train", cfg.batch_size, shuffle=True, seed=epoch_seed(seed, epoch), layers=layers,
                                window_blocks=cfg.window_blocks)
        rng = np.random.default_rng(np.random.SeedSequence([seed, epoch, 1]))  # dropout masks, mixup draws
        train_loss, train_acc = train_epoch(head, optimizer, loss_fn, batches, cfg.input_dropout, device,
                                            cfg.mixup, rng, average)
        val = predict(kept, store, "val", layers, device=device)
        val_loss = float(nn.functional.cross_entropy(torch.from_numpy(val.logits), torch.from_numpy(val.labels)))
        result.history.append({"epoch": epoch, "train_loss": train_loss, "train_acc": train_acc,
                               "val_loss": val_loss, "val_acc": val.accuracy})
        bar.set_postfix(val_acc=f"{val.accuracy:.4f}")
        if stopping.step(epoch, val.accuracy, kept):
            break
    stopping.restore(head)
    result.best_epoch = stopping.best_epoch
    return result
