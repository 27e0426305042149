"""The pending-aware index scheduler the thresholding algorithms share.

Each worker has a priority (a key, lowest pulled first) computed from its answered mean and
its *effective* count ``T_i = answered_i + pending_i``: pulls in flight count as pulls already
made, their answers not yet in the mean. A batch is chosen one pull at a time: the chosen
worker's effective count goes up by one and only its key is recomputed, so ``ask(k)`` hands
out exactly what k calls of ``ask(1)`` with no tell between would. An infinite key holds a
worker back; ties go to the lowest worker index.

Three ways to the same picks: ``heap_picks`` (one pop per pull), ``fill_at_once`` (the same
picks in one vectorised pass, when every worker's keys never fall as its pulls in flight
grow) and, for the room an index leaves, ``surely_needed`` (pulls below each worker's
horizon, which any answers would need).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from screener.arrays import BoolArray, FloatArray, IntArray

__all__ = ["FirstKeys", "Priority", "fill_at_once", "heap_picks", "surely_needed"]

#: Keys of ``arms`` at effective counts ``effective`` (lowest pulled first, +inf: hold back).
Priority = Callable[[IntArray, FloatArray], FloatArray]

#: Most keys (workers x pulls each) a batch is filled from in one pass; beyond, the heap.
_FILL_GRID = 1 << 21
_FIRST_DEPTH = 4  # the key grid's first depth (pulls in flight per worker)


def heap_picks(
    arms: IntArray, keys: FloatArray, limit: int, next_key: Callable[[int, int], float]
) -> IntArray:
    """Up to ``limit`` picks, lowest (key, worker) first; after each pick its worker's key
    is ``next_key(worker, pulls picked for it so far)``."""
    if limit == 1:  # the heap, short-cut: argmin takes the first (lowest) arm on ties
        best = int(np.argmin(keys)) if keys.size else 0
        if keys.size == 0 or keys[best] == math.inf:
            return np.empty(0, dtype=np.int64)
        return arms[best : best + 1]
    heap = [(k, a) for k, a in zip(keys.tolist(), arms.tolist(), strict=True) if k < math.inf]
    heapq.heapify(heap)
    picked: dict[int, int] = {}
    picks: list[int] = []
    pop, push_pop, inf = heapq.heappop, heapq.heappushpop, math.inf  # once, not once a pick
    top = pop(heap) if heap and limit > 0 else None
    while top is not None:
        arm = top[1]
        picks.append(arm)
        if len(picks) == limit:
            break
        count = picked[arm] = picked.get(arm, 0) + 1
        key = next_key(arm, count)
        if key < inf:  # push it and pop the smallest in one step (often it again)
            top = push_pop(heap, (key, arm))
            continue
        top = pop(heap) if heap else None  # held back: the next smallest, if any
    return np.array(picks, dtype=np.int64)


def fill_at_once(
    priority: Priority, arms: IntArray, effective: FloatArray, limit: int
) -> IntArray | None:
    """The heap's picks in one pass, when each worker's keys never decrease as its
    pulls in flight grow (true of every index here; checked, else None and the heap
    runs): the heap then pops the ``limit`` smallest (key, worker) pairs among each
    worker's keys up to its first hold (infinite key).

    The keys are computed a few pulls deep, then deeper only for the workers still open
    at the last depth whose last pair comes before the ``limit``-th smallest found:
    most indexes hold a worker after one or two pulls in flight, and LSA (which never
    holds one) sends only the workers near the bar deep, so few keys are computed."""
    if arms.size == 0:
        return None
    pairs = _Pairs(limit)
    start, depth = 0, min(limit, _FIRST_DEPTH)
    last: FloatArray | None = None  # the open workers' keys at the last depth computed
    while pairs.size + arms.size * (depth - start) <= _FILL_GRID:
        steps = np.arange(start, depth, dtype=np.float64)
        grid_arms = np.repeat(arms, depth - start)
        keys = priority(grid_arms, (effective[:, None] + steps).ravel())
        keys = keys.reshape(arms.size, depth - start)
        open_ = ~np.logical_or.accumulate(keys == math.inf, axis=1)
        joined = keys if last is None else np.column_stack([last, keys])
        with np.errstate(invalid="ignore"):  # -inf to -inf: no decrease
            falling = np.diff(joined, axis=1) < 0.0
        if (falling & open_[:, open_.shape[1] - falling.shape[1] :]).any():
            return None  # a key falls to a pair still open
        pairs.add(keys[open_], grid_arms[open_.ravel()])
        deeper = open_[:, -1] & pairs.precede_kth(keys[:, -1], arms)
        if depth == limit or not deeper.any():
            return pairs.smallest()
        arms, effective, last = arms[deeper], effective[deeper], keys[deeper, -1]
        start, depth = depth, min(limit, 4 * depth)
    return None


def surely_needed(
    room: int,
    pending: IntArray,
    answered: IntArray,
    available: BoolArray,
    horizon: NDArray[np.int64],
) -> IntArray:
    """Up to ``room`` further pulls below each worker's horizon, the worker with the
    fewest pulls in flight first (then the fewest answers and pulls, then the lowest
    index): one ``ask(1)`` at a time would pick them in this order, since each pick
    only raises its own worker's key."""
    effective = answered + pending
    spare = np.where(available, horizon - effective, 0)
    arms = np.flatnonzero(spare > 0)
    if arms.size == 0:
        return np.empty(0, dtype=np.int64)
    depth = int(spare[arms].max())
    steps = np.arange(depth, dtype=np.int64)
    rows = np.repeat(arms, depth)
    keep = (steps[None, :] < spare[arms, None]).ravel()
    rows, extra = rows[keep], np.tile(steps, arms.size)[keep]
    order = np.lexsort((rows, effective[rows] + extra, pending[rows] + extra))
    return np.asarray(rows[order[:room]], dtype=np.int64)


