"""The k-sigma algorithms' confidence intervals: each worker's, and theta's.

Estimates, radii and levels follow Section 4 of Zhuang, Wang, Wang (NIPS 2017); see
``screener.stats.bounds`` for each radius and the choices made where the extracted text is
ambiguous (the normal quantile, the delta-method gradient).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._checks import IntervalKind, check_interval_options, heuristic_note
from screener.algorithms.ksigma._certificates import Certificates
from screener.algorithms.ksigma.rule import Direction, KSigmaRule
from screener.arrays import FloatArray, IntArray
from screener.errors import ConfigError
from screener.stats import (
    QuantileRule,
    delta_method_threshold_radius,
    hoeffding_radius,
    ksigma_bounded_threshold_radius,
    ksigma_lk,
    ksigma_threshold_bounds,
    mixture_bounds,
    normal_quantile,
    round_level,
    scaled_agresti_coull_radius,
)
from screener.stats.confseq import tabulated_mixture_bounds, tabulated_mixture_interval
from screener.stats.scalar import near_mixture_interval

__all__ = ["NEAR_AT_MOST", "KSigmaIntervals"]

#: Workers a refresh or a schedule handles one by one (scalar steps) rather than in arrays.
NEAR_AT_MOST = 32


class KSigmaIntervals(KSigmaRule):
    """Each worker's confidence interval and theta's, kept up to date as answers arrive.

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
    theta's range uses both ends of every worker's, so both ends are paid for.)
    ``benchmarks/intervals.py`` compares this choice with per-worker KL intervals and with
    McDiarmid's interval for theta at a level of its own.

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

    """

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
        super().__init__(
            n_workers, k=k, delta=delta, direction=direction, min_answers=min_answers, **common
        )
        _check_interval_options(interval, quantile)
        self.interval: IntervalKind = interval
        self.quantile: QuantileRule = quantile
        self.lk = ksigma_lk(self.k, self.n_arms, self.delta)
        self._heuristic = heuristic_note(
            interval, paper_quantile=interval == "agresti-coull" and quantile == "paper"
        )
        n = self.n_arms
        #: Every worker's interval (on the flipped scale when direction="low").
        self._lows = np.full(n, self.lower)
        self._highs = np.full(n, self.upper)
        #: Workers whose ``_lows`` and ``_highs`` hold ``near_mixture_interval``'s values, not
        #: yet the exact ones (``lows`` and ``highs`` compute those when read).
        self._inexact: set[int] = set()
        self._theta: float | None = math.nan
        self._sampled = np.zeros(n, dtype=bool)
        #: Workers with answers since the last refresh.
        self._answered_arms: list[IntArray] = []
        self._bounds_count = np.zeros(n, dtype=np.int64)  # counts the mixture bounds are at

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
        self.stats.update_many(arms, self._screened(rewards))
        self._answered_arms.append(arms)

    def _on_answer1(self, pull_id: int, arm: int, reward: float) -> None:
        # ``_screened`` of one reward: the flip is its own inverse.
        self.stats.update(arm, self._to_reward_scale(reward))
        self._answered_arms.append(np.array([arm], dtype=np.int64))

    @property
    def theta(self) -> float:
        """``mean + k std`` of the sampled workers' means (NaN before two have answers)."""
        if self._theta is None:
            y = self.means[self._sampled]
            centre = float(y.sum()) / y.size  # ``mean()``'s float, without its overhead
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

    def _move_many(self, moved: IntArray, certificates: Certificates) -> None:
        """``_move_one`` of several workers: the intervals the table holds, the rest in one
        vectorised call or, for a few, ``near_mixture_interval`` until read."""
        counts, totals = self.stats.count[moved], self.stats.total[moved]
        means = totals / counts
        m = counts.astype(np.float64)
        # np.clip's values, without its overhead (this runs once an ask).
        sums = np.minimum(np.maximum((totals - self.lower * m) / self.width, 0.0), m)
        level = self.interval_level(self.stats.n_samples)
        low, high, found = tabulated_mixture_bounds(sums, m, level)
        rest = np.flatnonzero(~found)
        # The scalar values pay when the exact ones may never be read: in small pools, whose
        # schedules check workers one by one (WRR's _active_visits); else for a few only.
        if rest.size > (NEAR_AT_MOST if self.n_arms <= NEAR_AT_MOST else 8):
            low[rest], high[rest] = mixture_bounds(sums[rest], m[rest], level)
        else:
            for i in rest.tolist():
                low[i], high[i] = near_mixture_interval(float(sums[i]), float(m[i]), level)
                self._inexact.add(int(moved[i]))
        lows, highs = self.lower + self.width * low, self.lower + self.width * high
        old = (self.means[moved], self._lows[moved], self._highs[moved])
        certificates.move_many(moved, old, (means, lows, highs))
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


def _check_interval_options(interval: IntervalKind, quantile: QuantileRule) -> None:
    check_interval_options(interval, quantile)
    if interval == "hoeffding" and quantile == "paper":
        raise ConfigError(
            "quantile='paper' changes the Agresti-Coull intervals only: "
            "interval='hoeffding' has no normal quantile to change",
            "drop --quantile paper, or give --interval agresti-coull with it",
        )
