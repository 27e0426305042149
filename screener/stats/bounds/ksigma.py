"""The radius of the k-sigma threshold ``theta = mean(y) + k std(y)`` at a level (Zhuang et
al. 2017): the constant of its union bound, and its radius for bounded and for Bernoulli
rewards."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["delta_method_threshold_radius", "ksigma_bounded_threshold_radius", "ksigma_lk"]


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
