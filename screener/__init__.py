"""screener: find the crowd workers that matter with as few paid gold questions as possible.

Each worker is an arm of a pure-exploration bandit, one gold question is one pull. The
algorithms (``screener.algorithms``) are pure ask/tell objects; oracles
(``screener.oracles``) deliver answers asynchronously; the orchestrator
(``screener.orchestrator``) journals every pull (``screener.journal``) and can resume.
"""

from screener._version import DISTRIBUTION, __version__
from screener.algorithms import (
    Algorithm,
    Decision,
    NaiveRoundRobin,
    Result,
    RoundRobin,
    StopReason,
    WeightedRoundRobin,
    create_algorithm,
)
from screener.api import arun, run
from screener.crowd import WorkerPool, demo_pool, load_pool_csv, synthetic_pool
from screener.errors import ScreenerError
from screener.simulation import BernoulliRewards, BetaRewards, simulate, simulate_many

__all__ = [
    "DISTRIBUTION",
    "Algorithm",
    "BernoulliRewards",
    "BetaRewards",
    "Decision",
    "NaiveRoundRobin",
    "Result",
    "RoundRobin",
    "ScreenerError",
    "StopReason",
    "WeightedRoundRobin",
    "WorkerPool",
    "__version__",
    "arun",
    "create_algorithm",
    "demo_pool",
    "load_pool_csv",
    "run",
    "simulate",
    "simulate_many",
    "synthetic_pool",
]
