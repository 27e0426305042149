"""The round-robin cursor: where a cycle over the workers resumes."""

from __future__ import annotations

import numpy as np

from screener.arrays import IntArray

__all__ = ["RoundRobinCursor"]


class RoundRobinCursor:
    """A cycle over candidate workers that resumes after the last worker visited.

    The candidates may change between visits (workers leave, get decided): each call takes
    the current ones, in index order, and starts from the first at or after the worker after
    the last one visited, wrapping around.

    Examples
    --------
    >>> import numpy as np
    >>> cursor = RoundRobinCursor()
    >>> cursor.take(np.array([0, 2, 3]), 4).tolist()
    [0, 2, 3, 0]
    >>> cursor.next_one(np.array([1, 3])), cursor.next_one(np.array([0, 2]))
    (1, 2)
    """

    def __init__(self) -> None:
        self.position = 0  # the worker a cycle starts looking at

    def upcoming(self, candidates: IntArray, count: int) -> IntArray:
        """The next ``count`` candidates in turn (repeating when fewer), the cursor left where
        it is; ``candidates`` in index order and not empty."""
        start = int(np.searchsorted(candidates, self.position)) % candidates.size
        return candidates[(start + np.arange(count)) % candidates.size]

    def take(self, candidates: IntArray, count: int) -> IntArray:
        """``upcoming``, with the cursor moved past the last one (empty: no candidates)."""
        if candidates.size == 0:
            return np.empty(0, dtype=np.int64)
        if count == 1:
            return np.array([self.next_one(candidates)], dtype=np.int64)
        picks = self.upcoming(candidates, count)
        self.move_past(int(picks[-1]))
        return picks.astype(np.int64)

    def next_one(self, candidates: IntArray) -> int:
        """The next candidate, with the cursor moved past it (-1: no candidates)."""
        if candidates.size == 0:
            return -1
        arm = int(candidates[int(np.searchsorted(candidates, self.position)) % candidates.size])
        self.position = arm + 1
        return arm

    def move_past(self, arm: int) -> None:
        """The next cycle resumes after ``arm``."""
        self.position = arm + 1
