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
    check_choice,
    check_delta,
    check_interval_options,
)
from screener.algorithms.base import Algorithm, IntArray
from screener.algorithms.result import Decision, Result, Threshold, WorkerResult
from screener.errors import ConfigError
from screener.stats import (
    QuantileRule,
    agresti_coull_radius,
    delta_method_threshold_radius,
    hoeffding_radius,
    ksigma_bounded_threshold_radius,
    ksigma_lk,
    normal_quantile,
    round_level,
)

__all__ = ["Direction", "IntervalKind", "KSigmaAlgorithm"]

IntervalKind = Literal["agresti-coull", "hoeffding"]
Direction = Literal["high", "low"]
FloatArray = NDArray[np.float64]


class KSigmaAlgorithm(Algorithm):
    """Base of RR, WRR, NRR and IB: estimates, confidence intervals and the active set.

    Pending pulls never enter estimates or stopping: only answers that arrived count, and
    ``T`` in the level schedule is the number of answers.

    How delta is spent with ``interval="hoeffding"`` (the option whose intervals are bounds).
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

    ``interval="agresti-coull"`` (the default, the paper's heuristic for 0/1 answers; kept for
    the reproductions): Eq. (1) as printed, ``l'_T = 6 delta / (pi^2 (n + 1) T^2)``, each
    worker's interval two-sided at ``l'_T`` (``l'_T / 2`` nominal on the end that matters);
    theta's interval is the delta-method linearisation of the workers' radii, with no level of
    its own. Nominally that spends ``n delta / (2 (n + 1))`` < delta, but neither the normal
    approximation nor the linearisation is a bound: delta is not guaranteed.
    ``quantile="paper"`` narrows each worker's interval further (nominal miss per end about
    14x ``l'_T / 2`` at ``l'_T = 1e-3``, 40x at 1e-4).

    ``min_answers`` (default 1, the paper's behaviour): a worker with fewer answers stays
    active, so it is neither decided nor out of the schedule; the stopping condition needs
    every worker out of the active set, hence every worker at ``min_answers`` or more. The
    intervals and their levels do not change, so neither does the promise.
    """

    min_workers: ClassVar[int] = 2
    guarantee: ClassVar[str | None] = (
        "the outlier set is exactly right with probability at least 1 - delta"
    )

    def __init__(
        self,
        n_workers: int,
        *,
        k: float = 2.0,
        delta: float = 0.1,
        interval: IntervalKind = "agresti-coull",
        quantile: QuantileRule = "normal",
        direction: Direction = "high",
        min_answers: int = 1,
        lower: float = 0.0,
        upper: float = 1.0,
        budget: int | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(n_workers, lower=lower, upper=upper, budget=budget, seed=seed)
        self._set_min_answers(min_answers)
        if not 0 <= k <= MAX_K:  # NaN fails too
            raise ConfigError(
                f"k must be a number from 0 to {MAX_K:,.0f} (no z-score gets near that), got {k}",
                "try k=2 or k=3",
            )
        check_delta(delta)
        check_interval_options(interval, quantile)
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
        self.radii = np.full(n, np.inf)
        self.active = np.ones(n, dtype=bool)
        self.theta = math.nan
        self.theta_radius = math.inf
        #: Every available worker has min_answers answers (one, by default) and some have any.
        self._warmed_up = False

    def params(self) -> dict[str, Any]:
        return {
            **super().params(),
            "k": self.k,
            "delta": self.delta,
            "interval": self.interval,
            "quantile": self.quantile,
            "direction": self.direction,
            "min_answers": self.min_answers,
        }

    def interval_level(self, total_pulls: int) -> float:
        """The level every interval is built at after ``total_pulls`` answers: one-sided
        ``l_T`` for Hoeffding, two-sided ``l'_T`` for Agresti-Coull (the class docstring)."""
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
        level = self.interval_level(stats.n_samples)
        self.radii = self._arm_radii(level)
        if sampled.sum() < 2:
            self.theta, self.theta_radius = math.nan, math.inf
            self.active = np.ones(self.n_arms, dtype=bool)
            return
        y = self.means[sampled]
        centre = float(y.mean())
        self.theta = centre + self.k * math.sqrt(float(np.dot(y - centre, y - centre)) / y.size)
        self.theta_radius = self._threshold_radius(level, sampled)
        above = self.means > self.theta
        self.active = np.where(
            above,
            self.means - self.radii < self.theta + self.theta_radius,
            self.means + self.radii > self.theta - self.theta_radius,
        )
        self.active[held_back] = True  # unsampled workers, and any below min_answers

    def _arm_radii(self, level: float) -> FloatArray:
        counts = self.stats.count
        if self.interval == "hoeffding":
            return hoeffding_radius(counts, level, self.width)
        z = normal_quantile(level, self.quantile)
        scaled_successes = (self.stats.total - self.lower * counts) / self.width
        return self.width * agresti_coull_radius(scaled_successes, counts, z)

    def _threshold_radius(self, level: float, sampled: NDArray[np.bool_]) -> float:
        if self.interval == "hoeffding":
            return ksigma_bounded_threshold_radius(
                self.stats.count[sampled], level, self.lk, self.width
            )
        return delta_method_threshold_radius(self.means[sampled], self.radii[sampled], self.k)

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
            low, high = self.theta - self.theta_radius, self.theta + self.theta_radius
            estimate = self._to_reward_scale(self.theta)
            a, b = sorted((self._to_reward_scale(low), self._to_reward_scale(high)))
            threshold = Threshold(estimate, a, b)
        return self._result(
            lines,
            threshold=threshold,
            extra={"direction": self.direction, "k": self.k, "delta": self.delta},
        )

    def _worker_line(self, arm: int, condition_met: bool) -> WorkerResult:
        count = int(self.stats.count[arm])
        pending = int(self.pending[arm])
        if count == 0:
            reason = self._availability_reason(arm) or "no answers yet"
            return WorkerResult(
                arm, math.nan, self.lower, self.upper, 0, pending,
                Decision.UNDECIDED, Decision.UNDECIDED, reason, 0,
            )  # fmt: skip
        mean, radius = float(self.means[arm]), float(self.radii[arm])
        leaning = Decision.OUTLIER if mean > self.theta else Decision.NORMAL
        if self._is_decided(arm, condition_met):
            decision = leaning
            reason = self._decided_reason(condition_met)
        else:
            decision = Decision.UNDECIDED
            reason = self._availability_reason(arm) or self._undecided_reason(arm)
        low = self._to_reward_scale(mean - radius)
        high = self._to_reward_scale(mean + radius)
        low, high = sorted((low, high))
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
