"""The base of the thresholding algorithms: the bar, the estimates, the result lines, and the
index policy run through the shared scheduler (``_scheduler``)."""

from __future__ import annotations

import abc
import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._checks import check_budget_given
from screener.algorithms.base import Algorithm
from screener.algorithms.result import Result
from screener.algorithms.thresholding._scheduler import fill_at_once, heap_picks, surely_needed
from screener.algorithms.worker_result import Decision, Threshold, WorkerResult
from screener.arrays import FloatArray, IntArray, grown
from screener.errors import ConfigError
from screener.stats import hoeffding_radius

__all__ = ["INFO_LEVEL", "NO_CONFIDENCE", "ThresholdingAlgorithm", "take_changes"]

#: Per-side miss level of the informational interval shown by fixed-budget algorithms.
INFO_LEVEL = 0.025
#: A fixed-budget classification's reason, by whether the budget is spent (one string each,
#: not one per worker).
_CLASSIFIED = {
    finished: f"classified by its estimate {when}; no per-worker guarantee, interval "
    f"informational (Hoeffding, each side misses with probability <= {INFO_LEVEL}, pointwise)"
    for finished, when in (
        (True, "at the end of the budget"),
        (False, "so far (anytime; budget not spent yet)"),
    )
}
#: The last words of a fixed-budget method's guarantee.
NO_CONFIDENCE = "no per-worker confidence"


