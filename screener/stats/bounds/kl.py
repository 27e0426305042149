"""The Chernoff-Hoeffding (KL) interval of a mean of rewards in [0, 1], and the Bernoulli
divergence it is made of. All functions accept scalars or numpy arrays and never mutate
their inputs."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from screener.arrays import FloatArray

__all__ = ["bernoulli_kl", "kl_bounds"]


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
    means: ArrayLike, count: ArrayLike, log_inverse: ArrayLike, iterations: int = 10
) -> tuple[FloatArray, FloatArray]:
    """Chernoff-Hoeffding (KL) interval ``{q : m kl(mean, q) <= log(1 / level)}`` in [0, 1].

    For the mean of ``m`` independent rewards in [0, 1] with expectation mu, Hoeffding (1963,
    Theorem 1) gives ``P(mean <= x) <= exp(-m kl(x, mu))`` for ``x < mu`` (and the mirror
    bound above), so each end misses mu with probability at most ``level``: the bound holds
    for graded rewards too, not only 0/1 answers. By Pinsker's inequality
    (``kl(p, q) >= 2 (p - q)^2``) it is never wider than the Hoeffding interval at the same
    level, and much narrower for means near 0 or 1 (Garivier & Cappe 2011, KL-UCB).
    Solved by Newton's method from outside the interval (``iterations`` steps: 10 reach float
    precision from the starts used, see ``_kl_end``), each end then checked to lie outside
    by ``bernoulli_kl`` (the safe side). Arms with no samples get [0, 1].
    """
    p = np.clip(np.asarray(means, dtype=np.float64), 0.0, 1.0)
    m = np.asarray(count, dtype=np.float64)
    budget = np.asarray(log_inverse, dtype=np.float64)
    p, m, budget = np.broadcast_arrays(p, m, budget)
    sampled = m > 0
    p = np.where(sampled, p, 0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        allowed = np.where(sampled, np.maximum(budget, 0.0) / m, np.inf)
    # Both ends in one pass: rows [lower ends, upper ends].
    far = np.stack([np.zeros_like(p), np.ones_like(p)])
    lower, upper = _kl_end(np.stack([p, p]), np.stack([allowed, allowed]), far, iterations)
    return np.where(sampled, lower, 0.0), np.where(sampled, upper, 1.0)


def _kl_end(p: FloatArray, allowed: FloatArray, far: FloatArray, iterations: int) -> FloatArray:
    """The end q of ``{q : kl(p, q) <= allowed}`` between p (where kl is 0) and ``far``
    (0 for the lower end, 1 for the upper end).

    ``g(q) = kl(p, q) - allowed`` is convex and monotone from p to ``far``, so Newton's
    method started beyond the root stays beyond it and converges. Starts beyond the root:
    Pinsker's ``p -+ sqrt(allowed / 2)`` and, from ``kl(p, q) >= -H(p) - (1-p) log(1-q)``
    (upper end; mirrored below), ``1 - exp(-(allowed + H(p)) / (1 - p))``, the nearer of the
    two. Each end stops once its step is below 1e-15 (stopping sooner only leaves an end
    outside the root). Rounding can leave the converged point a hair inside: it
    is then moved outwards by growing relative steps until ``bernoulli_kl`` puts it outside
    (``far`` as a last resort).
    """
    upper = far == 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        entropy = -(_xlog(p) + _xlog(1.0 - p))
        spread = np.where(upper, 1.0 - p, p)  # room between p and far
        pinsker = p + np.where(upper, 1.0, -1.0) * np.sqrt(allowed / 2.0)
        tail = np.exp(-(allowed + entropy) / spread)  # 1 - q above, q below
        start = np.where(upper, np.minimum(pinsker, 1.0 - tail), np.maximum(pinsker, tail))
        start = np.clip(np.where(np.isnan(start), far, start), 0.0, 1.0)
        solve = (start > 0.0) & (start < 1.0) & (allowed > 0.0)
        q = np.where(solve, start, 0.5)
        target = -entropy - allowed
        moving = solve.copy()
        for _ in range(iterations):
            value = target - p * np.log(q) - (1.0 - p) * np.log1p(-q)  # kl(p, q) - allowed
            step = np.where(moving, value * q * (1.0 - q) / (q - p), 0.0)
            q = q - step
            # Each entry stops on its own step, so an end never depends on the others solved
            # in the same call (results must not depend on when a caller refreshes).
            moving &= np.abs(step) > 1e-15
            if not moving.any():
                break
    q = np.where(solve, q, np.where(allowed > 0.0, start, p))
    end = far.copy()
    settled = np.zeros(q.shape, dtype=bool)
    for push in (0.0, 1e-14, 1e-11, 1e-8, 1e-5):
        candidate = q + push * (far - q)
        with np.errstate(invalid="ignore", over="ignore"):
            outside = ~settled & (bernoulli_kl(p, candidate) >= allowed)
        end = np.where(outside, candidate, end)
        settled |= outside
        if settled.all():
            break
    return end


def _xlog(x: FloatArray) -> FloatArray:
    """``x log x`` with ``0 log 0 = 0``."""
    return np.where(x > 0.0, x * np.log(np.where(x > 0.0, x, 1.0)), 0.0)
