"""RR and WRR (Zhuang et al., ``RoundRobin``, ``WeightedRoundRobin``) restated over a runs
axis: many seeded runs as one computation, the runs a leading axis of every array
(``screener.algorithms.lockstep``).

The same rules and the same float operations as ``RoundRobin`` / ``WeightedRoundRobin`` with
``interval="mixture"`` (their default) and rewards in [0, 1]: the same pulls, stops and
undecided workers, ask by ask and run by run, bound so by
tests/algorithms/ksigma/test_lockstep_ksigma.py (each ask against the algorithm's own). A
change to their step is made here too, or that test fails. Configurations it does not cover
(other intervals or reward bounds, a budget under n) get no lockstep (``ksigma_lockstep``).

One ask, per live run, as ``Algorithm.ask`` of n pulls on answers all back:

1. refresh (``KSigmaAlgorithm._refresh_all``): means, every worker's Beta-mixture interval
   (``mixture_bounds``, one call for all runs), theta, and the activity (``_activity``: the
   probes where they settle every worker, else theta's box range; the enclosure per run);
2. stop when every worker has min_answers answers and none is active (CONDITION_MET), or
   when the budget is spent (BUDGET_SPENT);
3. schedule up to min(n, budget left) pulls (RR's cycle, or WRR's visits with their
   counters and the visit cut by the batch).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from screener.algorithms.base import Algorithm
from screener.algorithms.ksigma.round_robin import RoundRobin
from screener.algorithms.ksigma.weighted_round_robin import WeightedRoundRobin
from screener.algorithms.lockstep import Lockstep, LockstepAsk
from screener.arrays import BoolArray, FloatArray, IntArray
from screener.stats import (
    ksigma_threshold_bounds,
    ksigma_threshold_enclosure,
    ksigma_threshold_end,
    mixture_bounds,
    threshold_end_bracket,
)

__all__ = ["KSigmaLockstep", "ksigma_lockstep"]

_PROBES = (0.25, 0.5, 0.75, 1.0)


def ksigma_lockstep(algorithm: Algorithm) -> Callable[[int], KSigmaLockstep] | None:
    """``KSigmaLockstep`` of ``algorithm``'s configuration for a number of runs, if it is RR
    or WRR in a configuration the lockstep covers; None otherwise."""
    if not isinstance(algorithm, RoundRobin | WeightedRoundRobin):
        return None
    if type(algorithm).name not in ("rr", "wrr"):  # a subclass registered under its own name
        return None
    if algorithm.interval != "mixture" or (algorithm.lower, algorithm.upper) != (0.0, 1.0):
        return None
    if algorithm.budget is None or algorithm.budget < algorithm.n_arms:  # all answer at first
        return None
    probe = algorithm
    return lambda runs: KSigmaLockstep(probe, runs)


class KSigmaLockstep(Lockstep):
    """``runs`` runs of ``probe``'s configuration (RR or WRR) in lockstep."""

    def __init__(self, probe: RoundRobin | WeightedRoundRobin, runs: int) -> None:
        n = probe.n_arms
        super().__init__(runs, n)
        self.probe = probe
        self.k = probe.k
        self.level = probe.delta / n
        self.flip = probe.direction == "low"
        self.weighted = isinstance(probe, WeightedRoundRobin)
        self.rho = probe.rho if isinstance(probe, WeightedRoundRobin) else 0.0
        self.counters = np.zeros((runs, n))
        self.cursor = np.zeros(runs, dtype=np.int64)
        self.current = np.full(runs, -1, dtype=np.int64)

    # ---------------------------------------------------------------------------- an ask
    def ask(self, live: IntArray) -> LockstepAsk:
        count = self.count[live]
        active, warmed_up = self.activity(count, self.total[live])
        pulled = count.sum(axis=1)
        room = int(self.probe.budget or 0) - pulled
        met = warmed_up & ~active.any(axis=1)
        spent = ~met & (room <= 0)
        going = ~(met | spent)
        sizes = np.zeros((0, self.n), dtype=np.int64)
        if going.any():
            limit = np.minimum(self.n, room[going])
            sizes = (
                self.weighted_schedule(live[going], active[going], limit)
                if self.weighted
                else self.cycle(live[going], limit)
            )
        undecided = (count == 0) | active
        return LockstepAsk(met, spent, undecided, None, self.pulls(live[going], sizes))

    def activity(self, count: IntArray, total: FloatArray) -> tuple[BoolArray, BoolArray]:
        """``KSigmaAlgorithm._refresh_all`` for these runs: the activity, and whether each run
        is warmed up (every worker has min_answers answers)."""
        runs, n = count.shape
        sampled = count > 0
        held_back = count < self.probe.min_answers
        warmed_up = ~held_back.any(axis=1) & sampled.any(axis=1)
        m = count.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            y = total / count
        sums = np.clip(total, 0.0, m)  # (total - 0 m) / 1 on [0, 1]
        lows, highs = np.zeros((runs, n)), np.ones((runs, n))
        low, high = mixture_bounds(sums[sampled], m[sampled], self.level)
        lows[sampled], highs[sampled] = low, high
        active = np.ones((runs, n), dtype=bool)  # before the first answers: everyone
        rows = np.flatnonzero(sampled.all(axis=1))  # after them (the budget covers n)
        if rows.size:
            active[rows] = self._full_activity(y[rows], lows[rows], highs[rows])
        active[held_back] = True
        return active, np.asarray(warmed_up)

    def _full_activity(self, y: FloatArray, lows: FloatArray, highs: FloatArray) -> BoolArray:
        """``_activity`` for runs whose workers all have answers."""
        k = self.k
        centre = y.mean(axis=1)
        theta = np.array(  # per run, as the algorithm has it (np.dot: BLAS's sums)
            [c + k * math.sqrt(float(np.dot(r - c, r - c)) / r.size)
             for r, c in zip(y, centre, strict=True)]
        )  # fmt: skip
        rows = zip(y, lows, highs, strict=True)
        bands = np.array([ksigma_threshold_enclosure(*row, k) for row in rows])
        above = y > theta[:, None]
        rising = k * (y - centre[:, None]) >= -y.std(axis=1)[:, None]
        toward_min = np.where(rising, lows, highs) - y
        points = np.stack(
            [np.where(rising, highs, lows), *(y + t * toward_min for t in _PROBES)], axis=1
        )
        values = points.mean(axis=2) + k * points.std(axis=2)
        reach_high = np.maximum(values[:, 0], theta)
        reach_low = np.minimum(values[:, 1:].min(axis=1), theta)
        meets = np.where(above, lows < reach_high[:, None], highs > reach_low[:, None])
        clear = np.where(above, lows >= bands[:, 1:2], highs <= bands[:, :1])
        unsettled = ~(meets | clear)
        active = meets
        boxed = np.flatnonzero(unsettled.any(axis=1))
        if boxed.size:
            box = (lows[boxed], highs[boxed], above[boxed], bands[boxed])
            active[boxed] = self._boxed_activity(*box, meets[boxed], unsettled[boxed])
        return np.asarray(active)

    def _boxed_activity(
        self,
        lows: FloatArray,
        highs: FloatArray,
        above: BoolArray,
        bands: FloatArray,
        meets: BoolArray,
        unsettled: BoolArray,
    ) -> BoolArray:
        """The activity of runs whose probes and enclosure left workers unsettled, from
        theta's interval: where they all lie on one side of theta, from that side's end
        alone, as ``KSigmaAlgorithm._threshold_end`` decides them (the others: ``meets``);
        runs it cannot tell, and runs with workers unsettled on both sides, from both ends."""
        k, active = self.k, meets.copy()
        whole = np.ones(len(lows), dtype=bool)  # runs left for both ends
        for upper in (True, False):
            side = above if upper else ~above
            rows = np.flatnonzero(~(unsettled & ~side).any(axis=1) & whole)
            if rows.size == 0:
                continue
            raw = ksigma_threshold_end(lows[rows], highs[rows], k, upper=upper)
            band = bands[rows, 1 if upper else 0]
            bound = self.probe.threshold_end_bound
            near, far = threshold_end_bracket(raw, band, upper=upper, other=bound)
            if upper:
                inside, outside = lows[rows] < near[:, None], lows[rows] >= far[:, None]
            else:
                inside, outside = highs[rows] > near[:, None], highs[rows] <= far[:, None]
            cells = unsettled[rows]
            told = (inside | outside | ~cells).all(axis=1)
            active[rows[told]] = np.where(cells[told], inside[told], meets[rows[told]])
            whole[rows[told]] = False
        rest = np.flatnonzero(whole)
        if rest.size:
            box_low, box_high = ksigma_threshold_bounds(lows[rest], highs[rest], k)
            low = np.maximum(box_low, bands[rest, 0])[:, None]
            high = np.minimum(box_high, bands[rest, 1])[:, None]
            active[rest] = np.where(above[rest], lows[rest] < high, highs[rest] > low)
        return active

    # ------------------------------------------------------------------------- schedules
    def cycle(self, live: IntArray, limit: IntArray) -> IntArray:
        """RR: ``limit`` pulls cycling on from each run's cursor; pulls per worker."""
        n = self.n
        start = self.cursor[live] % n
        behind = (np.arange(n) - start[:, None]) % n  # places after the cursor
        sizes = limit[:, None] // n + (behind < (limit % n)[:, None])
        self.cursor[live] = (start + limit - 1) % n + 1
        return np.asarray(sizes, dtype=np.int64)

    def weighted_schedule(self, live: IntArray, active: BoolArray, limit: IntArray) -> IntArray:
        """WRR's ``_schedule(limit)`` for each run (the visit going on, then visit cycles);
        pulls per worker."""
        n, rows = self.n, np.arange(live.size)
        effective = self.count[live].astype(np.float64)
        counters = self.counters[live]
        sizes = np.zeros((live.size, n), dtype=np.int64)
        # The visit cut short by the last batch goes on while active and short of its counter.
        arm = self.current[live]
        self.current[live] = -1
        going = arm >= 0
        safe = np.where(going, arm, 0)
        wanted = np.where(going, np.ceil(counters[rows, safe] - effective[rows, safe]), 0.0)
        going &= (wanted > 0) & active[rows, safe]
        take = np.where(going, np.minimum(limit, wanted), 0).astype(np.int64)
        sizes[rows, safe] += take
        effective[rows, safe] += take
        self.current[live] = np.where(going & (take < wanted), arm, -1)
        remaining = limit - take
        while (remaining > 0).any():
            remaining = self._visit_cycle(live, active, effective, counters, sizes, remaining)
        self.counters[live] = counters
        return sizes

    def _visit_cycle(
        self,
        live: IntArray,
        active: BoolArray,
        effective: FloatArray,
        counters: FloatArray,
        sizes: IntArray,
        remaining: IntArray,
    ) -> IntArray:
        """``WeightedRoundRobin._visit_cycle`` for the runs with pulls left to place."""
        n = self.n
        todo = np.flatnonzero(remaining > 0)
        runs = live[todo]
        length = np.minimum(remaining[todo], n)
        columns = np.arange(n)
        visits = (self.cursor[runs][:, None] % n + columns) % n
        valid = columns < length[:, None]
        row = todo[:, None]
        eff, ctr = effective[row, visits], counters[row, visits]
        first = eff == 0
        ctr = ctr + np.where(first, 0.0, self.rho)
        extra = np.where(
            active[row, visits] & ~first, np.maximum(0.0, np.ceil(ctr - eff - 1.0)), 0.0
        )
        step = np.where(valid, 1 + extra.astype(np.int64), 0)
        ends = np.cumsum(step, axis=1)
        wanted = remaining[todo][:, None]
        last = np.minimum(((ends < wanted) & valid).sum(axis=1), length - 1)
        picked = np.arange(todo.size)
        overshoot = ends[picked, last] - remaining[todo]
        step[picked, last] -= np.maximum(overshoot, 0)
        used = columns <= last[:, None]
        step = np.where(used, step, 0)
        last_arm = visits[picked, last]
        unfinished = eff[picked, last] + step[picked, last] < ctr[picked, last]
        self.current[runs] = np.where(unfinished, last_arm, -1)
        counters[row, visits] = np.where(used, ctr, counters[row, visits])
        effective[row, visits] += step
        sizes[row, visits] += step
        self.cursor[runs] = last_arm + 1
        remaining = remaining.copy()
        remaining[todo] -= step.sum(axis=1)
        return remaining

    # --------------------------------------------------------------------------- answers
    def kept(self, runs: IntArray, arms: IntArray, rewards: FloatArray) -> FloatArray:
        """On the flipped scale when direction="low", as ``KSigmaIntervals`` keeps them."""
        return 1.0 - rewards if self.flip else rewards
