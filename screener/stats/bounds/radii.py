"""Confidence radii around an empirical mean: Hoeffding's and Agresti-Coull's, and the normal
quantile their levels are read with.

Every radius here is a half-width ``beta`` such that the one-sided miss probability
``P(estimate - truth > beta)`` (and the symmetric one) is at most the level named in the
docstring. All functions accept scalars or numpy arrays and never mutate their inputs.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from screener.arrays import FloatArray

__all__ = [
    "QuantileRule",
    "agresti_coull_radius",
    "hoeffding_radius",
    "normal_quantile",
    "scaled_agresti_coull_radius",
]

QuantileRule = Literal["normal", "paper"]
_STANDARD_NORMAL = NormalDist()


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
    interval is centred on the empirical mean as the paper does. Known limitation (pinned by
    tests/stats/test_bounds.py): centred there rather than on p~, it under-covers for means
    near 0 or 1, and the more so the smaller the level. Widening by |p~ - mean| would fix it
    at the cost of more pulls; not done, to stay the paper's algorithm (the end-to-end error
    rates are checked in tests/algorithms).
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


def scaled_agresti_coull_radius(
    totals: ArrayLike, count: ArrayLike, z: float, lower: float = 0.0, width: float = 1.0
) -> FloatArray:
    """``agresti_coull_radius`` for rewards in ``[lower, lower + width]``: each worker's sum of
    rewards ``totals`` rescaled to [0, 1], the radius scaled back to reward units.

    Zhuang et al. 2017, Section 4.3, as the k-sigma algorithms and GOLD use it, with the same
    limitation (a heuristic; see ``agresti_coull_radius``). Arms with no samples get an
    infinite radius.

    Examples
    --------
    Three answers of 5 and two of 1 on [1, 5] are 3 successes of 5 on [0, 1]:

    >>> from screener.stats import agresti_coull_radius, scaled_agresti_coull_radius
    >>> round(float(scaled_agresti_coull_radius(17.0, 5, 2.0, lower=1.0, width=4.0)), 6)
    1.777778
    >>> round(float(4.0 * agresti_coull_radius(3, 5, 2.0)), 6)
    1.777778
    """
    m = np.asarray(count)
    scaled_successes = (np.asarray(totals, dtype=np.float64) - lower * m) / width
    return width * agresti_coull_radius(scaled_successes, m, z)
