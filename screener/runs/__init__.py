"""Stored runs: start, resume and read one back; replay its journal into an algorithm; what
it was answered (after invalidated gold questions), rescored results, exports and replays
under another algorithm. The journal (``screener.journal``) only stores; this package gives
the stored values their meaning. A run's result has one route, written down in
``screener.runs.results``.
"""

from screener.runs.answers import (
    Invalidation,
    LoggedAnswer,
    answers_by_worker,
    invalidation_event,
    invalidations,
    logged_answers,
)
from screener.runs.results import load_result, load_results
from screener.runs.state import pending_pulls, replay
from screener.runs.stored import (
    build_algorithm,
    observed_accuracies,
    read_run,
    restored,
    run_prices,
    worker_pool,
)

__all__ = [
    "Invalidation",
    "LoggedAnswer",
    "answers_by_worker",
    "build_algorithm",
    "invalidation_event",
    "invalidations",
    "load_result",
    "load_results",
    "logged_answers",
    "observed_accuracies",
    "pending_pulls",
    "read_run",
    "replay",
    "restored",
    "run_prices",
    "worker_pool",
]
