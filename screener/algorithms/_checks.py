"""Parameter checks only the algorithms need (delta, the k-sigma intervals, a budget, the
heuristic label); the checks every layer shares are ``screener.checks``."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal, get_args

from screener.algorithms.result import Result
from screener.checks import check_choice
from screener.errors import ConfigError

#: The k of the k-sigma rule: no worker's z-score among n exceeds sqrt(n - 1) (< 317 for
#: MAX_WORKERS), so a larger k flags nobody, and its radii overflow long before 1e200.
MAX_K = 1000.0


def check_delta(delta: float, suggestion: float = 0.1) -> float:
    """delta must be a probability strictly between 0 and 1."""
    if not 0.0 < delta < 1.0:
        raise ConfigError(f"delta must lie in (0, 1), got {delta}", f"try delta={suggestion}")
    return float(delta)


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
