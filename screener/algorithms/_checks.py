"""Parameter checks shared by the algorithms: one wording for one mistake."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal, get_args

import numpy as np

from screener.algorithms.result import Result
from screener.errors import ConfigError

#: Seeds are kept as SQLite integers (signed 64-bit) and numpy takes no negative seed.
MAX_SEED = 2**63 - 1
#: Workers in one pool: screener is run and tested up to here (a pool is one journal row).
MAX_WORKERS = 100_000
#: Questions in flight at once: a log replay has one per worker of the largest pool in
#: flight; more only piles questions up in memory.
MAX_CONCURRENCY = MAX_WORKERS
#: Answers one run may pay for: more rows than a journal (one per answer) can hold.
MAX_BUDGET = 10**12
#: The k of the k-sigma rule: no worker's z-score among n exceeds sqrt(n - 1) (< 317 for
#: MAX_WORKERS), so a larger k flags nobody, and its radii overflow long before 1e200.
MAX_K = 1000.0


def check_delta(delta: float, suggestion: float = 0.1) -> float:
    """delta must be a probability strictly between 0 and 1."""
    if not 0.0 < delta < 1.0:
        raise ConfigError(f"delta must lie in (0, 1), got {delta}", f"try delta={suggestion}")
    return float(delta)


def check_choice(label: str, value: str, choices: Sequence[str]) -> None:
    """``value`` must be one of ``choices``."""
    if value not in choices:
        options = " or ".join(repr(choice) for choice in choices)
        raise ConfigError(f"unknown {label} {value!r}", f"use {options}")


#: Confidence intervals of the outlier algorithms (RR, WRR, NRR, IB, GOLD): each class
#: docstring says what its options promise and how delta is spent.
IntervalKind = Literal["mixture", "hoeffding", "agresti-coull"]
#: Interval options that are approximations, not bounds: delta is not guaranteed with them.
HEURISTIC_INTERVALS: tuple[IntervalKind, ...] = ("agresti-coull",)
#: The label a heuristic setting puts on its result (guarantee text and ``extra``).
HEURISTIC = "heuristic: delta is not guaranteed"


def check_interval_options(interval: str, quantile: str) -> None:
    """The confidence-interval family and the normal-quantile rule."""
    check_choice("interval", interval, get_args(IntervalKind))
    check_choice("quantile rule", quantile, ("normal", "paper"))
    if interval == "mixture" and quantile == "paper":
        raise ConfigError(
            "quantile='paper' narrows the papers' intervals, and interval='mixture' is not one",
            "to reproduce the paper give interval='agresti-coull' (--interval agresti-coull) too",
        )


def heuristic_note(interval: str, paper_quantile: bool) -> str | None:
    """What makes a setting's delta unguaranteed, after the HEURISTIC label; None when the
    setting's intervals are bounds. ``paper_quantile``: quantile='paper' narrows them."""
    reasons = []
    if interval in HEURISTIC_INTERVALS:
        reasons.append(f"interval={interval!r} is a normal approximation, not a bound")
    if paper_quantile:
        reasons.append("quantile='paper' narrows the intervals below their level")
    return f"{HEURISTIC} ({'; '.join(reasons)})" if reasons else None


def label_heuristic(result: Result, note: str | None) -> Result:
    """Put a heuristic setting's note before the promise it aims at, and in ``extra``, so the
    JSON result and the report's status line both say that delta is not guaranteed."""
    if note is None or result.guarantee is None:
        return result
    return replace(
        result,
        guarantee=f"{note}; aimed at: {result.guarantee}",
        extra={**result.extra, "heuristic": note},
    )


def check_budget_given(name: str, budget: int | None, why: str) -> None:
    """Fixed-budget algorithms cannot run without one."""
    if budget is None:
        raise ConfigError(
            f"{name} {why} needs a budget",
            "give the total number of gold questions: --budget N, or budget=N in Python",
        )


def check_count(
    label: str, value: object, minimum: int, fix: str = "", *, maximum: int | None = None
) -> int:
    """A whole number (of answers, questions...), at least ``minimum`` and at most
    ``maximum`` when one is given; bools and floats are refused rather than truncated."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        number = int(value)
        if number >= minimum and (maximum is None or number <= maximum):
            return number
    limits = f">= {minimum}" if maximum is None else f"from {minimum:,} to {maximum:,}"
    raise ConfigError(f"{label} must be a whole number {limits}, got {value!r}", fix)


def check_seed(seed: object) -> int:
    """A seed a run can keep in its journal and hand to numpy."""
    return check_count("seed", seed, 0, "e.g. --seed 0", maximum=MAX_SEED)


def check_flag(label: str, value: object) -> bool:
    """A switch must be a real bool: ``bool("false")`` would silently turn it on."""
    if not isinstance(value, bool):
        raise ConfigError(
            f"{label} must be true or false, got {value!r}", f"pass {label}=True or {label}=False"
        )
    return value
