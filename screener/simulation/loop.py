"""The fastest path: run an algorithm against simulated workers, synchronously, in batches."""

from __future__ import annotations

import numpy as np

from screener.algorithms import Algorithm, AskState, Result
from screener.errors import ScreenerError
from screener.simulation.recorded import EXHAUSTED_RECORDS
from screener.simulation.rewards import RewardModel

__all__ = ["drive", "simulate"]


def simulate(algorithm: Algorithm, rewards: RewardModel, *, batch: int | None = None) -> Result:
    """Ask for up to ``batch`` pulls (default: one per worker), answer them all, repeat.

    Answers come back at once, so the algorithm never has to wait; ``batch=1`` reproduces a
    paper's one-pull-at-a-time loop exactly, in scalar steps (``ask1``, ``sample1``,
    ``tell1``: the same pulls and draws as asks and batches of one, several times faster).
    Cap the cost with the algorithm's ``budget``.
    A NaN draw (recorded answers used up) makes that worker unavailable, as the orchestrator
    does for an oracle's "unavailable" answer.

    Examples
    --------
    >>> from screener import BernoulliRewards, RoundRobin, synthetic_pool
    >>> pool = synthetic_pool(10, 1, seed=3)
    >>> result = simulate(RoundRobin(10, k=1.5, direction="low", seed=0),
    ...                   BernoulliRewards(pool.accuracies, seed=1))
    >>> result.condition_met, result.outliers
    (True, (7,))
    """
    drive(algorithm, rewards, batch=batch)
    return algorithm.result()


def drive(algorithm: Algorithm, rewards: RewardModel, *, batch: int | None = None) -> None:
    """``simulate`` without the result: run ``algorithm`` until it is done."""
    if rewards.n_arms != algorithm.n_arms:
        raise ScreenerError(
            f"the reward model has {rewards.n_arms} workers, the algorithm {algorithm.n_arms}"
        )
    size = batch if batch is not None else algorithm.n_arms
    if size == 1:
        _drive_one_at_a_time(algorithm, rewards)
        return
    while True:
        ask = algorithm.ask(size)
        if ask.done:
            return
        if ask.wait:
            raise ScreenerError(f"{algorithm.name} waits although no answer is outstanding")
        draws = rewards.sample(ask.arms, ask.seqs)
        gone = np.isnan(draws)
        if not gone.any():
            algorithm.tell_many(ask.ids, draws)
            continue
        algorithm.tell_many(ask.ids[~gone], draws[~gone])
        for pull_id, arm in zip(ask.ids[gone].tolist(), ask.arms[gone].tolist(), strict=True):
            algorithm.set_unavailable(arm, EXHAUSTED_RECORDS)
            algorithm.release(pull_id)


def _drive_one_at_a_time(algorithm: Algorithm, rewards: RewardModel) -> None:
    """``drive`` with batches of one, in scalar steps (``ask1``, ``sample1``, ``tell1``):
    the same pulls, draws and answers as ``ask(1)``, ``sample`` and ``tell_many``."""
    ask1, sample1, tell1 = algorithm.ask1, rewards.sample1, algorithm.tell1
    while True:
        pull = ask1()
        if isinstance(pull, AskState):
            if pull is AskState.DONE:
                return
            raise ScreenerError(f"{algorithm.name} waits although no answer is outstanding")
        pull_id, arm, seq = pull
        draw = sample1(arm, seq)
        if draw == draw:  # not NaN
            tell1(pull_id, draw)
        else:
            algorithm.set_unavailable(arm, EXHAUSTED_RECORDS)
            algorithm.release(pull_id)
