"""Many seeded RR or WRR runs as one computation: the runs are a leading axis of every array.

``simulate(algorithm, BernoulliRewards(means, seed))`` with asks of n pulls does a few dozen
numpy calls per ask on arrays of n workers; a plan of 100 runs repeats that 100 times. Here
every step asks for all the live runs at once, on (runs, workers) arrays, with the same
rules and the same float operations as ``RoundRobin`` / ``WeightedRoundRobin`` with
``interval="mixture"`` (their default): the same pulls, stops and decisions, run by run
(tests/simulation/test_ksigma_runs.py against ``simulate``). Configurations it does not
cover (other intervals or reward bounds) return None, and the caller runs them one by one.

One step, per live run, as ``Algorithm.ask`` on answers all back:

1. refresh (``KSigmaAlgorithm._refresh_all``): means, every worker's Beta-mixture interval
   (``mixture_bounds``, one call for all runs), theta, and the activity (``_activity``: the
   probes where they settle every worker, else theta's box range; the enclosure per run);
2. stop when every worker has min_answers answers and none is active (CONDITION_MET), or
   when the budget is spent (BUDGET_SPENT);
3. schedule up to min(n, budget left) pulls (RR's cycle, or WRR's visits with their
   counters and the visit cut by the batch);
4. draw the answers (``BernoulliRewards``: the same counter-based draws) and tell them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from screener.algorithms import RoundRobin, WeightedRoundRobin, create_algorithm
from screener.arrays import BoolArray, FloatArray, IntArray
from screener.simulation.lockstep import Lockstep, LockstepRuns, in_chunks
from screener.stats import (
    ksigma_threshold_bounds,
    ksigma_threshold_enclosure,
    ksigma_threshold_end,
    mixture_bounds,
    threshold_end_bracket,
)

__all__ = ["ksigma_runs"]

_PROBES = (0.25, 0.5, 0.75, 1.0)


def ksigma_runs(
    name: str,
    params: Mapping[str, Any],
    means: FloatArray,
    seeds: Sequence[int],
    progress: Callable[[int], object] | None = None,
) -> LockstepRuns | None:
    """``RunsTogether`` (screener.simulation.lockstep) for RR and WRR."""
    n = means.shape[1]
    probe = create_algorithm(name, n, dict(params))
    if not isinstance(probe, RoundRobin | WeightedRoundRobin) or type(probe).name not in (
        "rr",
        "wrr",
    ):
        return None
    if probe.interval != "mixture" or (probe.lower, probe.upper) != (0.0, 1.0):
        return None
    if probe.budget is None or probe.budget < n:  # every worker answers in the first step
        return None
    return in_chunks(lambda rows, some: _Lockstep(probe, rows, some, progress), means, seeds)


class _Lockstep(Lockstep):
    def __init__(
        self,
        probe: RoundRobin | WeightedRoundRobin,
        means: FloatArray,
        seeds: Sequence[int],
        progress: Callable[[int], object] | None,
    ) -> None:
        super().__init__(means, seeds, progress)
        self.probe = probe
        runs, n = self.count.shape
        self.k = probe.k
        self.level = probe.delta / n
        self.flip = probe.direction == "low"
        self.weighted = isinstance(probe, WeightedRoundRobin)
        self.rho = probe.rho if isinstance(probe, WeightedRoundRobin) else 0.0
        self.counters = np.zeros((runs, n))
        self.cursor = np.zeros(runs, dtype=np.int64)
        self.current = np.full(runs, -1, dtype=np.int64)

    # ---------------------------------------------------------------------------- a step
    def step(self, live: IntArray) -> None:
        count = self.count[live]
        active, warmed_up = self.activity(count, self.total[live])
        pulled = count.sum(axis=1)
        room = int(self.probe.budget or 0) - pulled
        met = warmed_up & ~active.any(axis=1)
        spent = ~met & (room <= 0)
        self.stop(live, met, spent, (count == 0) | active)
        going = ~(met | spent)
        if not going.any():
            return
        live, active = live[going], active[going]
        limit = np.minimum(self.n, room[going])
        sizes = (
            self.weighted_schedule(live, active, limit)
            if self.weighted
            else self.cycle(live, limit)
        )
        self.answer(live, sizes)

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
    def rewards(self, runs: IntArray, arms: IntArray, right: FloatArray) -> FloatArray:
        return 1.0 - right if self.flip else right
