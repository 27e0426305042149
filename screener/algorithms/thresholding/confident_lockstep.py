"""ConfidentThresholding restated over a runs axis: many seeded runs as one computation, the
runs a leading axis of every array (``screener.algorithms.lockstep``).

The rules and the float operations of ``ConfidentThresholding`` with ``schedule="settle"``
(its default) on rewards in [0, 1], with any eps, delta, min_answers and the betting,
mixture or KL interval: the same pulls, stops, undecided and banned workers, ask by ask and
run by run, bound so by tests/algorithms/thresholding/test_lockstep_confident.py (each ask
against the algorithm's own). A change to its step is made here too, or that test fails. The
"evidence" schedule, the Hoeffding interval, other reward bounds, a budget under n or no
bound on a run at all (eps = 0 and no budget) get no lockstep (``confident_lockstep``).

One ask, per live run, as ``Algorithm.ask`` of n pulls on answers all back:

1. refresh (``ConfidentThresholding._refresh``): the side evidence of every worker
   (``ClearingKey.side_evidence`` on the family's budget, one call for all runs), the betting
   sequence at the bars, and ``t*`` at the mean and at the hopeful mean for the workers with
   new answers (``clearing_table``, one lookup for all runs);
2. stop when every worker is decided (CONDITION_MET), or when the budget is spent
   (BUDGET_SPENT);
3. schedule up to min(n, budget left) pulls: the smallest (key, worker) pairs of the
   "settle" index (``fill_at_once``'s picks), then ``surely_needed`` below min_answers.

Why exact. Every value a decision reads is computed per worker from its own answers by
elementwise numpy operations (the same bits in an array of one run as of many runs; the
shared tables hold the values a direct call gives; the betting sequence adds each worker's
answers one at a time whatever else a tell holds, so one sequence over runs x workers arms
has each run's bits), or compares such values, but for the schedule: it takes the ``limit``
smallest (key, worker) pairs, where a worker's key at j pulls into the batch is ``hopeful +
(answered + j) - 2 answered``, about ``key_0 + j``. The pairs are cut near the ``limit``-th
by that approximation, then the cut is checked on the exact keys (every pair kept comes
before every pair left); a run whose cut fails the check (keys so large that ``+ j`` rounds)
takes every pair and sorts them (``_every_pair``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from screener.algorithms.base import Algorithm
from screener.algorithms.lockstep import Lockstep, LockstepAsk
from screener.algorithms.thresholding._clearing import clearing_table
from screener.algorithms.thresholding._scheduler import surely_needed
from screener.algorithms.thresholding.confident import (
    ConfidentThresholding,
    settle_in_flight,
    settle_keys,
)
from screener.arrays import BoolArray, FloatArray, IntArray
from screener.stats import BettingCS

__all__ = ["ConfidentLockstep", "confident_lockstep"]

_BISECTIONS = 200  # more than a float's bits: a cut not found by then is left to _every_pair


def confident_lockstep(algorithm: Algorithm) -> Callable[[int], ConfidentLockstep] | None:
    """``ConfidentLockstep`` of ``algorithm``'s configuration for a number of runs, if it is
    ConfidentThresholding in a configuration the lockstep covers; None otherwise."""
    if type(algorithm) is not ConfidentThresholding or algorithm.schedule != "settle":
        return None
    if algorithm.interval == "hoeffding" or (algorithm.lower, algorithm.upper) != (0.0, 1.0):
        return None
    budget = algorithm.budget
    if budget is None and algorithm.max_questions_per_worker is None:  # might never end
        return None
    if budget is not None and budget < algorithm.n_arms:  # every worker answers at first
        return None
    probe = algorithm
    return lambda runs: ConfidentLockstep(probe, runs)


class ConfidentLockstep(Lockstep):
    """``runs`` runs of ``probe``'s configuration (ConfidentThresholding) in lockstep."""

    def __init__(self, probe: ConfidentThresholding, runs: int) -> None:
        n = probe.n_arms
        super().__init__(runs, n)
        self.probe = probe
        self.table = clearing_table(probe._clearing)
        sequence = probe._betting_at_bars
        self.capital = None if sequence is None else _BarCapital(sequence, runs, n)
        self.plugin = np.full((runs, n), math.inf)
        self.hopeful = np.full((runs, n), math.inf)
        self.seen = np.full((runs, n), -1, dtype=np.int64)

    # ---------------------------------------------------------------------------- an ask
    def ask(self, live: IntArray) -> LockstepAsk:
        decided, below = self.refresh(live)
        count = self.count[live]
        met = np.asarray(decided.all(axis=1))
        budget = self.probe.budget
        room = np.full(live.size, self.n) if budget is None else budget - count.sum(axis=1)
        spent = ~met & (room <= 0)
        going = ~(met | spent)
        sizes = np.zeros((0, self.n), dtype=np.int64)
        if going.any():
            limits = np.minimum(self.n, room[going])
            sizes = self.schedule(live[going], decided[going], limits)
        return LockstepAsk(met, spent, ~decided, below, self.pulls(live[going], sizes))

    def refresh(self, live: IntArray) -> tuple[BoolArray, BoolArray]:
        """``ConfidentThresholding._refresh`` for these runs: which workers are decided, and
        which of them below the bar (banned), with ``t*`` brought up to date for the workers
        with new answers."""
        probe = self.probe
        count, total = self.count[live], self.total[live]
        counts = count.astype(np.float64)  # ``_scaled``, its operations on these arrays
        sums = np.clip((total - probe.lower * counts) / probe.width, 0.0, counts)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.clip((total / count - probe.lower) / probe.width, 0.0, 1.0)
        above, below = probe._clearing.side_evidence(
            means, counts, probe.family.log_inverse(sums, counts)
        )
        above_clear, below_clear = above >= 0.0, below > 0.0
        if self.capital is not None:
            lows, highs = self.capital.bounds(live)
            above_clear |= lows >= probe._low_bar
            below_clear |= highs < probe._high_bar
        enough = count >= probe.min_answers
        self.update_clearing_counts(live, sums, counts)
        above_, below_ = above_clear & enough, below_clear & enough
        with np.errstate(invalid="ignore", divide="ignore"):  # ``_above``: both clear, the mean
            side = np.where(above_ != below_, above_, total / count >= probe.threshold)
        decided = above_ | below_
        return np.asarray(decided), np.asarray(decided & ~side)

    def update_clearing_counts(self, live: IntArray, sums: FloatArray, counts: FloatArray) -> None:
        """``_update_clearing_counts``: ``t*`` per (sum, count) of the workers whose count
        changed, by the table every run shares."""
        count = self.count[live]
        row, arm = np.nonzero(count != self.seen[live])
        if row.size == 0:
            return
        self.seen[live[row], arm] = count[row, arm]
        plugin, hopeful = self.table(sums[row, arm], counts[row, arm])
        self.plugin[live[row], arm] = plugin
        self.hopeful[live[row], arm] = hopeful

    # -------------------------------------------------------------------------- schedule
    def schedule(self, live: IntArray, decided: BoolArray, limits: IntArray) -> IntArray:
        """Pulls per worker of each run's ask of ``limits`` pulls (``_schedule``)."""
        count = self.count[live]
        if not count.any():  # the first ask: one pull each (``pull_each_first``), budget >= n
            return np.ones_like(count)
        bound = self.probe.max_questions_per_worker
        caps = np.where(decided, 0, _pulls_allowed(count, self.plugin[live], bound))
        sizes = _first_pairs(self.hopeful[live], count, np.minimum(caps, limits[:, None]), limits)
        return self.fill_horizon(count, decided, sizes, limits)

    def fill_horizon(
        self, count: IntArray, decided: BoolArray, sizes: IntArray, limits: IntArray
    ) -> IntArray:
        """The room the index leaves, filled below min_answers (``_schedule``'s horizon,
        ``surely_needed``), run by run: only runs with such room."""
        horizon = np.where(decided, 0, self.probe.min_answers).astype(np.int64)
        short = (sizes.sum(axis=1) < limits) & (horizon - count - sizes > 0).any(axis=1)
        available = np.ones(self.n, dtype=bool)
        for row in np.flatnonzero(short).tolist():
            room = int(limits[row] - sizes[row].sum())
            more = surely_needed(room, sizes[row], count[row], available, horizon[row])
            sizes[row] += np.bincount(more, minlength=self.n)
        return sizes

    # --------------------------------------------------------------------------- answers
    def kept(self, runs: IntArray, arms: IntArray, rewards: FloatArray) -> FloatArray:
        """Also into the betting sequence at the bars, as ``_on_answers``."""
        if self.capital is not None:
            self.capital.update(runs, arms, rewards)
        return rewards


