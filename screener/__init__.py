"""screener: find the crowd workers that matter with as few paid gold questions as possible.

Each worker is an arm of a pure-exploration bandit, one gold question is one pull. The
algorithms (``screener.algorithms``) are pure ask/tell objects; oracles
(``screener.oracles``) deliver answers asynchronously; the orchestrator
(``screener.orchestrator``) journals every pull (``screener.journal``) and can resume.
"""

from importlib.metadata import PackageNotFoundError, version

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
from screener.errors import ScreenerError
from screener.pool import WorkerPool, demo_pool, load_pool_csv, synthetic_pool
from screener.simulation import BernoulliRewards, BetaRewards, simulate

try:
    __version__ = version("screener")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
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
    "create_algorithm",
    "demo_pool",
    "load_pool_csv",
    "simulate",
    "synthetic_pool",
]
