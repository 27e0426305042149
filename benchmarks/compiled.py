"""Compiled reference loops (numba): RR, WRR, LSA and GOLD one pull at a time.

Each loop makes exactly the pulls that ``simulate(algorithm, BernoulliRewards(means, seed),
batch=1)`` makes with the algorithm's defaults (the papers' one-pull-at-a-time order): the same
counter-based reward draws (``screener.simulation.hashing``, recomputed here per pull), the same
formulas as ``screener.stats`` in the same operation order. It is the yardstick of
``benchmarks.speed``: one draw and an O(1) update per pull, and as little decision work as the
algorithm allows.

* RR and WRR (Zhuang et al. 2017, Algorithms 1 and 2) with the default ``interval="mixture"``:
  a pull updates one worker's Beta-mixture interval (Newton on the KL form). Whether some
  worker is still active needs theta's interval over all workers (O(n), O(n log n) for the
  box range), so it is only computed when a cheap certificate fails: a worker whose interval
  contains theta (by more than ``_MARGIN``) is active whatever theta's interval is, and theta
  is kept from running sums of the means (O(1) per pull).
* LSA (Tao et al. 2019): the index of the pulled worker is the only one that changes; a
  tournament tree keeps the argmin (ties to the lowest worker) in O(log n) per pull.
* GOLD (Ban & He 2020) with ``interval="mixture"``: the radius is a function of the count;
  a pull re-checks the edges at the pulled worker (O(n)) and relabels its community only
  when the worker lost touch with one it was cut from (a breadth-first search that stops
  as soon as it reaches them all).

Where the floats can differ from ours: sums of n terms (numpy sums pairwise and ``np.dot``
goes to BLAS; here sums run left to right) and ``log`` (numpy's SIMD ``log`` against libm's).
Both move a value by an ulp or so; a decision changes only if a comparison is that close
(tests/benchmarks/test_compiled.py checks the pulls on several seeds and sizes, and
``benchmarks.speed`` on every run).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numba
import numpy as np
from numpy.typing import NDArray

from screener.algorithms.ksigma import gold_b, minority_size, optimal_rho
from screener.simulation.hashing import stream_key
from screener.stats import JEFFREYS, ksigma_lk

__all__ = ["Run", "gold", "lsa", "round_robin", "warm_up", "weighted_round_robin"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolMatrix = NDArray[np.bool_]

_F = TypeVar("_F", bound=Callable[..., Any])


def _jit(function: _F) -> _F:
    """``numba.njit`` with numpy's float semantics (x / 0 is inf, not an exception)."""
    return cast(_F, numba.njit(error_model="numpy")(function))


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_ARM = np.uint64(0xD6E8FEB86659FD93)
_TO_UNIT = 2.0**-53
_STIRLING = (1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0, 1.0 / 1188.0)
_HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)
_PUSHES = (0.0, 1e-14, 1e-11, 1e-8, 1e-5)
#: A worker whose interval contains theta by this much is active (theta's running-sum error
#: is below 1e-13 here).
_MARGIN = 1e-9
#: The 2^3 ways to pin the three widest intervals to an end (``_theta_max_bound``'s order).
_PIN_ENDS = np.array(list(itertools.product((0.0, 1.0), repeat=3)))


@dataclass(frozen=True, slots=True)
class Run:
    """A compiled run: pulls made, pulls per worker, the CPU seconds of the loop, and (RR,
    WRR) how many stopping checks needed the full O(n) evaluation."""

    pulls: int
    counts: IntArray
    cpu: float
    evaluations: int = 0


# --------------------------------------------------------------------------- draws, sums
@_jit
def _splitmix(x: np.uint64) -> np.uint64:
    x = (x ^ (x >> np.uint64(30))) * _MIX_1
    x = (x ^ (x >> np.uint64(27))) * _MIX_2
    return x ^ (x >> np.uint64(31))


@_jit
def _reward(key: np.uint64, means: FloatArray, arm: int, seq: int) -> float:
    """``BernoulliRewards(means, seed).sample([arm], [seq])``: the same counter-based draw."""
    x = _splitmix(key + np.uint64(arm) * _ARM)
    x = _splitmix(x + np.uint64(seq) * _GOLDEN)
    u = np.float64(x >> np.uint64(11)) * _TO_UNIT
    return 1.0 if u < means[arm] else 0.0