# ------------------------------------------------------------------------ the schedule's cut
def _pulls_allowed(count: IntArray, plugin: FloatArray, bound: int | None) -> IntArray:
    """How many pulls into the batch an undecided worker may get before ``_index`` holds it
    back (``settle_in_flight``), none that would take it to the bound on questions (but the
    first)."""
    caps = settle_in_flight(plugin, count).astype(np.int64)
    if bound is not None:  # held at j >= 1 pulls once count + j reaches the bound
        caps = np.minimum(caps, np.maximum(bound - count, 1))
    return np.asarray(caps, dtype=np.int64)


def _keys(hopeful: FloatArray, answered: IntArray, steps: FloatArray) -> FloatArray:
    """A worker's "settle" key ``steps`` pulls into the batch (no pulls in flight between
    steps, so the effective count is ``answered + steps``)."""
    return settle_keys(hopeful, answered, answered.astype(np.float64) + steps)


def _first_pairs(
    hopeful: FloatArray, answered: IntArray, caps: IntArray, limits: IntArray
) -> IntArray:
    """Per run (row), how many of its ``limit`` smallest (key, worker) pairs fall to each
    worker, worker i offering its keys at 0 .. caps[i] - 1 pulls into the batch: the heap's
    picks (``fill_at_once``, ``heap_picks``), as counts. A worker's keys never fall as j
    grows (a float sum is monotone in its terms), so the pairs a run keeps are each worker's
    first ones."""
    sizes = caps.copy()
    crowded = np.flatnonzero(caps.sum(axis=1) > limits)
    if crowded.size:
        sizes[crowded] = _cut(hopeful[crowded], answered[crowded], caps[crowded], limits[crowded])
    return sizes


