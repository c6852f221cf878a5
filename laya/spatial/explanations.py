"""The spatial maps of the explained test inputs, their α-weighted combination and the deletion check."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from laya.spatial.config import SpatialConfig
from laya.spatial.deletion import cell_count, combined, probability_drop, random_cells, top_cells, upsampled
from laya.spatial.live import LiveModel
from laya.spatial.lrp import lrp_maps
from laya.spatial.maps import layer_maps

SCORES = ("alpha", "uniform", "last")  # combinations of the layer maps, checked beside random cells
LRP = "lrp"  # the pixel relevance by LRP through the backbone (laya.spatial.lrp), where the backbone allows it


@dataclass
class SpatialResult:
    kind: str  # gradcam | attention
    layers: list[str]
    maps: list[np.ndarray]  # L arrays (N, h_l, w_l), each scaled to max 1 per input
    scores: dict[str, np.ndarray]  # SCORES (+ LRP) → (N, H, W) on the input's cells
    alpha: np.ndarray  # (N, L) the head's α(x), live
    target: np.ndarray  # (N,) the class explained: the head's prediction
    probability: np.ndarray  # (N,) p_target
    drops: dict[str, np.ndarray]  # each score + 'random' → (N,) drop of p_target when the top cells are deleted
    cells: int  # cells deleted per input
    images: np.ndarray  # (N, H, W, C) uint8, for the figures
    lrp_maps: list[np.ndarray] | None = None  # L arrays (N, h_l, w_l): relevance at each block, scaled to max 1

    def metrics(self, cfg: SpatialConfig) -> dict:
        """Mean drops (± standard error) and how often each map beats random cells, input by input."""
        n = len(self.target)
        height, width = self.scores["alpha"].shape[1:]
        return {"kind": self.kind, "inputs": n, "cells_deleted": self.cells, "cells": height * width,
                "fraction": cfg.fraction, "random_masks": cfg.random_masks,
                "drop": {k: float(v.mean()) for k, v in self.drops.items()},
                "drop_sem": {k: float(v.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0 for k, v in self.drops.items()},
                "beats_random": {k: float((self.drops[k] > self.drops["random"]).mean()) for k in self.scores}}

    def payload_entry(self, row: int, top: int) -> dict:
        """WIA-AI-009 `spatial` entry of input `row`: per layer its map's shape and `top` highest cells."""
        return {"method": self.kind, "target_class": int(self.target[row]),
                "layers": {name: _summary(m[row], top) for name, m in zip(self.layers, self.maps)},
                "alpha_weighted": _summary(self.scores["alpha"][row], top)}


def _summary(grid: np.ndarray, top: int) -> dict:
    order = np.argsort(-grid, axis=None, kind="stable")[:top]
    rows, cols = np.unravel_index(order, grid.shape)
    cells = [{"row": int(r), "col": int(c), "value": round(float(grid[r, c]), 4)} for r, c in zip(rows, cols)]
    return {"shape": list(grid.shape), "top_cells": cells}


def spatial_explanations(live: LiveModel, images: np.ndarray, kind: str, cfg: SpatialConfig,
                         batch_size: int = 100) -> SpatialResult:
    """Maps, α-weighted scores and deletion drops for uint8 `images` (N, H, W, C), `batch_size` at a time."""
    rng = np.random.default_rng(cfg.seed)
    height, width = images.shape[1:3]
    k = cell_count(cfg.fraction, height, width)
    parts: dict[str, list] = {}
    for lo in range(0, len(images), batch_size):
        x = torch.from_numpy(images[lo:lo + batch_size])  # uint8: Preprocess divides a float input in place
        probs, alpha = live.outputs(x)
        target = probs.argmax(1)
        before = probs.gather(1, target[:, None])[:, 0]
        maps = layer_maps(live, x, target, kind)
        scores = combined(upsampled(maps, (height, width)), alpha)
        relevance = lrp_maps(live, x, target) if kind == "gradcam" and live.is_builtin_cnn else None
        if relevance is not None:
            scores[LRP] = upsampled([relevance[1]], (height, width))[:, 0]
            _add(parts, lrp_maps=[(m / _peak(m)).numpy() for m in relevance[0]])
        drops = {name: probability_drop(live, x, top_cells(s, k), target, before) for name, s in scores.items()}
        drops["random"] = torch.stack([probability_drop(live, x, m, target, before)
                                       for m in random_cells(cfg.random_masks, len(x), height, width, k, rng)]).mean(0)
        _add(parts, maps=[(m / _peak(m)).numpy() for m in maps], alpha=alpha.numpy(), target=target.numpy(),
             probability=before.numpy(), **{f"score_{n}": s.numpy() for n, s in scores.items()},
             **{f"drop_{n}": d.numpy() for n, d in drops.items()})
    joined = {key: _concat(v) for key, v in parts.items()}
    names = [n for n in (*SCORES, LRP) if f"score_{n}" in joined]
    return SpatialResult(kind, live.layer_names, joined["maps"], {n: joined[f"score_{n}"] for n in names},
                         joined["alpha"], joined["target"], joined["probability"],
                         {n: joined[f"drop_{n}"] for n in (*names, "random")}, k, images, joined.get("lrp_maps"))


def _peak(maps: torch.Tensor) -> torch.Tensor:
    """(B, 1, 1): each input's highest cell, at least 1e-12 (a map with no positive cell stays ≤ 0)."""
    return maps.flatten(1).amax(1).clamp(min=1e-12)[:, None, None]


def _add(parts: dict, **values) -> None:
    for key, value in values.items():
        parts.setdefault(key, []).append(value)


def _concat(chunks: list):
    if isinstance(chunks[0], list):  # per-layer arrays
        return [np.concatenate(layer) for layer in zip(*chunks)]
    return np.concatenate(chunks)
