"""Many seeded runs as one computation, where the algorithm has a lockstep (its step over a
runs axis, written beside it: ``screener.algorithms.lockstep``): the runs are asked
together, their pulls answered with the draws ``BernoulliRewards`` makes, each run stopping on
its own step; and what a plan reads of them (``runs_together``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from screener.algorithms import Algorithm, create_algorithm
from screener.algorithms.ksigma.lockstep import ksigma_lockstep
from screener.algorithms.lockstep import Lockstep, LockstepAsk, LockstepPulls
from screener.algorithms.thresholding.confident_lockstep import confident_lockstep
from screener.arrays import BoolArray, FloatArray, IntArray
from screener.simulation.hashing import uniforms_keyed

__all__ = ["MAX_CELLS", "LockstepRuns", "LockstepSimulation", "in_chunks", "runs_together"]

#: Most (run, worker) cells one lockstep holds at once: a plan of more runs goes in groups
#: of runs (a few dozen arrays of this many values each: about 100 MB), one after another.
MAX_CELLS = 200_000

#: The algorithms' locksteps, each the factory of its own algorithm's lockstep for the
#: configurations it covers (None for the others): RR and WRR, ConfidentThresholding.
_LOCKSTEPS: tuple[Callable[[Algorithm], Callable[[int], Lockstep] | None], ...] = (
    ksigma_lockstep,
    confident_lockstep,
)


@dataclass(frozen=True)
class LockstepRuns:
    """What a plan reads of each run: questions per worker, undecided workers, the stop, and
    the workers banned (None where the algorithm does not say)."""

    questions: IntArray  # (runs, workers)
    undecided: IntArray  # (runs,)
    stop_reasons: tuple[str, ...]
    banned: BoolArray | None = None  # (runs, workers)


def runs_together(
    name: str,
    params: Mapping[str, Any],
    means: FloatArray,
    seeds: Sequence[int],
    progress: Callable[[int], object] | None = None,
) -> LockstepRuns | None:
    """``simulate(create_algorithm(name, n, {**params, "seed": s}), BernoulliRewards(means[i],
    s))`` for run i with seed s (row i of ``means``), all at once: the same questions, stops
    and undecided workers, run by run; None for an algorithm or a configuration no lockstep
    covers (the caller then runs them one by one). ``progress`` is told how many runs just
    stopped."""
    make = _lockstep_of(create_algorithm(name, means.shape[1], dict(params)))
    if make is None:
        return None

    def simulation(rows: FloatArray, some: Sequence[int]) -> LockstepSimulation:
        return LockstepSimulation(make(len(some)), rows, some, progress)

    return in_chunks(simulation, means, seeds)


def _lockstep_of(algorithm: Algorithm) -> Callable[[int], Lockstep] | None:
    """The lockstep of the first of ``_LOCKSTEPS`` that covers ``algorithm``; None if none."""
    for lockstep_of in _LOCKSTEPS:
        make = lockstep_of(algorithm)
        if make is not None:
            return make
    return None


class LockstepSimulation:
    """``lockstep``'s runs, one per row of ``means`` (the workers' true accuracies) with its
    seed, driven as ``simulate`` drives one: each step asks the live runs, retires those that
    stop, and answers and tells the pulls of the others."""

    def __init__(
        self,
        lockstep: Lockstep,
        means: FloatArray,
        seeds: Sequence[int],
        progress: Callable[[int], object] | None,
    ) -> None:
        self.lockstep = lockstep
        self.means_true = np.asarray(means, dtype=np.float64)
        runs = self.means_true.shape[0]
        self.seeds = np.asarray(list(seeds), dtype=np.int64)
        self.progress = progress
        self.done = np.zeros(runs, dtype=bool)
        self.reasons = [""] * runs
        self.undecided = np.zeros(runs, dtype=np.int64)
        self.banned: BoolArray | None = None  # set by a lockstep that says who it banned

    def run(self) -> LockstepRuns:
        while not self.done.all():
            live = np.flatnonzero(~self.done)
            asked = self.lockstep.ask(live)
            self.stop(live, asked)
            if asked.pulls.owner.size:
                self.lockstep.tell(asked.pulls, self.answers(asked.pulls))
        count = self.lockstep.count
        return LockstepRuns(count, self.undecided, tuple(self.reasons), self.banned)

    def answers(self, pulls: LockstepPulls) -> FloatArray:
        """The rewards of ``pulls``: worker i's j-th answer is the same counter-based draw as
        ``BernoulliRewards``'s (1.0 right, 0.0 wrong)."""
        draws = uniforms_keyed(self.seeds[pulls.runs], pulls.arms, pulls.seqs)
        right = draws < self.means_true[pulls.runs, pulls.arms]
        return right.astype(np.float64)

    def stop(self, live: IntArray, asked: LockstepAsk) -> None:
        """Retire the runs ``live[i]`` whose condition is met (CONDITION_MET) or whose budget is
        spent (BUDGET_SPENT), each with its undecided workers and, where the lockstep says,
        who it banned; progress is told how many stopped."""
        stopped = np.flatnonzero(asked.met | asked.spent).tolist()
        banned = asked.banned
        if banned is not None and self.banned is None:
            self.banned = np.zeros(self.lockstep.count.shape, dtype=bool)
        for index in stopped:
            run = int(live[index])
            self.done[run] = True
            self.reasons[run] = "condition met" if asked.met[index] else "budget spent"
            self.undecided[run] = int(np.count_nonzero(asked.undecided[index]))
            if banned is not None and self.banned is not None:
                self.banned[run] = banned[index]
        if stopped and self.progress is not None:
            self.progress(len(stopped))


def in_chunks(
    lockstep: Callable[[FloatArray, Sequence[int]], LockstepSimulation],
    means: FloatArray,
    seeds: Sequence[int],
) -> LockstepRuns:
    """``lockstep(means, seeds).run()`` in groups of runs of at most MAX_CELLS cells (at least
    one run a group), joined in seed order: each run is computed on its own row, so the
    groups change nothing but the memory."""
    rows = max(1, MAX_CELLS // max(1, means.shape[1]))
    parts = [
        lockstep(means[start : start + rows], seeds[start : start + rows]).run()
        for start in range(0, len(seeds), rows)
    ]
    if len(parts) == 1:
        return parts[0]
    bans = [part.banned for part in parts if part.banned is not None]
    return LockstepRuns(
        np.concatenate([part.questions for part in parts]),
        np.concatenate([part.undecided for part in parts]),
        tuple(reason for part in parts for reason in part.stop_reasons),
        np.concatenate(bans) if len(bans) == len(parts) else None,
    )
