"""The Beta-mixture interval of one worker in scalar float steps, for O(1) checks.

``near_mixture_interval`` follows ``mixture_bounds`` operation for operation (the same
Stirling series for log Gamma, the same Newton starts, steps and outward pushes) with
Python's ``math`` (the C library) instead of numpy's vectorised ``log``, ``log1p`` and
``exp``, which round differently in the last bit for some arguments. So the two agree to
within a few ulps of the budget carried through Newton's method (tests/stats/test_scalar.py
checks ``NEAR`` with a wide margin over random pairs and sums at the ends). Decisions that
must equal the vectorised ones only take this value where ``NEAR`` of slack cannot change
them, and compute the exact one otherwise.
"""

from __future__ import annotations

import math

from screener.stats.confseq.mixture import JEFFREYS
from screener.stats.special import HALF_LOG_TWO_PI, STIRLING, cached_log_beta

__all__ = ["NEAR", "near_mixture_interval"]

#: The largest distance allowed between ``near_mixture_interval`` and ``mixture_bounds``.
NEAR = 1e-9
_PUSHES = (0.0, 1e-14, 1e-11, 1e-8, 1e-5)


def near_mixture_interval(
    sum_: float, count: float, alpha: float, prior: tuple[float, float] = JEFFREYS
) -> tuple[float, float]:
    """``mixture_bounds(sum_, count, alpha)`` of one worker with answers (count > 0), within
    ``NEAR``; rewards in [0, 1], so ``0 <= sum_ <= count``."""
    a, b = prior
    s, t = sum_, count
    p = s / t
    best = _xlogy(s, p) + _xlogy(t - s, 1.0 - p)
    mixed = _log_gamma(a + s) + _log_gamma(b + t - s) - _log_gamma(a + b + t)
    regret = max(best - (mixed - cached_log_beta(a, b)), 0.0)
    allowed = max(math.log(1.0 / alpha) + regret, 0.0) / t
    return _kl_end(p, allowed, 0.0), _kl_end(p, allowed, 1.0)


def _log_gamma(x: float) -> float:
    """``screener.stats.log_gamma`` of one value."""
    z = x + 10.0
    inverse = 1.0 / z
    square = inverse * inverse
    series = STIRLING[-1]
    for coefficient in reversed(STIRLING[:-1]):
        series = series * square + coefficient
    stirling = (z - 0.5) * math.log(z) - z + HALF_LOG_TWO_PI + series * inverse
    u = x * (x + 9.0)
    return stirling - math.log(u * (u + 8.0) * (u + 14.0) * (u + 18.0) * (u + 20.0))


def _xlogy(x: float, y: float) -> float:
    return x * math.log(y) if x > 0.0 else 0.0


def _kl(p: float, q: float) -> float:
    """Bernoulli ``kl(p, q)``, ``inf`` where q puts no mass on an outcome p has."""
    if (p > 0.0 and q <= 0.0) or (p < 1.0 and q >= 1.0):
        return math.inf
    ones = p * math.log(p / q) if p > 0.0 else 0.0
    zeros = (1.0 - p) * math.log((1.0 - p) / (1.0 - q)) if p < 1.0 else 0.0
    return ones + zeros


def _kl_end(p: float, allowed: float, far: float) -> float:
    """``screener.stats.bounds.kl._kl_end`` of one end (far 0: lower, far 1: upper)."""
    upper = far == 1.0
    entropy = -(_xlogy(p, p) + _xlogy(1.0 - p, 1.0 - p))
    spread = 1.0 - p if upper else p
    pinsker = p + (1.0 if upper else -1.0) * math.sqrt(allowed / 2.0)
    tail = math.exp(-(allowed + entropy) / spread) if spread > 0.0 else 0.0
    start = min(pinsker, 1.0 - tail) if upper else max(pinsker, tail)
    start = min(max(start, 0.0), 1.0)
    if not (0.0 < start < 1.0 and allowed > 0.0):
        q = start if allowed > 0.0 else p
    else:
        q, target = start, -entropy - allowed
        for _ in range(10):
            value = target - p * math.log(q) - (1.0 - p) * math.log1p(-q)
            step = value * q * (1.0 - q) / (q - p)
            q -= step
            if not abs(step) > 1e-15:
                break
    for push in _PUSHES:
        candidate = q + push * (far - q)
        if _kl(p, candidate) >= allowed:
            return candidate
    return far
