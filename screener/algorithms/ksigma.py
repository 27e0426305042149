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

from screener.algorithms._checks import (
    MAX_K,
    IntervalKind,
    check_choice,
    check_delta,
    check_interval_options,
    heuristic_note,
    label_heuristic,
)
from screener.algorithms.base import Algorithm, IntArray
from screener.algorithms.result import Decision, Result, Threshold, WorkerResult
from screener.errors import ConfigError
from screener.stats import (
    QuantileRule,
    delta_method_threshold_radius,
    hoeffding_radius,
    ksigma_bounded_threshold_radius,
    ksigma_lk,
    ksigma_threshold_bounds,
    ksigma_threshold_enclosure,
    mixture_bounds,
    normal_quantile,
    round_level,
    scaled_agresti_coull_radius,
)

__all__ = ["Direction", "IntervalKind", "KSigmaAlgorithm"]

Direction = Literal["high", "low"]
FloatArray = NDArray[np.float64]


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
        self.lows = np.full(n, self.lower)
        self.highs = np.full(n, self.upper)
        self.active = np.ones(n, dtype=bool)
        self.theta = math.nan
        #: theta's interval, computed when first read after a refresh (``_threshold_interval``).
        self._theta_interval: tuple[float, float] | None = (-math.inf, math.inf)
        #: theta(x) for every x in the sampled workers' box lies in here (cheap; no level).
        self._enclosure = (-math.inf, math.inf)
        self._sampled = np.zeros(n, dtype=bool)
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

    def _refresh(self) -> None:
        stats = self.stats
        counts = stats.count
        sampled = counts > 0
        held_back = self._too_few_answers()
        self._warmed_up = not bool(held_back[self.available].any()) and bool(sampled.any())
        self.means = stats.means()
        self.lows, self.highs = self._worker_bounds(stats.n_samples)
        self._sampled = sampled
        if sampled.sum() < 2:
            self.theta, self._theta_interval = math.nan, (-math.inf, math.inf)
            self._enclosure = (-math.inf, math.inf)
            self.active = np.ones(self.n_arms, dtype=bool)
            return
        y = self.means[sampled]
        centre = float(y.mean())
        self.theta = centre + self.k * math.sqrt(float(np.dot(y - centre, y - centre)) / y.size)
        self._theta_interval = None
        self._enclosure = (-math.inf, math.inf)
        if self.interval == "mixture":
            lows, highs = self.lows[sampled], self.highs[sampled]
            self._enclosure = ksigma_threshold_enclosure(y, lows, highs, self.k)
        self.active = self._activity()
        self.active[held_back] = True  # unsampled workers, and any below min_answers

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
        band_low, band_high = self._enclosure
        if math.isfinite(band_high - band_low):
            reach_high, reach_low = self._box_probes()
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
            band_low, band_high = self._enclosure
            self._theta_interval = (max(low, band_low), min(high, band_high))
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
            m = counts[changed].astype(np.float64)
            sums = np.clip((self.stats.total[changed] - self.lower * m) / self.width, 0.0, m)
            low, high = mixture_bounds(sums, m, self.interval_level(total_pulls))
            lows[changed] = self.lower + self.width * low
            highs[changed] = self.lower + self.width * high
            self._bounds_count[changed] = counts[changed]
        return lows, highs

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

    def _condition_met(self) -> bool:
        return self._warmed_up and not bool(self.active.any())

    def _can_progress(self) -> bool:
        # Pulling can only help while some worker we may still ask is unsampled or active.
        return bool((self.active & self.available).any())

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


_DECISION_ORDER = {Decision.OUTLIER: 0, Decision.UNDECIDED: 1, Decision.NORMAL: 2}


def _rank_key(line: WorkerResult) -> tuple[int, float, int]:
    score = line.score if line.score is not None and math.isfinite(line.score) else -math.inf
    return (_DECISION_ORDER.get(line.decision, 1), -score, line.arm)
