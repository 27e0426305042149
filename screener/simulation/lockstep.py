"""What every many-runs-as-one computation shares: the runs in lockstep, each stopping on its
own step, and what a plan reads of them (``screener.simulation.ksigma_runs``,
``screener.simulation.confident_runs``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from screener.arrays import BoolArray, FloatArray, IntArray
from screener.simulation.hashing import uniforms_keyed

__all__ = ["MAX_CELLS", "Lockstep", "LockstepRuns", "RunsTogether", "in_chunks"]

#: Most (run, worker) cells one lockstep holds at once: a plan of more runs goes in groups
#: of runs (a few dozen arrays of this many values each: about 100 MB), one after another.
MAX_CELLS = 200_000


@dataclass(frozen=True)
class LockstepRuns:
    """What a plan reads of each run: questions per worker, undecided workers, the stop, and
    the workers banned (None where the computation does not say)."""

    questions: IntArray  # (runs, workers)
    undecided: IntArray  # (runs,)
    stop_reasons: tuple[str, ...]
    banned: BoolArray | None = None  # (runs, workers)


class RunsTogether(Protocol):
    """``simulate(create_algorithm(name, n, {**params, "seed": s}), BernoulliRewards(means[i],
    s))`` for run i with seed s (row i of ``means``), all at once: the same questions, stops
    and undecided workers, run by run; None for a configuration it does not cover (the
    caller then runs them one by one). ``progress`` is told how many runs just stopped."""

    def __call__(
        self,
        name: str,
        params: Mapping[str, Any],
        means: FloatArray,
        seeds: Sequence[int],
        progress: Callable[[int], object] | None = None,
    ) -> LockstepRuns | None: ...


class Lockstep(ABC):
    """Runs in lockstep, one per row of ``means`` (the workers' true accuracies) with its
    seed: ``step`` moves the live ones one ask on, ``answer`` draws and tells what it
    scheduled (``count`` and ``total``: answers and rewards per run and worker), and ``stop``
    retires those whose condition is met or whose budget is spent."""

    def __init__(
        self,
        means: FloatArray,
        seeds: Sequence[int],
        progress: Callable[[int], object] | None,
    ) -> None:
        self.means_true = np.asarray(means, dtype=np.float64)
        runs, self.n = self.means_true.shape
        self.seeds = np.asarray(list(seeds), dtype=np.int64)
        self.count = np.zeros((runs, self.n), dtype=np.int64)
        self.total = np.zeros((runs, self.n))
        self.progress = progress
        self.done = np.zeros(runs, dtype=bool)
        self.reasons = [""] * runs
        self.undecided = np.zeros(runs, dtype=np.int64)
        self.banned: BoolArray | None = None  # set by a lockstep that says who it banned

    def run(self) -> LockstepRuns:
        while not self.done.all():
            self.step(np.flatnonzero(~self.done))
        return LockstepRuns(self.count, self.undecided, tuple(self.reasons), self.banned)

    @abstractmethod
    def step(self, live: IntArray) -> None:
        """One ask of every run in ``live`` (indices of rows), answered and told; runs
        that stop here go through ``stop``."""

    def answer(self, live: IntArray, sizes: IntArray) -> None:
        """Draw and tell every pull scheduled (``sizes``: pulls per live run and worker):
        worker i's j-th answer is the same counter-based draw as ``BernoulliRewards``'s."""
        index, arm = np.nonzero(sizes)
        run = live[index]
        times = sizes[index, arm]
        owner = np.repeat(np.arange(times.size), times)
        rank = np.arange(owner.size) - np.repeat(np.cumsum(times) - times, times)
        seq = self.count[run, arm][owner] + rank
        draws = uniforms_keyed(self.seeds[run[owner]], arm[owner], seq)
        right = (draws < self.means_true[run[owner], arm[owner]]).astype(np.float64)
        rewards = self.rewards(run[owner], arm[owner], right)
        self.count[run, arm] += times
        self.total[run, arm] += np.bincount(owner, weights=rewards, minlength=times.size)

    def rewards(self, runs: IntArray, arms: IntArray, right: FloatArray) -> FloatArray:
        """The rewards of these answers (``right``: 1.0 where the answer is right, in the
        order drawn); a subclass with statistics of its own also takes them here."""
        return right

    def stop(
        self,
        live: IntArray,
        met: BoolArray,
        spent: BoolArray,
        open_: BoolArray,
        banned: BoolArray | None = None,
    ) -> None:
        """Retire the runs ``live[i]`` with ``met[i]`` (CONDITION_MET) or ``spent[i]``
        (BUDGET_SPENT), each with its workers still ``open_`` (rows) undecided and, where
        given, ``banned`` (rows); progress is told how many stopped."""
        stopped = np.flatnonzero(met | spent).tolist()
        if banned is not None and self.banned is None:
            self.banned = np.zeros(self.count.shape, dtype=bool)
        for index in stopped:
            run = int(live[index])
            self.done[run] = True
            self.reasons[run] = "condition met" if met[index] else "budget spent"
            self.undecided[run] = int(np.count_nonzero(open_[index]))
            if banned is not None and self.banned is not None:
                self.banned[run] = banned[index]
        if stopped and self.progress is not None:
            self.progress(len(stopped))


def in_chunks(
    lockstep: Callable[[FloatArray, Sequence[int]], Lockstep],
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
