"""Numbers over seeds: every "mean ± std over seeds" in the details and the report comes from `mean_std`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """(mean, sample std with ddof=1) of one number per seed, each rounded to 6 decimals; std 0.0 for one seed."""
    array = np.asarray(values, dtype=np.float64)
    std = round(float(array.std(ddof=1)), 6) if len(array) > 1 else 0.0
    return round(float(array.mean()), 6), std
