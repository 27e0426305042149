"""screener: find the crowd workers that matter with as few paid gold questions as possible.

Each worker is an arm of a pure-exploration bandit, one gold question is one pull. The
algorithms (``screener.algorithms``) are pure ask/tell objects; oracles
(``screener.oracles``) deliver answers asynchronously; the orchestrator
(``screener.orchestrator``) journals every pull (``screener.journal``) and can resume.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from screener._lazy import attach

if TYPE_CHECKING:  # the public names, each imported when first read (screener._lazy)
    from screener._version import DISTRIBUTION as DISTRIBUTION
    from screener._version import __version__ as __version__
    from screener.algorithms import Algorithm as Algorithm
    from screener.algorithms import Decision as Decision
    from screener.algorithms import NaiveRoundRobin as NaiveRoundRobin
    from screener.algorithms import Result as Result
    from screener.algorithms import RoundRobin as RoundRobin
    from screener.algorithms import StopReason as StopReason
    from screener.algorithms import WeightedRoundRobin as WeightedRoundRobin
    from screener.algorithms import create_algorithm as create_algorithm
    from screener.api import arun as arun
    from screener.api import run as run
    from screener.crowd import WorkerPool as WorkerPool
    from screener.crowd import demo_pool as demo_pool
    from screener.crowd import load_pool_csv as load_pool_csv
    from screener.crowd import synthetic_pool as synthetic_pool
    from screener.errors import ScreenerError as ScreenerError
    from screener.gate import Gate as Gate
    from screener.simulation import BernoulliRewards as BernoulliRewards
    from screener.simulation import BetaRewards as BetaRewards
    from screener.simulation import simulate as simulate
    from screener.simulation import simulate_many as simulate_many

__all__ = [
    "DISTRIBUTION",
    "Algorithm",
    "BernoulliRewards",
    "BetaRewards",
    "Decision",
    "Gate",
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

__getattr__, __dir__ = attach(__name__, __file__, __all__)
