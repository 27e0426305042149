"""``near_mixture_interval`` stays within NEAR of ``mixture_bounds``, with a wide margin."""

from __future__ import annotations

import numpy as np
import pytest

from screener.stats import mixture_bounds
from screener.stats.scalar import NEAR, near_mixture_interval


@pytest.mark.parametrize("top", [30, 2_000, 10**7])
@pytest.mark.parametrize("alpha", [0.1 / 200, 1e-9])
def test_near_interval_is_near_the_vectorised_one(top: int, alpha: float) -> None:
    rng = np.random.default_rng(top)
    counts = rng.integers(1, top, 3_000).astype(np.float64)
    sums = np.floor(rng.uniform(0.0, 1.0, counts.size) * (counts + 1.0)).clip(0.0, counts)
    sums[:300], sums[300:600] = 0.0, counts[300:600]  # all wrong, all right
    sums[600:900] = rng.uniform(0.0, 1.0, 300) * counts[600:900]  # graded
    low, high = mixture_bounds(sums, counts, alpha)
    near = np.array([near_mixture_interval(s, t, alpha) for s, t in zip(sums, counts, strict=True)])
    gap = max(np.abs(near[:, 0] - low).max(), np.abs(near[:, 1] - high).max())
    assert gap <= NEAR / 10  # measured: at most 1e-11
