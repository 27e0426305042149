"""The Naive Round-Robin baseline (NRR) of Zhuang, Wang, Wang, NIPS 2017 (Section 5.2)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from screener.algorithms._test_setups import HOEFFDING, KSIGMA, OUTLIER_MEANS, AlgorithmSetup
from screener.algorithms.ksigma.round_robin import RoundRobin

__all__ = ["NaiveRoundRobin"]


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
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup({**KSIGMA, "delta": 0.05}, means=OUTLIER_MEANS),
        AlgorithmSetup({**HOEFFDING, "delta": 0.05}, means=OUTLIER_MEANS, label="hoeffding"),
    )
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
