"""Shared machinery of the k-sigma outlier algorithms (Zhuang, Wang, Wang, NIPS 2017).

An arm is an outlier when its mean exceeds ``theta = mean(y) + k std(y)`` over all arms'
means (std divides by n). Estimates, radii and the active set follow Section 4 of the paper;
see ``screener.stats.bounds`` for each radius and the choices made where the extracted text is
ambiguous (the normal quantile, the delta-method gradient).

``direction="low"`` screens for abnormally LOW rewards (spammers): every reward r is flipped to
``lower + upper - r`` on arrival, the high-side rule runs unchanged, and estimates, intervals
and the threshold are flipped back in the result (so the threshold reads ``mean - k std``).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._certificates import Certificates
from screener.algorithms._checks import (
    MAX_K,
    IntervalKind,
    check_choice,
    check_delta,
    check_interval_options,
    heuristic_note,
    label_heuristic,
)
from screener.algorithms.base import Algorithm
from screener.algorithms.result import Decision, Result, Threshold, WorkerResult
from screener.arrays import FloatArray, IntArray
from screener.errors import ConfigError
from screener.stats import (
    QuantileRule,
    delta_method_threshold_radius,
    hoeffding_radius,
    ksigma_bounded_threshold_radius,
    ksigma_lk,
    ksigma_threshold_bounds,
    ksigma_threshold_enclosure,
    ksigma_threshold_end,
    mixture_bounds,
    normal_quantile,
    round_level,
    scaled_agresti_coull_radius,
)
from screener.stats.confseq import tabulated_mixture_bounds, tabulated_mixture_interval
from screener.stats.scalar import NEAR, near_mixture_interval

__all__ = ["Direction", "IntervalKind", "KSigmaAlgorithm"]

Direction = Literal["high", "low"]


class KSigmaAlgorithm(Algorithm):
    """Base of RR, WRR, NRR and IB: estimates, confidence intervals and the active set.

    Pending pulls never enter estimates or stopping: only answers that arrived count, and
    ``T`` in the level schedule is the number of answers.

    How delta is spent with ``interval="mixture"`` (the default; intervals that are bounds,
    for any rewards in [lower, upper], at any stopping time and under any schedule):

    * worker i's interval is the Beta-mixture confidence sequence of
      ``screener.stats.mixture_bounds`` (Howard et al. 2021, Jeffreys prior) at level
      ``delta / n``, both ends together: it holds at every count of that worker at once, so
      there is no union over time, and it needs the worker's own answers only, so WRR's and
      IB's data-dependent schedules are covered;
    * theta's interval has no level of its own: it is the range of ``mean + k std`` over the
      box of the (sampled) workers' intervals (``screener.stats.ksigma_threshold_bounds``,
      exact up to one relaxed coordinate; each end narrowed where the cheap
      ``ksigma_threshold_enclosure`` of the same box is tighter), so it holds whenever all of
      them do. It is computed only when a decision depends on it (``_activity``).

    ``n * delta / n`` = delta exactly: with probability at least 1 - delta every worker's
    interval and theta's hold at every time together, and every decision taken at any
    stopping time is then right. (A decision leans on one end of its worker's interval, but
    theta's range uses both ends of every worker's, so both ends are paid for.) Measured
    against the alternatives (benchmarks/intervals.py): per-worker KL intervals with a union
    over counts cost more pulls, and so does McDiarmid's interval for theta at a level of its
    own (about 1.5x the box range's width at equal levels, before its union over time).

    How delta is spent with ``interval="hoeffding"`` (the paper's bounded-reward intervals).
    Declaring worker i an outlier wrongly needs its interval's lower end above its mean or
    theta's upper end below theta; declaring it normal wrongly needs its upper end below its
    mean or theta's lower end above theta. So each worker's interval is only ever needed on
    one end, fixed by its true side (the lower end for a normal worker, the upper end for an
    outlier), while theta's interval is needed on both ends (outliers lean on one, normal
    workers on the other). After T answers that is n + 2 one-sided intervals, each at the
    same level:

    * worker i's interval, the one end its true side needs (Hoeffding radius ``beta_i``):
      level ``l_T`` each, n of them;
    * theta's interval, its lower end and its upper end (the McDiarmid radius
      ``beta_theta``): level ``l_T`` each, two of them;

    with ``l_T = 6 delta / (pi^2 (n + 2) T^2)`` (``interval_level``). Summed over T >= 1,
    ``(n + 2) l_T`` adds up to delta exactly, so every interval holds on every end that
    matters at every T with probability at least 1 - delta, and every decision taken at any
    stopping time is then right. (Zhuang et al.'s Eq. (1) spreads delta over n + 1
    intervals, counting theta's once: in the worst case that spends delta (n + 2) / (n + 1).)
    Caveat: McDiarmid's inequality is for fixed counts. RR's counts after T answers are fixed;
    WRR's and IB's depend on the answers, and this argument does not cover theta's interval
    there (the workers' Hoeffding intervals are covered: a worker's level only falls as T
    grows past its count).

    ``interval="agresti-coull"`` (the paper's heuristic for 0/1 answers; kept for the
    reproductions, and labelled "heuristic: delta is not guaranteed" in the result): Eq. (1)
    as printed, ``l'_T = 6 delta / (pi^2 (n + 1) T^2)``, each worker's interval two-sided at
    ``l'_T`` (``l'_T / 2`` nominal on the end that matters); theta's interval is the
    delta-method linearisation of the workers' radii, with no level of its own. Nominally
    that spends ``n delta / (2 (n + 1))`` < delta, but neither the normal approximation nor
    the linearisation is a bound: delta is not guaranteed. ``quantile="paper"`` narrows each
    worker's interval further (nominal miss per end about 14x ``l'_T / 2`` at
    ``l'_T = 1e-3``, 40x at 1e-4); it changes the Agresti-Coull intervals only.

    ``min_answers`` (default 1, the paper's behaviour): a worker with fewer answers stays
    active, so it is neither decided nor out of the schedule; the stopping condition needs
    every worker out of the active set, hence every worker at ``min_answers`` or more. The
    intervals and their levels do not change, so neither does the promise.

    Examples
    --------
    Every k-sigma algorithm shares its parameters and its threshold estimate:

    >>> from screener.algorithms import RoundRobin, WeightedRoundRobin
    >>> issubclass(WeightedRoundRobin, KSigmaAlgorithm)
    True
    >>> params = RoundRobin(10, k=2.0).params()
    >>> params["k"], params["delta"], params["interval"], params["direction"]
    (2.0, 0.1, 'mixture', 'high')
    """

    min_workers: ClassVar[int] = 2
    fixed_roster: ClassVar[str | None] = (
        "its threshold theta = mean + k sigma is taken over the whole crowd, so a worker who "
        "joins moves theta and every earlier decision with it"
    )
    guarantee: ClassVar[str | None] = (
        "the outlier set is exactly right with probability at least 1 - delta"
    )

    def __init__(
        self,
        n_workers: int,
        *,
        k: float = 2.0,
        delta: float = 0.1,
        interval: IntervalKind = "mixture",
        quantile: QuantileRule = "normal",
        direction: Direction = "high",
        min_answers: int = 1,
        **common: Any,
    ) -> None:
        super().__init__(n_workers, **common)
        self._set_min_answers(min_answers)
        if not 0 <= k <= MAX_K:  # NaN fails too
            raise ConfigError(
                f"k must be a number from 0 to {MAX_K:,.0f} (no z-score gets near that), got {k}",
                "try k=2 or k=3",
            )
        check_delta(delta)
        check_interval_options(interval, quantile)
        if interval == "hoeffding" and quantile == "paper":
            raise ConfigError(
                "quantile='paper' changes the Agresti-Coull intervals only: "
                "interval='hoeffding' has no normal quantile to change",
                "drop --quantile paper, or give --interval agresti-coull with it",
            )
        check_choice("direction", direction, ("high", "low"))
        self.k = float(k)
        self.delta = float(delta)
        self.interval: IntervalKind = interval
        self.quantile: QuantileRule = quantile
        self.direction: Direction = direction
        self.width = self.upper - self.lower
        self.lk = ksigma_lk(self.k, self.n_arms, self.delta)
        n = self.n_arms
        self.means = np.full(n, np.nan)
        #: Every worker's interval (on the flipped scale when direction="low").
        self._lows = np.full(n, self.lower)
        self._highs = np.full(n, self.upper)
        #: Workers whose ``_lows`` and ``_highs`` hold ``near_mixture_interval``'s values, not
        #: yet the exact ones (``lows`` and ``highs`` compute those when read).
        self._inexact: set[int] = set()
        #: Activity and theta as of the last refresh; None: not computed yet (``active``).
        self._active: NDArray[np.bool_] | None = np.ones(n, dtype=bool)
        self._theta: float | None = math.nan
        #: theta's interval, computed when first read after a refresh (``_threshold_interval``).
        self._theta_interval: tuple[float, float] | None = (-math.inf, math.inf)
        #: theta(x) for every x in the sampled workers' box lies in here (cheap; no level;
        #: None: not computed yet, see ``_enclosure``).
        self._band: tuple[float, float] | None = (-math.inf, math.inf)
        self._sampled = np.zeros(n, dtype=bool)
        #: Workers with answers since the last refresh, and the O(1) activity certificates
        #: (mixture intervals, once every worker has min_answers answers; else None).
        self._answered_arms: list[IntArray] = []
        self._certificates: Certificates | None = None
        self._witness = -1  # a worker found surely active at the last check
        #: Workers below min_answers at the last full refresh (active by rule); None: none.
        self._held_back: NDArray[np.bool_] | None = None
        self._ends: dict[bool, float] = {}  # ends of theta's interval alone (_threshold_end)
        self._near_band: tuple[float, float] | None = None  # see _clear_of_near_band
        self._available_cache: IntArray | None = None  # the available workers, in index order
        self._available_n = n
        self._heuristic = heuristic_note(
            interval, paper_quantile=interval == "agresti-coull" and quantile == "paper"
        )
        self._bounds_count = np.zeros(n, dtype=np.int64)  # counts the mixture bounds are at
        #: Every available worker has min_answers answers (one, by default) and some have any.
        self._warmed_up = False

    def interval_level(self, total_pulls: int) -> float:
        """The level every interval is built at after ``total_pulls`` answers: ``delta / n``
        for each worker's whole sequence with the mixture, one-sided ``l_T`` for Hoeffding,
        two-sided ``l'_T`` for Agresti-Coull (the class docstring)."""
        if self.interval == "mixture":
            return self.delta / self.n_arms
        if self.interval == "hoeffding":
            # n + 2 one-sided intervals: round_level spreads delta over n_arms + 1 of them.
            return round_level(self.delta, self.n_arms + 1, total_pulls)
        return round_level(self.delta, self.n_arms, total_pulls)

    # ---------------------------------------------------------------------- estimates
    def _on_answers(self, pull_ids: IntArray, arms: IntArray, rewards: FloatArray) -> None:
        if self.direction == "low":
            rewards = self.lower + self.upper - rewards
        self.stats.update_many(arms, rewards)
        self._answered_arms.append(arms)

    @property
    def theta(self) -> float:
        """``mean + k std`` of the sampled workers' means (NaN before two have answers)."""
        if self._theta is None:
            y = self.means[self._sampled]
            centre = float(y.mean())
            spread = math.sqrt(float(np.dot(y - centre, y - centre)) / y.size)
            self._theta = centre + self.k * spread
        return self._theta

    @theta.setter
    def theta(self, value: float) -> None:
        self._theta = value

    @property
    def lows(self) -> FloatArray:
        """Every worker's interval's lower end (on the flipped scale when direction="low")."""
        self._settle_ends()
        return self._lows

    @lows.setter
    def lows(self, value: FloatArray) -> None:
        self._lows = value

    @property
    def highs(self) -> FloatArray:
        """Every worker's interval's upper end."""
        self._settle_ends()
        return self._highs

    @highs.setter
    def highs(self, value: FloatArray) -> None:
        self._highs = value

    def _settle_ends(self) -> None:
        if self._inexact:
            arms = np.array(sorted(self._inexact), dtype=np.int64)
            self._inexact.clear()
            self._lows[arms], self._highs[arms] = self._mixture_ends(arms)

    @property
    def active(self) -> NDArray[np.bool_]:
        """Workers whose interval meets theta's (``_activity``), as of the last refresh, and
        those held back (no answers yet, or fewer than min_answers)."""
        if self._active is None:
            active = self._activity()
            if self._held_back is not None:
                active[self._held_back] = True
            self._active = active
        return self._active

    @active.setter
    def active(self, value: NDArray[np.bool_]) -> None:
        self._active = value

    def _refresh(self) -> None:
        certificates = self._certificates
        if certificates is not None and certificates.n == self.n_arms:
            self._refresh_moved(certificates)
        else:
            self._refresh_all()

    def _refresh_moved(self, certificates: Certificates) -> None:
        """Every worker has min_answers answers: bring the moved ones up to date, in
        O(moved); theta, the enclosure and the activity are computed when read."""
        answered = self._answered_arms
        if len(answered) == 1 and answered[0].size == 1:
            self._move_one(int(answered[0][0]), certificates)
        elif answered:
            self._move_many(np.unique(np.concatenate(answered)), certificates)
        answered.clear()
        if certificates.stale:
            certificates.resum(self.means, self._lows, self._highs)
        self._theta = self._active = self._band = self._theta_interval = None
        self._near_band = self._held_back = None
        self._ends.clear()

    def _move_many(self, moved: IntArray, certificates: Certificates) -> None:
        """``_move_one`` of several workers: the intervals the table holds, the rest in one
        vectorised call or, for a few, ``near_mixture_interval`` until read."""
        counts = self.stats.count[moved]
        means = self.stats.total[moved] / counts
        m = counts.astype(np.float64)
        sums = np.clip((self.stats.total[moved] - self.lower * m) / self.width, 0.0, m)
        level = self.interval_level(self.stats.n_samples)
        low, high, found = tabulated_mixture_bounds(sums, m, level)
        rest = np.flatnonzero(~found)
        # The scalar values pay when the exact ones may never be read: in small pools, whose
        # schedules check workers one by one (_activities_of); else for a few workers only.
        if rest.size > (_NEAR_AT_MOST if self.n_arms <= _NEAR_AT_MOST else 8):
            low[rest], high[rest] = mixture_bounds(sums[rest], m[rest], level)
        else:
            for i in rest.tolist():
                low[i], high[i] = near_mixture_interval(float(sums[i]), float(m[i]), level)
                self._inexact.add(int(moved[i]))
        lows, highs = self.lower + self.width * low, self.lower + self.width * high
        old = zip(self.means[moved].tolist(), self._lows[moved].tolist(),
                  self._highs[moved].tolist(), strict=True)  # fmt: skip
        new = zip(means.tolist(), lows.tolist(), highs.tolist(), strict=True)
        for arm, before, after in zip(moved.tolist(), old, new, strict=True):
            certificates.move(arm, before, after)
        self.means[moved], self._lows[moved], self._highs[moved] = means, lows, highs
        self._bounds_count[moved] = counts

    def _move_one(self, arm: int, certificates: Certificates) -> None:
        """``_refresh_moved`` of one worker, in scalar steps (the same float operations)."""
        count, total = int(self.stats.count[arm]), float(self.stats.total[arm])
        m = float(count)
        scaled = min(max((total - self.lower * m) / self.width, 0.0), m)
        level = self.interval_level(self.stats.n_samples)
        ends = tabulated_mixture_interval(scaled, m, level)
        if ends is None:  # not looked up yet: near enough for the certificates until read
            ends = near_mixture_interval(scaled, m, level)
            self._inexact.add(arm)
        low, high = ends
        new = (total / count, self.lower + self.width * low, self.lower + self.width * high)
        old = (float(self.means[arm]), float(self._lows[arm]), float(self._highs[arm]))
        certificates.move(arm, old, new)
        self.means[arm], self._lows[arm], self._highs[arm] = new
        self._bounds_count[arm] = count

    def _refresh_all(self) -> None:
        self._answered_arms.clear()
        stats = self.stats
        counts = stats.count
        sampled = counts > 0
        held_back = self._too_few_answers()
        self._warmed_up = not bool(held_back[self.available].any()) and bool(sampled.any())
        self.means = stats.means()
        self.lows, self.highs = self._worker_bounds(stats.n_samples)
        self._sampled = sampled
        self._certificates = None
        if sampled.sum() < 2:
            self.theta, self._theta_interval = math.nan, (-math.inf, math.inf)
            self._band = (-math.inf, math.inf)
            self.active = np.ones(self.n_arms, dtype=bool)
            return
        self._theta = self._band = self._theta_interval = self._active = None
        self._held_back = held_back
        if self.interval != "mixture":  # its level moves with every answer: decide now
            self.active = self.active
        elif not held_back.any():
            scale = max(self.width, abs(self.lower), abs(self.upper))
            self._certificates = Certificates(self.means, self.lows, self.highs, self.k, scale)

    def _enclosure(self) -> tuple[float, float]:
        """``ksigma_threshold_enclosure`` of the sampled workers' box (mixture intervals)."""
        if self._band is None:
            self._band = (-math.inf, math.inf)
            if self.interval == "mixture":
                sampled = self._sampled
                y, lows, highs = self.means[sampled], self.lows[sampled], self.highs[sampled]
                self._band = ksigma_threshold_enclosure(y, lows, highs, self.k)
        return self._band

    def _activity(self) -> NDArray[np.bool_]:
        """Workers whose interval meets theta's (on the side their mean lies).

        The box range (``_threshold_interval``) is the costly part, so it is computed only
        when a decision depends on it. theta's interval holds the value of theta at every
        point of the box, and lies inside the cheap ``ksigma_threshold_enclosure``: an
        interval reaching past theta at a point of the box meets it, and one clear of the
        enclosure is clear of it. The points tried (``_box_probes``): one near the box
        maximum, a few near its minimum. The answer is the same as with the box range.
        """
        above = self.means > self.theta
        band_low, band_high = self._enclosure()
        if math.isfinite(band_high - band_low):
            reach_high, reach_low = self._box_probes()
            if self._certificates is not None:
                self._certificates.cap(reach_low)
            meets = np.where(above, self.lows < reach_high, self.highs > reach_low)
            clear = np.where(above, self.lows >= band_high, self.highs <= band_low)
            if bool((meets | clear)[self._sampled].all()):
                return meets
        low, high = self._threshold_interval()
        return np.where(above, self.lows < high, self.highs > low)

    def _box_probes(self) -> tuple[float, float]:
        """theta at points of the sampled workers' box: the largest value found (at the
        vertex where theta's gradient at the means points) and the smallest (on the segment
        from the means to the opposite vertex). Both lie inside theta's interval."""
        sampled = self._sampled
        y, low, high = self.means[sampled], self.lows[sampled], self.highs[sampled]
        rising = self.k * (y - y.mean()) >= -float(y.std())  # theta's gradient at y >= 0
        toward_min = np.where(rising, low, high) - y
        points = np.stack(
            [np.where(rising, high, low), *(y + t * toward_min for t in (0.25, 0.5, 0.75, 1.0))]
        )
        values = points.mean(axis=1) + self.k * points.std(axis=1)
        return max(float(values[0]), self.theta), min(float(values[1:].min()), self.theta)

    @property
    def theta_low(self) -> float:
        """The lower end of theta's interval (``-inf`` before two workers have answers)."""
        return self._threshold_interval()[0]

    @property
    def theta_high(self) -> float:
        """The upper end of theta's interval (``inf`` before two workers have answers)."""
        return self._threshold_interval()[1]

    def _threshold_interval(self) -> tuple[float, float]:
        if self._theta_interval is None:
            low, high = self._threshold_bounds(self.stats.n_samples, self._sampled)
            # Both are bounds on the same event: keep the tighter end of each.
            band_low, band_high = self._enclosure()
            self._theta_interval = (max(low, band_low), min(high, band_high))
            if self._certificates is not None:
                self._certificates.anchor(self._theta_interval[0])
        return self._theta_interval

    def _worker_bounds(self, total_pulls: int) -> tuple[FloatArray, FloatArray]:
        """Every worker's interval; ``[lower, upper]`` before its first answer."""
        counts = self.stats.count
        if self.interval != "mixture":
            radii = self._arm_radii(self.interval_level(total_pulls))
            return (
                np.where(counts > 0, self.means - radii, self.lower),
                np.where(counts > 0, self.means + radii, self.upper),
            )
        # A worker's sequence depends on its own answers only: redo those that got some.
        changed = np.flatnonzero(counts != self._bounds_count)
        lows, highs = self.lows.copy(), self.highs.copy()
        if changed.size:
            lows[changed], highs[changed] = self._mixture_ends(changed)
            self._bounds_count[changed] = counts[changed]
        return lows, highs

    def _mixture_ends(self, arms: IntArray) -> tuple[FloatArray, FloatArray]:
        """The mixture intervals of ``arms`` (each has answers), in reward units."""
        m = self.stats.count[arms].astype(np.float64)
        sums = np.clip((self.stats.total[arms] - self.lower * m) / self.width, 0.0, m)
        low, high = mixture_bounds(sums, m, self.interval_level(self.stats.n_samples))
        return self.lower + self.width * low, self.lower + self.width * high

    def _arm_radii(self, level: float) -> FloatArray:
        counts = self.stats.count
        if self.interval == "hoeffding":
            return hoeffding_radius(counts, level, self.width)
        z = normal_quantile(level, self.quantile)
        return scaled_agresti_coull_radius(self.stats.total, counts, z, self.lower, self.width)

    def _threshold_bounds(
        self, total_pulls: int, sampled: NDArray[np.bool_]
    ) -> tuple[float, float]:
        """theta's interval, over the sampled workers (the class docstring)."""
        if self.interval == "mixture":
            low, high = ksigma_threshold_bounds(self.lows[sampled], self.highs[sampled], self.k)
            return float(low), float(high)
        if self.interval == "hoeffding":
            level = self.interval_level(total_pulls)
            counts = self.stats.count[sampled]
            radius = ksigma_bounded_threshold_radius(counts, level, self.lk, self.width)
        else:
            radii = (self.highs - self.means)[sampled]
            radius = delta_method_threshold_radius(self.means[sampled], radii, self.k)
        return self.theta - radius, self.theta + radius

    def _on_unavailable(self, arm: int) -> None:
        self._available_cache = None

    def _available_arms(self) -> IntArray:
        """The available workers in index order (kept until one leaves or the pool grows)."""
        if self._available_cache is None or self._available_n != self.n_arms:
            self._available_cache = np.flatnonzero(self.available).astype(np.int64)
            self._available_n = self.n_arms
        return self._available_cache

    def _next_available(self, cursor: int) -> int:
        """The first available worker at or after ``cursor``, cyclically (-1: none)."""
        candidates = self._available_arms()
        if candidates.size == 0:
            return -1
        return int(candidates[int(np.searchsorted(candidates, cursor)) % candidates.size])

    def _condition_met(self) -> bool:
        return self._warmed_up and not self._someone_active(among_available=False)

    def _can_progress(self) -> bool:
        # Pulling can only help while some worker we may still ask is unsampled or active.
        return self._someone_active(among_available=True)

    def _someone_active(self, *, among_available: bool) -> bool:
        """Whether some worker (some available worker) is active: a worker surely active
        (``Certificates``) answers it in O(1), else the exact activity does."""
        held_back = self._held_back
        if self._active is None and held_back is not None:  # held back: active, by rule
            reachable = held_back & self.available if among_available else held_back
            if reachable.any():
                return True
        certificates = self._certificates
        if self._active is None and certificates is not None:
            witness = self._witness
            usable = witness >= 0 and (not among_available or self.available[witness])
            if usable and self._is_active(witness):
                return True
            found = certificates.witnesses(self.means, self._lows, self._highs)
            if among_available:
                found = found[self.available[found]]
            if found.size:
                self._witness = int(found[0])
                return True
        active = self.active & self.available if among_available else self.active
        return bool(active.any())

    def _is_active(self, arm: int) -> bool | None:
        """Whether ``arm`` is active: exact when the activity was computed, else from the
        certificates (None when they cannot tell)."""
        if self._active is not None:
            return bool(self._active[arm])
        if self._certificates is None:
            return bool(self.active[arm])
        return self._certificates.activity(
            float(self.means[arm]), float(self._lows[arm]), float(self._highs[arm])
        )

    def _activities_of(self, arms: IntArray) -> NDArray[np.bool_]:
        """``active[arms]``: one by one (``_activity_of``) for a few workers while the whole
        activity is not computed, else from it."""
        if self._active is not None or arms.size > _NEAR_AT_MOST:
            return np.asarray(self.active[arms])
        return np.array([self._activity_of(arm) for arm in arms.tolist()], dtype=bool)

    def _activity_of(self, arm: int) -> bool:
        """Whether ``arm`` is active, exactly: the certificates, then the enclosure (a worker
        clear of it is clear of theta's interval), then the one end of theta's interval
        that its side of theta needs (``_activity`` decides each worker by that end)."""
        sure = self._is_active(arm)
        if sure is not None:
            return sure
        above = bool(self.means[arm] > self.theta)
        if self._clear_of_near_band(arm, above):
            return False
        band_low, band_high = self._enclosure()
        low, high = float(self.lows[arm]), float(self.highs[arm])
        if (low >= band_high) if above else (high <= band_low):
            return False
        if self._theta_interval is None and self.interval == "mixture":
            end = self._threshold_end(upper=above, reach=low if above else high)
            if end is not None:
                return end
        theta_low, theta_high = self._threshold_interval()
        return low < theta_high if above else high > theta_low

    def _clear_of_near_band(self, arm: int, above: bool) -> bool:
        """Whether ``arm`` is clear of the enclosure computed on the ends as kept (some may
        be ``near_mixture_interval``'s, within ``NEAR`` of the width), by more than those
        ends can move it: each piece moves by at most ``d (1 + k) (1 + mean(r) / s)`` when
        every end moves by d (r the reaches, s the means' spread; see
        ``ksigma_threshold_enclosure``), so the exact enclosure is that close."""
        if self._near_band is None:
            y, lows, highs = self.means, self._lows, self._highs
            reach = float(np.maximum(y - lows, highs - y).mean())
            spread = float(y.std())
            if not spread > 0.0:
                self._near_band = (math.inf, -math.inf)  # nothing is settled this way
            else:
                low, high = ksigma_threshold_enclosure(y, lows, highs, self.k)
                slack = 10.0 * NEAR * self.width * (1.0 + self.k) * (1.0 + reach / spread)
                self._near_band = (low - slack, high + slack)
        band_low, band_high = self._near_band
        return bool(self._lows[arm] >= band_high) if above else bool(self._highs[arm] <= band_low)

    def _threshold_end(self, *, upper: bool, reach: float) -> bool | None:
        """Whether ``reach`` lies inside theta's interval's upper end (``reach < high``; lower
        end: ``reach > low``), from that end alone: its outward rounding
        ``1e-12 (1 + max(|lower|, |upper|))`` needs the other end, which lies within
        ``scale (3 + 3 k)`` of zero, so the rounding is bracketed (None: too close to tell)."""
        sampled = self._sampled
        raw = self._ends.get(upper)
        if raw is None:
            raw = ksigma_threshold_end(self.lows[sampled], self.highs[sampled], self.k, upper=upper)
            self._ends[upper] = raw
        if not upper and self._certificates is not None:
            self._certificates.anchor(max(raw - 1e-12 * (1.0 + abs(raw)), self._enclosure()[0]))
        other = max(self.width, abs(self.lower), abs(self.upper)) * (3.0 + 3.0 * self.k)
        least, most = 1e-12 * (1.0 + abs(raw)), 1e-12 * (1.0 + max(abs(raw), other))
        band_low, band_high = self._enclosure()
        if upper:
            near, far = min(raw + least, band_high), min(raw + most, band_high)
            return True if reach < near else False if reach >= far else None
        near, far = max(raw - least, band_low), max(raw - most, band_low)
        return True if reach > near else False if reach <= far else None

    # ------------------------------------------------------------------------- result
    def _describe(self) -> Result:
        condition_met = self._condition_met()
        workers = [self._worker_line(arm, condition_met) for arm in range(self.n_arms)]
        ranked = sorted(workers, key=_rank_key)
        lines = tuple(replace(w, rank=position) for position, w in enumerate(ranked, start=1))
        threshold = None
        if math.isfinite(self.theta):
            estimate = self._to_reward_scale(self.theta)
            ends = (self._to_reward_scale(self.theta_low), self._to_reward_scale(self.theta_high))
            threshold = Threshold(estimate, min(ends), max(ends))
        result = self._result(
            lines,
            threshold=threshold,
            extra={"direction": self.direction, "k": self.k, "delta": self.delta},
        )
        return label_heuristic(result, self._heuristic)

    def _worker_line(self, arm: int, condition_met: bool) -> WorkerResult:
        count = int(self.stats.count[arm])
        pending = int(self.pending[arm])
        if count == 0:
            reason = self._availability_reason(arm) or "no answers yet"
            return WorkerResult(
                arm, math.nan, self.lower, self.upper, 0, pending,
                Decision.UNDECIDED, Decision.UNDECIDED, reason, 0,
            )  # fmt: skip
        mean = float(self.means[arm])
        leaning = Decision.OUTLIER if mean > self.theta else Decision.NORMAL
        if self._is_decided(arm, condition_met):
            decision = leaning
            reason = self._decided_reason(condition_met)
        else:
            decision = Decision.UNDECIDED
            reason = self._availability_reason(arm) or self._undecided_reason(arm)
        ends = (self._to_reward_scale(self.lows[arm]), self._to_reward_scale(self.highs[arm]))
        low, high = min(ends), max(ends)
        return WorkerResult(
            arm, self._to_reward_scale(mean), max(low, self.lower), min(high, self.upper),
            count, pending, decision, leaning, reason, 0, self._score(arm),
        )  # fmt: skip

    def _is_decided(self, arm: int, condition_met: bool) -> bool:
        return not self.active[arm]

    def _undecided_reason(self, arm: int) -> str:
        if self.stats.count[arm] < self.min_answers:
            return self._too_few_reason
        return "interval overlaps the threshold's"

    def _decided_reason(self, condition_met: bool) -> str:
        if condition_met:
            return "interval clear of the threshold's"
        return "interval clear of the threshold's (overall condition not met)"

    def _score(self, arm: int) -> float:
        """Signed distance above the threshold in the screened direction (ranking key)."""
        return float(self.means[arm] - self.theta)

    def _to_reward_scale(self, value: float) -> float:
        return self.lower + self.upper - value if self.direction == "low" else value


_NO_ARMS = np.empty(0, dtype=np.int64)
#: Workers a refresh or a schedule handles one by one (scalar steps) rather than in arrays.
_NEAR_AT_MOST = 32
_DECISION_ORDER = {Decision.OUTLIER: 0, Decision.UNDECIDED: 1, Decision.NORMAL: 2}


def _rank_key(line: WorkerResult) -> tuple[int, float, int]:
    score = line.score if line.score is not None and math.isfinite(line.score) else -math.inf
    return (_DECISION_ORDER.get(line.decision, 1), -score, line.arm)
