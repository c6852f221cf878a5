"""Combine the per-layer maps and check them by deletion.

Each map is upsampled (bilinear) to the input's H × W cells and scaled to max 1 per input: M̂_l (B, L, H, W).
    α-weighted:  S = Σ_l α_l(x) M̂_l        uniform: S = mean_l M̂_l        last: S = M̂_L (standard Grad-CAM)
Deletion: the k = round(fraction · H · W) highest cells of S are set to 0 (all channels) and the drop
p_c(x) − p_c(x with them deleted) of the target class c is compared with k cells drawn at random.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from laya.spatial.live import LiveModel


def upsampled(maps: list[torch.Tensor], size: tuple[int, int]) -> torch.Tensor:
    """(B, L, H, W): every map (B, h_l, w_l) upsampled to `size` and divided by its per-input max (0 stays 0)."""
    up = torch.stack([F.interpolate(m[:, None].float(), size=size, mode="bilinear", align_corners=False)[:, 0]
                      for m in maps], 1)
    peak = up.flatten(2).amax(2)[..., None, None]
    return torch.where(peak > 0, up / peak.clamp(min=1e-12), torch.zeros_like(up))


def combined(maps: torch.Tensor, alpha: torch.Tensor) -> dict[str, torch.Tensor]:
    """{'alpha', 'uniform', 'last'}: (B, H, W) scores from M̂ (B, L, H, W) and α (B, L)."""
    return {"alpha": torch.einsum("blhw,bl->bhw", maps, alpha.to(maps.dtype)), "uniform": maps.mean(1),
            "last": maps[:, -1]}


def cell_count(fraction: float, height: int, width: int) -> int:
    return max(1, int(round(fraction * height * width)))


def top_cells(scores: torch.Tensor, k: int) -> torch.Tensor:
    """(B, H, W) bool: each input's k highest cells (ties in row-major order)."""
    flat = scores.flatten(1)
    order = torch.sort(flat, dim=1, descending=True, stable=True).indices[:, :k]
    return torch.zeros_like(flat, dtype=torch.bool).scatter_(1, order, True).view_as(scores)


def random_cells(count: int, batch: int, height: int, width: int, k: int, rng: np.random.Generator) -> torch.Tensor:
    """(count, B, H, W) bool: k cells drawn without replacement, per input and draw."""
    keys = rng.random((count, batch, height * width))
    picks = np.argsort(keys, axis=2, kind="stable")[..., :k]
    masks = np.zeros_like(keys, dtype=bool)
    np.put_along_axis(masks, picks, True, axis=2)
    return torch.from_numpy(masks).view(count, batch, height, width)


def deleted(images: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """`images` (B, H, W, C) with the cells of `mask` (B, H, W) set to 0."""
    return images.masked_fill(mask[..., None], 0)


@torch.no_grad()
def probability_drop(live: LiveModel, images: torch.Tensor, mask: torch.Tensor, target: torch.Tensor,
                     before: torch.Tensor) -> torch.Tensor:
    """(B,) p_c(x) − p_c(x with `mask` deleted), `before` = p_c(x)."""
    after = live.logits(deleted(images, mask)).softmax(1).gather(1, target[:, None])[:, 0]
    return before - after
