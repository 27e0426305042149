"""The one way the tests build a run's plan (``RunPlan``) by hand.

A plain function rather than a fixture: plans are built at module level (a module's base
plan), inside helper coroutines and once per seed in a loop, and building one needs no
resource a fixture would own (the database is the test's own ``tmp_path`` or
``database_url``). A test that sets a run up from flags or a run file goes through
``screener.runs.setup.set_up_run`` instead, as ``screener run`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from screener.crowd import WorkerPool
from screener.money import Prices
from screener.orchestrator import RunOptions
from screener.runs.run_plan import RunPlan

#: How a test's run talks to its oracle unless it says otherwise: a few questions in flight,
#: and an answer given up on after 5 s rather than a minute, so a lost one fails fast.
TEST_OPTIONS = RunOptions(concurrency=8, timeout=5.0)


def make_plan(
    pool: WorkerPool,
    algorithm: str = "wrr",
    params: Mapping[str, Any] | None = None,
    *,
    seed: int,
    oracle: str = "simulated",
    oracle_options: Mapping[str, Any] | None = None,
    options: RunOptions = TEST_OPTIONS,
    prices: Prices | None = None,
) -> RunPlan:
    """A run of ``algorithm`` over ``pool``; the seed always named, since a test's numbers
    follow from it. A variant of a plan is ``dataclasses.replace(plan, ...)``."""
    return RunPlan(
        pool, algorithm, dict(params or {}), oracle, dict(oracle_options or {}), seed, options,
        prices,
    )  # fmt: skip
