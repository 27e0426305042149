"""The k-sigma outlier rule (Zhuang, Wang, Wang, NIPS 2017): a worker is an outlier when its
mean exceeds ``theta = mean(y) + k std(y)`` over all workers' means (std divides by n).

``direction="low"`` screens for abnormally LOW rewards (spammers): every reward r is flipped to
``lower + upper - r`` on arrival, the high-side rule runs unchanged, and estimates, intervals
and the threshold are flipped back in the result (so the threshold reads ``mean - k std``).
"""

from __future__ import annotations

import abc
import math
from dataclasses import replace
from typing import Any, ClassVar, Literal

import numpy as np

from screener.algorithms._checks import MAX_K, check_delta, label_heuristic
from screener.algorithms.base import Algorithm
from screener.algorithms.result import Result
from screener.algorithms.worker_result import Decision, Threshold, WorkerResult
from screener.arrays import FloatArray
from screener.checks import check_choice
from screener.errors import ConfigError

__all__ = ["Direction", "KSigmaRule"]

Direction = Literal["high", "low"]


class KSigmaRule(Algorithm):
    """Base of every k-sigma algorithm: its parameters (``k``, ``delta``, ``direction``,
    ``min_answers``), the reward flip of ``direction="low"``, and the result (each worker
    against theta's interval, ranked by its distance above theta). A subclass estimates
    theta and its interval (``_threshold_interval``) and says what it knows of each worker
    (``_worker_line``, built with ``_answered_line`` and ``_unanswered_line``).
    """

    min_workers: ClassVar[int] = 2
    fixed_roster: ClassVar[str | None] = (
        "its threshold theta = mean + k sigma is taken over the whole crowd, so a worker who "
        "joins moves theta and every earlier decision with it"
    )
    guarantee: ClassVar[str | None] = (
        "the outlier set is exactly right with probability at least 1 - delta"
    )
    #: theta = mean + k std of the workers' means, as the subclass estimates it.
    theta: float

    def __init__(
        self,
        n_workers: int,
        *,
        k: float = 2.0,
        delta: float = 0.1,
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
        check_choice("direction", direction, ("high", "low"))
        self.k = float(k)
        self.delta = float(delta)
        self.direction: Direction = direction
        self.width = self.upper - self.lower
        #: Every worker's mean reward (on the screened scale; NaN before its first answer).
        self.means: FloatArray = np.full(self.n_arms, np.nan)
        self.theta = math.nan
        #: Why the result carries no guarantee (None: it does).
        self._heuristic: str | None = None

    def _screened(self, rewards: FloatArray) -> FloatArray:
        """Rewards on the scale the high-side rule runs on (flipped when direction="low")."""
        return self.lower + self.upper - rewards if self.direction == "low" else rewards

    def _to_reward_scale(self, value: float) -> float:
        return self.lower + self.upper - value if self.direction == "low" else value

    @property
    def theta_low(self) -> float:
        """The lower end of theta's interval (``-inf`` before two workers have answers)."""
        return self._threshold_interval()[0]

    @property
    def theta_high(self) -> float:
        """The upper end of theta's interval (``inf`` before two workers have answers)."""
        return self._threshold_interval()[1]

    @abc.abstractmethod
    def _threshold_interval(self) -> tuple[float, float]:
        """theta's interval, on the screened scale."""

    @abc.abstractmethod
    def _worker_line(self, arm: int, condition_met: bool) -> WorkerResult:
        """Worker ``arm``'s line of the result (rank 0: ``_describe`` ranks them)."""

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

    def _unanswered_line(self, arm: int, reason: str) -> WorkerResult:
        """The line of a worker with no estimate yet: undecided, its interval the range."""
        return WorkerResult(
            arm, math.nan, self.lower, self.upper, int(self.stats.count[arm]),
            int(self.pending[arm]), Decision.UNDECIDED, Decision.UNDECIDED, reason, 0,
        )  # fmt: skip

    def _answered_line(
        self, arm: int, mean: float, ends: tuple[float, float], decision: Decision,
        leaning: Decision, reason: str,
    ) -> WorkerResult:  # fmt: skip
        """The line of a worker with an estimate: ``mean`` and its interval ``ends`` (on the
        screened scale) flipped back to rewards and kept inside the reward range."""
        flipped = (self._to_reward_scale(ends[0]), self._to_reward_scale(ends[1]))
        low, high = min(flipped), max(flipped)
        return WorkerResult(
            arm, self._to_reward_scale(mean), max(low, self.lower), min(high, self.upper),
            int(self.stats.count[arm]), int(self.pending[arm]), decision, leaning, reason, 0,
            self._score(arm),
        )  # fmt: skip

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


_DECISION_ORDER = {Decision.OUTLIER: 0, Decision.UNDECIDED: 1, Decision.NORMAL: 2}


def _rank_key(line: WorkerResult) -> tuple[int, float, int]:
    score = line.score if line.score is not None and math.isfinite(line.score) else -math.inf
    return (_DECISION_ORDER.get(line.decision, 1), -score, line.arm)
