"""Every instance the benchmarks run on, one function per paper (the one registry).

Each is a pure function of its arguments (the random ones of a seed), stated exactly in its
docstring or in the docstring of the reproduction that uses it:

- ``ksigma_instance``: Zhuang et al. (NIPS 2017): the paper draws "10 random test cases" per
  (n, k) with Bernoulli arms but does not say how; this is our generator;
- ``ade_instance``: Zhang et al. (AAAI 2020), U[0, 1] means with a minimum gap in a window;
- ``gold_instance``: Ban & He (KDD 2020), an (eps, rho)-outlier group
  (``screener.simulation.generic_outliers``);
- ``threshold_setup``: Tao et al. (NeurIPS 2019), the three setups of Section 5;
- ``topk_instance``: Chen et al. (ICML 2017), TWOGROUP, UNIFORM and SYNTHETIC-p.
"""

from __future__ import annotations

import functools
from typing import cast

import numpy as np
from numpy.typing import NDArray

from screener.simulation.generic_outliers import (
    GenericOutlierInstance,
    OutlierKind,
    generic_outlier_instance,
)

__all__ = [
    "DEFAULT_MIN_GAP",
    "DEFAULT_NORMAL_RANGE",
    "TOPK_INSTANCES",
    "InstanceError",
    "ade_instance",
    "gold_instance",
    "ksigma_instance",
    "ksigma_threshold",
    "min_gap",
    "sorted_topk_means",
    "synthetic_means",
    "threshold_setup",
    "topk_instance",
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
    """No instance satisfying the constraints was found within the draws allowed."""


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


# ------------------------------------------------------------------ Zhang et al. 2020
def min_gap(means: FloatArray, k: float) -> float:
    """min_i |mu_i - theta|, theta = mean + k std (std dividing by n)."""
    theta = means.mean() + k * means.std()
    return float(np.abs(means - theta).min())


def ade_instance(
    n: int, k: float, seed: int, gap: tuple[float, float], *, max_blocks: int = 5_000
) -> FloatArray:
    """Means ~ U[0, 1] of ``n`` arms whose minimum gap lies in ``gap``: rejection sampling.

    Blocks of 64 candidates from ``default_rng(SeedSequence([seed, n, round(1000 k),
    round(1e4 lo), round(1e4 hi)]))``; the first candidate whose gap lies in [lo, hi] wins.
    """
    lo, hi = gap
    sequence = np.random.SeedSequence([seed, n, round(1000 * k), round(1e4 * lo), round(1e4 * hi)])
    rng = np.random.default_rng(sequence)
    for _ in range(max_blocks):
        block = rng.uniform(0.0, 1.0, (64, n))
        theta = block.mean(axis=1) + k * block.std(axis=1)
        gaps = np.abs(block - theta[:, None]).min(axis=1)
        hits = np.flatnonzero((gaps >= lo) & (gaps <= hi))
        if hits.size:
            chosen: FloatArray = block[hits[0]]
            return chosen
    raise InstanceError(
        f"no instance of n={n}, k={k} with minimum gap in [{lo}, {hi}] in {64 * max_blocks} "
        "draws: widen the gap range"
    )


# ---------------------------------------------------------------------- Ban & He 2020
@functools.cache  # a generator call costs ~1 s at n = 400
def gold_instance(
    n: int, eps: float, kind: str, rho: float, *, boundary: bool = False
) -> GenericOutlierInstance:
    """The one instance of a configuration (generator seed 0); ``boundary``: Section 6.1's
    literal group of (1 - rho) n arms."""
    # The generator checks the kind (ConfigError on any other).
    return generic_outlier_instance(n, eps, rho, cast(OutlierKind, kind), 0, boundary=boundary)


# ----------------------------------------------------------------------- Tao et al. 2019
def threshold_setup(setup: int) -> FloatArray:
    """The arm means of Setup 1, 2 or 3 (Tao et al. 2019, Section 5)."""
    if setup == 1:
        return np.array([0.2, 0.25, 0.3, 0.35, 0.45, 0.55, 0.65, 0.7, 0.75, 0.8])
    if setup == 2:
        return 0.405 + np.arange(20) / 100.0
    if setup == 3:
        return np.array([0.45] * 5 + [0.505] * 5)
    raise ValueError(f"no setup {setup}")


# ---------------------------------------------------------------------- Chen et al. 2017
#: Chen et al.'s instances in the order of their Figures 1-4.
TOPK_INSTANCES = ("twogroup", "synthetic-0.5", "uniform", "synthetic-6")


def synthetic_means(n: int, k: int, p: float) -> FloatArray:
    """SYNTHETIC-p in arm order (best first): the UNIFORM grid u_i = 1 - i / n mapped to
    ``c + sign(u_i - c) h |(u_i - c) / h|^p`` around c = 1 - (K + 1/2) / n (h the half-width of
    u_i's side), rescaled to span [0, 1] (see ``benchmarks.chen2017``)."""
    u = 1.0 - np.arange(1, n + 1) / n
    c = 1.0 - (k + 0.5) / n
    x = u - c
    half = np.where(x > 0, u[0] - c, c - u[-1])
    y = c + np.sign(x) * half * np.abs(x / half) ** p
    return np.asarray((y - y[-1]) / (y[0] - y[-1]), dtype=np.float64)


def sorted_topk_means(name: str, n: int, k: int) -> FloatArray:
    """One of ``TOPK_INSTANCES`` in arm order (best first)."""
    if name == "twogroup":
        return np.where(np.arange(n) < k, 0.7, 0.3)
    if name == "uniform":
        return 1.0 - np.arange(1, n + 1) / n
    if name.startswith("synthetic-"):
        return synthetic_means(n, k, float(name.split("-", 1)[1]))
    raise ValueError(f"unknown instance {name!r}")


def topk_instance(name: str, n: int, k: int) -> FloatArray:
    """One of ``TOPK_INSTANCES``, shuffled by a permutation fixed by (n, k) (so that
    lowest-index tie breaks favour no group)."""
    order = np.random.default_rng([2017, n, k]).permutation(n)
    return sorted_topk_means(name, n, k)[order]
