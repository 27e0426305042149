"""Uniform thresholding: the fixed-budget baseline that pulls the workers in turn."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._test_setups import AROUND_MEANS, BAR, AlgorithmSetup
from screener.algorithms.result import Result
from screener.algorithms.thresholding._base import NO_CONFIDENCE, ThresholdingAlgorithm
from screener.arrays import FloatArray, IntArray

__all__ = ["UniformThresholding"]


class UniformThresholding(ThresholdingAlgorithm):
    """Uniform baseline: pull the workers in turn until the budget is spent.

    The next pull goes to the worker with the fewest pulls, counting pending ones (ties to the
    lowest index): with answers coming back this is round robin 0, 1, ..., n-1, 0, ...; with
    pulls in flight or released it keeps the counts balanced. The mean is not used, so a
    worker whose answers are in flight is asked again when its turn comes.

    Cost: a turn counter, no work per pull. The rule above is a cycle over the available
    workers: a released pull is reissued first (``Algorithm.release``), so the effective
    counts of the available workers differ only by whose turn has come, and a worker who
    leaves drops out of the cycle. The means are computed for the result only.

    Examples
    --------
    On six simulated workers (three workers under the bar of 0.5, three over it):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.2, 0.35, 0.45, 0.65, 0.75, 0.9]
    >>> algorithm = UniformThresholding(6, threshold=0.5, budget=600, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('budget spent', 600)
    >>> [w.decision.value for w in sorted(result.workers, key=lambda w: w.arm)]
    ['below', 'below', 'below', 'above', 'above', 'above']
    """

    name = "uniform-thresholding"
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (AlgorithmSetup(BAR, means=AROUND_MEANS),)
    needs_answers = False
    guarantee: ClassVar[str | None] = (
        f"fixed budget: equal pulls per worker, each classified by its estimate; {NO_CONFIDENCE}"
    )

    def __init__(self, n_workers: int, **kwargs: Any) -> None:
        super().__init__(n_workers, **kwargs)
        self._cycle: IntArray = np.arange(self.n_arms, dtype=np.int64)  # available, in order
        self._turn = 0  # position in the cycle of the worker whose turn is next
        self._departed = 0  # workers unavailable when the cycle was built

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        """The rule as an index (fewest effective pulls first); ``_schedule`` keeps it by turns."""
        return effective.copy()

    def _refresh(self) -> None:
        """Nothing to do per answer: the schedule ignores the answers."""

    def _schedule(self, limit: int) -> IntArray:
        if len(self.unavailable_reason) != self._departed:
            self._drop_departed()
        turn, size = self._turn, self._cycle.size
        if limit == 1:
            picks = self._cycle[turn : turn + 1].copy()
        else:
            picks = self._cycle[(turn + np.arange(limit)) % size]
        self._turn = (turn + limit) % size
        return picks

    def _schedule1(self) -> int:
        """``_schedule(1)`` as a scalar: the worker whose turn it is."""
        if len(self.unavailable_reason) != self._departed:
            self._drop_departed()
        turn = self._turn
        self._turn = (turn + 1) % self._cycle.size
        return self._cycle.item(turn)

    def _on_joined(self, arms: IntArray) -> None:
        super()._on_joined(arms)
        self._cycle = np.concatenate([self._cycle, arms])  # newcomers take their turns last

    def _on_returned(self, arm: int) -> None:
        self._departed = -1  # rebuild the cycle with the worker back in its place

    def verdicts(self) -> NDArray[np.int8]:
        super()._refresh()  # the means, which the schedule does not keep
        return super().verdicts()

    def _drop_departed(self) -> None:
        """Rebuild the cycle without the workers who left; the next turn stays with the first
        available worker at or after the one whose turn it was."""
        due = int(self._cycle[self._turn])
        self._cycle = np.flatnonzero(self.available).astype(np.int64)
        self._departed = len(self.unavailable_reason)
        self._turn = int(np.searchsorted(self._cycle, due)) % max(self._cycle.size, 1)

    def _describe(self) -> Result:
        super()._refresh()  # the means, for the result lines only
        return super()._describe()
