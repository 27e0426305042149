"""What a run is set up from, as given (``RunSettings`` and its parts: None, or empty, means
not given), and screener's own defaults for what nothing gives: the values
``screener.runs.setup`` merges with a run file's, written once for the command line and
Python alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from screener.algorithms import ALGORITHMS
from screener.algorithms.signature import parameters
from screener.crowd import WorkerPool
from screener.money import Prices

__all__ = [
    "BAR_ALGORITHMS",
    "DEFAULT_ALGORITHM",
    "DEFAULT_BAR",
    "DEFAULT_JOB",
    "DEFAULT_ORACLE",
    "DEFAULT_OUTLIERS",
    "DEFAULT_SEED",
    "PARAMETER_DEFAULTS",
    "TOP_K_ALGORITHMS",
    "AlgorithmSettings",
    "MoneySettings",
    "OracleSettings",
    "RunSettings",
]

DEFAULT_ALGORITHM = "fdr-thresholding"
#: The bar a run screens against when nothing gives one (the default job, ``--error``): the
#: platforms' usual 60% correct (Toloka's control-task rule).
DEFAULT_BAR = 0.6
#: The job a run does when nothing names an algorithm (no --algorithm, --error or run file's
#: algorithm): find the spammers under the bar and qualify the others, each list with at most
#: a share q = 0.1 of wrong members in expectation (e-BH on betting e-processes), a worker
#: within eps = 0.05 of the bar counting on either side, none decided before 3 answers. A
#: promise a requester can check by the tally of the truth, and right on the demo: over 300
#: seeds 99.5% of its spammers banned, no good worker banned, 28 questions a worker
#: (BENCHMARKS.md, "The default job"). The crowd prior's cost mode, cheaper (4 a worker) and
#: often wrong (a third of the spammers kept, a good worker banned per run), is an option.
DEFAULT_JOB: Mapping[str, Any] = {
    "threshold": DEFAULT_BAR,
    "q": 0.1,
    "eps": 0.05,
    "min_answers": 3,
}
DEFAULT_ORACLE = "simulated"
DEFAULT_SEED = 0
#: Low-accuracy workers in a synthetic pool (``--workers N``).
DEFAULT_OUTLIERS = 2
#: screener's own defaults for algorithm parameters, over the classes' (their papers'), for
#: every algorithm that takes them: a run screens for spammers, abnormally low accuracy.
PARAMETER_DEFAULTS: Mapping[str, Any] = {"direction": "low"}
#: The bar question's algorithm for each kind of error control (``--error``).
BAR_ALGORITHMS: Mapping[str, str] = {
    "fwer": "confident-thresholding",
    "fdr": "fdr-thresholding",
    "bayes": "crowd-prior",
}
#: The algorithms that select the best K workers: their ``k`` is a whole number (``--top``).
TOP_K_ALGORITHMS = frozenset(
    name
    for name, cls in ALGORITHMS.items()
    if any(p.name == "k" and p.kind == "int" for p in parameters(cls))
)


@dataclass(frozen=True)
class AlgorithmSettings:
    """Which algorithm runs and how it is set, as given; None (or empty) means not given.

    ``params`` are the algorithm's parameters (``-p KEY=VALUE``), ``flags`` those given by
    a flag of their own (``--k``, ``--threshold``...: one parameter set both ways is
    refused); ``error`` (fwer, fdr or bayes) picks the bar algorithm with that promise;
    ``top`` is how many workers a top-K algorithm selects (its ``k``); ``budget`` and
    ``seed`` are the run's.
    """

    name: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None
    top: int | None = None
    budget: int | None = None
    seed: int | None = None
    flags: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OracleSettings:
    """The answer source as given: its name and options; ``simulated`` holds the options the
    command line sets by flags of their own (--rewards, --latency, --batch-release), for an
    oracle that takes them (refused by another, and beside the same option in ``options``)."""

    name: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    simulated: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MoneySettings:
    """What questions cost and a budget in money, as given; None means not given.

    ``price``: ``Prices``, or as ``--price`` writes them (``"gold=0.05,task=0.05"``), or a
    mapping of them. ``budget``: the most money the run may spend on gold questions (it
    becomes a budget of that many questions at the gold price; not with a budget in
    questions).
    """

    price: Prices | str | Mapping[str, Any] | None = None
    budget: float | None = None


@dataclass(frozen=True)
class RunSettings:
    """Everything a run is set up from, as given; None (or empty) means not given.

    ``run_file``: a TOML run file (screener.runs.run_file). ``pool``: the workers, or a CSV file of
    them; ``workers`` and ``outliers`` build a synthetic pool instead. ``questions``: a gold
    question bank file. ``options``: RunOptions fields. ``db``: where the run is journaled.
    ``money``: prices and a budget in money.
    """

    run_file: str | Path | None = None
    pool: WorkerPool | str | Path | None = None
    workers: int | None = None
    outliers: int = DEFAULT_OUTLIERS
    questions: str | Path | None = None
    algorithm: AlgorithmSettings = field(default_factory=AlgorithmSettings)
    oracle: OracleSettings = field(default_factory=OracleSettings)
    options: Mapping[str, Any] = field(default_factory=dict)
    db: str | None = None
    money: MoneySettings = field(default_factory=MoneySettings)
