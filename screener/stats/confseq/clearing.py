"""How many answers a confidence interval family needs to clear a bar, in the KL form
``{q : t D(S/t, q) <= b(S, t)}``: the expected count of one worker (for scheduling) and the
count by which every worker is decided (a promise)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from screener.arrays import BoolArray, FloatArray
from screener.stats.bounds import bernoulli_kl

__all__ = ["Divergence", "clearing_count", "divergence", "max_clearing_count"]

Divergence = Literal["kl", "quadratic"]


def divergence(kind: Divergence, p: ArrayLike, q: ArrayLike) -> FloatArray:
    """Bernoulli ``kl(p, q)``, or Hoeffding's ``2 (p - q)^2`` (``kind="quadratic"``): the
    divergences whose sub-level sets ``{q : t D(p, q) <= b}`` are the KL and Hoeffding
    intervals on [0, 1]."""
    if kind == "kl":
        return bernoulli_kl(p, q)
    gap = np.asarray(p, dtype=np.float64) - np.asarray(q, dtype=np.float64)
    return np.asarray(2.0 * gap * gap, dtype=np.float64)


def clearing_count(
    means: ArrayLike,
    low_bar: float,
    high_bar: float,
    log_inverse: Callable[[FloatArray, FloatArray], FloatArray],
    kind: Divergence = "kl",
    iterations: int = 8,
) -> FloatArray:
    """How many answers an interval ``{q : t D(p, q) <= b(p t, t)}`` needs to clear a bar.

    For a worker whose mean stays ``p`` (rewards in [0, 1]): the smallest count t at which
    its lower end reaches ``low_bar`` (``t D(p, low_bar) >= b``) or its upper end drops below
    ``high_bar`` (``t D(p, high_bar) > b``), whichever comes first; ``inf`` when neither can
    (p on a bar with an empty indifference zone). ``log_inverse(sums, counts)`` is the
    family's budget b and ``kind`` its divergence D. Solved by the fixed-point iteration
    ``t <- b(p t, t) / D``, which rises to the smallest solution because b grows like
    ``log t`` (contraction factor about ``2 / b``); a real number, for scheduling (not a
    promise: see ``max_clearing_count``).
    """
    p = np.asarray(means, dtype=np.float64).reshape(-1)
    # Both sides at once: rows [p against low_bar, p against high_bar].
    q = np.concatenate([p, p])
    bars = np.repeat([low_bar, high_bar], p.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = divergence(kind, q, bars)
        usable = np.concatenate([p >= low_bar, p < high_bar]) & (rate > 0.0)
    t = np.full(q.shape, math.inf)
    if usable.any():
        r, qu = rate[usable], q[usable]
        count = np.ones_like(qu)
        # A mean a hair from its bar sends the count past what the budget can be computed at
        # (log-gamma overflows near 1e30): that worker never clears, its t is inf, not NaN.
        with np.errstate(over="ignore", invalid="ignore"):
            for _ in range(iterations):
                budget = np.asarray(log_inverse(qu * count, count), dtype=np.float64)
                count = np.maximum(budget / r, 1.0)
        t[usable] = np.where(np.isnan(count), math.inf, count)
    return np.asarray(np.minimum(t[: p.size], t[p.size :]).reshape(np.shape(means)))


def max_clearing_count(
    low_bar: float,
    high_bar: float,
    log_inverse_max: Callable[[FloatArray], FloatArray],
    kind: Divergence = "kl",
    horizon: int = 10**12,
) -> int | None:
    """The count N by which every worker is decided, whatever its answers (None: never).

    With ``low_bar < high_bar`` (an indifference zone) and an interval family
    ``{q : t D(S/t, q) <= b(S, t)}`` whose budget is at most ``log_inverse_max(t)`` for every
    sum S, the interval at count t is inside the one with budget ``b_max(t)``. That one
    clears ``low_bar`` for every mean ``p >= p_L(t)`` (root of ``t D(p, low_bar) = b_max``)
    and ``high_bar`` for every ``p < p_U(t)``; once ``p_U(t) >= p_L(t)`` every mean in [0, 1]
    is decided at count t, and N is the first such t (searched over t, since ``b_max(t) / t``
    falls with t). The roots are rounded outwards, so rounding can only make N larger.
    """
    if not low_bar < high_bar:
        return None

    def all_clear(t: FloatArray) -> BoolArray:
        allowed = np.asarray(log_inverse_max(t), dtype=np.float64) / t
        p_low = _root(low_bar, 1.0, allowed, kind)
        p_high = _root(high_bar, 0.0, allowed, kind)
        return np.asarray(p_high >= p_low + 1e-12)

    # Powers of two first, then 64-way splits of the bracket, each a single vectorised call.
    doubling = np.exp2(np.arange(0.0, math.ceil(math.log2(horizon)) + 1.0))
    clear = all_clear(doubling)
    if not clear.any():
        return None
    first = int(np.argmax(clear))
    if first == 0:
        return 1
    low, high = doubling[first - 1], doubling[first]  # all_clear(high) holds, (low) not
    while high - low > 1.0:
        inside = np.unique(np.floor(np.linspace(low, high, 66)))
        inside = inside[(inside > low) & (inside < high)]
        clear = all_clear(inside)
        if clear.any():
            first = int(np.argmax(clear))
            high = inside[first]
            low = inside[first - 1] if first > 0 else low
        else:
            low = inside[-1]
    return int(high)


def _root(bar: float, end: float, allowed: FloatArray, kind: Divergence) -> FloatArray:
    """The p between ``bar`` (where D is 0) and ``end`` at which ``D(p, bar)`` reaches
    ``allowed``, rounded away from the bar (the conservative side for ``max_clearing_count``:
    every p beyond it clears); ``end`` pushed one step further out when D never gets there.
    """
    near = np.full_like(allowed, bar)
    far = np.full_like(allowed, end)
    bars = np.full_like(allowed, bar)
    reachable = divergence(kind, far, bars) >= allowed
    for _ in range(64):
        middle = (near + far) / 2.0
        enough = divergence(kind, middle, bars) >= allowed
        near = np.where(enough, near, middle)
        far = np.where(enough, middle, far)
    beyond = end + (1.0 if end >= bar else -1.0)
    return np.asarray(np.where(reachable, far, beyond), dtype=np.float64)
