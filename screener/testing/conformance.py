"""The oracle conformance suite's runner: real oracles, real asyncio, a real SQLite journal.

Each check builds fresh oracles with the factory, drives them through the contract of
``screener.oracles.base`` and either passes or fails with one line saying what went wrong
and what the contract asks for. No part of the oracle is mocked.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from screener.crowd import WorkerPool, synthetic_pool
from screener.oracles import Oracle
from screener.testing._oracle_checks import CHECKS, CheckContext, OracleFactory
from screener.testing._report import CheckResult, ConformanceError, ConformanceReport, Failed

__all__ = ["check_oracle", "default_pool"]


def default_pool() -> WorkerPool:
    """Eight simulated workers (one spammer) with accuracies, no question bank.

    Examples
    --------
    >>> pool = default_pool()
    >>> len(pool), pool.bank is None
    (8, True)
    """
    return synthetic_pool(8, 1, seed=2017)


async def check_oracle(
    factory: OracleFactory | type[Oracle],
    *,
    options: Mapping[str, Any] | None = None,
    silent_options: Mapping[str, Any] | None = None,
    pool: WorkerPool | None = None,
    seed: int = 0,
    only: Sequence[str] | None = None,
    settle: float = 0.2,
    answer_timeout: float = 5.0,
) -> ConformanceReport:
    """Run the conformance checks against oracles built by ``factory`` and report.

    ``factory`` is ``factory(pool, options, seed) -> Oracle`` or an Oracle class (its
    ``from_options`` is used). ``options`` must make an oracle that answers every pull;
    ``silent_options`` (optional) one that never answers some pulls, for the "timeouts" check
    (skipped without them). ``settle`` is how long the oracle may take to have answers ready
    (raise it above the oracle's latency); ``answer_timeout`` bounds each wait for answers.
    ``only`` runs a subset of :data:`CHECKS` by name.

    Examples
    --------
    >>> import asyncio
    >>> from screener.oracles import SimulatedOracle
    >>> report = asyncio.run(check_oracle(SimulatedOracle, options={"latency": "none"}))
    >>> report.ok, [result.name for result in report.failures]
    (True, [])
    >>> report["timeouts"].status  # no silent_options given
    'skipped'
    """
    build: OracleFactory = factory
    if isinstance(factory, type) and issubclass(factory, Oracle):
        build = factory.from_options
    context = CheckContext(
        build, dict(options or {}), silent_options, pool or default_pool(), seed, settle,
        answer_timeout,
    )  # fmt: skip
    names = list(CHECKS) if only is None else list(only)
    unknown = [name for name in names if name not in CHECKS]
    if unknown:
        raise ConformanceError(
            f"unknown conformance check(s): {', '.join(unknown)}", f"use {', '.join(CHECKS)}"
        )
    results = [await _run_check(name, context) for name in names]
    label = getattr(factory, "__qualname__", None) or type(factory).__qualname__
    return ConformanceReport(label, tuple(results))


async def _run_check(name: str, context: CheckContext) -> CheckResult:
    context.notes = []
    started = time.perf_counter()
    try:
        skipped = await CHECKS[name](context)
    except Failed as failure:
        status, message = "failed", str(failure)
    except Exception as error:  # an oracle raising is a failure of that check, not of the suite
        status, message = "failed", f"the oracle raised {type(error).__name__}: {error}"
    else:
        status, message = ("skipped", skipped) if skipped else ("passed", "")
    seconds = time.perf_counter() - started
    return CheckResult(name, status, message, seconds, tuple(context.notes))