def _cut(hopeful: FloatArray, answered: IntArray, caps: IntArray, limits: IntArray) -> IntArray:
    """``_first_pairs`` of runs offering more than their limit: with keys taken as
    ``key_0 + j``, a level with at most ``limit`` pairs under it and at least ``limit`` under
    one more (``_level``); every worker's pairs under it are kept, and the rest of the limit
    is taken from each worker's next pair by its exact key (``_next_pairs``, which checks the
    cut on the exact keys)."""
    first = np.where(caps > 0, _keys(hopeful, answered, np.zeros(caps.shape)), math.inf)
    level, found = _level(first, caps, limits)
    under = _under(level, first, caps)
    sizes, exact = _next_pairs(hopeful, answered, caps, limits, under)
    for row in np.flatnonzero(~(found & exact)).tolist():
        sizes[row] = _every_pair(hopeful[row], answered[row], caps[row], int(limits[row]))
    return sizes


def _under(level: FloatArray, first: FloatArray, caps: IntArray) -> IntArray:
    """Per worker, how many of the keys ``first + j`` (j < cap) lie under its run's level."""
    under = np.clip(np.ceil(level[:, None] - first), 0, caps)
    return np.asarray(under.astype(np.int64))


def _level(first: FloatArray, caps: IntArray, limits: IntArray) -> tuple[FloatArray, BoolArray]:
    """Per run, a level with at most ``limit`` of the pairs ``first + j`` under it and at least
    ``limit`` under it plus one, by bisection; and whether it was found (it is unless the
    keys are too large for ``+ 1`` to count)."""
    offered = caps > 0
    low = np.where(offered, first, math.inf).min(axis=1)
    high = np.where(offered, first + caps, -math.inf).max(axis=1)
    lost = np.zeros(low.size, dtype=bool)
    for _ in range(_BISECTIONS):
        wide = (high - low > 1.0) & ~lost
        if not wide.any():
            break
        middle = low + (high - low) / 2.0
        lost |= wide & ((middle <= low) | (middle >= high))
        wide &= ~lost
        fits = _under(middle, first, caps).sum(axis=1) <= limits
        low = np.where(wide & fits, middle, low)
        high = np.where(wide & ~fits, middle, high)
    return low, ~lost & (high - low <= 1.0)


