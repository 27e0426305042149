"""Simulated workers, the synchronous simulation loop, and many seeded runs at once."""

from screener.simulation.hashing import uniforms
from screener.simulation.loop import simulate
from screener.simulation.many import BernoulliRun, SeededRunError, map_seeds, simulate_many
from screener.simulation.rewards import (
    BernoulliRewards,
    BetaRewards,
    RewardModel,
    reward_model_from_dict,
)
from screener.simulation.truth import ksigma_outliers

__all__ = [
    "BernoulliRewards",
    "BernoulliRun",
    "BetaRewards",
    "RewardModel",
    "SeededRunError",
    "ksigma_outliers",
    "map_seeds",
    "reward_model_from_dict",
    "simulate",
    "simulate_many",
    "uniforms",
]
