"""Does the CLS token draw on earlier layers more than patch tokens do? (the LAYA paper's central asymmetry)

Per token t, the off-diagonal share is the part of each reconstructed MLP output ŷ_j built from earlier layers,
averaged over the target layers j ≥ 1 (laya.clt.contributions for c):
    o(t) = mean_{j≥1} (1 − c_{j→j}(t))
Per image: o_cls = o(its CLS token), o_patch = mean of o over its cached patch tokens. Reported: the mean of each
over the test images with a 95 % bootstrap interval over images (scipy.stats.bootstrap, percentile), and the paired
difference o_cls − o_patch; the asymmetry holds when that difference's interval lies above 0.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.stats import bootstrap

from laya.clt.model import CrossLayerTranscoder, contribution_shares
from laya.clt.tokens import Tokens
from laya.records.clt import Asymmetry, Interval


@torch.no_grad()
def off_diagonal_shares(model: CrossLayerTranscoder, tokens: Tokens, batch_size: int = 4096,
                        device: torch.device | str = "cpu") -> np.ndarray:
    """(T,) o(t) of every token, in the tokens' order."""
    model.eval()
    L = model.num_layers
    out = []
    for x, y in tokens.batches(batch_size):
        z = model(model.encoder_input(x, y).to(device)).z
        codes = [z[:, i] for i in range(L)]
        own = [contribution_shares(model.source_terms(j, codes))[:, j] for j in range(1, L)]
        out.append((1 - torch.stack(own, 1)).mean(1).double().cpu().numpy())
    return np.concatenate(out)


def _interval(values: np.ndarray, resamples: int, seed: int) -> Interval:
    ci = bootstrap((values,), np.mean, n_resamples=resamples, confidence_level=0.95, method="percentile",
                   random_state=np.random.default_rng(seed)).confidence_interval
    return Interval(mean=round(float(values.mean()), 6), ci95=[round(float(ci.low), 6), round(float(ci.high), 6)])


def asymmetry(model: CrossLayerTranscoder, tests: dict[str, Tokens], patches_per_image: int, resamples: int = 1000,
              seed: int = 0, device: torch.device | str = "cpu") -> Asymmetry:
    """The off-diagonal shares' intervals from the test tokens (tests['cls']: one per image; tests['patch']:
    `patches_per_image` per image, image-major)."""
    cls = off_diagonal_shares(model, tests["cls"], device=device)
    patch = off_diagonal_shares(model, tests["patch"], device=device).reshape(len(cls), patches_per_image).mean(1)
    difference = _interval(cls - patch, resamples, seed)
    return Asymmetry(cls=_interval(cls, resamples, seed), patch=_interval(patch, resamples, seed),
                     cls_minus_patch=difference, holds=bool(difference.ci95[0] > 0), images=len(cls),
                     resamples=resamples)


def describe_asymmetry(stage: str, a: Asymmetry) -> str:
    """One log line: the three means with their intervals, and whether the asymmetry holds."""
    return (f"{stage}: off-diagonal share CLS {a.cls.text()}, patch {a.patch.text()}, CLS − patch "
            f"{a.cls_minus_patch.text()} (95 % bootstrap over {a.images} test images): the asymmetry "
            f"{'holds' if a.holds else 'does not hold'}")