def _next_pairs(
    hopeful: FloatArray, answered: IntArray, caps: IntArray, limits: IntArray, under: IntArray
) -> tuple[IntArray, BoolArray]:
    """Each run's pairs under its level, and the rest of its limit from the workers' next
    pairs, smallest (exact key, worker) first; and, per run, whether that is the heap's cut:
    every pair under the level comes before every next pair, and the last pair taken before
    the pair after each next pair taken."""
    rows, n = caps.shape
    remaining = limits - under.sum(axis=1)
    has_next = under < caps
    under_f = under.astype(np.float64)
    last_under = np.where(under > 0, _keys(hopeful, answered, under_f - 1.0), -math.inf)
    nexts = np.where(has_next, _keys(hopeful, answered, under_f), math.inf)
    order = np.argsort(nexts, axis=1, kind="stable")  # ties: the lowest worker first
    rank = np.empty_like(order)
    rank[np.arange(rows)[:, None], order] = np.arange(n)
    taken = rank < remaining[:, None]
    place = np.arange(rows), np.clip(remaining - 1, 0, n - 1)
    last_worker = order[place]
    last_key = nexts[np.arange(rows), last_worker]
    after = np.where(under + 1 < caps, _keys(hopeful, answered, under_f + 1.0), math.inf)
    workers = np.arange(n)
    later = (after > last_key[:, None]) | (
        (after == last_key[:, None]) & (workers >= last_worker[:, None])
    )
    exact = (
        (remaining >= 0)
        & (remaining <= has_next.sum(axis=1))
        & (last_under.max(axis=1) < nexts.min(axis=1))
        & ((remaining == 0) | (later | ~taken).all(axis=1))
    )
    return np.asarray(under + taken, dtype=np.int64), np.asarray(exact)


def _every_pair(hopeful: FloatArray, answered: IntArray, caps: IntArray, limit: int) -> IntArray:
    """One run's cut by definition: every pair up to ``limit`` deep per worker, sorted by
    (exact key, worker), the first ``limit`` kept."""
    arms = np.flatnonzero(caps > 0)
    depth = np.minimum(caps[arms], limit)
    owner = np.repeat(arms, depth)
    steps = np.arange(owner.size) - np.repeat(np.cumsum(depth) - depth, depth)
    keys = _keys(hopeful[owner], answered[owner], steps.astype(np.float64))
    kept = np.lexsort((steps, owner, keys))[:limit]
    return np.bincount(owner[kept], minlength=caps.size).astype(np.int64)


# ------------------------------------------------------------------ the betting sequence
class _BarCapital:
    """``ConfidentThresholding._betting_at_bars`` of every worker of every run: one
    ``BettingCS`` of runs x workers arms (arm ``run * n + worker``)."""

    def __init__(self, sequence: BettingCS, runs: int, n: int) -> None:
        self.n = n
        self.cs = BettingCS(runs * n, sequence.alpha, grid=sequence.grid,
                            truncation=sequence.truncation)  # fmt: skip

    def bounds(self, live: IntArray) -> tuple[FloatArray, FloatArray]:
        """(lower, upper) of these runs' workers, shape (runs, n)."""
        lows, highs = self.cs.bounds()
        shape = (-1, self.n)
        return lows.reshape(shape)[live], highs.reshape(shape)[live]

    def update(self, runs: IntArray, arms: IntArray, x: FloatArray) -> None:
        """Answers ``x`` of workers ``arms`` of runs ``runs``, each worker's in order."""
        self.cs.update_many(runs * self.n + arms, x)
