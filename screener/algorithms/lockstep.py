"""An algorithm's step restated over a runs axis: many runs of one configuration, each on its
own workers, asked and told at once on (runs, workers) arrays.

A plan (``screener plan``) runs one algorithm a hundred times; one run's ask does a few dozen
numpy calls on arrays of n workers, so a hundred runs one by one pay those calls a hundred
times. A lockstep pays them once per step for every live run. It is a second statement of
the algorithm's step, written beside the algorithm it restates and bound to it pull for pull
by a test (``screener.algorithms.ksigma.lockstep`` for RR and WRR,
``screener.algorithms.thresholding.confident_lockstep`` for ConfidentThresholding; their
tests in tests/algorithms/ksigma and tests/algorithms/thresholding). It draws no answers: the
simulation asks it, answers its pulls and tells it (``screener.simulation.lockstep``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from screener.arrays import BoolArray, FloatArray, IntArray

__all__ = ["Lockstep", "LockstepAsk", "LockstepPulls"]


@dataclass(frozen=True)
class LockstepPulls:
    """The pulls of one step: per pull its run, worker and question number (``seqs``: worker
    i's j-th question of its run, as ``Ask.seqs``), each worker's pulls together and in
    order; per (run, worker) cell with pulls, its run and worker (``cells``) and how many
    (``times``); ``owner``: each pull's cell."""

    runs: IntArray
    arms: IntArray
    seqs: IntArray
    cells: tuple[IntArray, IntArray]
    times: IntArray
    owner: IntArray


@dataclass(frozen=True)
class LockstepAsk:
    """One ask of the live runs (``live``, rows in that order): whether each stops with its
    condition met (``met``) or its budget spent (``spent``), its workers still undecided
    (rows) and, where the algorithm says, those banned (rows); and the pulls of the runs that
    go on."""

    met: BoolArray
    spent: BoolArray
    undecided: BoolArray
    banned: BoolArray | None
    pulls: LockstepPulls


class Lockstep(ABC):
    """An algorithm's step over ``runs`` runs of ``n`` workers: ``ask`` the live ones, then
    ``tell`` them the rewards of the pulls asked (every pull answered before the next ask, as
    ``simulate`` answers them). ``count`` and ``total``: answers and rewards per run and
    worker, on the scale the algorithm keeps them."""

    def __init__(self, runs: int, n: int) -> None:
        self.n = n
        self.count = np.zeros((runs, n), dtype=np.int64)
        self.total = np.zeros((runs, n))

    @abstractmethod
    def ask(self, live: IntArray) -> LockstepAsk:
        """One ask of every run in ``live`` (indices of rows), as ``Algorithm.ask`` of n pulls
        on answers all back."""

    def tell(self, pulls: LockstepPulls, rewards: FloatArray) -> None:
        """The rewards of ``pulls`` (in [0, 1], in the order of the pulls), as ``tell_many``."""
        kept = self.kept(pulls.runs, pulls.arms, rewards)
        self.count[pulls.cells] += pulls.times
        self.total[pulls.cells] += np.bincount(
            pulls.owner, weights=kept, minlength=pulls.times.size
        )

    def kept(self, runs: IntArray, arms: IntArray, rewards: FloatArray) -> FloatArray:
        """The rewards as the algorithm keeps them (one per pull of worker ``arms[i]`` of run
        ``runs[i]``); a lockstep with statistics of its own also takes them here."""
        return rewards

    def pulls(self, live: IntArray, sizes: IntArray) -> LockstepPulls:
        """The pulls of ``sizes`` (pulls per worker of each run in ``live``), numbered on from
        each worker's answers."""
        index, arm = np.nonzero(sizes)
        run = live[index]
        times = sizes[index, arm]
        owner = np.repeat(np.arange(times.size), times)
        rank = np.arange(owner.size) - np.repeat(np.cumsum(times) - times, times)
        seqs = self.count[run, arm][owner] + rank
        return LockstepPulls(run[owner], arm[owner], seqs, (run, arm), times, owner)
