"""Round-Robin (RR) of Zhuang, Wang, Wang, NIPS 2017 (Algorithm 1)."""

from __future__ import annotations

from typing import Any, ClassVar

from screener.algorithms._test_setups import (
    CLEAR_MEANS,
    HOEFFDING,
    KSIGMA,
    OUTLIER_MEANS,
    TO_THE_END,
    AlgorithmSetup,
)
from screener.algorithms.ksigma.algorithm import KSigmaAlgorithm
from screener.algorithms.ksigma.cursor import RoundRobinCursor
from screener.arrays import IntArray

__all__ = ["RoundRobin"]


class RoundRobin(KSigmaAlgorithm):
    """RR (Algorithm 1): pull every worker in turn until no worker is active.

    Each worker is pulled once first (the cursor starts at worker 0), then the cycle goes on
    over every available worker, active or not, because every mean feeds the threshold (so a
    worker below ``min_answers`` keeps being asked like every other).

    Pending pulls: the schedule does not depend on answers, so asking again while pulls are in
    flight simply continues the cycle. The stopping condition is checked at each ``ask`` on the
    answers that arrived; with batches of B pulls the run may overshoot the sequential stopping
    time by at most B - 1 pulls, and the guarantee holds at any stopping time (the intervals
    hold at every T at once: see ``KSigmaIntervals``).

    Lockstep: ``screener.algorithms.ksigma.lockstep`` restates this step over many runs at once
    (for ``screener plan``); tests/algorithms/ksigma/test_lockstep_ksigma.py binds the two ask
    by ask, so a change to this step (or to ``KSigmaAlgorithm``'s activity) is made there too.

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
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup(KSIGMA, means=OUTLIER_MEANS),
        AlgorithmSetup(HOEFFDING, means=OUTLIER_MEANS, label="hoeffding"),
        AlgorithmSetup(TO_THE_END, means=CLEAR_MEANS, label="to-the-end"),
    )

    def __init__(self, n_workers: int, **kwargs: Any) -> None:
        super().__init__(n_workers, **kwargs)
        self._cursor = RoundRobinCursor()

    def _schedule(self, limit: int) -> IntArray:
        return self._cursor.take(self._available_arms(), limit)
