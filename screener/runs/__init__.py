"""Stored runs: start, resume and read one back; replay its journal into an algorithm; what
it was answered (after invalidated gold questions), rescored results, exports and replays
under another algorithm. The journal (``screener.journal``) only stores; this package gives
the stored values their meaning. A run's result has one route, written down in
``screener.runs.results``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from screener._lazy import attach

if TYPE_CHECKING:  # the public names, each imported when first read (screener._lazy)
    from screener.runs.answers import Invalidation as Invalidation
    from screener.runs.answers import LoggedAnswer as LoggedAnswer
    from screener.runs.answers import answers_by_worker as answers_by_worker
    from screener.runs.answers import invalidation_event as invalidation_event
    from screener.runs.answers import invalidations as invalidations
    from screener.runs.answers import logged_answers as logged_answers
    from screener.runs.results import load_result as load_result
    from screener.runs.results import load_results as load_results
    from screener.runs.state import pending_pulls as pending_pulls
    from screener.runs.state import replay as replay
    from screener.runs.stored import build_algorithm as build_algorithm
    from screener.runs.stored import observed_accuracies as observed_accuracies
    from screener.runs.stored import oracle_name as oracle_name
    from screener.runs.stored import read_run as read_run
    from screener.runs.stored import restored as restored
    from screener.runs.stored import run_prices as run_prices
    from screener.runs.stored import run_state as run_state
    from screener.runs.stored import worker_pool as worker_pool

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
    "oracle_name",
    "pending_pulls",
    "read_run",
    "replay",
    "restored",
    "run_prices",
    "run_state",
    "worker_pool",
]

__getattr__, __dir__ = attach(__name__, __file__, __all__)
