"""The outcome of conformance checks: each check's result, the report over them, and the
error a broken contract raises."""

from __future__ import annotations

from dataclasses import dataclass

from screener.errors import ScreenerError

__all__ = ["CheckResult", "ConformanceError", "ConformanceReport", "Failed"]


class ConformanceError(ScreenerError, AssertionError):
    """An oracle broke its contract (an AssertionError, so pytest reports it as a failure).

    Examples
    --------
    >>> import asyncio
    >>> from screener.oracles import SimulatedOracle
    >>> from screener.testing import check_oracle
    >>> try:
    ...     asyncio.run(check_oracle(SimulatedOracle, only=["nope"]))
    ... except ConformanceError as error:
    ...     print(str(error).split(" (")[0])
    unknown conformance check(s): nope
    """


class Failed(Exception):
    """Raised inside a check with the one-line failure message."""


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one named check: passed, failed (``message`` says why) or skipped.

    Examples
    --------
    >>> import asyncio
    >>> from screener.oracles import SimulatedOracle
    >>> from screener.testing import check_oracle
    >>> report = asyncio.run(check_oracle(SimulatedOracle, options={}, only=["deterministic"]))
    >>> result = report["deterministic"]
    >>> result.name, result.status
    ('deterministic', 'passed')
    """

    name: str
    status: str  # "passed" | "failed" | "skipped"
    message: str = ""
    seconds: float = 0.0
    notes: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True)
class ConformanceReport:
    """Every check's result, in the order they ran.

    Examples
    --------
    Its text is one line per check (status, name, seconds) and the checks' notes:

    >>> import asyncio
    >>> from screener.testing import check_oracle
    >>> from screener.oracles import SimulatedOracle
    >>> checks = ["deterministic", "describe"]
    >>> report = asyncio.run(check_oracle(SimulatedOracle, options={}, only=checks))
    >>> print(report)  # doctest: +ELLIPSIS
    conformance of SimulatedOracle:
      passed  deterministic ...
      passed  describe ...
    >>> report.raise_for_failures()  # nothing failed: nothing raised
    """

    oracle: str
    results: tuple[CheckResult, ...]

    @property
    def ok(self) -> bool:
        """True when no check failed (skipped checks do not count against the oracle)."""
        return not self.failures

    @property
    def failures(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.status == "failed")

    def __getitem__(self, name: str) -> CheckResult:
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError(name)

    def as_pytest_outcome(self) -> CheckResult:
        """The only check of a one-check report, as a pytest test ends: pass, skip or fail
        (the pytest base classes' ``run_check``)."""
        (result,) = self.results
        if result.status == "skipped":
            import pytest  # only the pytest base classes call this, under pytest

            pytest.skip(result.message)
        if result.status == "failed":
            raise ConformanceError(f"{result.name}: {result.message}")
        return result

    def raise_for_failures(self) -> None:
        """Raise ConformanceError naming every failed check."""
        if self.failures:
            lines = "; ".join(f"{r.name}: {r.message}" for r in self.failures)
            raise ConformanceError(
                f"{self.oracle} failed {len(self.failures)} conformance check(s): {lines}",
                "see the oracle contract in screener/oracles/base.py",
            )

    def __str__(self) -> str:
        rows = [f"conformance of {self.oracle}:"]
        for r in self.results:
            detail = f" - {r.message}" if r.message else ""
            rows.append(f"  {r.status:7s} {r.name:16s} {r.seconds:6.3f}s{detail}")
            rows.extend(f"          note: {note}" for note in r.notes)
        return "\n".join(rows)
