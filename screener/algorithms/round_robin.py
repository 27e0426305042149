"""Round-Robin (RR) and the Naive Round-Robin baseline (NRR) of Zhuang, Wang, Wang, NIPS 2017."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from screener.algorithms.ksigma import KSigmaAlgorithm
from screener.arrays import IntArray

__all__ = ["NaiveRoundRobin", "RoundRobin"]


class RoundRobin(KSigmaAlgorithm):
    """RR (Algorithm 1): pull every worker in turn until no worker is active.

    Each worker is pulled once first (the cursor starts at worker 0), then the cycle goes on
    over every available worker, active or not, because every mean feeds the threshold (so a
    worker below ``min_answers`` keeps being asked like every other).

    Pending pulls: the schedule does not depend on answers, so asking again while pulls are in
    flight simply continues the cycle. The stopping condition is checked at each ``ask`` on the
    answers that arrived; with batches of B pulls the run may overshoot the sequential stopping
    time by at most B - 1 pulls, and the guarantee holds at any stopping time (the intervals
    hold at every T at once: see ``KSigmaAlgorithm``).

    Examples
    --------
    >>> from screener import BernoulliRewards, simulate, synthetic_pool
    >>> pool = synthetic_pool(10, 1, seed=3)  # w08 answers 46% right, the others 79-89%
    >>> rr = RoundRobin(len(pool), k=1.5, direction="low", seed=0)
    >>> result = simulate(rr, BernoulliRewards(pool.accuracies, seed=1)).named(pool.workers)
    >>> [result.name(arm) for arm in result.outliers], result.total_pulls
    (['w08'], 7930)
    """

    name = "rr"

    def __init__(self, n_workers: int, **kwargs: Any) -> None:
        super().__init__(n_workers, **kwargs)
        self._cursor = 0

    def _schedule(self, limit: int) -> IntArray:
        if limit == 1:
            arm = self._next_available(self._cursor)
            if arm < 0:
                return np.empty(0, dtype=np.int64)
            self._cursor = arm + 1
            return np.array([arm], dtype=np.int64)
        candidates = self._available_arms()
        if candidates.size == 0:
            return candidates.copy()
        start = int(np.searchsorted(candidates, self._cursor)) % candidates.size
        picks = candidates[(start + np.arange(limit)) % candidates.size]
        self._cursor = int(picks[-1]) + 1
        return picks.astype(np.int64)


class NaiveRoundRobin(RoundRobin):
    """NRR baseline (Section 5.2): round robin until the estimated outlier set has not changed
    during the last ``ceil(1 / delta)`` consecutive pulls.

    No confidence guarantee: the paper shows it falls short of 1 - delta. The check runs at
    each ``ask``; with batched asks the set is compared between asks, so a change that reverts
    within one batch goes unseen (with batch size 1 this is exactly the paper's rule).

    Examples
    --------
    The baseline stops as soon as its guess has been stable for a while, with no guarantee:
    here after 20 pulls, with the wrong worker.

    >>> from screener import BernoulliRewards, simulate, synthetic_pool
    >>> pool = synthetic_pool(10, 1, seed=3)
    >>> nrr = NaiveRoundRobin(len(pool), k=1.5, direction="low", seed=0)
    >>> result = simulate(nrr, BernoulliRewards(pool.accuracies, seed=1)).named(pool.workers)
    >>> [result.name(arm) for arm in result.outliers], result.total_pulls
    (['w09'], 20)
    """

    name = "nrr"
    guarantee = None

    def __init__(self, n_workers: int, **kwargs: Any) -> None:
        super().__init__(n_workers, **kwargs)
        self.patience = math.ceil(1.0 / self.delta)
        self._last_set: bytes | None = None
        self._stable_since = 0

    def _before_ask(self) -> None:
        # The set is compared between asks only: result() refreshes the estimates too, and
        # taking a result must not change when NRR stops (nor what a replay reproduces).
        self._ensure_fresh()
        current = (self.means > self.theta).tobytes() if math.isfinite(self.theta) else None
        if current != self._last_set:
            self._last_set = current
            self._stable_since = self.stats.n_samples

    def _condition_met(self) -> bool:
        stable_for = self.stats.n_samples - self._stable_since
        return self._warmed_up and self._last_set is not None and stable_for >= self.patience

    def _can_progress(self) -> bool:
        return bool(self.available.any())

    def _decided_reason(self, condition_met: bool) -> str:
        return "estimate clear of the threshold estimate (heuristic, no guarantee)"

    def _is_decided(self, arm: int, condition_met: bool) -> bool:
        # Once its rule fires NRR returns the estimated set: every worker by its estimate.
        return condition_met or not self.active[arm]
