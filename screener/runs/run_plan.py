"""What defines a run before it starts (``RunPlan``): the pool, the algorithm and its
parameters, the oracle and its options, the seed, how the run talks to its oracle and what
its questions cost. Apart from starting one (screener.runs.session) so that setting a run up
and checking it (screener.runs.setup, `screener plan`) does not load the journal."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from screener.algorithms import Algorithm, create_algorithm
from screener.checks import MAX_BUDGET, MAX_CONCURRENCY, check_count, check_seed
from screener.crowd import WorkerPool
from screener.errors import ConfigError, ScreenerError
from screener.money import Prices
from screener.oracles import Oracle, load_oracle_class
from screener.orchestrator import RunOptions

__all__ = ["RunPlan", "default_pool"]


@dataclass(frozen=True)
class RunPlan:
    """Everything that defines a run; ``prices``: what its questions cost, when given."""

    pool: WorkerPool
    algorithm: str = "wrr"
    params: Mapping[str, Any] = field(default_factory=dict)
    oracle: str = "simulated"
    oracle_options: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    options: RunOptions = field(default_factory=RunOptions)
    prices: Prices | None = None

    def __post_init__(self) -> None:
        """The limits a run must stay within (screener.checks names them)."""
        check_seed(self.seed)
        if self.params.get("budget") is not None:
            fix = "give the number of answered gold questions to stop after"
            check_count("budget", self.params["budget"], 1, fix, maximum=MAX_BUDGET)
        fix = "questions in flight at once, e.g. 16"
        check_count("concurrency", self.options.concurrency, 1, fix, maximum=MAX_CONCURRENCY)

    def build(self) -> tuple[Algorithm, Oracle]:
        algorithm = create_algorithm(
            self.algorithm, len(self.pool), {**self.params, "seed": self.seed}
        )
        oracle_class = load_oracle_class(self.oracle)
        with _oracle_options(self.oracle):
            oracle = oracle_class.from_options(self.pool, self.oracle_options, self.seed)
        return algorithm, oracle


def default_pool(oracle: str, options: Mapping[str, Any]) -> WorkerPool:
    """The oracle's own workers, for a run given no pool: a dataset's, the demo pool for the
    simulated oracle. An oracle with none is refused rather than handed simulated workers."""
    oracle_class = load_oracle_class(oracle)
    with _oracle_options(oracle):
        own = oracle_class.default_pool(options)
    if own is None:
        raise ConfigError(
            f"the {oracle} oracle has no workers of its own, and no pool was given",
            "give a pool file (CSV with a worker column) or, for a test, --workers N",
        )
    return own


@contextlib.contextmanager
def _oracle_options(name: str) -> Iterator[None]:
    """Oracle options are user input, which an oracle (a plugin's too) may reject with a plain
    ValueError or TypeError: that is bad input, one line, not a crash."""
    try:
        yield
    except ScreenerError:
        raise
    except (TypeError, ValueError) as error:
        raise ConfigError(
            f"bad option for the {name} oracle: {error}",
            "check its -O KEY=VALUE options or [oracle] table; `screener oracles` lists them",
        ) from None
