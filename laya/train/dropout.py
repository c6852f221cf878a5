"""Input dropout on cached activations, with masks drawn from a seeded numpy Generator.

torch's CPU dropout draws one Bernoulli per element through mt19937 and was ~60 % of a linear head's training step
(benchmarks/heads.py); 16-bit integers from numpy's PCG64 are ~3× cheaper per mask. Inverted dropout:

    keep_ij = [u_ij ≥ t],  u_ij ~ U{0, …, 2¹⁶ − 1},  t = round(p · 2¹⁶)
    h'_ij   = h_ij · keep_ij · 2¹⁶ / (2¹⁶ − t)

so p is quantised to 2⁻¹⁶ (0.2 → 0.19999695) and E[h'] = h exactly for the quantised p.
"""

from __future__ import annotations

import numpy as np
import torch

LEVELS = 1 << 16


class InputDropout:
    """Drops each activation with probability ≈ p and scales the kept ones by 1 / (1 − p); the masks are the same
    bits for the same Generator state on any machine and any torch thread count."""

    def __init__(self, p: float, rng: np.random.Generator):
        self.threshold = round(p * LEVELS)
        self.scale = LEVELS / (LEVELS - self.threshold)
        self.rng = rng

    def __call__(self, feats: list[torch.Tensor]) -> list[torch.Tensor]:
        """(B, d_l) per layer → the same shapes, dropped; on the tensors' own device."""
        if self.threshold == 0:
            return feats
        out = []
        for f in feats:
            keep = torch.from_numpy(self.rng.integers(0, LEVELS, tuple(f.shape), dtype=np.uint16) >= self.threshold)
            out.append(f * keep.to(f.device) * self.scale)
        return out
