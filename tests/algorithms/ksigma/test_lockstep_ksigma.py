"""RR's and WRR's lockstep (``screener.algorithms.ksigma.lockstep``) is their step: many runs
asked at once make, ask by ask and run by run, the pulls, stops and undecided workers of
``RoundRobin`` and ``WeightedRoundRobin`` themselves. The test that binds the two: a change
to either step that the other does not make fails here."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from lockstep_helpers import Answers, assert_lockstep_binds

from screener.algorithms import create_algorithm
from screener.algorithms.ksigma.lockstep import KSigmaLockstep, ksigma_lockstep


def _crowd(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, n])
    means = rng.uniform(0.7, 0.9, n)
    means[:2] = rng.uniform(0.05, 0.2, 2)
    return means


@pytest.mark.parametrize(
    ("name", "n", "params"),
    [
        ("rr", 12, {"k": 1.5, "delta": 0.3, "budget": 100_000}),  # to the stopping condition
        ("wrr", 12, {"k": 1.5, "delta": 0.3, "budget": 100_000}),
        ("wrr", 12, {"k": 1.5, "delta": 0.3, "budget": 100_000, "direction": "low"}),
        ("wrr", 20, {"k": 1.5, "budget": 60_000, "direction": "low", "min_answers": 3}),
        ("wrr", 20, {"k": 2.0, "budget": 20_000, "rho": 3.0}),
        ("rr", 30, {"k": 2.0, "budget": 3_000, "direction": "low"}),  # the budget spent
        ("wrr", 30, {"k": 1.0, "budget": 3_001, "delta": 0.3}),
    ],
)
def test_the_lockstep_asks_as_the_algorithm(name: str, n: int, params: dict[str, Any]) -> None:
    seeds = [3, 4, 5, 6]
    means = np.array([_crowd(n, seed) for seed in seeds])
    make = ksigma_lockstep(create_algorithm(name, n, params))
    assert make is not None
    lockstep = make(len(seeds))
    algorithms = [create_algorithm(name, n, {**params, "seed": seed}) for seed in seeds]
    assert_lockstep_binds(lockstep, algorithms, Answers(means, seeds))


def test_configurations_not_covered_get_no_lockstep() -> None:
    def of(name: str, params: dict[str, Any]) -> object:
        return ksigma_lockstep(create_algorithm(name, 10, params))

    assert of("nrr", {"budget": 100}) is None
    assert of("rr", {"budget": 100, "interval": "hoeffding"}) is None
    assert of("rr", {"budget": 100, "lower": -1.0}) is None
    assert of("rr", {"budget": 5}) is None  # not every worker answers at first
    assert of("rr", {}) is None  # no budget
    assert of("lsa", {"threshold": 0.5, "budget": 100}) is None
    make = of("wrr", {"budget": 100})
    assert callable(make) and isinstance(make(3), KSigmaLockstep)
