"""Round robin over the open workers, kept in a heap: a batch costs its pulls, not the pool.

``water_fill`` finds a batch's round-robin pulls with a few passes over every open worker; a
method that asks a batch after every answer then does work in the number of workers on every
answer (issue 50). ``RoundRobinQueue`` keeps the open workers in a heap of (effective pulls,
worker) and pops the batch. (Crowd-prior's ``FewestFirst`` orders by answers among workers with
nothing in flight, one pick each; here pulls in flight count, and a worker may take several
picks of one batch.)
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

__all__ = ["RoundRobinQueue"]


class RoundRobinQueue:
    """Workers ordered by effective pulls (answered + in flight), fewest first, ties to the
    lowest index: ``take(limit)`` gives what ``limit`` calls of ask(1) with no answer between
    would (each pick raises its own worker's count by one), the picks ``water_fill`` gives.

    The heap is lazy: an entry is valid while it is its worker's latest (``_key``); entries of
    workers no longer open are dropped when they come up, and a worker whose count rose
    outside ``take`` (a question asked for it alone, a retried pull) is put back at its count
    when its entry comes up too low. Counts never fall for an open worker except on a released
    pull, whose worker is entered again (``enter``). A worker that opens (joins, comes back,
    leaves a list) is entered with its count.
    """

    def __init__(self, size: int = 0) -> None:
        self._heap: list[tuple[int, int]] = [(0, arm) for arm in range(size)]
        self._key: dict[int, int] = dict.fromkeys(range(size), 0)

    def enter(self, arm: int, effective: int) -> None:
        """``arm`` is open at ``effective`` pulls (a no-op when its entry says so already)."""
        if self._key.get(arm) != effective:
            self._key[arm] = effective
            heapq.heappush(self._heap, (effective, arm))

    def take(
        self, limit: int, is_open: Callable[[int], bool], effective: Callable[[int], int]
    ) -> list[int]:
        """Up to ``limit`` picks in round-robin order among the workers ``is_open`` admits,
        each at its ``effective`` count (before this batch)."""
        heap, key_of = self._heap, self._key
        picked: dict[int, int] = {}
        picks: list[int] = []
        while heap and len(picks) < limit:
            key, arm = heap[0]
            if key_of.get(arm) != key:  # superseded by a later entry
                heapq.heappop(heap)
                continue
            if not is_open(arm):
                heapq.heappop(heap)
                del key_of[arm]
                continue
            now = effective(arm) + picked.get(arm, 0)
            if key != now:  # its count rose outside the heap: in line at its count
                key_of[arm] = now
                heapq.heapreplace(heap, (now, arm))
                continue
            picks.append(arm)
            picked[arm] = picked.get(arm, 0) + 1
            key_of[arm] = key + 1
            heapq.heapreplace(heap, (key + 1, arm))
        if len(heap) > 4 * len(key_of) + 64:  # mostly superseded entries: rebuild
            self._heap = [(key, arm) for arm, key in key_of.items()]
            heapq.heapify(self._heap)
        return picks
