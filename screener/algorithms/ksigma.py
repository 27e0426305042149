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

from screener.algorithms._checks import check_choice, check_delta, check_interval_options
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
    """Base of RR, WRR and NRR: estimates, confidence intervals and the active set.

    Pending pulls never enter estimates or stopping: only answers that arrived count, and
    ``T`` in the level schedule is the number of answers.
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
        lower: float = 0.0,
        upper: float = 1.0,
        budget: int | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(n_workers, lower=lower, upper=upper, budget=budget, seed=seed)
        if not (math.isfinite(k) and k >= 0):
            raise ConfigError(f"k must be a finite number >= 0, got {k}", "try k=2 or k=3")
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
        self._all_sampled = False

    def params(self) -> dict[str, Any]:
        return {
            **super().params(),
            "k": self.k,
            "delta": self.delta,
            "interval": self.interval,
            "quantile": self.quantile,
            "direction": self.direction,
        }

    # ---------------------------------------------------------------------- estimates
    def _on_answers(self, pull_ids: IntArray, arms: IntArray, rewards: FloatArray) -> None:
        if self.direction == "low":
            rewards = self.lower + self.upper - rewards
        self.stats.update_many(arms, rewards)

    def _refresh(self) -> None:
        stats = self.stats
        counts = stats.count
        sampled = counts > 0
        self._all_sampled = bool(sampled[self.available].all()) and bool(sampled.any())
        self.means = stats.means()
        level = round_level(self.delta, self.n_arms, stats.n_samples)
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
        self.active[~sampled] = True

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
        return self._all_sampled and not bool(self.active.any())

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
            reason = self._availability_reason(arm) or "interval overlaps the threshold's"
        low = self._to_reward_scale(mean - radius)
        high = self._to_reward_scale(mean + radius)
        low, high = sorted((low, high))
        return WorkerResult(
            arm, self._to_reward_scale(mean), max(low, self.lower), min(high, self.upper),
            count, pending, decision, leaning, reason, 0, self._score(arm),
        )  # fmt: skip

    def _is_decided(self, arm: int, condition_met: bool) -> bool:
        return not self.active[arm]

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
