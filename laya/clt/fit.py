"""Train a CLT from cached tokens: Adam, cosine learning-rate decay, seeded shuffling.

    loss = mean_j ‖ỹ_j − standardise(y_j)‖² / d  +  λ · mean_j L0_j      (λ only for JumpReLU)

The first term is the mean over layers of 1 − R² on the batch; TopK activations fix L0 = k and take no penalty.
"""

from __future__ import annotations

import math

import torch
from tqdm import tqdm

from laya.clt.config import CLTConfig
from laya.clt.model import CrossLayerTranscoder
from laya.clt.tokens import Tokens


def clt_loss(model: CrossLayerTranscoder, x: torch.Tensor, y: torch.Tensor,
             sparsity: float) -> tuple[torch.Tensor, ...]:
    """(total, reconstruction, mean L0) for one batch of (B, L, d) inputs and outputs."""
    out = model(model.encoder_input(x, y))
    recon = ((out.y_std - model.standardise_y(y)) ** 2).mean()
    l0 = model.l0(out).mean()
    total = recon + sparsity * l0 if model.activation == "jumprelu" else recon
    return total, recon, l0


def fit_clt(model: CrossLayerTranscoder, train: Tokens, cfg: CLTConfig, device: torch.device | str = "cpu",
            desc: str = "clt") -> list[dict]:
    """Train `model` in place with cfg's epochs, batch_size, lr, sparsity λ and seed; returns per-epoch mean
    reconstruction loss (≈ 1 − R²) and mean L0.

    JumpReLU thresholds (log θ) take their own learning rate `cfg.threshold_lr`: Adam moves a parameter by about
    its learning rate per step whatever the gradient's size, so with few steps θ can only reach the sparsity λ
    asks for if its steps are larger."""
    model.to(device)
    thresholds = [p for n, p in model.named_parameters() if n.endswith("log_threshold")]
    others = [p for n, p in model.named_parameters() if not n.endswith("log_threshold")]
    groups = [{"params": others}] + ([{"params": thresholds, "lr": cfg.threshold_lr}] if thresholds else [])
    optimizer = torch.optim.Adam(groups, lr=cfg.lr)
    epochs, batch_size, seed = cfg.epochs, cfg.batch_size, cfg.seed
    steps = epochs * math.ceil(len(train) / batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 0.5 * (1 + math.cos(math.pi * s / steps)))
    history = []
    for epoch in tqdm(range(epochs), desc=desc, leave=False):
        model.train()
        recon_sum = l0_sum = 0.0
        for x, y in train.batches(batch_size, shuffle=True, seed=(seed, epoch)):
            total, recon, l0 = clt_loss(model, x.to(device), y.to(device), cfg.sparsity)
            optimizer.zero_grad(set_to_none=True)
            total.backward()
            optimizer.step()
            schedule.step()
            recon_sum += float(recon.detach()) * len(x)
            l0_sum += float(l0.detach()) * len(x)
        history.append({"epoch": epoch, "recon_loss": recon_sum / len(train), "l0": l0_sum / len(train)})
    return history
