"""Weighted Round-Robin (WRR) of Zhuang, Wang, Wang, NIPS 2017 (Algorithm 2)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

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
from screener.algorithms.ksigma.intervals import NEAR_AT_MOST
from screener.arrays import BoolArray, FloatArray, IntArray
from screener.errors import ConfigError

__all__ = ["WeightedRoundRobin", "optimal_rho"]


def optimal_rho(n_arms: int, lk: float) -> float:
    """rho* = (n - 1)^(2/3) / l(k)^(1/3), Eq. (6), floored at 1 (rho must be >= 1)."""
    return max(1.0, float((n_arms - 1) ** (2.0 / 3.0) / lk ** (1.0 / 3.0)))


class WeightedRoundRobin(KSigmaAlgorithm):
    """WRR: round robin where an active worker is pulled about rho times as often.

    Each worker has a counter c_i. After the first pull of every worker, a visit to worker i
    (a "regular pull") adds rho to c_i; while i is active and m_i < c_i the algorithm stays on
    i for "extra pulls", then moves on. ``rho`` defaults to rho* of Eq. (6).

    Pending pulls: m_i counts answered plus pending pulls of i (so answers in flight are not
    ordered twice), and "active" is the status at the last check, i.e. on the answers that had
    arrived when ``ask`` was called. The visit that ends a batch (cut short or not) continues
    at the next ``ask`` while the worker is active and m_i < c_i, re-checked on the answers
    then. Unsampled workers count as active (so do workers below ``min_answers``, which get
    their extra pulls until they have that many answers). With one pull per ask and immediate
    answers this is exactly Algorithm 2; with batches of B, visits inside a batch use the
    activity known when the batch was asked.

    Lockstep: ``screener.algorithms.ksigma.lockstep`` restates this step over many runs at once
    (for ``screener plan``); tests/algorithms/ksigma/test_lockstep_ksigma.py binds the two ask
    by ask, so a change to this step (or to ``KSigmaAlgorithm``'s activity) is made there too.

    Examples
    --------
    The same outlier as Round-Robin finds on this pool, with fewer pulls:

    >>> from screener import BernoulliRewards, simulate, synthetic_pool
    >>> pool = synthetic_pool(10, 1, seed=3)
    >>> wrr = WeightedRoundRobin(len(pool), k=1.5, direction="low", seed=0)
    >>> result = simulate(wrr, BernoulliRewards(pool.accuracies, seed=1)).named(pool.workers)
    >>> [result.name(arm) for arm in result.outliers], result.total_pulls
    (['w08'], 5910)
    """

    name = "wrr"
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup(KSIGMA, means=OUTLIER_MEANS),
        AlgorithmSetup({**HOEFFDING, "rho": 1.0}, means=OUTLIER_MEANS, label="rho-1-hoeffding"),
        AlgorithmSetup({**KSIGMA, "rho": 4.0}, means=OUTLIER_MEANS, label="rho-4"),
        AlgorithmSetup({**TO_THE_END, "rho": 2.5}, means=CLEAR_MEANS, label="rho-2.5-to-the-end"),
    )

    def __init__(self, n_workers: int, *, rho: float | None = None, **kwargs: Any) -> None:
        super().__init__(n_workers, **kwargs)
        if rho is not None and not (math.isfinite(rho) and rho >= 1.0):
            raise ConfigError(f"rho must be a finite number >= 1, got {rho}", "omit it for rho*")
        self.rho_given = rho
        self.rho = float(rho) if rho is not None else optimal_rho(self.n_arms, self.lk)
        self.counters = np.zeros(self.n_arms, dtype=np.float64)
        self._cursor = RoundRobinCursor()
        self._current = -1  # worker whose visit was cut short by a batch limit

    def _param_value(self, name: str) -> Any:
        # rho as given (None: rho*, recomputed on rebuild), not the value in use.
        return self.rho_given if name == "rho" else super()._param_value(name)

    def _schedule(self, limit: int) -> IntArray:
        if limit == 1:
            arm = self._schedule1()
            return np.array([arm] if arm >= 0 else [], dtype=np.int64)
        effective = (self.stats.count + self.pending).astype(np.float64)
        chunks: list[IntArray] = []
        remaining = limit - self._continue_visit(limit, effective, chunks)
        while remaining > 0:
            taken = self._visit_cycle(remaining, effective, chunks)
            if taken == 0:
                break
            remaining -= taken
        if not chunks:
            return np.empty(0, dtype=np.int64)
        return np.concatenate(chunks)

    def _schedule1(self) -> int:
        """``_schedule(1)`` in O(1) (the same pull; -1 for none): the visit goes on while the
        worker is active and short of its counter, else the next available worker's visit
        starts."""
        arm = self._current
        self._current = -1
        if arm >= 0 and self.available[arm]:
            effective = float(self.stats.count[arm] + self.pending[arm])
            wanted = math.ceil(float(self.counters[arm]) - effective)
            if wanted > 0 and self._activity_of(arm):
                self._current = arm if wanted > 1 else -1
                return arm
        arm = self._cursor.next_one(self._available_arms())
        if arm < 0:
            return -1
        effective = float(self.stats.count[arm] + self.pending[arm])
        counter = float(self.counters[arm]) + (0.0 if effective == 0 else self.rho)
        self._current = arm if effective + 1.0 < counter else -1
        self.counters[arm] = counter
        return arm

    def _continue_visit(self, limit: int, effective: np.ndarray, chunks: list[IntArray]) -> int:
        arm = self._current
        self._current = -1
        if arm < 0 or not self.available[arm]:
            return 0
        wanted = math.ceil(float(self.counters[arm] - effective[arm]))
        if wanted <= 0 or not self._activity_of(arm):
            return 0
        take = min(limit, wanted)
        chunks.append(np.full(take, arm, dtype=np.int64))
        effective[arm] += take
        if take < wanted:
            self._current = arm
        return take

    def _active_visits(self, visits: IntArray, wanted: FloatArray, remaining: int) -> BoolArray:
        """Which ``visits`` get the extra pulls they want: the active ones. While the whole
        activity is not computed, a small cycle asks worker by worker (``_activity_of``) in
        visit order, and stops where the batch of ``remaining`` pulls fills: the visits past
        it are not made, so their activity is never read."""
        if self._active is not None or visits.size > NEAR_AT_MOST:
            return np.asarray(self.active[visits] & (wanted > 0.0))
        active = np.zeros(visits.size, dtype=bool)
        scheduled = 0
        for i, (arm, extra) in enumerate(zip(visits.tolist(), wanted.tolist(), strict=True)):
            active[i] = extra > 0.0 and self._activity_of(arm)
            scheduled += 1 + int(extra) if active[i] else 1
            if scheduled >= remaining:
                break
        return active

    def _visit_cycle(self, remaining: int, effective: np.ndarray, chunks: list[IntArray]) -> int:
        """Visit up to one full cycle of available workers; returns the pulls scheduled."""
        candidates = self._available_arms()
        if candidates.size == 0:
            return 0
        visits = self._cursor.upcoming(candidates, min(remaining, candidates.size))
        first_pull = effective[visits] == 0
        counters = self.counters[visits] + np.where(first_pull, 0.0, self.rho)
        wanted = np.where(
            first_pull, 0.0, np.maximum(0.0, np.ceil(counters - effective[visits] - 1.0))
        )
        extra = np.where(self._active_visits(visits, wanted, remaining), wanted, 0.0)
        sizes = 1 + extra.astype(np.int64)
        ends = np.cumsum(sizes)
        last = int(np.searchsorted(ends, remaining, side="left"))
        if last >= visits.size:
            last = visits.size - 1
        elif ends[last] > remaining:
            sizes[last] -= int(ends[last] - remaining)  # the batch ends inside this visit
        # The visit that ends the batch is re-examined at the next ask, on fresh answers:
        # the paper checks "active" after each pull, so a worker that turned active on its
        # regular pull still gets its extra pulls (with batch 1 this is Algorithm 2 exactly).
        # (Reset otherwise: a pointer left by an earlier full cycle of this batch is stale.)
        unfinished = effective[visits[last]] + sizes[last] < counters[last]
        self._current = int(visits[last]) if unfinished else -1
        used = visits[: last + 1]
        sizes = sizes[: last + 1]
        self.counters[used] = counters[: last + 1]
        effective[used] += sizes
        self._cursor.move_past(int(used[-1]))
        chunks.append(np.repeat(used, sizes).astype(np.int64))
        return int(sizes.sum())