class ThresholdingAlgorithm(Algorithm):
    """Base of the thresholding algorithms: bar, estimates, pending-aware index scheduling.

    Subclasses supply ``_index(arms, effective)``: a priority per arm, lowest pulled first,
    from the arm's answered mean and its effective count (answered + pending, plus the pulls
    already chosen in the current batch). ``+inf`` (or NaN) means "do not pull now".

    Two switches describe the index: ``pull_each_first`` gives arms never asked (effective
    count 0) top priority, in worker order (the initialisation of LSA, APT, UCBE, Uniform);
    ``needs_answers`` holds back an arm whose first answer is still in flight (its mean is
    unknown, so its index is undefined) until that answer arrives.

    Examples
    --------
    >>> from screener.algorithms import LSA, ConfidentThresholding
    >>> [issubclass(cls, ThresholdingAlgorithm) for cls in (LSA, ConfidentThresholding)]
    [True, True]
    >>> LSA(4, threshold=0.6, budget=100).result().threshold  # the bar, given
    Threshold(estimate=0.6, lower=0.6, upper=0.6)
    """

    #: An open pool may start empty and take its workers as they join.
    min_workers: ClassVar[int] = 0
    #: Each worker is judged against the bar on its own answers, so workers may join.
    fixed_roster: ClassVar[str | None] = None
    #: True when the run length is the budget (then a budget is required).
    fixed_budget: ClassVar[bool] = True
    #: True when every decision ``verdicts`` reports stands for the rest of the run, so a
    #: stream may act on it at once; False when a verdict may still be taken back.
    verdicts_final: ClassVar[bool] = True
    pull_each_first: ClassVar[bool] = True
    needs_answers: ClassVar[bool] = True

    def __init__(
        self,
        n_workers: int,
        *,
        threshold: float,
        **common: Any,
    ) -> None:
        super().__init__(n_workers, **common)
        if not (math.isfinite(threshold) and self.lower <= threshold <= self.upper):
            raise ConfigError(
                f"threshold must lie in the reward range [{self.lower}, {self.upper}], "
                f"got {threshold}",
                "give the bar in reward units, e.g. threshold=0.7 for 70% correct",
            )
        if self.fixed_budget:
            check_budget_given(self.name, self.budget, "is a fixed-budget algorithm and")
        self.threshold = float(threshold)
        self.width = self.upper - self.lower
        self.means: FloatArray = np.full(self.n_arms, np.nan)
        self.gaps: FloatArray = np.full(self.n_arms, np.nan)

    # ------------------------------------------------------------------ subclass steps
    @abc.abstractmethod
    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        """Priority of ``arms`` at effective counts ``effective`` (lowest pulled first), as
        a new array: ``_priority`` marks the held-back workers in it."""

    def _refresh(self) -> None:
        self.means = self.stats.means()
        self.gaps = np.abs(self.means - self.threshold)

    # ------------------------------------------------------------------- open pools
    def verdicts(self) -> NDArray[np.int8]:
        """Per worker, what the result would say of it now: +1 decided ABOVE the bar, -1
        decided BELOW, 0 undecided; without building the result. A fixed-budget method
        decides everyone at the end of its budget, no one before."""
        self._ensure_fresh()
        decided = self._decided_now()
        above = np.where(self._above(), 1, -1).astype(np.int8)
        return np.where(decided & (self.stats.count > 0), above, 0).astype(np.int8)

    def verdicts_of(self, arms: IntArray) -> NDArray[np.int8]:
        """``verdicts()`` of ``arms`` alone."""
        return self.verdicts()[arms]

    def verdict_changes(self) -> IntArray | None:
        """The workers whose verdict may have moved since the last call, in index order, so
        a stream that shows each decision as it is made need not read every worker's; None
        when the method cannot say (read ``verdicts()``). The base cannot: always None."""
        return None

    def explain(self, arm: int) -> str:
        """Why worker ``arm`` stands where ``verdicts`` puts it: the reason its result line
        would give, without building the result."""
        self._ensure_fresh()
        if self.stats.count[arm] == 0:
            return self._decide_unanswered(arm)[1]
        return self._decide(arm, self._leaning(arm))[1]

    def _leaning(self, arm: int) -> Decision:
        """One worker's classification by ``_above`` (its result line's leaning)."""
        return Decision.ABOVE if self._above()[arm] else Decision.BELOW

    def _decided_now(self) -> NDArray[np.bool_]:
        """Which workers' decisions are taken (the fixed-budget classification: at the end)."""
        done = self.stop_reason is not None
        return np.full(self.n_arms, done, dtype=bool)

    def _wants(self, arm: int) -> bool:
        """The index policy's own test: the worker's priority is finite at its effective
        count (a decided worker, one at its bound or waiting for answers is held back)."""
        one = np.array([arm], dtype=np.int64)
        effective = (self.stats.count[one] + self.pending[one]).astype(np.float64)
        return bool(self._priority(one, effective)[0] < math.inf)

    def _on_joined(self, arms: IntArray) -> None:
        self.means = grown(self.means, arms.size, math.nan)
        self.gaps = grown(self.gaps, arms.size, math.nan)

    def _condition_met(self) -> bool:
        return False  # fixed budget: the base stops with BUDGET_SPENT

    def _horizon(self) -> NDArray[np.int64] | None:
        """Per worker, the answer count up to which every answer is surely needed whatever
        the answers in flight turn out to be (no decision can come earlier); None: no such
        lookahead. Used only to fill a window the index leaves short (``_schedule``)."""
        return None

    def _schedule(self, limit: int) -> IntArray:
        picks = self._index_schedule(limit)
        if picks.size == limit:
            return picks
        horizon = self._horizon()
        if horizon is None:
            return picks
        pending = self.pending + np.bincount(picks, minlength=self.n_arms)
        more = surely_needed(limit - picks.size, pending, self.stats.count, self.available, horizon)
        return np.concatenate([picks, more])

    def _index_schedule(self, limit: int) -> IntArray:
        """The index policy's picks (see the class docstring)."""
        return self._picks_among(self.available.nonzero()[0].astype(np.int64, copy=False), limit)

    def _picks_among(self, arms: IntArray, limit: int) -> IntArray:
        """The index policy's picks among ``arms`` (available ones)."""
        effective = (self.stats.count[arms] + self.pending[arms]).astype(np.float64)
        if limit > 1:
            filled = fill_at_once(self._priority, arms, effective, limit)
            if filled is not None:
                return filled
        row: dict[int, int] = {}  # arm -> its position in ``arms``, built at the first need

        def next_key(arm: int, picked: int) -> float:
            if not row:
                row.update((a, i) for i, a in enumerate(arms.tolist()))
            i = row[arm]
            return float(self._priority(arms[i : i + 1], effective[i : i + 1] + picked)[0])

        return heap_picks(arms, self._priority(arms, effective), limit, next_key)

    def _priority(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = np.asarray(self._index(arms, effective), dtype=np.float64)
        # In place: every ``_index`` returns a fresh array (see its docstring).
        keys[np.isnan(keys)] = math.inf
        if self.needs_answers:
            keys[self.stats.count[arms] == 0] = math.inf
        if self.pull_each_first:
            keys[effective == 0] = -math.inf
        return keys

    # ------------------------------------------------------------------------- result
    def _above(self) -> NDArray[np.bool_]:
        """The classification rule: ABOVE iff the estimate is at least the bar."""
        return np.asarray(self.means >= self.threshold)

    def _estimate(self) -> tuple[FloatArray, FloatArray | None]:
        """Per-arm estimate shown in the result (NaN: none), and each arm's share correct
        when the estimate is another kind of number (None: the estimate is that share)."""
        return self.means, None

    def _interval(self) -> tuple[FloatArray, FloatArray]:
        """Per-arm interval shown in the result (informational Hoeffding, pointwise)."""
        radius = hoeffding_radius(self.stats.count, INFO_LEVEL, self.width)
        return self.means - radius, self.means + radius

    def _decide(self, arm: int, leaning: Decision) -> tuple[Decision, str]:
        """Decision and reason of an arm with answers (fixed budget: the classification)."""
        reason = _CLASSIFIED[self.finished]
        unavailable = self._availability_reason(arm)
        if unavailable is not None:
            reason += f"; {unavailable}"
        return leaning, reason

    def _decide_unanswered(self, arm: int) -> tuple[Decision, str]:
        """Decision and reason of an arm without answers: undecided, unless an algorithm
        decides on what it knows of the crowd alone (crowd-prior after a pilot)."""
        return Decision.UNDECIDED, self._availability_reason(arm) or "no answers yet"

    def _describe(self) -> Result:
        above = self._above()
        estimates, shares = self._estimate()
        lows, highs = self._interval()
        # Without an estimate (no answers), the interval is the whole reward range.
        known = np.isfinite(estimates)
        lows = np.where(known, np.maximum(lows, self.lower), self.lower).tolist()
        highs = np.where(known, np.minimum(highs, self.upper), self.upper).tolist()
        counts, pendings = self.stats.count.tolist(), self.pending[: self.n_arms].tolist()
        share_of = None if shares is None else shares.tolist()
        values = estimates.tolist()
        lines: list[WorkerResult] = []
        for rank, arm in enumerate(_ranked_arms(estimates).tolist(), start=1):
            estimate = values[arm] if known[arm] else math.nan
            share = None if share_of is None else share_of[arm] if counts[arm] else math.nan
            low, high, pending = lows[arm], highs[arm], pendings[arm]
            if counts[arm] == 0:
                decision, reason = self._decide_unanswered(arm)
                lines.append(
                    WorkerResult(
                        arm, estimate, low, high, 0, pending, decision, decision, reason, rank,
                        share=share,
                    )
                )  # fmt: skip
                continue
            leaning = Decision.ABOVE if above[arm] else Decision.BELOW
            decision, reason = self._decide(arm, leaning)
            lines.append(
                WorkerResult(
                    arm, estimate, low, high, counts[arm], pending, decision, leaning, reason,
                    rank, estimate - self.threshold, share,
                )
            )  # fmt: skip
        theta = self.threshold
        return self._result(
            tuple(lines),
            threshold=Threshold(theta, theta, theta),
            extra={"threshold": theta, "fixed_budget": self.fixed_budget},
        )


def take_changes(log: list[int] | None) -> tuple[IntArray | None, list[int]]:
    """``verdict_changes`` over a method's log of moved workers: None at the first look (from
    then on the log keeps them), else the workers logged since, each once, in index order;
    with the log to keep next."""
    if log is None:
        return None, []
    return np.unique(np.asarray(log, dtype=np.int64)), []


def _ranked_arms(estimates: FloatArray) -> IntArray:
    """Workers in rank order: estimate descending, workers without answers (no finite
    estimate) last, ties by worker index (a stable sort; -0.0 and 0.0 tie, as in Python)."""
    key = np.where(np.isfinite(estimates), -estimates, np.inf)
    return np.argsort(key, kind="stable").astype(np.int64)
