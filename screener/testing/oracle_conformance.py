"""``OracleConformance``: the conformance checks as pytest test methods, one per check."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

from screener.crowd import WorkerPool
from screener.errors import ConfigError
from screener.oracles import Oracle
from screener.testing._report import CheckResult
from screener.testing.conformance import check_oracle

__all__ = ["OracleConformance"]


class OracleConformance:
    """Subclass it as ``Test...`` in a plugin's tests; pytest then runs one test per check.

    Set ``oracle_class`` and ``options`` (and ``silent_options`` for the timeouts check), or
    override ``make_oracle`` when building the oracle takes more than options (files to
    create, a helper process). The test methods are plain functions that run their check
    with ``asyncio.run``, so no pytest-asyncio configuration is needed.

    Examples
    --------
    In a plugin's test module (pytest collects the ``Test`` class and runs one test per check):

    >>> from screener.oracles import SimulatedOracle
    >>> class TestSimulated(OracleConformance):
    ...     oracle_class = SimulatedOracle
    ...     options = {"latency": "none"}
    >>> TestSimulated().test_deterministic()  # one check, as pytest would run it
    """

    oracle_class: ClassVar[type[Oracle] | None] = None
    options: ClassVar[Mapping[str, Any]] = {}
    #: Options under which the oracle never answers some pulls; None skips "timeouts".
    silent_options: ClassVar[Mapping[str, Any] | None] = None
    #: None: eight simulated workers (``screener.testing.default_pool``).
    pool: ClassVar[WorkerPool | None] = None
    seed: ClassVar[int] = 0
    #: Seconds the oracle may need before its answers are ready; raise it above its latency.
    settle: ClassVar[float] = 0.2
    answer_timeout: ClassVar[float] = 5.0

    def make_oracle(self, pool: WorkerPool, options: Mapping[str, Any], seed: int) -> Oracle:
        """A fresh oracle; by default ``oracle_class.from_options(pool, options, seed)``."""
        if self.oracle_class is None:
            raise ConfigError(
                f"{type(self).__name__} sets no oracle_class",
                "set oracle_class = MyOracle or override make_oracle",
            )
        return self.oracle_class.from_options(pool, options, seed)

    def run_check(self, name: str) -> CheckResult:
        """Run one check and turn its outcome into pytest's: pass, skip or fail."""
        report = asyncio.run(
            check_oracle(
                self.make_oracle,
                options=self.options,
                silent_options=self.silent_options,
                pool=self.pool,
                seed=self.seed,
                only=[name],
                settle=self.settle,
                answer_timeout=self.answer_timeout,
            )
        )
        return report.as_pytest_outcome()

    def test_delivery(self) -> None:
        self.run_check("delivery")

    def test_receive_batches(self) -> None:
        self.run_check("receive_batches")

    def test_deterministic(self) -> None:
        self.run_check("deterministic")

    def test_cancel(self) -> None:
        self.run_check("cancel")

    def test_timeouts(self) -> None:
        self.run_check("timeouts")

    def test_close(self) -> None:
        self.run_check("close")

    def test_describe(self) -> None:
        self.run_check("describe")

    def test_options(self) -> None:
        self.run_check("options")