@_jit
def _sum(values: FloatArray) -> float:
    """numpy's pairwise summation (blocks of 8 accumulators up to 128 terms, then halves)."""
    n = values.size
    if n < 8:
        total = 0.0
        for i in range(n):
            total += values[i]
        return total
    if n <= 128:
        r = values[:8].copy()
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += values[i + j]
            i += 8
        total = float(((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])))
        while i < n:
            total += values[i]
            i += 1
        return total
    half = n // 2
    half -= half % 8
    return _sum(values[:half]) + _sum(values[half:])


@_jit
def _dot(a: FloatArray, b: FloatArray) -> float:
    total = 0.0
    for i in range(a.size):
        total += a[i] * b[i]
    return total


# ---------------------------------------------------------------- the Beta-mixture interval
@_jit
def _log_gamma(x: float) -> float:
    """``screener.stats.log_gamma`` for one value, in the same order."""
    z = x + 10.0
    inverse = 1.0 / z
    square = inverse * inverse
    series = _STIRLING[4]
    for coefficient in (_STIRLING[3], _STIRLING[2], _STIRLING[1], _STIRLING[0]):
        series = series * square + coefficient
    stirling = (z - 0.5) * np.log(z) - z + _HALF_LOG_TWO_PI + series * inverse
    u = x * (x + 9.0)
    product = u * (u + 8.0) * (u + 14.0) * (u + 18.0) * (u + 20.0)
    return float(stirling - np.log(product))


@_jit
def _xlogy(x: float, y: float) -> float:
    return x * np.log(y) if x > 0.0 else 0.0


@_jit
def _mixture_budget(s: float, t: float, log_inverse: float, log_beta_prior: float) -> float:
    """``mixture_log_inverse`` (Jeffreys prior) of one worker: ``log(1/alpha) + R(S, t)``."""
    p = s / t if t > 0 else 0.5
    best = _xlogy(s, p) + _xlogy(t - s, 1.0 - p)
    a, b = JEFFREYS
    mixed = _log_gamma(a + s) + _log_gamma(b + t - s) - _log_gamma(a + b + t) - log_beta_prior
    return log_inverse + max(best - mixed, 0.0)


@_jit
def _bernoulli_kl(p: float, q: float) -> float:
    ones = p * np.log(p / q) if p > 0.0 else 0.0
    zeros = (1.0 - p) * np.log((1.0 - p) / (1.0 - q)) if p < 1.0 else 0.0
    return ones + zeros


@_jit
def _kl_end(p: float, allowed: float, far: float) -> float:
    """``screener.stats.bounds.kl._kl_end`` for one end (``far`` 0: lower, 1: upper)."""
    upper = far == 1.0
    entropy = -(_xlogy(p, p) + _xlogy(1.0 - p, 1.0 - p))
    spread = 1.0 - p if upper else p
    sign = 1.0 if upper else -1.0
    pinsker = p + sign * np.sqrt(allowed / 2.0)
    tail = np.exp(-(allowed + entropy) / spread)
    start = min(pinsker, 1.0 - tail) if upper else max(pinsker, tail)
    start = far if np.isnan(start) else min(max(start, 0.0), 1.0)
    solve = 0.0 < start < 1.0 and allowed > 0.0
    q = start if solve else 0.5
    if solve:
        target = -entropy - allowed
        for _ in range(10):
            value = target - p * np.log(q) - (1.0 - p) * np.log1p(-q)
            step = value * q * (1.0 - q) / (q - p)
            q = q - step
            if not abs(step) > 1e-15:
                break
    else:
        q = start if allowed > 0.0 else p
    for push in _PUSHES:
        candidate = q + push * (far - q)
        if _bernoulli_kl(p, candidate) >= allowed:
            return candidate
    return far


@_jit
def _mixture_interval(
    s: float, t: float, log_inverse: float, log_beta_prior: float
) -> tuple[float, float]:
    """``mixture_bounds`` of one worker with answers (rewards in [0, 1])."""
    budget = _mixture_budget(s, t, log_inverse, log_beta_prior)
    p = min(max(s / t, 0.0), 1.0)
    allowed = max(budget, 0.0) / t
    return _kl_end(p, allowed, 0.0), _kl_end(p, allowed, 1.0)


