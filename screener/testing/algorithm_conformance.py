"""Conformance checks for algorithms: run them against your algorithm before you ship it.

Fifteen named checks build fresh algorithms with your factory and drive them, for real,
through the ask/tell contract of ``screener.algorithms.base`` (no mocks). Most play seeded
random histories, as a live run would: asks of 1 to 8 pulls and sometimes a batch of up to
16 per worker,
answers out of order and in batches (some twice, some after their pull was released),
releases, and workers who leave. Every history checks, at every step, that pull ids are dense,
``n_pending`` / ``n_answered`` / ``n_asked`` agree with what happened, a worker who left is
never asked again, answered plus in-flight pulls never exceed the budget, ``ask`` says WAIT
only while answers are in flight, and every tell has the outcome the contract gives it.

- ``deterministic``: two algorithms built with the same seed behave the same;
- ``batch_asks``: ``ask(k)`` hands out what k calls of ``ask(1)`` would (same arms, seqs,
  ids) and the run ends with the same result; ``ask(0)`` is a ConfigError;
- ``scalar_path``: ``ask1`` and ``tell1`` hand out and take what ``ask(1)`` and ``tell``
  would (the same pulls, outcomes, pending counts and result) through whole histories;
- ``results``: taking ``result()`` after every call changes nothing, and each result shows
  every worker undecided or decided as it leans; a result is a frozen snapshot that the
  algorithm moving on, or a caller editing its mappings, leaves alone;
- ``idempotent_tell``: a second answer to a pull (alone, in a batch, or twice in one batch)
  is a DUPLICATE no-op; the first copy counts;
- ``unknown_pull``: ids never handed out raise UnknownPullError from ``tell``, ``tell_many``
  (rejecting the whole batch) and ``release``;
- ``late_tell``: an answer to a released pull is LATE and changes nothing; releasing twice,
  or after the answer, returns False;
- ``reward_bounds``: rewards outside ``[lower, upper]`` or not finite raise
  InvalidRewardError (the whole batch is rejected); the bounds themselves are accepted;
- ``scalar_tell``: ``tell1`` keeps ``tell``'s rules (unknown ids, bad rewards, duplicates,
  late answers) and ``ask1`` numbers its pulls densely;
- ``release_retry``: a released pull is asked again first, same worker and seq, new id;
- ``unavailable``: a worker who leaves is never asked again, nor its released pull retried;
  its first reason is kept; everyone leaving ends the run; unknown workers are a ConfigError;
- ``budget``: rebuilt with a small budget from ``params()``, the run stops, never has more
  answered and in-flight pulls than the budget, BUDGET_SPENT means exactly the budget was
  answered, and it stays DONE;
- ``rebuild``: ``params()`` is JSON (the journal stores it), does not change during a run,
  and the algorithm rebuilt from it (``create_algorithm`` for registered names) behaves the
  same;
- ``replay``: ``screener.runs.state`` of the events the orchestrator would journal
  rebuilds the live algorithm's state (the same result, numbers to 1e-9 relative: replay
  tells each run of answers in one batch, which may round differently), and the rebuilt
  algorithm then hands out exactly the pulls the live one does, to the end;
- ``snapshot``: the state stored for a run's snapshot (``screener.algorithms.snapshot``)
  reads back as the live state, exactly, and goes on alike (skipped, saying why, when the
  state cannot be pickled: runs then replay their journal).

No check depends on what an algorithm decides, only on the contract; where the contract
allows two behaviours (stopping with DONE instead of handing out a retry once the stopping
condition holds, or ``ask(1)`` saying DONE where a batch already had its last pulls), both
are accepted. A check that cannot run says why (it is "skipped", never silently passed).

With pytest, in your package's ``tests/test_conformance.py``::

    from screener.testing.algorithm_conformance import AlgorithmConformance
    from my_package import MyAlgorithm

    class TestMyAlgorithm(AlgorithmConformance):
        algorithm_class = MyAlgorithm
        params = {"threshold": 0.6, "budget": 300}  # small: each history ends quickly
        means = (0.2, 0.4, 0.5, 0.7, 0.8, 0.95)     # the simulated workers' answer rates

Override ``make_algorithm(self, n_workers, seed)`` when building it takes more than keyword
parameters. Without pytest, or for a report::

    from screener.testing.algorithm_conformance import check_algorithm

    report = check_algorithm(MyAlgorithm, {"threshold": 0.6, "budget": 300})
    print(report)
    report.raise_for_failures()

``check_algorithm`` also takes a registered name (``check_algorithm("wrr")`` uses the small
test parameters its class lists in ``test_setups``, gathered in :data:`TEST_SETUPS`) or any
``factory(n_workers, seed) -> Algorithm``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

from screener.algorithms import ALGORITHMS, Algorithm, AlgorithmSetup, create_algorithm
from screener.errors import ConfigError
from screener.testing._algorithm_checks import ALGORITHM_CHECKS as CONTRACT_CHECKS
from screener.testing._algorithm_context import AlgorithmFactory, Context
from screener.testing._report import CheckResult, ConformanceError, ConformanceReport, Failed
from screener.testing._roster_checks import ROSTER_CHECKS

__all__ = [
    "ALGORITHM_CHECKS",
    "TEST_SETUPS",
    "AlgorithmConformance",
    "AlgorithmConformanceReport",
    "check_algorithm",
]


#: The small test parameters of every registered algorithm, read from its class's
#: ``test_setups`` (first setup the default). Each variant covers a code path of its own
#: (an interval, a mode, a scheduling rule).
TEST_SETUPS: Mapping[str, tuple[AlgorithmSetup, ...]] = MappingProxyType(
    {name: cls.test_setups for name, cls in ALGORITHMS.items()}
)


#: Every check by name, in the order they run: the ask/tell contract, then open rosters.
ALGORITHM_CHECKS: Mapping[str, Callable[[Context], str | None]] = {
    **CONTRACT_CHECKS,
    **ROSTER_CHECKS,
}


class AlgorithmConformanceReport(ConformanceReport):
    """Every check's result, in the order they ran (``oracle`` holds the algorithm's label).

    Examples
    --------
    >>> from screener.testing import check_algorithm
    >>> report = check_algorithm("toloka-rule", {"threshold": 0.6})
    >>> report.ok, len(report.results)
    (True, 18)
    """

    def raise_for_failures(self) -> None:
        """Raise ConformanceError naming every failed check."""
        try:
            super().raise_for_failures()
        except ConformanceError as error:
            message = str(error.args[0])
            raise ConformanceError(
                message, "see the contract in screener/algorithms/base.py"
            ) from None


def check_algorithm(
    algorithm: str | type[Algorithm] | AlgorithmFactory,
    params: Mapping[str, Any] | None = None,
    *,
    n_workers: int | None = None,
    means: Sequence[float] | None = None,
    seed: int = 0,
    histories: int = 2,
    steps: int = 3000,
    only: Sequence[str] | None = None,
) -> AlgorithmConformanceReport:
    """Run the conformance checks against algorithms built from ``algorithm`` and report.

    ``algorithm`` is a registered name (without ``params``: its first setup in
    :data:`TEST_SETUPS`), an Algorithm class (built as ``cls(n_workers, **params, seed=...)``)
    or a ``factory(n_workers, seed)``. Keep the parameters small (a budget of a few hundred
    pulls) so that each history ends. ``means`` are the simulated workers' rates of the top
    reward (default: spread from 0.15 to 0.95); ``histories`` random histories are played per
    check, each at most ``steps`` steps. ``only`` runs a subset of :data:`ALGORITHM_CHECKS`.

    Examples
    --------
    >>> report = check_algorithm("toloka-rule", {"threshold": 0.6})
    >>> report.ok, len(report.results)
    (True, 18)
    """
    factory, label, setup = _resolve(algorithm, params)
    n = n_workers or setup.n_workers
    rates = tuple(means or setup.means or [0.15 + 0.8 * i / max(n - 1, 1) for i in range(n)])
    if len(rates) != n:
        raise ConfigError(f"{len(rates)} means for {n} workers", "give one rate per worker")
    names = list(ALGORITHM_CHECKS) if only is None else list(only)
    unknown = [name for name in names if name not in ALGORITHM_CHECKS]
    if unknown:
        raise ConformanceError(
            f"unknown conformance check(s): {', '.join(unknown)}",
            f"use {', '.join(ALGORITHM_CHECKS)}",
        )
    context = Context(factory, n, rates, seed, histories, steps)
    results = tuple(_run_check(name, context) for name in names)
    return AlgorithmConformanceReport(label, results)


def _resolve(
    algorithm: str | type[Algorithm] | AlgorithmFactory, params: Mapping[str, Any] | None
) -> tuple[AlgorithmFactory, str, AlgorithmSetup]:
    if isinstance(algorithm, str):
        if params is None:
            setups = TEST_SETUPS.get(algorithm)
            if not setups:
                raise ConformanceError(
                    f"no test parameters for algorithm {algorithm!r}", "pass params={...}"
                )
            return _resolve(algorithm, setups[0].params)[0], algorithm, setups[0]
        name, fixed = algorithm, dict(params)
        return (
            lambda n, seed: create_algorithm(name, n, {**fixed, "seed": seed}),
            name,
            AlgorithmSetup(fixed),
        )
    if isinstance(algorithm, type):
        cls, fixed = algorithm, dict(params or {})
        build: AlgorithmFactory = lambda n, seed: cls(n, **{**fixed, "seed": seed})  # noqa: E731
        return build, cls.__qualname__, AlgorithmSetup(fixed)
    if params is not None:
        raise ConfigError(
            "params go with an algorithm name or class, not a factory",
            "build the algorithm with its parameters inside the factory",
        )
    label = getattr(algorithm, "__qualname__", None) or type(algorithm).__qualname__
    return algorithm, label, AlgorithmSetup({})


def _run_check(name: str, context: Context) -> CheckResult:
    context.notes = []
    started = time.perf_counter()
    try:
        skipped = ALGORITHM_CHECKS[name](context)
    except Failed as failure:
        status, message = "failed", str(failure)
    except Exception as error:  # an algorithm raising is a failure of that check
        status, message = "failed", f"the algorithm raised {type(error).__name__}: {error}"
    else:
        status, message = ("skipped", skipped) if skipped else ("passed", "")
    seconds = time.perf_counter() - started
    return CheckResult(name, status, message, seconds, tuple(context.notes))


class AlgorithmConformance:
    """Subclass it as ``Test...`` in your tests; pytest then runs one test per check.

    Set ``algorithm_class`` and ``params`` (small: a budget of a few hundred pulls), or
    override ``make_algorithm`` when building the algorithm takes more than keyword
    parameters. ``means`` are the simulated workers' rates of the top reward (one per worker).

    Examples
    --------
    In a test module (pytest collects the ``Test`` class and runs one test per check):

    >>> from screener.algorithms import TolokaRule
    >>> class TestMyRule(AlgorithmConformance):
    ...     algorithm_class = TolokaRule
    ...     params = {"threshold": 0.6}
    >>> TestMyRule().test_batch_asks()  # one check, as pytest would run it
    """

    algorithm_class: ClassVar[type[Algorithm] | None] = None
    params: ClassVar[Mapping[str, Any]] = {}
    n_workers: ClassVar[int] = 6
    means: ClassVar[Sequence[float] | None] = None
    seed: ClassVar[int] = 0
    histories: ClassVar[int] = 2

    def make_algorithm(self, n_workers: int, seed: int) -> Algorithm:
        """A fresh algorithm; by default ``algorithm_class(n_workers, **params, seed=seed)``."""
        if self.algorithm_class is None:
            raise ConfigError(
                f"{type(self).__name__} sets no algorithm_class",
                "set algorithm_class = MyAlgorithm or override make_algorithm",
            )
        return self.algorithm_class(n_workers, **{**self.params, "seed": seed})

    def run_check(self, name: str) -> CheckResult:
        """Run one check and turn its outcome into pytest's: pass, skip or fail."""
        report = check_algorithm(
            self.make_algorithm,
            n_workers=self.n_workers,
            means=self.means,
            seed=self.seed,
            histories=self.histories,
            only=[name],
        )
        return report.as_pytest_outcome()

    def test_deterministic(self) -> None:
        self.run_check("deterministic")

    def test_batch_asks(self) -> None:
        self.run_check("batch_asks")

    def test_results(self) -> None:
        self.run_check("results")

    def test_idempotent_tell(self) -> None:
        self.run_check("idempotent_tell")

    def test_unknown_pull(self) -> None:
        self.run_check("unknown_pull")

    def test_late_tell(self) -> None:
        self.run_check("late_tell")

    def test_reward_bounds(self) -> None:
        self.run_check("reward_bounds")

    def test_release_retry(self) -> None:
        self.run_check("release_retry")

    def test_unavailable(self) -> None:
        self.run_check("unavailable")

    def test_budget(self) -> None:
        self.run_check("budget")

    def test_rebuild(self) -> None:
        self.run_check("rebuild")

    def test_replay(self) -> None:
        self.run_check("replay")

    def test_snapshot(self) -> None:
        self.run_check("snapshot")

    def test_joining(self) -> None:
        self.run_check("joining")

    def test_join_replay(self) -> None:
        self.run_check("join_replay")

    def test_leave_return(self) -> None:
        self.run_check("leave_return")
