"""The fastest path: run an algorithm against simulated workers, synchronously, in batches."""

from __future__ import annotations

from screener.algorithms import Algorithm, Result
from screener.errors import ScreenerError
from screener.simulation.rewards import RewardModel

__all__ = ["simulate"]


def simulate(algorithm: Algorithm, rewards: RewardModel, *, batch: int | None = None) -> Result:
    """Ask for up to ``batch`` pulls (default: one per worker), answer them all, repeat.

    Answers come back at once, so the algorithm never has to wait; ``batch=1`` reproduces a
    paper's one-pull-at-a-time loop exactly. Cap the cost with the algorithm's ``budget``.
    """
    if rewards.n_arms != algorithm.n_arms:
        raise ScreenerError(
            f"the reward model has {rewards.n_arms} workers, the algorithm {algorithm.n_arms}"
        )
    size = batch if batch is not None else algorithm.n_arms
    while True:
        ask = algorithm.ask(size)
        if ask.done:
            return algorithm.result()
        if ask.wait:
            raise ScreenerError(f"{algorithm.name} waits although no answer is outstanding")
        algorithm.tell_many(ask.ids, rewards.sample(ask.arms, ask.seqs))
