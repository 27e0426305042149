"""Conformance checks for the plug points: oracles (below) and algorithms
(``screener.testing.algorithm_conformance``: ``AlgorithmConformance``, ``check_algorithm``).
Run them against your plugin before you ship it.

Seven named checks build fresh oracles from your factory and drive them, for real, through
the contract of ``screener.oracles.base`` (no mocks):

- ``delivery``: pulls submitted one by one and in batches each get an answer with the right
  pull id (second copies are allowed, and noted);
- ``receive_batches``: answers ready together come back from one ``receive()``;
- ``deterministic``: two fresh oracles with the same seed answer each pull the same
  (reward, response, unavailable, or "an error"; timings are not compared);
- ``cancel``: ``cancel()`` never raises, and an oracle that is retractable (the default; set
  ``retractable = False`` on the class or instance otherwise) sends nothing for cancelled
  pulls afterwards;
- ``timeouts``: under the real orchestrator and a SQLite journal, pulls the oracle never
  answers (``silent_options``) become "timed_out" events and the run still ends;
- ``close``: after ``close()`` no asyncio task the oracle started is pending; a second
  ``close()`` is harmless;
- ``describe``: ``describe()`` is JSON, has no credential-like keys, and
  ``from_options(pool, describe(), seed)`` rebuilds an oracle that describes itself the same
  and gives the same answers.

With pytest (simplest: one test per check, failures and skips reported by name, no
pytest-asyncio configuration needed), in your plugin's ``tests/test_conformance.py``::

    from screener.testing import OracleConformance
    from my_plugin import MyOracle

    class TestMyOracle(OracleConformance):
        oracle_class = MyOracle
        options = {"latency": "none"}           # must answer every pull
        silent_options = {"drop": 0.3}          # never answers some pulls (optional)

Override ``make_oracle(self, pool, options, seed)`` instead of setting ``oracle_class`` when
building the oracle needs more than options. Without pytest, or for a report::

    import asyncio
    from screener.testing import check_oracle

    report = asyncio.run(check_oracle(MyOracle, options={}, silent_options={"drop": 0.3}))
    print(report)
    report.raise_for_failures()

A base class was chosen over generated test functions because subclassing with two
attributes is all a plugin author writes, and pytest names each failing check.
"""

from screener.testing._oracle_checks import CHECKS, OracleFactory
from screener.testing._report import CheckResult, ConformanceError, ConformanceReport
from screener.testing.algorithm_conformance import (
    ALGORITHM_CHECKS,
    AlgorithmConformance,
    AlgorithmConformanceReport,
    check_algorithm,
)
from screener.testing.conformance import check_oracle, default_pool
from screener.testing.oracle_conformance import OracleConformance

__all__ = [
    "ALGORITHM_CHECKS",
    "CHECKS",
    "AlgorithmConformance",
    "AlgorithmConformanceReport",
    "CheckResult",
    "ConformanceError",
    "ConformanceReport",
    "OracleConformance",
    "OracleFactory",
    "check_algorithm",
    "check_oracle",
    "default_pool",
]
