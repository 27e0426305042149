"""Test doubles and simulators of a crowdsourcing platform, apart from the conformance suites
of ``screener.testing`` (what a plugin author runs): a real dataset replayed as a task stream
of arriving workers (``platform``: ``TaskStream``, ``run_stream``), with adversarial workers
(``adversaries``) and who comes when (``arrivals``), what a replay bought (``outcome``), and
the platform stand-in that asks a gate for work over HTTP (``standin``, ``screener
standin``). The tests, the benchmarks and ``screener standin`` use them; no plugin needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from screener._lazy import attach

if TYPE_CHECKING:  # the public names, each imported when first read (screener._lazy)
    from screener.testing.doubles.adversaries import ADVERSARIES as ADVERSARIES
    from screener.testing.doubles.adversaries import Adversary as Adversary
    from screener.testing.doubles.arrivals import StandInSettings as StandInSettings
    from screener.testing.doubles.arrivals import plan_arrivals as plan_arrivals
    from screener.testing.doubles.outcome import StreamOutcome as StreamOutcome
    from screener.testing.doubles.platform import StreamSettings as StreamSettings
    from screener.testing.doubles.platform import TaskStream as TaskStream
    from screener.testing.doubles.platform import run_stream as run_stream
    from screener.testing.doubles.standin import StandIn as StandIn
    from screener.testing.doubles.standin import StandInReport as StandInReport
    from screener.testing.doubles.standin import run_standin as run_standin

__all__ = [
    "ADVERSARIES",
    "Adversary",
    "StandIn",
    "StandInReport",
    "StandInSettings",
    "StreamOutcome",
    "StreamSettings",
    "TaskStream",
    "plan_arrivals",
    "run_standin",
    "run_stream",
]

__getattr__, __dir__ = attach(__name__, __file__, __all__)
