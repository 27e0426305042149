"""The checks of ``CrowdPrior``'s parameters, each refusal one line with its fix."""

from __future__ import annotations

import math

from screener.checks import check_choice, check_count
from screener.errors import ConfigError
from screener.stats.prior import StoppingCosts
from screener.stats.prior_choice import FAMILIES

__all__ = ["ROBUST_LEVEL", "check_pilot", "checked_costs", "checked_robust"]

#: The default level of the hyperparameter region decisions must hold over (posterior mode).
ROBUST_LEVEL = 0.95


def checked_costs(
    q: float, false_ban: float | None, missed_bad: float | None, question: float
) -> StoppingCosts | None:
    """The decision rule's costs (cost mode), None in posterior mode (``q`` checked)."""
    if not 0.0 < q < 0.5:
        raise ConfigError(f"q must lie in (0, 0.5), got {q}", "try q=0.1")
    if (false_ban is None) != (missed_bad is None):
        raise ConfigError(
            "cost mode needs both false_ban and missed_bad",
            "give both, e.g. -p false_ban=30 -p missed_bad=30, or neither",
        )
    for label, value in (("false_ban", false_ban), ("missed_bad", missed_bad)):
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise ConfigError(f"{label} must be a finite cost >= 0, got {value}")
    if not (math.isfinite(question) and question > 0):
        raise ConfigError(f"question must be a finite cost > 0, got {question}", "try 1")
    if false_ban is None or missed_bad is None:
        return None
    return StoppingCosts(float(question), float(false_ban), float(missed_bad))


def checked_robust(
    prior: str, contamination: float, robust: float | None, *, cost_mode: bool
) -> float:
    """The level robust decisions hold over (0: none), given or by default robust where it
    applies (the Beta prior, posterior mode); ``prior`` and ``contamination`` checked."""
    check_choice("prior", prior, FAMILIES)
    if not 0.0 <= contamination < 1.0:
        raise ConfigError(f"contamination must lie in [0, 1), got {contamination}", "try 0.2")
    if robust is None:
        robust = ROBUST_LEVEL if prior != "npmle" and not cost_mode else 0.0
    if not 0.0 <= robust < 1.0:
        raise ConfigError(f"robust must lie in [0, 1), got {robust}", "try robust=0.95")
    if robust and (prior == "npmle" or cost_mode):
        raise ConfigError(
            "robust decisions need the Beta prior and the posterior mode",
            "drop robust, or use prior=auto or beta without false_ban / missed_bad",
        )
    return float(robust)


def check_pilot(pilot: int | None, min_answers: int) -> None:
    """A pilot fits the crowd's dispersion: two workers at least, two answers each."""
    if pilot is None:
        return
    check_count("pilot", pilot, 2, "the prior is fitted on at least two workers")
    if min_answers < 2:
        raise ConfigError(
            "a pilot needs min_answers >= 2: its answers fit the crowd's dispersion",
            "give min_answers=3 (the default), or drop pilot",
        )