class _Pairs:
    """(key, worker) pairs found by ``fill_at_once``, taken in the heap's order (key, then
    worker): a partition finds the ``limit``-th smallest pair once per batch of pairs added,
    and only the pairs up to it are ever sorted."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.keys: FloatArray = np.empty(0)
        self.arms: IntArray = np.empty(0, dtype=np.int64)
        self._kth: tuple[float, int] | None = None  # the limit-th smallest pair, when found

    @property
    def size(self) -> int:
        return self.keys.size

    def add(self, keys: FloatArray, arms: IntArray) -> None:
        self.keys = np.concatenate([self.keys, keys])
        self.arms = np.concatenate([self.arms, arms])
        self._kth = None
        if self.keys.size >= self.limit:
            kth = np.partition(self.keys, self.limit - 1)[self.limit - 1]
            before = int(np.count_nonzero(self.keys < kth))
            tied = np.sort(self.arms[self.keys == kth])
            self._kth = (float(kth), int(tied[self.limit - 1 - before]))

    def precede_kth(self, keys: FloatArray, arms: IntArray) -> BoolArray:
        """Per pair, whether it comes before the ``limit``-th smallest pair found (all True
        while fewer are found). A worker whose last pair does not can be left: its further
        keys are no smaller, and the ``limit``-th pair only falls as pairs come."""
        if self._kth is None:
            return np.ones(keys.size, dtype=bool)
        key, arm = self._kth
        return np.asarray((keys < key) | ((keys == key) & (arms < arm)))

    def smallest(self) -> IntArray:
        """The workers of the ``limit`` smallest pairs (all pairs if fewer), in order."""
        keys, arms = self.keys, self.arms
        if self._kth is not None:
            up_to = self.precede_kth(keys, arms) | ((keys == self._kth[0]) & (arms == self._kth[1]))
            keys, arms = keys[up_to], arms[up_to]
        return np.asarray(arms[np.lexsort((arms, keys))[: self.limit]], dtype=np.int64)


class FirstKeys:
    """Each open worker's key at its current count (its *first* key), in a lazy heap: the
    ``limit`` smallest (key, worker) pairs name every worker a batch of ``limit`` picks can
    take, so ``heap_picks`` or ``fill_at_once`` among them alone gives the picks among all.

    Why: one pick at a time, the j-th pick's key is at most the j-th smallest first key (of
    the j workers with the smallest, one is not yet picked and still offers its first key),
    so a worker picked first at step j has a first key no larger than the ``limit``-th
    smallest one; a worker picked again was picked first before.

    Lazy: a worker's stored key may be below its current one (its count rose: a pull asked,
    a key that only grows with the count); ``smallest`` checks the keys it pops against
    ``current`` and puts a risen one back in line. A worker whose key may have fallen (new
    answers, a released pull, back from leaving, joined) must be entered again (``enter``).
    An infinite key (held back) leaves the heap until the worker is entered again.
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int]] = []
        self._key: dict[int, float] = {}

    def enter(self, arms: IntArray, keys: FloatArray) -> None:
        """``arms`` with their current keys."""
        for arm, key in zip(arms.tolist(), keys.tolist(), strict=True):
            if key == math.inf:
                self._key.pop(arm, None)
            elif self._key.get(arm) != key:
                self._key[arm] = key
                heapq.heappush(self._heap, (key, arm))

    def smallest(self, limit: int, current: Callable[[IntArray], FloatArray]) -> IntArray:
        """The workers of the ``limit`` smallest current (key, worker) pairs, ``current``
        giving the keys of the workers popped (+inf for those held back or gone)."""
        heap, key_of = self._heap, self._key
        found: list[tuple[float, int]] = []
        seen: set[int] = set()  # a worker's key can come back to an old entry's: one each
        while len(found) < limit and heap:
            popped: list[tuple[float, int]] = []
            while heap and len(found) + len(popped) < limit:
                key, arm = heapq.heappop(heap)
                if key_of.get(arm) == key and arm not in seen:  # else superseded
                    popped.append((key, arm))
                    seen.add(arm)
            arms = np.fromiter((arm for _, arm in popped), dtype=np.int64, count=len(popped))
            for (key, arm), now in zip(popped, current(arms).tolist(), strict=True):
                if now == key:
                    found.append((key, arm))
                elif now == math.inf:
                    del key_of[arm]
                else:  # risen: back in line at its key
                    key_of[arm] = now
                    heapq.heappush(heap, (now, arm))
                    seen.discard(arm)
        for pair in found:
            heapq.heappush(heap, pair)
        if len(heap) > 4 * len(key_of) + 64:  # mostly superseded entries: rebuild
            self._heap = [(key, arm) for arm, key in key_of.items()]
            heapq.heapify(self._heap)
        return np.fromiter((arm for _, arm in found), dtype=np.int64, count=len(found))
