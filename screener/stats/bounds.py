"""Confidence radii as pure functions.

Every radius here is a half-width ``beta`` such that the one-sided miss probability
``P(estimate - truth > beta)`` (and the symmetric one) is at most the level named in the
docstring. All functions accept scalars or numpy arrays and never mutate their inputs.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "QuantileRule",
    "agresti_coull_radius",
    "bernoulli_kl",
    "delta_method_threshold_radius",
    "hoeffding_radius",
    "kl_bounds",
    "ksigma_bounded_threshold_radius",
    "ksigma_lk",
    "normal_quantile",
    "round_level",
]

FloatArray = NDArray[np.float64]
QuantileRule = Literal["normal", "paper"]
_STANDARD_NORMAL = NormalDist()


def round_level(delta: float, n_arms: int, total_pulls: int) -> float:
    """Per-interval level after ``total_pulls`` pulls: ``6 delta / (pi^2 (n+1) T^2)``.

    Zhuang et al. 2017, Eq. (1). Summed over T >= 1 and the n + 1 intervals (n arms plus the
    threshold) the levels add up to delta, which is what makes any stopping time safe.
    """
    t = max(total_pulls, 1)
    return 6.0 * delta / (math.pi**2 * (n_arms + 1) * t * t)


def normal_quantile(level: float, rule: QuantileRule = "normal") -> float:
    """The z such that a two-sided normal interval misses with probability ``level``.

    ``rule="normal"`` (default): ``z = Phi^-1(1 - level / 2)``, the correct two-sided quantile.
    ``rule="paper"``: Zhuang et al. write ``z = erf^-1(1 - level / 2)``; since
    ``erf^-1(y) = Phi^-1((1 + y) / 2) / sqrt(2)`` that is ``Phi^-1(1 - level / 4) / sqrt(2)``,
    a narrower interval than its level claims. Kept for paper-faithful reproductions only.
    Computed from the lower tail so that levels far below float epsilon stay finite.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if rule == "normal":
        return -_STANDARD_NORMAL.inv_cdf(level / 2.0)
    if rule == "paper":
        return -_STANDARD_NORMAL.inv_cdf(level / 4.0) / math.sqrt(2.0)
    raise ValueError(f"unknown quantile rule {rule!r}: use 'normal' or 'paper'")