# -------------------------------------------------------------------- theta's interval
@_jit
def _theta(y: FloatArray, k: float) -> float:
    centre = _sum(y) / y.size
    centred = y - centre
    return centre + k * math.sqrt(_dot(centred, centred) / y.size)


@_jit
def _enclosure(y: FloatArray, low: FloatArray, high: FloatArray, k: float) -> tuple[float, float]:
    """``ksigma_threshold_enclosure``."""
    n = y.size
    centre = _sum(y) / n
    centred = y - centre
    spread = math.sqrt(_dot(centred, centred) / n)
    theta = centre + k * spread
    r = np.maximum(y - low, high - y)
    lipschitz = _sum(r) / n + k * math.sqrt(_dot(r, r) / n)
    bottom, top = theta - lipschitz, theta + lipschitz
    if spread > 1e-9:
        g = 1.0 / n + k * centred / (n * spread)
        bottom = max(bottom, _sum(np.minimum(g * low, g * high)))
        curve = k / (2.0 * n * spread)
        up, down = high - y, low - y
        rise = np.maximum(g * up + curve * up * up, g * down + curve * down * down)
        top = min(top, theta + _sum(rise))
    margin = 1e-12 * (1.0 + abs(bottom) + abs(top))
    return bottom - margin, top + margin


@_jit
def _theta_of(points: FloatArray, k: float) -> float:
    """``mean + k std`` as numpy's ``mean`` and ``std`` compute it."""
    n = points.size
    mean = _sum(points) / n
    deviation = points - mean
    return mean + k * math.sqrt(_sum(deviation * deviation) / n)


@_jit
def _box_probes(
    y: FloatArray, low: FloatArray, high: FloatArray, k: float, theta: float
) -> tuple[float, float]:
    """``KSigmaAlgorithm._box_probes``."""
    mean = _sum(y) / y.size
    deviation = y - mean
    spread = math.sqrt(_sum(deviation * deviation) / y.size)
    rising = k * (y - mean) >= -spread
    toward_min = np.where(rising, low, high) - y
    top = _theta_of(np.where(rising, high, low), k)
    bottom = math.inf
    for t in (0.25, 0.5, 0.75, 1.0):
        bottom = min(bottom, _theta_of(y + t * toward_min, k))
    return max(top, theta), min(bottom, theta)


@_jit
def _clip_minimiser(low: FloatArray, high: FloatArray, k: float) -> float:
    """``screener.stats.bounds.theta_box._clip_minimiser`` for one box."""
    n = low.size
    ends = np.concatenate((low, high))
    order = np.argsort(ends, kind="mergesort")
    b = ends[order]
    at_low = (order < n).astype(np.float64)
    lows_left = np.cumsum(at_low)
    highs_left = np.cumsum(1.0 - at_low)
    s1 = _sum(low) - np.cumsum(at_low * b) + np.cumsum((1.0 - at_low) * b)
    s2 = _sum(low * low) - np.cumsum(at_low * b * b) + np.cumsum((1.0 - at_low) * b * b)
    m = lows_left - highs_left
    best_value, best = math.inf, 0.0
    size = b.size
    for j in range(size):  # the group ends first, then the roots (argmin's first minimum)
        if j == size - 1 or b[j + 1] != b[j]:
            mean = (s1[j] + m[j] * b[j]) / n
            variance = max((s2[j] + m[j] * b[j] * b[j]) / n - mean * mean, 0.0)
            value = mean + k * math.sqrt(variance)
            if value < best_value:
                best_value, best = value, b[j]
    for j in range(size):
        if not (j == size - 1 or b[j + 1] != b[j]):
            continue
        p = m[j] / n - m[j] * m[j] / (n * n)
        if not p > 0.0:
            continue
        q = -2.0 * m[j] * s1[j] / (n * n)
        r = s2[j] / n - s1[j] * s1[j] / (n * n)
        c = 4.0 * m[j] * m[j] / (n * n * k * k)
        root_k = (c * r - q * q) / (4.0 * p - c)
        root = (-q - math.sqrt(q * q + 4.0 * p * root_k)) / (2.0 * p)
        following = b[j + 1] if j + 1 < size else b[j]
        if np.isfinite(root) and root > b[j] and root < following:
            mean = (s1[j] + m[j] * root) / n
            variance = max((s2[j] + m[j] * root * root) / n - mean * mean, 0.0)
            value = mean + k * math.sqrt(variance)
            if value < best_value:
                best_value, best = value, root
    return best


