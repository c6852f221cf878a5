"""Scores of a layer attribution against the LOO effects: Spearman faithfulness, Deletion@1, deletion AUC."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def spearman_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(B,) Spearman correlation of each row of a and b (B, L), average ranks for ties; NaN where a row is
    constant (the correlation is undefined)."""
    ra, rb = rankdata(a, axis=1), rankdata(b, axis=1)
    ra, rb = ra - ra.mean(1, keepdims=True), rb - rb.mean(1, keepdims=True)
    denom = np.sqrt((ra ** 2).sum(1) * (rb ** 2).sum(1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (ra * rb).sum(1) / np.where(denom > 0, denom, 1), np.nan)


def faithfulness(attribution: np.ndarray, effects: np.ndarray) -> dict[str, float]:
    """Mean over samples of Spearman(attribution(x), effect(x)) across layers; undefined samples are counted."""
    rho = spearman_rows(attribution, effects)
    defined = ~np.isnan(rho)
    return {"faithfulness": float(rho[defined].mean()) if defined.any() else float("nan"),
            "faithfulness_undefined": int((~defined).sum())}


def deletion_at_1(attribution: np.ndarray, effects: np.ndarray) -> float:
    """Mean effect of ablating each sample's top-ranked layer: mean_x effect_{argmax attribution(x)}(x)."""
    return float(effects[np.arange(len(effects)), attribution.argmax(1)].mean())


def deletion_auc(curve: np.ndarray) -> float:
    """Area under the mean deletion curve (B, L + 1) over k/L ∈ [0, 1] (trapezoid); lower = the ranking
    finds the layers the prediction needs sooner."""
    mean = curve.mean(0)
    return float(np.trapezoid(mean, np.linspace(0, 1, len(mean))))
