"""The oracle conformance suite: the built-in simulated oracle passes it, broken oracles fail
the matching check with a message that says what is wrong."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Self

import pytest

from screener.crowd import WorkerPool
from screener.oracles import Answer, PullRequest, SimulatedOracle
from screener.testing import (
    CHECKS,
    ConformanceError,
    ConformanceReport,
    OracleConformance,
    check_oracle,
)


# ----------------------------------------------------------- the simulated oracle passes
class TestSimulatedImmediate(OracleConformance):
    oracle_class = SimulatedOracle
    silent_options: ClassVar[Mapping[str, Any]] = {"loss": 0.3}


class TestSimulatedLatency(OracleConformance):
    oracle_class = SimulatedOracle
    options: ClassVar[Mapping[str, Any]] = {"latency": "exponential:0.01"}
    silent_options: ClassVar[Mapping[str, Any]] = {"latency": "exponential:0.01", "loss": 0.3}


class TestSimulatedBatchRelease(OracleConformance):
    oracle_class = SimulatedOracle
    options: ClassVar[Mapping[str, Any]] = {"latency": "constant:0.005", "batch_release": 5}
    silent_options: ClassVar[Mapping[str, Any]] = {"batch_release": 5, "loss": 0.3}


class TestSimulatedDuplicatesNotRetractable(OracleConformance):
    oracle_class = SimulatedOracle
    options: ClassVar[Mapping[str, Any]] = {"duplicates": 0.3, "retractable": False}
    silent_options: ClassVar[Mapping[str, Any]] = {"duplicates": 0.3, "loss": 0.3}


def _report(factory: Any, **kwargs: Any) -> ConformanceReport:
    return asyncio.run(check_oracle(factory, **kwargs))


@pytest.mark.slow
def test_the_report_lists_every_check_and_notes_duplicates() -> None:
    report = _report(SimulatedOracle, options={"duplicates": 0.3}, silent_options={"loss": 0.3})
    assert [r.name for r in report.results] == list(CHECKS)
    assert report.ok, str(report)
    assert any("duplicate answer" in note for note in report["delivery"].notes)
    report.raise_for_failures()  # nothing failed: no exception


def test_timeouts_are_skipped_without_silent_options() -> None:
    report = _report(SimulatedOracle, only=["timeouts"])
    assert report["timeouts"].status == "skipped"
    assert "silent_options" in report["timeouts"].message
    assert report.ok


def test_an_unknown_check_name_is_refused() -> None:
    with pytest.raises(ConformanceError, match="unknown conformance check"):
        _report(SimulatedOracle, only=["nope"])


# -------------------------------------------------------------- broken oracles fail
class LeakyOracle(SimulatedOracle):
    """Starts a background task in open() and forgets it in close()."""

    async def open(self) -> None:
        self._poller = asyncio.create_task(asyncio.sleep(3600), name="leaky-poller")


class FlippingOracle(SimulatedOracle):
    """Each new instance answers differently: not a function of the seed."""

    instances: ClassVar[int] = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        FlippingOracle.instances += 1
        self.flip = FlippingOracle.instances % 2

    def _answer(self, request: PullRequest, reward: float) -> Answer:
        return Answer(request.pull_id, reward=float(self.flip))


class DeafOracle(SimulatedOracle):
    """Claims to be retractable (the default) but ignores cancel()."""

    async def cancel(self, pull_ids: Sequence[int]) -> None:
        return None


class TokenOracle(SimulatedOracle):
    """Puts a credential into describe(), which is journaled."""

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "api_token": "s3cret"}


class LaxOracle(SimulatedOracle):
    """Ignores options it does not know instead of refusing them (a typo goes unnoticed)."""

    @classmethod
    def from_options(cls, pool: WorkerPool, options: Mapping[str, Any], seed: int) -> Self:
        known = {option.name for option in cls.OPTIONS}
        return super().from_options(pool, {k: v for k, v in options.items() if k in known}, seed)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("oracle", "check", "message"),
    [
        (LeakyOracle, "close", "1 task(s) the oracle started are still pending (leaky-poller)"),
        (FlippingOracle, "deterministic", "must be a pure function of the seed"),
        (DeafOracle, "cancel", "were cancelled but their answers arrived afterwards"),
        (TokenOracle, "describe", "['api_token'] that look like credentials"),
        (LaxOracle, "options", "from_options accepted an undeclared option"),
    ],
    ids=["leaks-tasks", "nondeterministic", "ignores-cancel", "secret-in-describe", "lax"],
)
def test_a_broken_oracle_fails_the_matching_check(
    oracle: type[SimulatedOracle], check: str, message: str
) -> None:
    report = _report(oracle, silent_options={"loss": 0.3})
    failed = {r.name: r.message for r in report.failures}
    # A nondeterministic oracle is also one that from_options(describe()) cannot rebuild; a
    # key that describe() journals must be a declared option.
    also = {"deterministic": {"describe"}, "describe": {"options"}}.get(check, set())
    assert set(failed) == {check, *also}, str(report)
    assert message in failed[check]
    with pytest.raises(ConformanceError, match=check):
        report.raise_for_failures()


def test_the_pytest_helper_fails_with_the_check_message() -> None:
    class TestDeaf(OracleConformance):
        oracle_class = DeafOracle

    with pytest.raises(ConformanceError, match=r"cancel: pulls .* were cancelled"):
        TestDeaf().test_cancel()
    TestDeaf().test_delivery()  # the other checks still pass


def test_an_oracle_that_raises_fails_the_check_with_the_error() -> None:
    class Broken(SimulatedOracle):
        async def submit(self, requests: Sequence[PullRequest]) -> None:
            raise RuntimeError("platform down")

    report = _report(Broken, only=["delivery"])
    assert report["delivery"].message == "the oracle raised RuntimeError: platform down"
