"""One truth per number: in every algorithm's result, at every step of a run, each worker's
estimate lies inside its own interval (both are numbers of one kind), or is undefined."""

from __future__ import annotations

import math

import numpy as np
import pytest

from screener.algorithms import AlgorithmSetup, Result, create_algorithm
from screener.testing.algorithm_conformance import TEST_SETUPS

CASES = [
    pytest.param(name, setup, id=f"{name}{setup.label and '-' + setup.label}")
    for name, setups in TEST_SETUPS.items()
    for setup in setups
]


def _outside(result: Result) -> list[str]:
    """The workers whose estimate lies outside their interval, described."""
    return [
        f"worker {w.arm}: {w.estimate!r} not in [{w.lower!r}, {w.upper!r}] ({w.pulls} answers)"
        for w in result.workers
        if math.isfinite(w.estimate) and not w.lower <= w.estimate <= w.upper
    ]


@pytest.mark.parametrize(("name", "setup"), CASES)
def test_every_estimate_lies_in_its_interval_at_every_step(
    name: str, setup: AlgorithmSetup
) -> None:
    for seed in range(3):
        rng = np.random.default_rng(seed)
        means = np.asarray(setup.means or np.linspace(0.1, 0.95, setup.n_workers))
        algorithm = create_algorithm(name, setup.n_workers, {**setup.params, "seed": seed})
        for _ in range(400):
            ask = algorithm.ask(int(rng.integers(1, 5)))
            if ask.done:
                break
            rewards = (rng.random(len(ask)) < means[ask.arms]).astype(np.float64)
            algorithm.tell_many(ask.ids, rewards)
            assert _outside(algorithm.result()) == [], (seed, algorithm.n_answered)
        assert _outside(algorithm.result()) == []
