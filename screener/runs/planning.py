"""What a screening may cost, before any gold question is paid for (``screener plan``).

The chosen algorithm runs, unchanged, on simulated workers many times with different seeds
(``simulate``, the synchronous path: no journal, no event loop; ``simulate_many`` spreads the
runs over the CPUs, with the same results). The workers' accuracies come from what the
requester knows: a pool's accuracy column, or a pilot run's observed accuracies, from which
each simulated run draws its workers afresh (a bootstrap: the crowd varies from run to run as
real crowds do). What comes out is the distribution of gold questions per worker and
in total, and how often a run ends with workers still undecided: the price of the algorithm's
promise on a crowd like this one, not a promise itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from screener.algorithms import Algorithm, create_algorithm
from screener.checks import MAX_SEED, check_seed
from screener.errors import ConfigError
from screener.money import Prices
from screener.simulation import BernoulliRun, RewardModel, map_seeds
from screener.simulation.lockstep import runs_together
from screener.simulation.loop import drive

__all__ = ["DEFAULT_CAP_PER_WORKER", "MAX_RUNS", "CostPlan", "plan_cost"]

#: Most simulated runs a plan may ask for: enough for a 90th percentile to be steady.
MAX_RUNS = 10_000
#: Questions per worker, on average, that a plan allows an algorithm bounding none (no
#: budget, no per-worker bound): a run with them all is a budget of this many per worker,
#: about what real workers answer (the cap of the real-data benchmark).
DEFAULT_CAP_PER_WORKER = 60
#: About what a pool of fresh processes costs to start (each is spawned and imports numpy and
#: screener, which takes a second or two on a busy machine). The runs go to the pool only when
#: the time it saves, half the work on two processes, is more than that.
POOL_START_SECONDS = 2.0


@dataclass(frozen=True)
class CostPlan:
    """The simulated runs of one plan: questions per worker (one row per run), whether each
    run ended with undecided workers, and how it stopped. ``capped``: whether the plan set
    the budget in ``params`` itself (an algorithm that bounds no questions, given none).

    Examples
    --------
    >>> cost = plan_cost("toloka-rule", {"threshold": 0.6}, [0.9, 0.8, 0.5], runs=20)
    >>> cost.questions.shape, int(cost.questions.max()) <= 20  # accept_after is 20
    ((20, 3), True)
    >>> sorted(cost.summary())
    ['capped', 'mistakes', 'questions_in_total', 'questions_per_worker', 'runs', 'runs_with_undecided', 'stop_reasons']
    >>> cost.summary()["mistakes"]["bad_per_run"]
    1.0
    """  # noqa: E501

    algorithm: str
    params: Mapping[str, Any]
    questions: NDArray[np.int64]
    undecided: NDArray[np.int64]
    stop_reasons: tuple[str, ...]
    capped: bool = False
    #: Per run, by the simulated truth (a bar question's runs one by one; None otherwise):
    #: bad workers (under the bar), good workers banned, bad workers not banned.
    mistakes: _Mistakes | None = None

    def summary(self, prices: Prices | None = None) -> dict[str, Any]:
        """Median, 90th percentile and largest number of questions per worker and per run;
        the share of runs that ended with undecided workers; how the runs stopped; with
        ``prices``, the money those questions cost."""
        per_run = self.questions.sum(axis=1)
        reasons = {reason: self.stop_reasons.count(reason) for reason in set(self.stop_reasons)}
        summary: dict[str, Any] = {
            "runs": len(per_run),
            "questions_per_worker": _spread(self.questions.ravel()),
            "questions_in_total": _spread(per_run),
            "runs_with_undecided": float(np.mean(self.undecided > 0)),
            "stop_reasons": dict(sorted(reasons.items())),
            "capped": self.capped,
            "mistakes": None if self.mistakes is None else self.mistakes.summary(),
        }
        if prices is not None:
            summary["money"] = {
                "gold_price": prices.gold,
                **{key: {name: value * prices.gold for name, value in summary[key].items()}
                   for key in ("questions_per_worker", "questions_in_total")},
            }  # fmt: skip
        return summary


def plan_cost(
    algorithm: str,
    params: Mapping[str, Any],
    accuracies: Sequence[float],
    *,
    runs: int = 200,
    seed: int = 0,
    draw: bool = False,
    n_workers: int | None = None,
    processes: int | None = 1,
    progress: Callable[[int], object] | None = None,
) -> CostPlan:
    """Run ``algorithm`` with ``params`` on simulated workers ``runs`` times (seeds ``seed``,
    ``seed + 1``, ...). With ``draw`` each run's ``n_workers`` workers (default: as many as
    ``accuracies``) are drawn with replacement from ``accuracies`` (a pilot's crowd), else
    they are ``accuracies`` themselves. The runs share ``processes`` processes (default: one,
    this one; None: every CPU, unless the first run shows that all of them take under a
    second here, as ``screener plan`` does); the plan is the same on any number. An algorithm
    that bounds no worker's questions and is given no budget gets one, DEFAULT_CAP_PER_WORKER
    questions per worker, and the plan says so (``capped``). ``progress`` is called with the
    number of runs just finished, as they finish (a progress bar's ``update``).

    Examples
    --------
    >>> cost = plan_cost("rr", {"budget": 60}, [0.9, 0.85, 0.5], runs=5)
    >>> cost.summary()["questions_in_total"]["median"]
    60.0
    >>> capped = plan_cost("rr", {}, [0.9, 0.85, 0.5], runs=5)
    >>> capped.capped, capped.params["budget"]
    (True, 180)
    """
    _check_runs(runs, seed)
    pool = _planned_accuracies(accuracies)
    size = n_workers if draw and n_workers else pool.size
    if size < 1:
        raise ConfigError(f"a plan needs at least one worker, got {size}", "e.g. --workers 200")
    params, capped = _capped(algorithm, params, size)
    build = (
        _DrawnCrowd(algorithm, dict(params), tuple(pool.tolist()), size, seed)
        if draw
        else BernoulliRun(algorithm, dict(params), tuple(pool.tolist()))
    )
    seeds = list(range(seed, seed + runs))
    crowds = np.array([build.means_of(s) for s in seeds])
    together = runs_together(algorithm, dict(params), crowds, seeds, progress)
    if together is not None:  # all the runs as one computation, the same result
        threshold = params.get("threshold")
        mistakes = (
            None
            if together.banned is None or threshold is None
            else _Mistakes.of(crowds < float(threshold), together.banned)
        )
        return CostPlan(algorithm, dict(params), together.questions, together.undecided,
                        together.stop_reasons, capped, mistakes)  # fmt: skip
    ended = _run_all(_Ended(build), seeds, processes, progress)
    return _plan_of(algorithm, dict(params), ended, size, capped, crowds)


def _plan_of(
    algorithm: str,
    params: Mapping[str, Any],
    ended: Sequence[_EndedRun],
    size: int,
    capped: bool,
    crowds: NDArray[np.float64],
) -> CostPlan:
    """The plan of runs that ``ended``, each on ``size`` workers whose true accuracies are
    the rows of ``crowds``."""
    questions = np.array([run.questions for run in ended], dtype=np.int64).reshape(-1, size)
    undecided = np.array([run.undecided for run in ended], dtype=np.int64)
    reasons = tuple(run.stop_reason for run in ended)
    mistakes = None
    threshold = params.get("threshold")
    if threshold is not None and all(run.banned is not None for run in ended):
        banned = np.array([run.banned for run in ended], dtype=bool).reshape(-1, size)
        mistakes = _Mistakes.of(crowds < float(threshold), banned)
    return CostPlan(algorithm, params, questions, undecided, reasons, capped, mistakes)


@dataclass(frozen=True)
class _Mistakes:
    """Per run: bad workers, good workers banned, bad workers not banned (accepted or left
    undecided: either way kept)."""

    bad: NDArray[np.int64]
    false_bans: NDArray[np.int64]
    missed_bad: NDArray[np.int64]

    @classmethod
    def of(cls, bad: NDArray[np.bool_], banned: NDArray[np.bool_]) -> _Mistakes:
        return cls(bad.sum(axis=1), (banned & ~bad).sum(axis=1), (bad & ~banned).sum(axis=1))

    def summary(self) -> dict[str, float]:
        """Means per run, and the share of all bad workers banned over the runs."""
        bad = int(self.bad.sum())
        return {
            "bad_per_run": float(self.bad.mean()),
            "false_bans_per_run": float(self.false_bans.mean()),
            "missed_bad_per_run": float(self.missed_bad.mean()),
            "bad_banned_share": float("nan") if bad == 0 else 1.0 - self.missed_bad.sum() / bad,
        }


def _check_runs(runs: int, seed: int) -> None:
    """A plan's runs take seeds ``seed`` to ``seed + runs - 1``: at most MAX_RUNS of them,
    every one a valid seed."""
    if not 1 <= runs <= MAX_RUNS:
        raise ConfigError(f"runs must be 1 to {MAX_RUNS:,}, got {runs}", "e.g. --runs 200")
    check_seed(seed)
    if seed + runs - 1 > MAX_SEED:
        raise ConfigError(
            f"{runs:,} runs take seeds {seed:,} to {seed + runs - 1:,}, past the largest seed, "
            f"{MAX_SEED:,}",
            f"give --seed {MAX_SEED - runs + 1} or less",
        )


def _planned_accuracies(accuracies: Sequence[float]) -> NDArray[np.float64]:
    """The planned workers' accuracies, each in [0, 1]."""
    pool = np.asarray(accuracies, dtype=np.float64)
    if pool.size == 0 or not np.all((pool >= 0) & (pool <= 1)):
        raise ConfigError(
            "the planned workers need accuracies in [0, 1]", "give each worker its accuracy"
        )
    return pool


def _capped(algorithm: str, params: Mapping[str, Any], size: int) -> tuple[dict[str, Any], bool]:
    """``params``, with a budget of DEFAULT_CAP_PER_WORKER questions per worker when the
    algorithm bounds no worker's questions and is given no budget (a simulated worker at its
    threshold could keep a run going for ever); and whether that budget was added."""
    probe = create_algorithm(algorithm, size, dict(params))
    capped = probe.budget is None and probe.max_questions_per_worker is None
    if capped:
        return {**params, "budget": DEFAULT_CAP_PER_WORKER * size}, True
    return dict(params), False


@dataclass(frozen=True)
class _DrawnCrowd:
    """The run with seed ``first_seed + run``: ``size`` workers drawn with replacement from
    ``pool`` by ``default_rng([first_seed, run])``, a crowd of its own for every run."""

    algorithm: str
    params: Mapping[str, Any]
    pool: tuple[float, ...]
    size: int
    first_seed: int

    def means_of(self, seed: int) -> tuple[float, ...]:
        rng = np.random.default_rng([self.first_seed, seed - self.first_seed])
        return tuple(rng.choice(np.asarray(self.pool), size=self.size).tolist())

    def __call__(self, seed: int) -> tuple[Algorithm, RewardModel]:
        return BernoulliRun(self.algorithm, self.params, self.means_of(seed))(seed)


@dataclass(frozen=True)
class _EndedRun:
    """What a plan reads of one run: questions per worker, undecided workers, the stop."""

    questions: tuple[int, ...]
    undecided: int
    stop_reason: str
    banned: tuple[bool, ...] | None  # a bar question's bans; None for other questions


@dataclass(frozen=True)
class _Ended:
    """Run ``build(seed)`` to its end (``drive``: no result built; it would also draw each
    worker's interval for the report, which a plan does not read)."""

    build: BernoulliRun | _DrawnCrowd

    def __call__(self, seed: int) -> _EndedRun:
        algorithm, rewards = self.build(seed)
        drive(algorithm, rewards)
        reason = algorithm.stop_reason
        verdicts = getattr(algorithm, "verdicts", None)  # thresholding's: -1 banned
        banned = None if verdicts is None else tuple((verdicts() < 0).tolist())
        return _EndedRun(tuple(algorithm.stats.count.tolist()), algorithm.n_undecided(),
                         reason.value if reason else "none", banned)  # fmt: skip


def _run_all(
    run: _Ended,
    seeds: list[int],
    processes: int | None,
    progress: Callable[[int], object] | None,
) -> list[_EndedRun]:
    if processes is not None:
        return map_seeds(run, seeds, processes=processes, progress=progress)
    started = time.perf_counter()
    first = map_seeds(run, seeds[:1], processes=1, progress=progress)
    rest_here_seconds = (time.perf_counter() - started) * (len(seeds) - 1)
    here = rest_here_seconds / 2.0 < POOL_START_SECONDS
    rest = map_seeds(run, seeds[1:], processes=1 if here else None, progress=progress)
    return first + rest


def _spread(values: NDArray[np.int64]) -> dict[str, float]:
    return {
        "median": float(np.median(values)),
        "p90": float(np.percentile(values, 90)),
        "max": float(values.max()),
        "mean": float(values.mean()),
    }