def hoeffding_radius(count: ArrayLike, level: float, width: float = 1.0) -> FloatArray:
    """Hoeffding radius ``R sqrt(log(1/level) / (2 m))`` for rewards in an interval of width R.

    One-sided miss probability at most ``level`` for the mean of ``m`` independent draws.
    Arms with no samples get an infinite radius.
    """
    m = np.asarray(count, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return width * np.sqrt(math.log(1.0 / level) / (2.0 * m))


def agresti_coull_radius(successes: ArrayLike, count: ArrayLike, z: float) -> FloatArray:
    """Agresti-Coull radius ``z sqrt(p~ (1 - p~) / m)``, ``p~ = (m+ + z^2/2) / (m + z^2)``.

    Zhuang et al. 2017, Section 4.3 (Bernoulli rewards, used heuristically by the paper); the
    interval is centred on the empirical mean as the paper does. Known limitation, measured in
    tests/stats/test_bounds.py: centred there rather than on p~, it under-covers for means near
    0 or 1 (one-sided miss 0.058 at level 0.05 for p = 0.1, m = 100; up to ~8x the level at
    1e-7). Widening by |p~ - mean| fixes it at 6-60% more pulls; not done, to stay the paper's
    algorithm. End-to-end error rates stay far below delta (tests/algorithms).
    ``successes`` may be a sum of rewards rescaled to [0, 1] (graded rewards): the same
    heuristic then applies to the mean.
    Arms with no samples get an infinite radius.
    """
    s = np.asarray(successes, dtype=np.float64)
    m = np.asarray(count, dtype=np.float64)
    z2 = z * z
    p = (s + z2 / 2.0) / (m + z2)
    with np.errstate(divide="ignore"):
        return z * np.sqrt(p * (1.0 - p) / m)


def bernoulli_kl(p: ArrayLike, q: ArrayLike) -> FloatArray:
    """``kl(p, q) = p log(p / q) + (1 - p) log((1 - p) / (1 - q))``, with ``0 log 0 = 0``.

    The Kullback-Leibler divergence between Bernoulli(p) and Bernoulli(q), p and q in [0, 1];
    ``+inf`` where q puts no mass on an outcome that p does.
    """
    p_arr = np.asarray(p, dtype=np.float64)
    q_arr = np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ones = np.where(p_arr > 0.0, p_arr * np.log(p_arr / q_arr), 0.0)
        zeros = np.where(p_arr < 1.0, (1.0 - p_arr) * np.log((1.0 - p_arr) / (1.0 - q_arr)), 0.0)
    return np.asarray(ones + zeros, dtype=np.float64)


def kl_bounds(
    means: ArrayLike, count: ArrayLike, log_inverse: ArrayLike, iterations: int = 60
) -> tuple[FloatArray, FloatArray]:
    """Chernoff-Hoeffding (KL) interval ``{q : m kl(mean, q) <= log(1 / level)}`` in [0, 1].

    For the mean of ``m`` independent rewards in [0, 1] with expectation mu, Hoeffding (1963,
    Theorem 1) gives ``P(mean <= x) <= exp(-m kl(x, mu))`` for ``x < mu`` (and the mirror
    bound above), so each end misses mu with probability at most ``level``: the bound holds
    for graded rewards too, not only 0/1 answers. By Pinsker's inequality
    (``kl(p, q) >= 2 (p - q)^2``) it is never wider than the Hoeffding interval at the same
    level, and much narrower for means near 0 or 1 (Garivier & Cappe 2011, KL-UCB).
    Solved by bisection (``iterations`` halvings: 60 reach float precision). Arms with no
    samples get [0, 1].
    """
    p = np.clip(np.asarray(means, dtype=np.float64), 0.0, 1.0)
    m = np.asarray(count, dtype=np.float64)
    budget = np.asarray(log_inverse, dtype=np.float64)
    p, m, budget = np.broadcast_arrays(p, m, budget)
    sampled = m > 0
    p = np.where(sampled, p, 0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        allowed = np.where(sampled, np.maximum(budget, 0.0) / m, np.inf)
    lower = _kl_solve(p, allowed, np.zeros_like(p), p, iterations)
    upper = _kl_solve(p, allowed, np.ones_like(p), p, iterations)
    return np.where(sampled, lower, 0.0), np.where(sampled, upper, 1.0)


def _kl_solve(
    p: FloatArray, allowed: FloatArray, far: FloatArray, near: FloatArray, iterations: int
) -> FloatArray:
    """The end q of ``{q : kl(p, q) <= allowed}`` between ``near`` (= p, where kl is 0) and
    ``far``; kl grows monotonically from near to far. Returns the bisection's outer point,
    so the interval errs on the wide (safe) side by at most 2^-iterations."""
    inside = near.copy()  # kl(p, inside) <= allowed always holds
    outside = far.copy()
    reach_far = bernoulli_kl(p, far) <= allowed
    for _ in range(iterations):
        middle = (inside + outside) / 2.0
        ok = bernoulli_kl(p, middle) <= allowed
        inside = np.where(ok, middle, inside)
        outside = np.where(ok, outside, middle)
    return np.where(reach_far, far, outside)


def ksigma_lk(k: float, n_arms: int, delta: float) -> float:
    """The constant ``l(k)`` of Zhuang et al. 2017, Theorem 2.

    ``l(k) = [ sqrt((1 + k sqrt(n-1))^2 / n) + sqrt(k^2 / (2 log(pi^2 n^3 / (6 delta)))) ]^2``.
    """
    n = n_arms
    first = math.sqrt((1.0 + k * math.sqrt(n - 1)) ** 2 / n)
    second = math.sqrt(k * k / (2.0 * math.log(math.pi**2 * n**3 / (6.0 * delta))))
    return (first + second) ** 2


def ksigma_bounded_threshold_radius(
    counts: ArrayLike, level: float, lk: float, width: float = 1.0
) -> float:
    """Threshold radius for bounded rewards: ``R sqrt(l(k) / (2 h(m)) log(1 / level))``.

    Zhuang et al. 2017, Section 4.3, with ``h(m)`` the harmonic mean of the pull counts
    (McDiarmid's inequality applied to ``theta_hat = mean(y) + k std(y)``).
    """
    m = np.asarray(counts, dtype=np.float64)
    if np.any(m <= 0):
        return math.inf
    harmonic = m.size / float(np.sum(1.0 / m))
    return width * math.sqrt(lk / (2.0 * harmonic) * math.log(1.0 / level))


def delta_method_threshold_radius(means: ArrayLike, radii: ArrayLike, k: float) -> float:
    """Threshold radius for Bernoulli rewards by the delta method.

    ``sqrt(sum_i (1/n + k (y_i - mean(y)) / (n std(y)))^2 beta_i^2)``: the gradient of
    ``theta_hat = mean(y) + k std(y)`` with respect to each ``y_i`` (std divides by n),
    applied to each arm's radius. The paper's printed formula is garbled in our copy; this is
    the derivative it intends. When all means coincide (std = 0) the gradient does not exist;
    we then use the Lipschitz bound ``|std(y') - std(y)| <= ||y' - y|| / sqrt(n)``, which gives
    ``sqrt(sum beta_i^2) / n + k sqrt(sum beta_i^2 / n)`` and is never smaller.
    """
    y = np.asarray(means, dtype=np.float64)
    beta = np.asarray(radii, dtype=np.float64)
    n = y.size
    centred = y - y.mean()
    sigma = math.sqrt(float(np.dot(centred, centred)) / n)
    if sigma <= 1e-12:
        total = float(np.dot(beta, beta))
        return math.sqrt(total) / n + k * math.sqrt(total / n)
    gradient = 1.0 / n + k * centred / (n * sigma)
    weighted = gradient * beta
    return math.sqrt(float(np.dot(weighted, weighted)))