@_jit
def _theta_min_bound(low: FloatArray, high: FloatArray, k: float) -> float:
    """``screener.stats.bounds.theta_box._theta_min_bound`` for one box (k > 0)."""
    n = low.size
    tau = _clip_minimiser(low, high, k)
    span = high.max() - low.min()
    tiny = 1e-12 * (span + 1.0)
    best = -math.inf
    for which in range(2):
        point = tau if which == 0 else tau - 1e-7 * span - 1e-12
        x = np.minimum(np.maximum(point, low), high)
        mean = _sum(x) / n
        centred = x - mean
        norm = math.sqrt(_sum(centred * centred))
        scale = norm if which == 0 else max(k * math.sqrt(n) * (mean - point), norm)
        u = centred / (scale if scale > tiny else math.inf)
        u = u - _sum(u) / n
        u = u / max(math.sqrt(_sum(u * u)), 1.0)
        w = 1.0 / n + k * u / math.sqrt(n)
        best = max(best, _sum(np.minimum(w * low, w * high)))
    return max(best, _sum(low) / n)


@_jit
def _relaxed_max(low: FloatArray, high: FloatArray, k: float) -> float:
    """``screener.stats.bounds.theta_box._relaxed_max`` for one box (k > 0)."""
    n = low.size
    centre, half = (low + high) / 2.0, (high - low) / 2.0
    middle = _sum(centre) / n
    order = np.argsort(middle - centre, kind="mergesort")
    e = (centre - middle)[order]
    h = half[order]
    eh = e * h
    h_before = np.cumsum(h) - h
    eh_before = np.cumsum(eh) - eh
    h_after = _sum(h) - h_before - h
    eh_after = _sum(eh) - eh_before - eh
    shift = h_before - h_after
    constant = _sum(e * e + h * h)
    alpha = constant + 2.0 * (eh_before - eh_after - e * shift)
    reach = np.maximum(alpha + n * e * e, 0.0)
    a = np.minimum(
        np.maximum(e + np.sqrt(reach / (n * (1.0 + k * k))), (shift - h) / n), (shift + h) / n
    )
    q = np.maximum(alpha + 2.0 * n * e * a - n * a * a, 0.0)
    return float(middle + (a + k * np.sqrt(q / n)).max())


@_jit
def _theta_max_bound(low: FloatArray, high: FloatArray, k: float) -> float:
    """``screener.stats.bounds.theta_box._theta_max_bound`` for one box (k > 0, three pinned)."""
    widest = np.argsort(low - high, kind="mergesort")[:3]
    best = -math.inf
    for row in range(_PIN_ENDS.shape[0]):
        lows, highs = low.copy(), high.copy()
        for j in range(widest.size):
            arm = widest[j]
            value = low[arm] + _PIN_ENDS[row, j] * (high[arm] - low[arm])
            lows[arm] = value
            highs[arm] = value
        best = max(best, _relaxed_max(lows, highs, k))
    return best


@_jit
def _threshold_bounds(low: FloatArray, high: FloatArray, k: float) -> tuple[float, float]:
    """``ksigma_threshold_bounds`` for one box (k > 0)."""
    lower, upper = _theta_min_bound(low, high, k), _theta_max_bound(low, high, k)
    margin = 1e-12 * (1.0 + max(abs(lower), abs(upper)))
    return lower - margin, upper + margin


@_jit
def _activity(
    y: FloatArray, low: FloatArray, high: FloatArray, k: float, active: NDArray[np.bool_]
) -> float:
    """``KSigmaAlgorithm._refresh`` + ``_activity`` once every worker has answers: fills
    ``active`` and returns theta."""
    theta = _theta(y, k)
    band_low, band_high = _enclosure(y, low, high, k)
    above = y > theta
    if np.isfinite(band_high - band_low):
        reach_high, reach_low = _box_probes(y, low, high, k, theta)
        decided = True
        for i in range(y.size):
            if above[i]:
                active[i] = low[i] < reach_high
                decided &= active[i] or low[i] >= band_high
            else:
                active[i] = high[i] > reach_low
                decided &= active[i] or high[i] <= band_low
        if decided:
            return theta
    box_low, box_high = _threshold_bounds(low, high, k)
    box_low, box_high = max(box_low, band_low), min(box_high, band_high)
    for i in range(y.size):
        active[i] = low[i] < box_high if above[i] else high[i] > box_low
    return theta


