"""Ground truth for simulated instances."""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["ksigma_outliers"]


def ksigma_outliers(
    means: ArrayLike, k: float, direction: Literal["high", "low"] = "high"
) -> tuple[int, ...]:
    """Workers whose true mean lies beyond mean(y) +/- k std(y) (std divides by n)."""
    y = np.asarray(means, dtype=np.float64)
    if direction == "high":
        return tuple(np.flatnonzero(y > y.mean() + k * y.std()).tolist())
    return tuple(np.flatnonzero(y < y.mean() - k * y.std()).tolist())
