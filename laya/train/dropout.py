"""Input dropout on cached activations, with masks drawn from a seeded numpy Generator.

Each mask is 16-bit integers from numpy's PCG64, compared and scaled in numpy, so torch multiplies once (cheaper
than torch's CPU dropout, which draws one Bernoulli per element; benchmarks/heads.py measures a training step).
Inverted dropout:

    keep_ij = [u_ij ≥ t],  u_ij ~ U{0, …, 2¹⁶ − 1},  t = round(p · 2¹⁶)
    h'_ij   = h_ij · keep_ij · 2¹⁶ / (2¹⁶ − t)

so p is quantised to 2⁻¹⁶ (0.2 → 0.19999695) and E[h'] = h exactly for the quantised p.
"""

from __future__ import annotations

import sys

import numpy as np
import torch

LEVELS = 1 << 16


def uniform_uint16(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """The bits and Generator state of rng.integers(0, 2¹⁶, shape, dtype=uint16), without its per-draw work. That
    call splits each raw 64-bit word into four 16-bit draws, low half first, so for a multiple
    of 4 draws on a little-endian machine they are the raw words themselves — unless an earlier 32-bit draw (e.g. a
    permutation's) left half a word buffered, which that call uses first (then it is the call itself).
    tests/test_train.py checks bits and state in both cases."""
    size = int(np.prod(shape))
    if size % 4 or sys.byteorder != "little" or rng.bit_generator.state["has_uint32"]:
        return rng.integers(0, LEVELS, shape, dtype=np.uint16)
    return rng.bit_generator.random_raw(size // 4).view(np.uint16).reshape(shape)


class InputDropout:
    """Drops each activation with probability ≈ p and scales the kept ones by 1 / (1 − p); the masks are the same
    bits for the same Generator state on any machine and any torch thread count."""

    def __init__(self, p: float, rng: np.random.Generator):
        self.threshold = round(p * LEVELS)
        self.scale = np.float32(LEVELS / (LEVELS - self.threshold))
        self.rng = rng

    def __call__(self, feats: list[torch.Tensor]) -> list[torch.Tensor]:
        """(B, d_l) per layer → the same shapes, dropped; on the tensors' own device."""
        if self.threshold == 0:
            return feats
        out = []
        for f in feats:
            keep = uniform_uint16(self.rng, tuple(f.shape)) >= self.threshold
            mask = np.multiply(keep, self.scale, dtype=np.float32)  # 0 or 1 / (1 − p): one pass over f in torch
            out.append(f * torch.from_numpy(mask).to(device=f.device, dtype=f.dtype))
        return out
