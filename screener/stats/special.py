"""Special functions the confidence sequences need, vectorised: numpy has no ``lgamma`` and
scipy is not a dependency."""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import ArrayLike

from screener.arrays import FloatArray

__all__ = ["HALF_LOG_TWO_PI", "STIRLING", "cached_log_beta", "log_beta", "log_gamma", "xlogy"]

_SHIFT = 10  # log_gamma shifts its argument to >= 10, where Stirling's series is exact enough
#: The coefficients of Stirling's series for log Gamma, from the ``1 / (12 z)`` term on.
STIRLING = (1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0, 1.0 / 1188.0)
HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)


def log_gamma(x: ArrayLike) -> FloatArray:
    """``log Gamma(x)`` for x > 0, vectorised (numpy has no lgamma; scipy is not a dependency).

    ``Gamma(x) = Gamma(x + 10) / (x (x + 1) ... (x + 9))`` and Stirling's series for
    ``log Gamma(x + 10)`` up to the ``1 / (1188 z^9)`` term (the next one is below 2e-14 at
    z = 10). The product is taken in pairs, ``(x + j)(x + 9 - j) = u + j (9 - j)`` with
    ``u = x (x + 9)``. Tested against ``math.lgamma``.
    """
    value = np.asarray(x, dtype=np.float64)
    z = value + _SHIFT
    inverse = 1.0 / z
    square = inverse * inverse
    series = np.full_like(z, STIRLING[-1])
    for coefficient in reversed(STIRLING[:-1]):
        series = series * square + coefficient
    stirling = (z - 0.5) * np.log(z) - z + HALF_LOG_TWO_PI + series * inverse
    u = value * (value + 9.0)
    product = u * (u + 8.0) * (u + 14.0) * (u + 18.0) * (u + 20.0)
    return np.asarray(stirling - np.log(product), dtype=np.float64)


def log_beta(a: ArrayLike, b: ArrayLike) -> FloatArray:
    """``log B(a, b) = log Gamma(a) + log Gamma(b) - log Gamma(a + b)`` for a, b > 0."""
    a_arr = np.asarray(a, dtype=np.float64)
    b_arr = np.asarray(b, dtype=np.float64)
    return np.asarray(log_gamma(a_arr) + log_gamma(b_arr) - log_gamma(a_arr + b_arr))


def xlogy(x: FloatArray, y: FloatArray) -> FloatArray:
    """``x log y`` with ``0 log 0 = 0``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0.0, x * np.log(np.where(x > 0.0, y, 1.0)), 0.0)


@functools.cache
def cached_log_beta(a: float, b: float) -> float:
    """``log B(a, b)`` of one prior, by ``math.lgamma``, computed once per prior."""
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
