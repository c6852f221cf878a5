"""uint8 images → model input, and the one top-1 accuracy loop over uint8 images every stage uses."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn


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
def accuracy(predict: Callable[[torch.Tensor], torch.Tensor], images: np.ndarray, labels: np.ndarray,
             preprocess: Preprocess, batch_size: int = 512, device: torch.device | str = "cpu") -> float:
    """Top-1 accuracy of `predict(preprocessed batch) -> logits (B, C)` over uint8 `images` (N, H, W, C),
    `batch_size` images at a time (a module passed as `predict` is put in eval mode)."""
    if isinstance(predict, nn.Module):
        predict.eval()
    correct = 0
    for lo in range(0, len(labels), batch_size):
        logits = predict(preprocess(torch.from_numpy(images[lo:lo + batch_size]).to(device)))
        correct += int((logits.argmax(1).cpu().numpy() == labels[lo:lo + batch_size]).sum())
    return correct / max(1, len(labels))
