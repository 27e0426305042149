"""Per-paper confidence levels, and the Hoeffding radii the papers build at them.

Each level splits delta over the intervals its paper's union bound charges and over time
(rounds, answers or a worker's own count): charged to those intervals and summed over
t >= 1 it adds up to delta exactly (``sum 1 / t^2 = pi^2 / 6``), which is what makes any
stopping time safe. tests/stats/test_levels.py puts every level and radius of
screener.stats under the same property tests.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.arrays import FloatArray
from screener.stats.bounds import hoeffding_radius

__all__ = [
    "ade_level",
    "anytime_log_inverse",
    "anytime_radius",
    "clucb_radius",
    "gold_level",
    "round_level",
]


def round_level(delta: float, n_arms: int, total_pulls: int) -> float:
    """Per-interval level after ``total_pulls`` pulls: ``6 delta / (pi^2 (n+1) T^2)``.

    Zhuang et al. 2017, Eq. (1). Summed over T >= 1 and the n + 1 intervals (n arms plus the
    threshold) the levels add up to delta, which is what makes any stopping time safe.

    Examples
    --------
    >>> from screener.stats import round_level
    >>> f"{round_level(0.1, 4, 10):.6e}"  # 6 * 0.1 / (pi^2 * 5 * 10^2)
    '1.215854e-04'
    >>> round_level(0.1, 4, 0) == round_level(0.1, 4, 1)  # T = 0 counts as T = 1
    True
    """
    return _basel_share(delta, n_arms + 1, total_pulls)


def gold_level(delta: float, n_arms: int, total_pulls: int) -> float:
    """Per-arm level after ``T`` pulls: ``delta' = 6 delta / (pi^2 n T^2)`` (Eq. 3, T >= 1).

    Ban & He, KDD 2020 (GOLD). Summed over the n arms and all T >= 1 the levels add up to
    delta (Lemma 5.2).

    Examples
    --------
    >>> from screener.stats import gold_level
    >>> f"{gold_level(0.1, 20, 10):.6e}"  # 6 * 0.1 / (pi^2 * 20 * 10^2)
    '3.039636e-05'
    >>> gold_level(0.1, 20, 0) == gold_level(0.1, 20, 1)  # T = 0 counts as T = 1
    True
    """
    return _basel_share(delta, n_arms, total_pulls)


def _basel_share(delta: float, intervals: int, total_pulls: int) -> float:
    """``6 delta / (pi^2 m T^2)``: what each of ``m`` intervals gets at time T (T = 0 counts
    as 1) when delta is split over them and over all T >= 1 (the sum of 1 / T^2 is pi^2 / 6)."""
    t = max(total_pulls, 1)
    return 6.0 * delta / (math.pi**2 * intervals * t * t)


def ade_level(delta: float, n_arms: int, t: int) -> float:
    """delta_t = 3 delta / ((n + 4) pi^2 t^2).

    Zhang et al. 2020 (ADE), Algorithm 1, t the round index. Each round charges
    ``2 (n + 4) delta_t`` (both ends of the n workers' intervals, Lemma 5, and ``8 delta_t``
    for theta's, Lemmas 1 and 3), which sums to delta over t >= 1 exactly.

    Examples
    --------
    >>> from screener.stats import ade_level
    >>> f"{ade_level(0.1, 3, 3):.6e}"  # 3 * 0.1 / (7 pi^2 * 3^2)
    '4.824818e-04'
    """
    return 3.0 * delta / ((n_arms + 4) * math.pi**2 * t * t)


def anytime_log_inverse(counts: NDArray[Any], delta: float, n_arms: int) -> FloatArray:
    """``log(1 / level)`` at the level ``6 delta / (pi^2 n t^2)`` for an arm with ``t`` answers.

    The level depends on the arm's own count t. Summed over t >= 1 and the n arms the levels
    add up to delta, so with probability at least 1 - delta every arm's mean stays inside
    its interval at every count (one side per arm is all a wrong decision needs).

    Examples
    --------
    >>> import numpy as np
    >>> from screener.stats import anytime_log_inverse
    >>> anytime_log_inverse(np.array([1, 4]), 0.05, 4).round(4).tolist()
    [4.8797, 7.6523]
    """
    t = np.asarray(counts, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.asarray(np.log(math.pi**2 * n_arms * t * t / (6.0 * delta)), dtype=np.float64)


def anytime_radius(counts: NDArray[Any], delta: float, n_arms: int, width: float) -> FloatArray:
    """Hoeffding radius at the anytime level of ``anytime_log_inverse`` (arms with no answers:
    an infinite radius).

    Examples
    --------
    >>> import numpy as np
    >>> from screener.stats import anytime_radius
    >>> anytime_radius(np.array([0, 1, 4]), 0.05, 4, 1.0).round(4).tolist()
    [inf, 1.562, 0.978]
    """
    t = np.asarray(counts, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_inverse = anytime_log_inverse(t, delta, n_arms)
        radius = width * np.sqrt(np.maximum(log_inverse, 0.0) / (2.0 * t))
    return np.where(t > 0, radius, math.inf)


def clucb_radius(count: ArrayLike, t: int, n_arms: int, delta: float, width: float) -> FloatArray:
    """CLUCB's radius ``sigma sqrt(2 ln(4 n t^3 / delta) / T_i)`` with ``sigma = R / 2``.

    Chen, Lin, King, Lyu, Chen, NIPS 2014 (CLUCB-PAC), t the answers so far and ``T_i`` the
    worker's. Rewards in an interval of width R are R/2-sub-Gaussian; this is Hoeffding's
    radius at level ``delta / (4 n t^3)``, which summed over both sides, the n workers and
    all t is below delta.

    Examples
    --------
    >>> import numpy as np
    >>> from screener.stats import clucb_radius
    >>> clucb_radius(np.array([0, 1, 4]), 3, 3, 0.1, 1.0).round(4).tolist()
    [inf, 2.0104, 1.0052]
    """
    level = delta / (4.0 * n_arms * float(max(t, 1)) ** 3)
    return hoeffding_radius(count, level, width)
