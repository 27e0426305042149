"""What binds an algorithm's lockstep (``screener.algorithms.lockstep``) to the algorithm: the
two driven side by side on the same answers, compared at every ask.

Independent of ``screener.simulation`` on purpose (as tests/algorithms/driver.py): the
answers are drawn here, so the binding holds whatever the simulation draws.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from screener.algorithms import Algorithm, Decision
from screener.algorithms.lockstep import Lockstep, LockstepAsk, LockstepPulls

__all__ = ["Answers", "assert_lockstep_binds"]


class Answers:
    """1.0 (right) or 0.0 for question ``seq`` of worker ``arm`` of run ``run`` (worker
    accuracies: row ``run`` of ``means``): drawn once, from the run's own generator, in blocks
    as later questions are asked, so whoever reads an answer reads the same one."""

    def __init__(self, means: NDArray[np.float64], seeds: Sequence[int]) -> None:
        self.means = means
        self.rngs = [np.random.default_rng([seed, 52]) for seed in seeds]
        self.uniforms = [np.empty((means.shape[1], 0)) for _ in seeds]

    def __call__(
        self, run: int, arms: NDArray[np.int64], seqs: NDArray[np.int64]
    ) -> NDArray[np.float64]:
        table = self.uniforms[run]
        if seqs.size and int(seqs.max()) >= table.shape[1]:
            more = max(int(seqs.max()) + 1 - table.shape[1], table.shape[1], 64)
            table = np.hstack([table, self.rngs[run].random((table.shape[0], more))])
            self.uniforms[run] = table
        right = table[arms, seqs] < self.means[run, arms]
        return np.asarray(right, dtype=np.float64)

    def of(self, pulls: LockstepPulls) -> NDArray[np.float64]:
        """The answers of a lockstep's pulls, in their order."""
        rewards = np.empty(pulls.runs.size)
        for run in np.unique(pulls.runs).tolist():
            mine = pulls.runs == run
            rewards[mine] = self(run, pulls.arms[mine], pulls.seqs[mine])
        return rewards


def assert_lockstep_binds(
    lockstep: Lockstep, algorithms: Sequence[Algorithm], answers: Answers
) -> None:
    """Drive ``lockstep`` (run i: ``algorithms[i]``'s configuration) and every algorithm as
    ``simulate`` drives one (asks of n pulls, every answer told before the next ask), on the
    same ``answers``, and assert at every ask that they agree bit for bit: each run's pulls
    (worker and question number), the ask at which it stops and why, and then its undecided
    workers and, where the lockstep says, those it banned."""
    live = np.arange(len(algorithms))
    while live.size:
        asked = lockstep.ask(live)
        going = ~(asked.met | asked.spent)
        for index, run in enumerate(live.tolist()):
            algorithm = algorithms[run]
            ask = algorithm.ask(algorithm.n_arms)
            assert not ask.wait
            if ask.done:
                assert not going[index], f"run {run}: the algorithm stopped, the lockstep not"
                _assert_same_stop(algorithm, asked, index, run)
                continue
            assert going[index], f"run {run}: the lockstep stopped, the algorithm not"
            mine = asked.pulls.runs == run
            theirs = sorted(zip(asked.pulls.arms[mine].tolist(), asked.pulls.seqs[mine].tolist(),
                                strict=True))  # fmt: skip
            assert sorted(zip(ask.arms.tolist(), ask.seqs.tolist(), strict=True)) == theirs, run
            algorithm.tell_many(ask.ids, answers(run, ask.arms, ask.seqs))
        lockstep.tell(asked.pulls, answers.of(asked.pulls))
        live = live[going]


def _assert_same_stop(algorithm: Algorithm, asked: LockstepAsk, index: int, run: int) -> None:
    result = algorithm.result()
    assert result.stop_reason is not None
    reason = "condition met" if asked.met[index] else "budget spent"
    assert result.stop_reason.value == reason, run
    undecided = {w.arm for w in result.workers if w.decision is Decision.UNDECIDED}
    assert set(np.flatnonzero(asked.undecided[index]).tolist()) == undecided, run
    if asked.banned is not None:
        assert set(np.flatnonzero(asked.banned[index]).tolist()) == set(result.banned), run
