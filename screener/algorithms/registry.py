"""Algorithms by name, so runs can be described by plain data and rebuilt from a journal."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from screener.algorithms.base import Algorithm
from screener.algorithms.round_robin import NaiveRoundRobin, RoundRobin
from screener.algorithms.weighted_round_robin import WeightedRoundRobin
from screener.errors import ConfigError

__all__ = ["ALGORITHMS", "create_algorithm"]

ALGORITHMS: Mapping[str, type[Algorithm]] = {
    cls.name: cls for cls in (RoundRobin, WeightedRoundRobin, NaiveRoundRobin)
}


def create_algorithm(name: str, n_workers: int, params: Mapping[str, Any]) -> Algorithm:
    """Build algorithm ``name`` for ``n_workers`` from plain keyword parameters."""
    try:
        cls = ALGORITHMS[name]
    except KeyError:
        known = ", ".join(sorted(ALGORITHMS))
        raise ConfigError(f"unknown algorithm {name!r}", f"choose one of: {known}") from None
    try:
        return cls(n_workers, **params)
    except TypeError as error:
        raise ConfigError(f"bad parameters for {name}: {error}") from None
