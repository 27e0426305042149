"""Crowd-prior's schedule without reading every worker: fewest answers first, then the lowest
index, among the workers it would ask now (open, available, nothing in flight).

``FewestFirst`` keeps one heap of worker indices per answer count. A worker is pushed when
it becomes askable (an answer arrived and it is still open, it came back, it joined); an
entry is checked only when it reaches the top of its heap (stale ones, of a worker decided,
gone, in flight or answered since, are dropped there; picks stay until then, so picking is
repeatable). So an ask of k pulls costs O(k log n) amortised and an answer O(log n), at any
number of workers, with exactly the picks of the index policy over every worker
(``ThresholdingAlgorithm._index_schedule``): the k smallest (answers, index) pairs of the
askable workers.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable

__all__ = ["FewestFirst"]


class FewestFirst:
    """Askable workers by (answers, index), one lazy heap per answer count (module docstring)."""

    def __init__(self, depth: int, askable: Iterable[tuple[int, int]] = ()) -> None:
        """``depth``: the answer counts a worker can be asked at (0 to depth - 1);
        ``askable``: (worker, answers) pairs, in increasing worker order."""
        self._heaps: list[list[int]] = [[] for _ in range(depth)]
        for arm, count in askable:
            self._heaps[count].append(arm)  # increasing indices: already a heap

    def push(self, arm: int, count: int) -> None:
        """``arm``, with ``count`` answers, may be askable now."""
        heapq.heappush(self._heaps[count], arm)

    def picks(self, limit: int, askable: Callable[[int, int], bool]) -> list[int]:
        """Up to ``limit`` workers, fewest answers first then lowest index, each once, among
        those ``askable(worker, answers)`` says may be asked. Only stale entries leave the
        queue: the picks stay (so picking again gives the same picks); once asked they are
        stale, and are pushed again when they may be asked again."""
        picked: list[tuple[int, int]] = []
        chosen: set[int] = set()
        for count, heap in enumerate(self._heaps):
            while heap and len(picked) < limit:
                arm = heapq.heappop(heap)
                if arm not in chosen and askable(arm, count):
                    picked.append((arm, count))
                    chosen.add(arm)
            if len(picked) == limit:
                break
        for arm, count in picked:
            heapq.heappush(self._heaps[count], arm)
        return [arm for arm, _ in picked]
