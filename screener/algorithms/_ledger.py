"""The record of every pull an algorithm handed out: which arm, which sequence number, state."""

from __future__ import annotations

import heapq
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from screener.arrays import IntArray, grown

PENDING = 0
ANSWERED = 1
RELEASED = 2

_T = TypeVar("_T", bound=np.generic)


class PullLedger:
    """Growable arrays indexed by pull id (ids are dense: 0, 1, 2, ...).

    Sequence numbers: the j-th question put to arm i has seq j. A released (failed, timed
    out, cancelled) pull frees its seq, and the next pull of that arm takes the lowest free
    one, so the answered pulls of an arm always carry seqs 0..m-1 plus the ones in flight.
    That is what lets a seeded oracle give a resumed run exactly the same rewards.
    """

    def __init__(self, n_arms: int, capacity: int = 1024) -> None:
        self.size = 0
        self._arm = np.empty(capacity, dtype=np.int64)
        self._seq = np.empty(capacity, dtype=np.int64)
        self._state = np.empty(capacity, dtype=np.int8)
        self.next_seq = np.zeros(n_arms, dtype=np.int64)
        self._free: dict[int, list[int]] = {}
        self.n_pending = 0  # pulls in PENDING state, kept: every ask reads it
        self._views()

    def _views(self) -> None:
        """Memoryviews of the arrays, for the one-pull steps: reading or writing one number
        through one costs a fifth of a numpy scalar's. Renewed whenever an array is
        replaced; not pickled."""
        self._arm_view = self._arm.data
        self._seq_view = self._seq.data
        self._state_view = self._state.data
        self._next_view = self.next_seq.data

    def arm(self, pull_id: int) -> int:
        return self._arm_view[pull_id]

    def seq(self, pull_id: int) -> int:
        return self._seq_view[pull_id]

    def state(self, pull_id: int) -> int:
        return self._state_view[pull_id]

    def arms_of(self, pull_ids: IntArray) -> IntArray:
        return self._arm[pull_ids]

    def states_of(self, pull_ids: IntArray) -> NDArray[np.int8]:
        return self._state[pull_ids]

    def append(self, arms: IntArray) -> tuple[int, IntArray]:
        """Record new pending pulls of ``arms``; returns the first id and the seqs."""
        count = arms.size
        self._reserve(self.size + count)
        seqs = self._allocate_seqs(arms)
        first = self.size
        end = first + count
        self._arm[first:end] = arms
        self._seq[first:end] = seqs
        self._state[first:end] = PENDING
        self.size = end
        self.n_pending += count
        return first, seqs

    def append1(self, arm: int) -> tuple[int, int]:
        """``append`` of one arm in scalar steps; returns the pull's id and seq."""
        pull_id = self.size
        if pull_id == self._arm.size:
            self._reserve(pull_id + 1)
        free = self._free.get(arm) if self._free else None
        if free:
            seq = heapq.heappop(free)
            if not free:
                del self._free[arm]
        else:
            seq = self._next_view[arm]
            self._next_view[arm] = seq + 1
        self._arm_view[pull_id] = arm
        self._seq_view[pull_id] = seq
        self._state_view[pull_id] = PENDING
        self.size = pull_id + 1
        self.n_pending += 1
        return pull_id, seq

    def answer1(self, pull_id: int) -> int:
        """Mark one pending pull answered; returns its arm."""
        self._state_view[pull_id] = ANSWERED
        self.n_pending -= 1
        return self._arm_view[pull_id]

    def grow(self, count: int) -> None:
        """Make room for ``count`` more arms (workers who joined), none asked yet."""
        self.next_seq = grown(self.next_seq, count, 0)
        self._views()

    def mark(self, pull_ids: IntArray, state: int) -> None:
        """Move pending pulls ``pull_ids`` (each once) to ``state``."""
        self._state[pull_ids] = state
        self.n_pending -= pull_ids.size

    def release(self, pull_id: int) -> int:
        """Mark a pending pull released and free its seq; returns its arm."""
        arm = int(self._arm[pull_id])
        self._state[pull_id] = RELEASED
        self.n_pending -= 1
        heapq.heappush(self._free.setdefault(arm, []), int(self._seq[pull_id]))
        return arm

    def _allocate_seqs(self, arms: IntArray) -> IntArray:
        # Freed seqs of workers not asked now (e.g. workers gone for good) change nothing.
        if self._free and np.isin(arms, np.fromiter(self._free, np.int64, len(self._free))).any():
            return self._allocate_seqs_slowly(arms)
        if arms.size == 1:
            seqs = self.next_seq[arms]
            self.next_seq[arms[0]] += 1
            return seqs
        counts = np.bincount(arms, minlength=self.next_seq.size)
        seqs = self.next_seq[arms]
        if arms.size > 1 and counts.max() > 1:
            # Rank of each occurrence of an arm inside the batch, in batch order (the array
            # methods: numpy's functions of the same names cost a wrapper call each).
            order = arms.argsort(kind="stable")
            sorted_arms = arms[order]
            group_start = sorted_arms.searchsorted(sorted_arms, side="left")
            occurrence = np.empty(arms.size, dtype=arms.dtype)
            occurrence[order] = np.arange(arms.size) - group_start
            seqs = seqs + occurrence
        self.next_seq += counts
        return seqs

    def _allocate_seqs_slowly(self, arms: IntArray) -> IntArray:
        seqs = np.empty_like(arms)
        for index, arm in enumerate(arms.tolist()):
            free = self._free.get(arm)
            if free:
                seqs[index] = heapq.heappop(free)
                if not free:
                    del self._free[arm]
            else:
                seqs[index] = self.next_seq[arm]
                self.next_seq[arm] += 1
        return seqs

    def __getstate__(self) -> dict[str, object]:
        """Pickle the pulls handed out, not the spare capacity (a snapshot of a long run
        would otherwise store up to twice the ledger)."""
        state = dict(self.__dict__)
        for derived in ("n_pending", "_arm_view", "_seq_view", "_state_view", "_next_view"):
            del state[derived]  # from the arrays
        for name in ("_arm", "_seq", "_state"):
            used = state[name][: self.size]
            # In the narrowest integer type that holds them: arms and seqs rarely need more
            # than 16 bits, so a long run's snapshot shrinks about threefold.
            state[name] = used.astype(np.min_scalar_type(used.max(initial=0)))
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        capacity = max(self.size, 1024)
        self._arm = _grow(self._arm, capacity, np.int64)
        self._seq = _grow(self._seq, capacity, np.int64)
        self._state = _grow(self._state, capacity, np.int8)
        self.n_pending = int(np.count_nonzero(self._state[: self.size] == PENDING))
        self._views()

    def _reserve(self, needed: int) -> None:
        capacity = self._arm.size
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        self._arm = _grow(self._arm, capacity)
        self._seq = _grow(self._seq, capacity)
        self._state = _grow(self._state, capacity)
        self._views()


def _grow(array: NDArray[Any], capacity: int, dtype: type[_T] | None = None) -> NDArray[_T]:
    grown: NDArray[_T] = np.empty(capacity, dtype=array.dtype if dtype is None else dtype)
    grown[: array.size] = array
    return grown