# ------------------------------------------------------------------------- RR and WRR
@_jit
def _row_value(row: int, i: int, y: FloatArray, low: FloatArray, high: FloatArray,
               rising: NDArray[np.bool_]) -> float:  # fmt: skip
    if row == 0:
        return float(y[i])
    if row == 3:
        return float(max(y[i] - low[i], high[i] - y[i]))
    return float(high[i] if rising[i] == (row == 1) else low[i])


@_jit
def _track(
    points: FloatArray, sums: FloatArray, rising: NDArray[np.bool_], y: FloatArray,
    low: FloatArray, high: FloatArray, arm: int,
) -> None:  # fmt: skip
    """Values kept with running sums (sum, sum of squares): the means (row 0), the box
    vertex toward theta's maximum (row 1: ``high`` where theta rises, else ``low``), the
    opposite vertex (row 2) and every worker's reach ``max(y - low, high - y)`` (row 3).
    ``arm`` < 0 recomputes everything; else only ``arm`` moved."""
    for row in range(4):
        if arm < 0:
            for i in range(y.size):
                points[row, i] = _row_value(row, i, y, low, high, rising)
            sums[row, 0], sums[row, 1] = _sum(points[row]), _dot(points[row], points[row])
            continue
        old = points[row, arm]
        new = _row_value(row, arm, y, low, high, rising)
        points[row, arm] = new
        sums[row, 0] += new - old
        sums[row, 1] += new * new - old * old


@_jit
def _tracked_theta(sums: FloatArray, row: int, n: int, k: float) -> float:
    centre = float(sums[row, 0] / n)
    return centre + k * math.sqrt(max(sums[row, 1] / n - centre * centre, 0.0))


@_jit
def _certified(
    arm: int, y: FloatArray, low: FloatArray, high: FloatArray, sums: FloatArray, k: float
) -> bool:
    """Active for sure (so the run goes on): theta's interval holds theta at every point of
    the box, so a worker above theta whose lower end is below theta at a box point meets it
    (and one below theta whose upper end is above it), whichever way ``_activity`` decides.
    ``_MARGIN`` covers the running sums' rounding."""
    if arm < 0:
        return False
    n = y.size
    theta = _tracked_theta(sums, 0, n, k)
    if y[arm] > theta + _MARGIN:
        return bool(low[arm] < max(theta, _tracked_theta(sums, 1, n, k)) - _MARGIN)
    if y[arm] < theta - _MARGIN:
        return bool(high[arm] > min(theta, _tracked_theta(sums, 2, n, k)) + _MARGIN)
    return bool(low[arm] < theta - _MARGIN and high[arm] > theta + _MARGIN)


@_jit
def _certified_inactive(
    arm: int, y: FloatArray, low: FloatArray, high: FloatArray, sums: FloatArray, k: float
) -> bool:
    """Inactive for sure: theta's interval, both in ``_activity``'s probe path and in its
    box range, lies inside the enclosure, which lies inside the Lipschitz one
    ``theta -+ (mean(r) + k rms(r))``; a worker clear of that is clear of theta's."""
    n = y.size
    theta = _tracked_theta(sums, 0, n, k)
    reach = sums[3, 0] / n + k * math.sqrt(max(sums[3, 1], 0.0) / n)
    if y[arm] > theta + _MARGIN:
        return bool(low[arm] > theta + reach + _MARGIN)
    if y[arm] < theta - _MARGIN:
        return bool(high[arm] < theta - reach - _MARGIN)
    return False


