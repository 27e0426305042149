"""Oracles: pluggable asynchronous sources of answers to gold questions."""

from screener.oracles.base import Answer, Oracle, OracleOption, PullRequest, RetryNote
from screener.oracles.latency import Latency
from screener.oracles.registry import (
    ENTRY_POINT_GROUP,
    OracleInfo,
    available_oracles,
    load_oracle_class,
)
from screener.oracles.simulated import SimulatedOracle

__all__ = [
    "ENTRY_POINT_GROUP",
    "Answer",
    "Latency",
    "Oracle",
    "OracleInfo",
    "OracleOption",
    "PullRequest",
    "RetryNote",
    "SimulatedOracle",
    "available_oracles",
    "load_oracle_class",
]
