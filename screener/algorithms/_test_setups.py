"""The record of an algorithm's small test parameters, and the values the setups share.

Each algorithm class lists its own setups in ``test_setups`` (as river keeps
``_unit_test_params`` on each estimator); the conformance suite reads them from the
registered classes, so a new algorithm brings its test parameters with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AROUND_MEANS",
    "BAR",
    "BUDGET",
    "CLEAR_MEANS",
    "HOEFFDING",
    "KSIGMA",
    "OUTLIER_MEANS",
    "SLOW_BAR",
    "SMALL_BUDGET",
    "TO_THE_END",
    "AlgorithmSetup",
]


@dataclass(frozen=True)
class AlgorithmSetup:
    """Small test parameters: the keyword parameters, the pool size, and the rate at which
    each simulated worker gives the top reward in the random histories (None: spread out).

    Examples
    --------
    An algorithm class lists its own in ``test_setups``, its default first:

    >>> [setup.label or "default" for setup in RoundRobin.test_setups]
    ['default', 'hoeffding', 'to-the-end']
    >>> AlgorithmSetup({"threshold": 0.5, "budget": 40}, n_workers=4, label="small").n_workers
    4
    """

    params: Mapping[str, Any]
    n_workers: int = 6
    means: tuple[float, ...] | None = None
    #: Names a variant when an algorithm has several setups (its first is the default).
    label: str = ""


OUTLIER_MEANS = (0.1, 0.15, 0.2, 0.25, 0.3, 1.0)  # one clear high outlier (k-sigma)
AROUND_MEANS = (0.2, 0.4, 0.45, 0.55, 0.6, 0.9)  # around a threshold of 0.5
CLEAR_MEANS = (0.05, 0.1, 0.1, 0.15, 0.2, 1.0)
BUDGET = {"budget": 200}  # a few hundred steps per history
SMALL_BUDGET = {"budget": 80}  # for costly answers (betting intervals, refitted priors)
KSIGMA = {"k": 1.5, "delta": 0.1, **BUDGET}
HOEFFDING = {**KSIGMA, "interval": "hoeffding"}  # the paper quantile is for Agresti-Coull
TO_THE_END = {"k": 1.0, "delta": 0.2, "budget": 1500}  # the condition holds after ~500 answers
BAR = {"threshold": 0.5, **BUDGET}
SLOW_BAR = {"threshold": 0.5, **SMALL_BUDGET}