@_jit
def _ksigma_loop(
    means: FloatArray,
    key: np.uint64,
    k: float,
    log_inverse: float,
    log_beta_prior: float,
    rho: float,
    budget: int,
    weighted: bool,
) -> tuple[IntArray, int]:
    """RR (``weighted`` False) or WRR, one pull at a time, until no worker is active or
    ``budget`` pulls: returns the pulls per worker and how many checks needed theta's
    interval (the others were settled by ``_certified``)."""
    n = means.size
    count = np.zeros(n, dtype=np.int64)
    total = np.zeros(n)
    y, low, high = np.zeros(n), np.zeros(n), np.ones(n)
    active = np.ones(n, dtype=np.bool_)
    counters = np.zeros(n)
    points, sums = np.zeros((4, n)), np.zeros((4, 2))
    rising = np.ones(n, dtype=np.bool_)
    witness, arm, visiting, t = -1, -1, False, 0
    since_sums = evaluations = 0
    while t < budget:
        if t >= n:  # the stopping check (and WRR's "active"), lazily
            visiting = visiting and count[arm] < counters[arm]
            cheap = _certified(arm if visiting else witness, y, low, high, sums, k)
            if not cheap and visiting and _certified_inactive(arm, y, low, high, sums, k):
                visiting = False  # the visit ends; is some other worker active?
                cheap = _certified(witness, y, low, high, sums, k)
            if not cheap:
                evaluations += 1
                _activity(y, low, high, k, active)
                if not active.any():
                    break
                mean = _sum(y) / n
                deviation = y - mean
                rising = k * deviation >= -math.sqrt(_sum(deviation * deviation) / n)
                _track(points, sums, rising, y, low, high, -1)
                since_sums = 0
                witness = -1
                for i in range(n):
                    if _certified(i, y, low, high, sums, k):
                        witness = i
                        break
            visiting = visiting and (cheap or active[arm]) and count[arm] < counters[arm]
        if t < n:
            arm = t
        elif not visiting:
            arm = (arm + 1) % n
            if weighted:
                counters[arm] += rho
                visiting = True
        reward = _reward(key, means, arm, count[arm])
        count[arm] += 1
        total[arm] += reward
        t += 1
        y[arm] = total[arm] / count[arm]
        low[arm], high[arm] = _mixture_interval(total[arm], count[arm], log_inverse,
                                                log_beta_prior)  # fmt: skip
        since_sums += 1
        fresh = t == n or since_sums >= n  # now and then: no drift to speak of
        _track(points, sums, rising, y, low, high, -1 if fresh else arm)
        since_sums = 0 if fresh else since_sums
    return count, evaluations


def _writeable(means: FloatArray) -> FloatArray:
    """A private copy: numba compiles read-only arrays as another type (a second compile)."""
    return np.array(means, dtype=np.float64)


def _common(
    means: FloatArray, seed: int, delta: float, budget: int
) -> tuple[FloatArray, int, float, float, Any]:
    """What the mixture-radius loops share: the means (a private copy), n, the Jeffreys
    prior's log-beta, log(n / delta) and the seed's stream key."""
    values = _writeable(means)
    n = values.size
    if budget < n:
        raise ValueError("the compiled loops need a budget of at least one pull per worker")
    a, b = JEFFREYS
    log_beta_prior = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    return values, n, log_beta_prior, math.log(1.0 / (delta / n)), np.uint64(stream_key(seed, 0))


def _ksigma(means: FloatArray, seed: int, k: float, delta: float, budget: int,
            weighted: bool) -> Run:  # fmt: skip
    values, n, log_beta_prior, log_inverse, key = _common(means, seed, delta, budget)
    rho = optimal_rho(n, ksigma_lk(k, n, delta))
    start = time.process_time()
    counts, evaluations = _ksigma_loop(
        values, key, k, log_inverse, log_beta_prior, rho, budget, weighted
    )
    cpu = time.process_time() - start
    return Run(int(counts.sum()), counts, cpu, evaluations)


def round_robin(means: FloatArray, seed: int, *, k: float, delta: float, budget: int) -> Run:
    """``RoundRobin(n, k=k, delta=delta, budget=budget)`` (mixture intervals), batch 1."""
    return _ksigma(means, seed, k, delta, budget, weighted=False)


def weighted_round_robin(
    means: FloatArray, seed: int, *, k: float, delta: float, budget: int
) -> Run:
    """``WeightedRoundRobin(n, k=k, delta=delta, budget=budget)`` (rho*, mixture), batch 1."""
    return _ksigma(means, seed, k, delta, budget, weighted=True)


