"""Parameter checks shared by the algorithms: one wording for one mistake."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from screener.errors import ConfigError


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


def check_interval_options(interval: str, quantile: str) -> None:
    """The confidence-interval family and the normal-quantile rule."""
    check_choice("interval", interval, ("agresti-coull", "hoeffding"))
    check_choice("quantile rule", quantile, ("normal", "paper"))


def check_budget_given(name: str, budget: int | None, why: str) -> None:
    """Fixed-budget algorithms cannot run without one."""
    if budget is None:
        raise ConfigError(
            f"{name} {why} needs a budget",
            "give the total number of gold questions: --budget N, or budget=N in Python",
        )


def check_count(label: str, value: object, minimum: int, fix: str = "") -> int:
    """A whole number (of answers, questions...), at least ``minimum``; bools and floats are
    refused rather than truncated."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ConfigError(f"{label} must be a whole number >= {minimum}, got {value!r}", fix)
    return int(value)


def check_flag(label: str, value: object) -> bool:
    """A switch must be a real bool: ``bool("false")`` would silently turn it on."""
    if not isinstance(value, bool):
        raise ConfigError(
            f"{label} must be true or false, got {value!r}", f"pass {label}=True or {label}=False"
        )
    return value
