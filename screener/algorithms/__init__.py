"""Screening algorithms: pure ask/tell decision objects (no I/O, no clock, no awaits)."""

from screener.algorithms.base import (
    Algorithm,
    Ask,
    AskState,
    Pull,
    PullInfo,
    PullStatus,
    TellOutcome,
)
from screener.algorithms.ksigma import KSigmaAlgorithm
from screener.algorithms.registry import ALGORITHMS, create_algorithm
from screener.algorithms.result import Decision, Result, StopReason, Threshold, WorkerResult
from screener.algorithms.round_robin import NaiveRoundRobin, RoundRobin
from screener.algorithms.weighted_round_robin import WeightedRoundRobin

__all__ = [
    "ALGORITHMS",
    "Algorithm",
    "Ask",
    "AskState",
    "Decision",
    "KSigmaAlgorithm",
    "NaiveRoundRobin",
    "Pull",
    "PullInfo",
    "PullStatus",
    "Result",
    "RoundRobin",
    "StopReason",
    "TellOutcome",
    "Threshold",
    "WeightedRoundRobin",
    "WorkerResult",
    "create_algorithm",
]
