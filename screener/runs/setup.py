"""A run's set-up in one place: the run file, the settings given and screener's defaults,
merged and checked for `screener run` and `screener.run()` alike (and for `screener plan`
and `screener replay` where they take the same settings), so that the two cannot disagree.

A setting given explicitly wins over the run file, which wins over the default. What counts
as given is the caller's to say, as plain values: the command line passes only the flags
typed on it, Python the arguments that are not None. Every problem is one ConfigError.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from screener.algorithms import ALGORITHMS, accepted_parameters
from screener.bank import load_bank
from screener.checks import MAX_BUDGET
from screener.crowd import WorkerPool, load_pool_csv, synthetic_pool
from screener.errors import ConfigError
from screener.files import is_stdio
from screener.money import Prices
from screener.oracles import load_oracle_class
from screener.orchestrator import RunOptions
from screener.runs.run_file import RunConfig, load_run_config
from screener.runs.run_plan import RunPlan, default_pool
from screener.runs.settings import (
    BAR_ALGORITHMS,
    DEFAULT_ALGORITHM,
    DEFAULT_BAR,
    DEFAULT_JOB,
    DEFAULT_ORACLE,
    DEFAULT_SEED,
    PARAMETER_DEFAULTS,
    TOP_K_ALGORITHMS,
    AlgorithmSettings,
    MoneySettings,
    OracleSettings,
    RunSettings,
)

__all__ = [
    "RunSetup",
    "algorithm_params",
    "choose_algorithm",
    "choose_pool",
    "choose_prices",
    "default_job",
    "oracle_given",
    "question_budget",
    "set_up_run",
]

T = TypeVar("T")


@dataclass(frozen=True)
class RunSetup:
    """A run ready to start: its plan, and its database when one was given or set in the run
    file (else None: the caller's default)."""

    plan: RunPlan
    db: str | None


def set_up_run(settings: RunSettings) -> RunSetup:
    """The run ``settings`` describe, with the run file's values where nothing was given and
    screener's defaults where neither says; checked before anything is written.

    Examples
    --------
    >>> from screener.crowd import synthetic_pool
    >>> pool = synthetic_pool(12, 2, seed=1)
    >>> setup = set_up_run(RunSettings(pool=pool))
    >>> setup.plan.algorithm, setup.plan.oracle, setup.db
    ('fdr-thresholding', 'simulated', None)
    >>> setup.plan.params  # DEFAULT_JOB
    {'threshold': 0.6, 'q': 0.1, 'eps': 0.05, 'min_answers': 3}
    >>> named = AlgorithmSettings(name="wrr", budget=500)
    >>> set_up_run(RunSettings(pool=pool, algorithm=named)).plan.params
    {'budget': 500, 'direction': 'low'}
    >>> set_up_run(RunSettings(pool=pool, algorithm=AlgorithmSettings(error="fdr", name="rr")))
    Traceback (most recent call last):
    ...
    screener.errors.ConfigError: --error fdr screens against a bar with fdr-thresholding, not rr (drop --algorithm or use --algorithm fdr-thresholding)
    """  # noqa: E501
    _one_standard_input(settings)
    file = RunConfig(Path(".")) if settings.run_file is None else load_run_config(settings.run_file)
    given = settings.algorithm
    algorithm = choose_algorithm(given, file.algorithm)
    seed = _chosen(given.seed, file.seed, DEFAULT_SEED)
    oracle = _chosen(settings.oracle.name, file.oracle, DEFAULT_ORACLE)
    options = RunOptions(**{**file.run, **settings.options})
    prices = choose_prices(settings.money.price, file.price)
    budget = _budget(given, settings.money, file, prices)
    base = {**default_job(given, file.algorithm), **file.params}
    params = algorithm_params(algorithm, given, base, budget)
    oracle_options = {**file.oracle_options, **oracle_given(oracle, settings.oracle)}
    workers = settings.pool if settings.pool is not None else file.workers
    pool = choose_pool(workers, settings.workers, settings.outliers, seed, oracle, oracle_options)
    questions = settings.questions if settings.questions is not None else file.questions
    if questions is not None:
        pool = dataclasses.replace(pool, bank=load_bank(questions))
    plan = RunPlan(pool, algorithm, params, oracle, oracle_options, seed, options, prices)
    return RunSetup(plan, _first(settings.db, file.db))


def choose_algorithm(
    given: AlgorithmSettings, configured: str | None = None, default: str = DEFAULT_ALGORITHM
) -> str:
    """The algorithm given, else ``configured`` (a run file's), else ``default``; with
    ``error``, the bar algorithm that keeps that promise, which an algorithm given or
    configured must be.

    Examples
    --------
    >>> choose_algorithm(AlgorithmSettings(error="bayes"))
    'crowd-prior'
    >>> choose_algorithm(AlgorithmSettings(), configured="gold")
    'gold'
    """
    chosen = given.name if given.name is not None else configured
    if given.error is not None:
        if given.error not in BAR_ALGORITHMS:
            known = ", ".join(BAR_ALGORITHMS)
            raise ConfigError(f"unknown kind of error control {given.error!r}", f"use {known}")
        wanted = BAR_ALGORITHMS[given.error]
        if chosen is not None and chosen != wanted:
            raise ConfigError(
                f"--error {given.error} screens against a bar with {wanted}, not {chosen}",
                f"drop --algorithm or use --algorithm {wanted}",
            )
        return wanted
    name = chosen if chosen is not None else default
    if name not in ALGORITHMS:
        raise ConfigError(f"unknown algorithm {name!r}", f"use one of {', '.join(ALGORITHMS)}")
    return name


def default_job(given: AlgorithmSettings, configured: str | None = None) -> dict[str, Any]:
    """DEFAULT_JOB's parameters when nothing names the algorithm (neither ``given``, by name
    or by ``error``, nor ``configured``, a run file's), else none: an algorithm chosen by
    name runs with its own defaults.

    Examples
    --------
    >>> default_job(AlgorithmSettings())["eps"]
    0.05
    >>> default_job(AlgorithmSettings(name="crowd-prior")), default_job(AlgorithmSettings(), "rr")
    ({}, {})
    """
    named = given.name is not None or given.error is not None or configured is not None
    return {} if named else dict(DEFAULT_JOB)


def algorithm_params(
    algorithm: str,
    given: AlgorithmSettings,
    base: Mapping[str, Any] | None = None,
    budget: int | None = None,
) -> dict[str, Any]:
    """The parameters ``algorithm`` runs with: ``base`` (a run file's [params], or the
    parameters a replayed run was logged with), the budget, the parameters given, then
    PARAMETER_DEFAULTS where the algorithm takes them and nothing set them (and with
    ``--error``, the bar ``DEFAULT_BAR`` when none is given); ``top`` is its k.

    Examples
    --------
    >>> algorithm_params("rr", AlgorithmSettings(params={"k": 1.5}), {"delta": 0.05})
    {'delta': 0.05, 'k': 1.5, 'direction': 'low'}
    >>> algorithm_params("adaptive-topk", AlgorithmSettings(top=3), budget=900)
    {'budget': 900, 'k': 3}
    >>> algorithm_params("crowd-prior", AlgorithmSettings(error="bayes"))
    {'threshold': 0.6}
    """
    params = dict(base or {})
    if budget is not None:
        params["budget"] = budget
    params.update(_given_params(algorithm, given))
    accepted = accepted_parameters(ALGORITHMS[algorithm])
    for name, value in PARAMETER_DEFAULTS.items():
        if name in accepted:
            params.setdefault(name, value)
    if given.error is not None:  # a promise against a bar: the usual one unless given
        params.setdefault("threshold", DEFAULT_BAR)
    return params


def _given_params(algorithm: str, given: AlgorithmSettings) -> dict[str, Any]:
    """The parameters given, each in one way only: by its flag, by -p, or (k of a top-K
    algorithm) by --top; ``seed`` is the run's, never an algorithm parameter."""
    if "seed" in given.params:
        raise ConfigError(
            "seed is a setting of the run, not an algorithm parameter",
            "give it with --seed N, or seed= in Python",
        )
    sources = [(f"--{name}", name, value) for name, value in given.flags.items()]
    sources += [(f"-p {name}=", name, value) for name, value in given.params.items()]
    if given.budget is not None:
        sources.append(("--budget", "budget", given.budget))
    if given.top is not None:
        if algorithm not in TOP_K_ALGORITHMS:
            raise ConfigError(
                f"--top selects how many workers a top-K algorithm picks; {algorithm} picks no "
                "number of workers",
                f"drop --top, or use --algorithm {' or '.join(sorted(TOP_K_ALGORITHMS))}",
            )
        sources.append(("--top", "k", given.top))
    chosen: dict[str, tuple[str, Any]] = {}
    for how, name, value in sources:
        if name in chosen:
            first = chosen[name]
            raise ConfigError(
                f"{_shown(*first)} and {_shown(how, value)} both set {name}",
                "give one of them",
            )
        chosen[name] = (how, value)
    return {name: value for name, (how, value) in chosen.items() if how != "--budget"}


def _shown(how: str, value: Any) -> str:
    return f"{how}{value}" if how.endswith("=") else f"{how} {value}"


def oracle_given(oracle: str, given: OracleSettings) -> dict[str, Any]:
    """The options given to ``oracle``: -O's and its flags', each option one way only; a
    flag for an option the oracle does not take is refused, not ignored."""
    taken = {option.name for option in load_oracle_class(oracle).OPTIONS}
    for name, value in given.simulated.items():
        flag = f"--{name.replace('_', '-')} {value}"
        if name not in taken:
            raise ConfigError(
                f"{flag} sets simulated answers, and the {oracle} oracle takes no {name}",
                f"drop {flag.split()[0]}, or use --oracle simulated",
            )
        if name in given.options:
            raise ConfigError(
                f"{flag} and -O {name}={given.options[name]} both set {name}",
                "give one of them",
            )
    return {**given.simulated, **given.options}


def choose_pool(
    pool: WorkerPool | str | Path | None,
    n_workers: int | None,
    n_outliers: int,
    seed: int,
    oracle: str,
    oracle_options: Mapping[str, Any],
) -> WorkerPool:
    """``pool`` (the workers, or a CSV file of them), else a synthetic pool of ``n_workers``,
    else the oracle's own workers (the simulated oracle's: the demo pool)."""
    if pool is not None and n_workers is not None:
        raise ConfigError("give either POOL_FILE or --workers, not both", "drop one of them")
    if isinstance(pool, WorkerPool):
        return pool
    if pool is not None:
        return load_pool_csv(pool)
    if n_workers is not None:
        return synthetic_pool(n_workers, n_outliers, seed=seed)
    return default_pool(oracle, oracle_options)


def choose_prices(
    given: Prices | str | Mapping[str, Any] | None, configured: Mapping[str, Any] | None = None
) -> Prices | None:
    """The prices given (``Prices``, ``--price``'s text or a mapping), else a run file's
    ``[price]`` table (its ``budget`` aside), else None: the run is not priced. A list or
    table must name the gold price (a screening asks gold questions only: no default stands
    in for it); ``Prices`` caps each price (``MAX_PRICE``).

    Examples
    --------
    >>> choose_prices("gold=0.1", {"gold": 0.2})
    Prices(gold=0.1, task=0.05)
    >>> choose_prices(None, {"gold": 0.1, "task": 0.03, "budget": 10.0}), choose_prices(None, {})
    (Prices(gold=0.1, task=0.03), None)
    >>> choose_prices("task=0.03")
    Traceback (most recent call last):
    ...
    screener.errors.ConfigError: --price task=0.03 gives no gold price (add it, e.g. --price gold=0.05,task=0.03)
    """  # noqa: E501
    if isinstance(given, Prices):
        return given
    if isinstance(given, str):
        named = {item.partition("=")[0].strip() for item in given.split(",")}
        fix = f"add it, e.g. --price gold=0.05,{given}"
        return _with_gold(Prices.parse(given), named, f"--price {given}", fix)
    if given is not None:
        return _with_gold(Prices.of(given), set(given), "the prices given", "add gold=PRICE")
    table = {key: value for key, value in (configured or {}).items() if key != "budget"}
    if not table:
        return None
    return _with_gold(Prices.of(table), set(table), "the run file's [price]", "add gold = PRICE")


def _with_gold(prices: Prices, named: set[str], where: str, fix: str) -> Prices:
    if "gold" not in named:
        raise ConfigError(f"{where} gives no gold price", fix)
    return prices


def question_budget(
    questions: int | None, money: float | None, prices: Prices | None
) -> int | None:
    """A budget in gold questions from one given in questions or in money (at the gold
    price), not both.

    Examples
    --------
    >>> question_budget(None, 25.0, Prices(gold=0.05)), question_budget(300, None, None)
    (500, 300)
    """
    if money is None:
        return questions
    if questions is not None:
        raise ConfigError(
            "a budget in questions and one in money were both given", "give one of them"
        )
    if prices is None:
        raise ConfigError(
            "a budget in money needs the price of a gold question",
            "give it, e.g. --price gold=0.05 (or gold in a run file's [price])",
        )
    if isinstance(money, int | float) and not isinstance(money, bool):
        if not math.isfinite(money):
            raise ConfigError(f"a budget in money must be a finite number > 0, got {money!r}",
                              "e.g. --budget-money 25")  # fmt: skip
        if money / prices.gold > MAX_BUDGET:
            raise ConfigError(
                f"a budget of {money:g} buys more than {MAX_BUDGET:,} gold questions at "
                f"{prices.gold:g} each",
                f"give at most {MAX_BUDGET * prices.gold:g}, or --budget in questions",
            )
    return prices.questions(money)


def _budget(
    given: AlgorithmSettings, money: MoneySettings, file: RunConfig, prices: Prices | None
) -> int | None:
    """The run's budget in questions: one given (in questions or money) wins over the run
    file's (its ``budget`` or its ``[price]`` budget, not both)."""
    if given.budget is not None or money.budget is not None:
        return question_budget(given.budget, money.budget, prices)
    return question_budget(file.budget, file.price.get("budget"), prices)


def _one_standard_input(settings: RunSettings) -> None:
    """Standard input can be read once: at most one input may be -."""
    inputs = (settings.pool, settings.questions, settings.run_file)
    if sum(not isinstance(path, WorkerPool) and is_stdio(path) for path in inputs) > 1:
        raise ConfigError(
            "only one of POOL_FILE, --questions and --config can be - (standard input)",
            "give the others as files",
        )


def _chosen(given: T | None, configured: T | None, default: T) -> T:
    """The value given, else the run file's, else the default."""
    return given if given is not None else configured if configured is not None else default


def _first(given: T | None, configured: T | None) -> T | None:
    """The value given, else the run file's (None: neither says)."""
    return given if given is not None else configured
