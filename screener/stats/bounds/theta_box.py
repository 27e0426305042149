"""Bounds on the k-sigma threshold ``theta(x) = mean(x) + k std(x)`` (std dividing by n)
over a box of workers' intervals: where the threshold can lie when every worker's interval
holds. The bounds carry no level of their own."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from screener.arrays import FloatArray

__all__ = [
    "ksigma_threshold_bounds",
    "ksigma_threshold_enclosure",
    "ksigma_threshold_end",
    "threshold_end_bracket",
]

#: Many boxes are bounded this many coordinates at a time: the temporaries (8 pinned copies of
#: each box, its sorted ends) then stay small enough for the allocator to reuse them instead
#: of mapping fresh pages for each (page faults cost a many-run plan as much as its sums).
_CHUNK = 1024


def ksigma_threshold_bounds(
    lows: ArrayLike, highs: ArrayLike, k: float
) -> tuple[FloatArray, FloatArray]:
    """Bounds on ``theta(x) = mean(x) + k std(x)`` (std dividing by n) over the box of every
    ``x`` with ``lows <= x <= highs``, along the last axis (leading axes are separate boxes).

    If every worker's mean lies in its interval, theta of the means lies between the two
    bounds: theta's interval on the event that all the workers' intervals hold, with no level
    of its own. Both are rounded outwards by 1e-12; the lower one is the box minimum, the
    upper one at most a relaxed coordinate above the maximum (tests/stats/test_bounds.py
    checks both against brute force).

    * Lower bound: theta is convex (std is a seminorm), and ``std(x) >= <x, u> / sqrt(n)`` for
      every unit u orthogonal to the ones, so ``theta(x) >= <x, w(u)>`` with
      ``w(u) = 1/n + k u / sqrt(n)`` and the box minimum is at least
      ``sum_i min(w_i low_i, w_i high_i)`` whatever u is (``_theta_min_bound``).
    * Upper bound: the maximum is at a vertex, where with c the box centre, h the half-widths
      and ``x = c + d``, ``n std(x)^2 = |Pc|^2 + 2 <Pc, d> + |h|^2 - n mean(d)^2`` (P removes
      the mean), and for a given ``mean(d) = a`` the largest ``<Pc, d>`` is at most a
      fractional knapsack's (``_relaxed_max``, after pinning the widest intervals to their
      ends: ``_theta_max_bound``).

    ``ksigma_threshold_enclosure`` is valid too, wider, and far cheaper (the Lipschitz
    bound within it: see ``test_threshold_bounds_beat_the_lipschitz_bound``).
    """
    low, high = _boxes(lows, highs, k)
    lower, upper = _in_chunks(lambda lo, hi: (_theta_min_bound(lo, hi, k),
                                              _theta_max_bound(lo, hi, k)), low, high)  # fmt: skip
    margin = 1e-12 * (1.0 + np.maximum(np.abs(lower), np.abs(upper)))
    return lower - margin, upper + margin


def ksigma_threshold_end(lows: ArrayLike, highs: ArrayLike, k: float, *, upper: bool) -> FloatArray:
    """One end of ``ksigma_threshold_bounds`` (boxes along the last axis, as there), before
    its outward rounding, which needs both ends (``threshold_end_bracket`` brackets it): the
    box minimum bound, or the maximum bound with ``upper``, at about half the cost of both."""
    low, high = _boxes(lows, highs, k)
    bound = _theta_max_bound if upper else _theta_min_bound
    (end,) = _in_chunks(lambda lo, hi: (bound(lo, hi, k),), low, high)
    return end


def threshold_end_bracket(
    raw: ArrayLike, band: ArrayLike, *, upper: bool, other: float
) -> tuple[FloatArray, FloatArray]:
    """Where theta's interval's end lies (``ksigma_threshold_bounds``'s, rounded outwards by
    ``1e-12 (1 + max(|lower|, |upper|))``, then narrowed to the enclosure's end ``band``),
    known from the raw end alone (``ksigma_threshold_end``) and ``other``, a bound on the
    other end's size: between ``near`` (the least rounding) and ``far`` (the most), returned
    as (near, far). For the upper end a point below ``near`` lies inside the interval and
    one at or above ``far`` outside (lower end: above ``near``, at or below ``far``); a
    point between needs both ends."""
    end = np.asarray(raw, dtype=np.float64)
    least = 1e-12 * (1.0 + np.abs(end))
    most = 1e-12 * (1.0 + np.maximum(np.abs(end), other))
    if upper:
        return np.minimum(end + least, band), np.minimum(end + most, band)
    return np.maximum(end - least, band), np.maximum(end - most, band)


def _boxes(lows: ArrayLike, highs: ArrayLike, k: float) -> tuple[FloatArray, FloatArray]:
    """Checked boxes: lows and highs broadcast together, at least one interval each."""
    low, high = np.asarray(lows, dtype=np.float64), np.asarray(highs, dtype=np.float64)
    if low.shape != high.shape:  # only then: the call costs as much as a small box's bound
        low, high = np.broadcast_arrays(low, high)
    if low.shape[-1] == 0 or (low > high).any():
        raise ValueError("need at least one interval, each with lows <= highs")
    if not (math.isfinite(k) and k >= 0):
        raise ValueError(f"k must be a finite number >= 0, got {k}")
    return low, high


def _in_chunks(
    function: Callable[[FloatArray, FloatArray], tuple[FloatArray, ...]],
    low: FloatArray,
    high: FloatArray,
) -> tuple[FloatArray, ...]:
    """``function`` of checked boxes, many boxes a chunk of rows at a time (see _CHUNK)."""
    if low.ndim == 1 or low.size <= _CHUNK:
        return function(low, high)
    rows = max(1, _CHUNK // low.shape[-1])
    flat_low, flat_high = low.reshape(-1, low.shape[-1]), high.reshape(-1, high.shape[-1])
    parts = [
        function(flat_low[i : i + rows], flat_high[i : i + rows])
        for i in range(0, flat_low.shape[0], rows)
    ]
    shape = low.shape[:-1]
    return tuple(np.concatenate(values).reshape(shape) for values in zip(*parts, strict=True))


def ksigma_threshold_enclosure(
    points: ArrayLike, lows: ArrayLike, highs: ArrayLike, k: float
) -> tuple[float, float]:
    """Cheap bounds (O(n), no sort) on ``theta(x) = mean(x) + k std(x)`` (std dividing by n)
    over the box ``lows <= x <= highs``, from a point y of the box (``points``); wider than
    ``ksigma_threshold_bounds``, and used to skip it when no decision depends on it.

    With ``d = x - y``, ``r_i = max(y_i - lows_i, highs_i - y_i)``, ``s = std(y)`` and
    ``g = 1/n + k (y - mean(y)) / (n s)`` (theta's gradient at y), the tighter of:

    * Lipschitz: ``|theta(x) - theta(y)| <= mean(r) + k rms(r)`` (``|std(x) - std(y)| <=
      std(d) <= rms(d)``: std is a seminorm);
    * lower: ``theta(x) >= <g, x>`` (``std(x) >= <x, u> / sqrt(n)`` for the unit u along
      ``y - mean(y)``), so ``theta >= sum_i min(g_i lows_i, g_i highs_i)``;
    * upper: ``|a + b| <= |a| + <a, b> / |a| + |b|^2 / (2 |a|)`` with ``a`` the centred y,
      so ``theta(x) <= theta(y) + sum_i (g_i d_i + c d_i^2)``, ``c = k / (2 n s)``, each
      term convex in d_i: over the box, the sum of each term's larger value at the ends.

    Rounded outwards. With s = 0 only the Lipschitz bound is used.
    """
    y = np.asarray(points, dtype=np.float64)
    low = np.asarray(lows, dtype=np.float64)
    high = np.asarray(highs, dtype=np.float64)
    n = y.size
    # Sums over n, not ``mean()``: the same floats, without its overhead (called per answer).
    centre = float(y.sum()) / n
    spread = math.sqrt(float(np.dot(y - centre, y - centre)) / n)
    theta = centre + k * spread
    r = np.maximum(y - low, high - y)
    squares = float(np.dot(r, r))
    lipschitz = float(r.sum()) / n + k * math.sqrt(squares / n)
    bottom, top = theta - lipschitz, theta + lipschitz
    if spread > 1e-9:
        g = 1.0 / n + k * (y - centre) / (n * spread)
        bottom = max(bottom, float(np.minimum(g * low, g * high).sum()))
        curve = k / (2.0 * n * spread)  # convex in each d_i: its box maximum at an end
        up, down = high - y, low - y
        rise = np.maximum(g * up + curve * up * up, g * down + curve * down * down)
        top = min(top, theta + float(rise.sum()))
    margin = 1e-12 * (1.0 + abs(bottom) + abs(top))
    return bottom - margin, top + margin


def _theta_min_bound(low: FloatArray, high: FloatArray, k: float) -> FloatArray:
    """``max_u sum_i min(w_i low_i, w_i high_i)`` over a few directions u (see the caller).

    The box minimum of the convex theta is at ``x = clip(tau, low, high)`` for one scalar tau
    (KKT: a coordinate strictly inside its interval has zero derivative, i.e. sits at
    ``mean - std / k``): ``_clip_minimiser`` finds that tau. The bound is then evaluated at
    the gradient direction there (it equals the minimum at a minimiser with std > 0), at the
    direction a step to the left points to (the minimiser can have std = 0, every interval
    holding one point), and at u = 0 (the mean alone): each is a bound whatever tau is.
    """
    n = low.shape[-1]
    if k == 0.0:
        return np.asarray(low.sum(axis=-1) / n, dtype=np.float64)
    tau = _clip_minimiser(low, high, k)
    span = high.max(axis=-1) - low.min(axis=-1)
    points = np.stack([tau, tau - 1e-7 * span - 1e-12], axis=-1)[..., None]  # (..., 2, 1)
    lo, hi = low[..., None, :], high[..., None, :]
    x = np.clip(points, lo, hi)
    mean = x.sum(axis=-1, keepdims=True) / n
    centred = x - mean
    norm = np.sqrt((centred * centred).sum(axis=-1, keepdims=True))
    # The gradient direction at tau; left of it u = Px / (k sqrt(n) (mean - tau)), which
    # gives the coordinates strictly inside their intervals w = 0 (|u| <= 1 kept).
    scale = norm.copy()
    scale[..., 1, :] = np.maximum(k * math.sqrt(n) * (mean - points)[..., 1, :], norm[..., 1, :])
    tiny = 1e-12 * (span + 1.0)[..., None, None]
    u = centred / np.where(scale > tiny, scale, np.inf)
    u = u - u.sum(axis=-1, keepdims=True) / n  # exactly orthogonal to the ones
    u = u / np.maximum(np.sqrt((u * u).sum(axis=-1, keepdims=True)), 1.0)  # |u| <= 1
    w = 1.0 / n + k * u / math.sqrt(n)
    bounds = np.minimum(w * lo, w * hi).sum(axis=-1)
    return np.asarray(np.maximum(bounds.max(axis=-1), low.sum(axis=-1) / n), dtype=np.float64)


def _clip_minimiser(low: FloatArray, high: FloatArray, k: float) -> FloatArray:
    """The tau minimising ``F(tau) = theta(clip(tau, low, high))`` (k > 0), vectorised.

    Between consecutive interval ends the set of clipped coordinates is fixed and
    ``F = (S1 + m tau) / n + k sqrt(V(tau))``, V a quadratic that is a variance for every tau,
    so F is convex there: its minimum over the segment is at an end or at the root of F',
    ``(2 p tau + q)^2 = c (p tau^2 + q tau + r)`` with ``2 p tau + q < 0``. The sums over the
    clipped coordinates at every end come from one stable sort of all the ends.
    """
    n = low.shape[-1]
    ends = np.concatenate([low, high], axis=-1)
    is_low = np.concatenate([np.ones_like(low), np.zeros_like(high)], axis=-1)
    order = ends.argsort(axis=-1, kind="stable")
    b = np.take_along_axis(ends, order, axis=-1)
    at_low = np.take_along_axis(is_low, order, axis=-1)
    # Configuration just right of each end (ties: read at the last of equal ends).
    lows_left = at_low.cumsum(axis=-1)  # #{low_i <= b}: not clipped up to low_i
    highs_left = (1.0 - at_low).cumsum(axis=-1)  # #{high_i <= b}: clipped down to high_i
    first = (low.sum(axis=-1, keepdims=True), (low * low).sum(axis=-1, keepdims=True))
    s1 = first[0] - (at_low * b).cumsum(axis=-1) + ((1.0 - at_low) * b).cumsum(axis=-1)
    s2 = first[1] - (at_low * b * b).cumsum(axis=-1) + ((1.0 - at_low) * b * b).cumsum(axis=-1)
    m = lows_left - highs_left  # coordinates equal to tau
    group_end = np.concatenate(
        [b[..., 1:] != b[..., :-1], np.ones_like(b[..., :1], dtype=bool)], -1
    )
    p = m / n - m * m / (n * n)
    q = -2.0 * m * s1 / (n * n)
    r = s2 / n - s1 * s1 / (n * n)
    c = 4.0 * m * m / (n * n * k * k)
    with np.errstate(divide="ignore", invalid="ignore"):
        root_k = (c * r - q * q) / (4.0 * p - c)
        root = (-q - np.sqrt(q * q + 4.0 * p * root_k)) / (2.0 * p)
    following = np.concatenate([b[..., 1:], b[..., -1:]], axis=-1)
    inside = group_end & (p > 0.0) & np.isfinite(root) & (root > b) & (root < following)
    candidates = np.concatenate([b, np.where(inside, root, b)], axis=-1)
    valid = np.concatenate([group_end, inside], axis=-1)
    mm, ss1, ss2 = (np.concatenate([v, v], axis=-1) for v in (m, s1, s2))
    mean = (ss1 + mm * candidates) / n
    variance = np.maximum((ss2 + mm * candidates * candidates) / n - mean * mean, 0.0)
    value = np.where(valid, mean + k * np.sqrt(variance), np.inf)
    best = value.argmin(axis=-1)[..., None]
    return np.asarray(np.take_along_axis(candidates, best, axis=-1)[..., 0], dtype=np.float64)


def _theta_max_bound(low: FloatArray, high: FloatArray, k: float, pinned: int = 3) -> FloatArray:
    """The largest of ``_relaxed_max`` over the boxes with the ``pinned`` widest intervals
    pinned to one of their ends each (2^pinned boxes).

    theta is convex, so its box maximum is at a vertex, where each of those intervals sits at
    one of its ends: every vertex lies in one of the pinned boxes, and the relaxation's one
    in-between coordinate is then a narrower one.
    """
    n = low.shape[-1]
    pinned = min(pinned, n)
    if k == 0.0 or pinned == 0:
        return _relaxed_max(low, high, k)
    widest = np.argsort(low - high, axis=-1, kind="stable")[..., :pinned]  # (..., pinned)
    ends = np.array(list(itertools.product((0.0, 1.0), repeat=pinned)))  # (2^pinned, pinned)
    lows = np.repeat(low[..., None, :], ends.shape[0], axis=-2)  # (..., 2^pinned, n)
    highs = lows.copy()
    np.copyto(highs, high[..., None, :])
    at = np.broadcast_to(widest[..., None, :], (*widest.shape[:-1], ends.shape[0], pinned))
    lo_at = np.take_along_axis(lows, at, axis=-1)
    hi_at = np.take_along_axis(highs, at, axis=-1)
    value = lo_at + ends * (hi_at - lo_at)
    np.put_along_axis(lows, at, value, axis=-1)
    np.put_along_axis(highs, at, value, axis=-1)
    return np.asarray(_relaxed_max(lows, highs, k).max(axis=-1), dtype=np.float64)


def _relaxed_max(low: FloatArray, high: FloatArray, k: float) -> FloatArray:
    """``mean(c) + max_a [a + k sqrt(Q(a) / n)]``, ``Q(a) = |Pc|^2 + 2 B(a) + |h|^2 - n a^2``.

    ``B(a) = max <Pc, d>`` over ``|d_i| <= h_i`` with ``sum d = n a``: sorted by ``c_i``
    descending, the first arms at ``+h``, the last at ``-h`` and one between, so B is concave
    and piecewise linear, with n pieces (piece j: arm j is the one between); so the
    objective is concave on each piece: its maximum on each piece is the clipped
    stationary point ``a = e_j + sqrt(R^2 / (n (1 + k^2)))``, with ``e_j = c_j - mean(c)``
    and ``Q(a) = R^2 - n (a - e_j)^2``.
    """
    n = low.shape[-1]
    if k == 0.0:
        return np.asarray(high.sum(axis=-1) / n, dtype=np.float64)
    centre, half = (low + high) / 2.0, (high - low) / 2.0
    middle = centre.sum(axis=-1, keepdims=True) / n
    order = np.argsort(middle - centre, axis=-1, kind="stable")  # c descending
    e = np.take_along_axis(centre - middle, order, axis=-1)
    h = np.take_along_axis(half, order, axis=-1)
    eh = e * h
    h_before = np.cumsum(h, axis=-1) - h
    eh_before = np.cumsum(eh, axis=-1) - eh
    h_after = h.sum(axis=-1, keepdims=True) - h_before - h
    eh_after = eh.sum(axis=-1, keepdims=True) - eh_before - eh
    shift = h_before - h_after  # n mean(d) with the arm between at 0
    constant = np.sum(e * e + h * h, axis=-1, keepdims=True)
    alpha = constant + 2.0 * (eh_before - eh_after - e * shift)  # Q(a) = alpha + 2 n e a - n a^2
    reach = np.maximum(alpha + n * e * e, 0.0)  # R^2
    a = np.clip(e + np.sqrt(reach / (n * (1.0 + k * k))), (shift - h) / n, (shift + h) / n)
    q = np.maximum(alpha + 2.0 * n * e * a - n * a * a, 0.0)
    best = np.max(a + k * np.sqrt(q / n), axis=-1)
    return np.asarray(middle[..., 0] + best, dtype=np.float64)