# -------------------------------------------------------------------------------- LSA
@_jit
def _tree_update(tree: FloatArray, winner: IntArray, size: int, arm: int, key: float) -> None:
    """Set ``arm``'s key in a tournament tree whose root holds the smallest key (ties: the
    lowest arm), as ``np.argmin`` picks."""
    node = size + arm
    tree[node] = key
    winner[node] = arm
    node //= 2
    while node >= 1:
        left, right = 2 * node, 2 * node + 1
        take_right = tree[right] < tree[left]
        tree[node] = tree[right] if take_right else tree[left]
        winner[node] = winner[right] if take_right else winner[left]
        node //= 2


@_jit
def _lsa_loop(
    means: FloatArray, key: np.uint64, threshold: float, alpha: float, budget: int
) -> IntArray:
    n = means.size
    size = 1
    while size < n:
        size *= 2
    tree = np.full(2 * size, np.inf)
    winner = np.full(2 * size, n, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    total = np.zeros(n)
    for t in range(budget):
        arm = t if t < n else winner[1]
        count[arm] += 1
        total[arm] += _reward(key, means, arm, count[arm] - 1)
        if t + 1 >= n:
            if t + 1 == n:  # every worker has its first answer: all keys
                for i in range(n):
                    _tree_update(tree, winner, size, i, _lsa_key(total, count, i, threshold,
                                                                 alpha))  # fmt: skip
            else:
                _tree_update(tree, winner, size, arm, _lsa_key(total, count, arm, threshold,
                                                               alpha))  # fmt: skip
    return count


@_jit
def _lsa_key(total: FloatArray, count: IntArray, arm: int, threshold: float, alpha: float) -> float:
    """``LSA._index``: ``alpha T gap^2 + 0.5 log T``, in the same order."""
    gap = abs(total[arm] / count[arm] - threshold)
    effective = np.float64(count[arm])
    return float(alpha * effective * gap * gap + 0.5 * np.log(effective))


def lsa(means: FloatArray, seed: int, *, threshold: float, budget: int,
        alpha: float = 1.35) -> Run:  # fmt: skip
    """``LSA(n, threshold=threshold, budget=budget, alpha=alpha)``, batch 1."""
    values = _writeable(means)
    if budget < values.size:
        raise ValueError("the compiled loops need a budget of at least one pull per worker")
    key = np.uint64(stream_key(seed, 0))
    start = time.process_time()
    counts = _lsa_loop(values, key, threshold, alpha, budget)
    return Run(int(counts.sum()), counts, time.process_time() - start)


# ------------------------------------------------------------------------------- GOLD
@_jit
def _mixture_radius(t: float, log_inverse: float, log_beta_prior: float) -> float:
    """``mixture_radius`` at count t >= 1: the larger budget of S = 0 and S = t."""
    low = _mixture_budget(0.0, t, log_inverse, log_beta_prior)
    high = _mixture_budget(t, t, log_inverse, log_beta_prior)
    return float(np.sqrt(max(low, high) / (2.0 * t)))


@_jit
def _split(adjacency: BoolMatrix, labels: IntArray, community: int, next_label: int) -> int:
    """Relabel the connected components of ``community``; returns the next free label."""
    n = labels.size
    nodes = np.flatnonzero(labels == community)
    seen = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)
    first = True
    for start in nodes:
        if seen[start]:
            continue
        label = community if first else next_label
        if not first:
            next_label += 1
        first = False
        seen[start] = True
        stack[0], depth = start, 1
        while depth:
            depth -= 1
            node = stack[depth]
            labels[node] = label
            for other in nodes:
                if adjacency[node, other] and not seen[other]:
                    seen[other] = True
                    stack[depth] = other
                    depth += 1
    return next_label


@_jit
def _still_joined(adjacency: BoolMatrix, arm: int, cut: NDArray[np.bool_]) -> bool:
    """Whether ``arm`` still reaches every worker it just lost an edge to (breadth first,
    stopping once it does): then its community did not split."""
    n = cut.size
    left = int(cut.sum())
    seen = np.zeros(n, dtype=np.bool_)
    queue = np.empty(n, dtype=np.int64)
    queue[0], head, tail = arm, 0, 1
    seen[arm] = True
    while head < tail:
        node = queue[head]
        head += 1
        for other in range(n):
            if adjacency[node, other] and not seen[other]:
                seen[other] = True
                queue[tail] = other
                tail += 1
                if cut[other]:
                    left -= 1
                    if left == 0:
                        return True
    return False


