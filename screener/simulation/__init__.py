"""Simulated workers and the synchronous simulation loop."""

from screener.simulation.hashing import uniforms
from screener.simulation.loop import simulate
from screener.simulation.rewards import (
    BernoulliRewards,
    BetaRewards,
    RewardModel,
    reward_model_from_dict,
)
from screener.simulation.truth import ksigma_outliers

__all__ = [
    "BernoulliRewards",
    "BetaRewards",
    "RewardModel",
    "ksigma_outliers",
    "reward_model_from_dict",
    "simulate",
    "uniforms",
]
