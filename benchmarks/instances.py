"""Random k-sigma outlier instances for the Zhuang et al. (NIPS 2017) reproduction.

The paper draws "10 random test cases" per (n, k) with Bernoulli arms but does not say how.
``ksigma_instance`` is our generator; it is stated exactly in its docstring, and it is a
pure function of ``(n, k, seed)`` and its keyword arguments.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "DEFAULT_MIN_GAP",
    "DEFAULT_NORMAL_RANGE",
    "InstanceError",
    "ksigma_instance",
    "ksigma_threshold",
]

FloatArray = NDArray[np.float64]

#: Smallest distance |y_i - theta| of any arm. RR needs roughly 25 n / g^2 pulls when the closest
#: arm sits at gap g (Agresti-Coull radii, delta = 0.1, measured on these instances): at g = 0.05
#: and n = 200 about 2e6, a fifth of the 10^7 cap, and the whole 12-configuration reproduction
#: (1200 runs each of RR, WRR and NRR) took 13 minutes on two (shared) cores. The closest arm
#: of an instance is usually between 0.05 and 0.15 from theta.
DEFAULT_MIN_GAP = 0.05
#: Normal arms' means are uniform on this interval (in the crowd reading: error rates of 10-40%).
DEFAULT_NORMAL_RANGE = (0.1, 0.4)


class InstanceError(RuntimeError):
    """No instance satisfying the constraints was found within ``max_tries`` draws."""


def ksigma_threshold(means: FloatArray, k: float) -> float:
    """theta = mean(y) + k std(y), the standard deviation dividing by n."""
    return float(means.mean() + k * means.std())


def ksigma_instance(
    n: int,
    k: float,
    seed: int,
    *,
    min_gap: float = DEFAULT_MIN_GAP,
    normal_range: tuple[float, float] = DEFAULT_NORMAL_RANGE,
    max_outliers: int | None = None,
    max_tries: int = 10_000,
) -> FloatArray:
    """Bernoulli means of ``n`` arms with at least one k-sigma outlier, all arms >= ``min_gap``
    away from the threshold.

    The generator, exactly:

    1. ``rng = numpy.random.default_rng(SeedSequence([seed, n, round(1000 * k)]))``, so each
       ``(n, k, seed)`` has its own stream (``seed`` must be a non-negative integer).
    2. Repeat, at most ``max_tries`` times:

       a. ``m = rng.integers(1, M + 1)`` outliers, ``M = max_outliers`` or by default
          ``max(1, n // 20)`` (at most 5% of the arms);
       b. ``n - m`` normal means ``rng.uniform(lo, hi)``, ``(lo, hi) = normal_range``;
       c. ``theta0 = mean + k * std`` of the normal means alone; skip the draw when
          ``theta0 + min_gap >= 1``;
       d. ``m`` outlier means ``rng.uniform(theta0 + min_gap, 1)``;
       e. ``means = rng.permutation(normal + outliers)`` (outliers at random positions);
       f. recompute ``theta = mean(means) + k * std(means)`` (std divides by n) over all arms,
          outliers included, and accept when ``min_i |means_i - theta| >= min_gap`` and exactly
          the ``m`` injected arms lie above ``theta``.

    Adding the outliers raises theta, so step (f) rejects draws whose outliers end up too close
    to (or below) the final threshold; with the defaults about 1 to 3 draws are needed on
    average for n in 20..200 and k in 2..3. Raises ``InstanceError`` after ``max_tries``.
    """
    if n < 2:
        raise ValueError(f"need at least 2 arms, got {n}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    lo, hi = normal_range
    if not 0.0 <= lo < hi <= 1.0:
        raise ValueError(f"normal_range must satisfy 0 <= lo < hi <= 1, got {normal_range}")
    if not 0.0 < min_gap < 0.5:
        raise ValueError(f"min_gap must lie in (0, 0.5), got {min_gap}")
    most = max(1, n // 20) if max_outliers is None else max_outliers
    if not 1 <= most < n:
        raise ValueError(f"max_outliers must lie in [1, n), got {most}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, n, round(1000 * k)]))
    for _ in range(max_tries):
        m = int(rng.integers(1, most + 1))
        normal = rng.uniform(lo, hi, n - m)
        theta0 = ksigma_threshold(normal, k)
        if theta0 + min_gap >= 1.0:
            continue
        outliers = rng.uniform(theta0 + min_gap, 1.0, m)
        means: FloatArray = rng.permutation(np.concatenate([normal, outliers]))
        theta = ksigma_threshold(means, k)
        if np.abs(means - theta).min() >= min_gap and int((means > theta).sum()) == m:
            return means
    raise InstanceError(
        f"no instance with n={n}, k={k}, min_gap={min_gap} after {max_tries} draws; "
        "lower min_gap or k, or narrow normal_range"
    )