@_jit
def _mark_terminal(
    labels: IntArray, terminal: NDArray[np.bool_], rounds: IntArray, minority: float, t: int
) -> int:
    """``GOLD._mark_terminal``: arms of communities with fewer than ``minority`` arms."""
    sizes = np.bincount(labels, minlength=labels.size)
    for i in range(labels.size):
        if not terminal[i] and sizes[labels[i]] < minority:
            terminal[i] = True
            rounds[i] = t
    return int(terminal.sum())


@_jit
def _cut(
    adjacency: BoolMatrix, y: FloatArray, radii: FloatArray, b: float, arm: int
) -> NDArray[np.bool_]:
    """Remove the edges at ``arm`` that stopped being neighbours; the workers cut off."""
    cut = np.zeros(y.size, dtype=np.bool_)
    for other in range(y.size):
        if adjacency[arm, other] and abs(y[arm] - y[other]) > b * (radii[arm] + radii[other]):
            adjacency[arm, other] = adjacency[other, arm] = False
            cut[other] = True
    return cut


@_jit
def _gold_loop(
    means: FloatArray,
    key: np.uint64,
    b: float,
    minority: float,
    log_inverse: float,
    log_beta_prior: float,
    budget: int,
) -> tuple[IntArray, IntArray]:
    n = means.size
    count = np.zeros(n, dtype=np.int64)
    total, y, radii = np.zeros(n), np.zeros(n), np.full(n, np.inf)
    adjacency = np.ones((n, n), dtype=np.bool_)
    for i in range(n):
        adjacency[i, i] = False
    labels = np.zeros(n, dtype=np.int64)
    terminal = np.zeros(n, dtype=np.bool_)
    rounds = np.full(n, -1, dtype=np.int64)
    n_terminal, next_label, arm = 0, 1, -1
    for t in range(budget):
        if n_terminal >= minority:
            break
        arm = (arm + 1) % n
        while terminal[arm]:
            arm = (arm + 1) % n
        count[arm] += 1
        total[arm] += _reward(key, means, arm, count[arm] - 1)
        y[arm] = total[arm] / count[arm]
        radii[arm] = _mixture_radius(np.float64(count[arm]), log_inverse, log_beta_prior)
        if t + 1 < n:
            continue
        rows = np.arange(n) if t + 1 == n else np.array([arm])
        if t + 1 == n:  # the graph starts complete: every pair checked at once
            apart = np.abs(y[:, None] - y[None, :]) > b * (radii[:, None] + radii[None, :])
            changed = bool((apart & adjacency).any())
            adjacency &= ~apart
        else:  # a community that lost edges at arm splits only if arm lost touch
            cut = _cut(adjacency, y, radii, b, arm)
            changed = bool(cut.any()) and not _still_joined(adjacency, arm, cut)
        if t + 1 == n:
            n_terminal = _mark_terminal(labels, terminal, rounds, minority, t + 1)
        if changed:
            for community in np.unique(labels[rows]):
                next_label = _split(adjacency, labels, community, next_label)
            n_terminal = _mark_terminal(labels, terminal, rounds, minority, t + 1)
    return count, rounds


def gold(means: FloatArray, seed: int, *, eps: float = 2.5, rho: float = 0.9,
         delta: float = 0.1, budget: int) -> tuple[Run, IntArray]:  # fmt: skip
    """``GOLD(n, eps=eps, rho=rho, delta=delta, budget=budget)`` (mixture radii), batch 1:
    the run and every worker's terminal round (-1: never terminal)."""
    values, n, log_beta_prior, log_inverse, key = _common(means, seed, delta, budget)
    minority = minority_size(n, rho)
    start = time.process_time()
    counts, rounds = _gold_loop(values, key, gold_b(eps), minority, log_inverse,
                                log_beta_prior, budget)  # fmt: skip
    return Run(int(counts.sum()), counts, time.process_time() - start), rounds


# ---------------------------------------------------------------------------- warm-up
def warm_up() -> float:
    """Compile every loop on a small instance (numba compiles on first call); the seconds."""
    start = time.perf_counter()
    means = np.linspace(0.2, 0.8, 10)
    round_robin(means, 1, k=1.0, delta=0.1, budget=200)
    weighted_round_robin(means, 1, k=1.0, delta=0.1, budget=200)
    lsa(means, 1, threshold=0.5, budget=100)
    gold(means, 1, rho=0.8, budget=200)
    return time.perf_counter() - start
