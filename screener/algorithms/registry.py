"""Algorithms by name, so runs can be described by plain data and rebuilt from a journal."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from screener.algorithms.base import Algorithm
from screener.algorithms.ksigma import (
    ADE,
    GOLD,
    IteratedBestArm,
    NaiveRoundRobin,
    RoundRobin,
    WeightedRoundRobin,
)
from screener.algorithms.signature import parameters
from screener.algorithms.thresholding import (
    APT,
    LSA,
    UCBE,
    ConfidentThresholding,
    CrowdPrior,
    FDRThresholding,
    OptKG,
    Quiz,
    TolokaRule,
    UniformThresholding,
)
from screener.algorithms.topk import CLUCBPAC, AdaptiveTopK, OptMAI
from screener.errors import ConfigError

__all__ = ["ALGORITHMS", "accepted_parameters", "create_algorithm", "parameter_choices"]

ALGORITHMS: Mapping[str, type[Algorithm]] = {
    cls.name: cls
    for cls in (
        RoundRobin,
        WeightedRoundRobin,
        NaiveRoundRobin,
        IteratedBestArm,
        ADE,
        GOLD,
        LSA,
        ConfidentThresholding,
        FDRThresholding,
        UniformThresholding,
        APT,
        UCBE,
        OptKG,
        AdaptiveTopK,
        OptMAI,
        CLUCBPAC,
        CrowdPrior,
        TolokaRule,
        Quiz,
    )
}


#: Parameters every run sets from its own options (reward range, budget, seed): not worth
#: listing to someone who misspelt an algorithm parameter.
_ALWAYS_SET = frozenset({"lower", "upper", "budget", "seed"})


def accepted_parameters(cls: type[Algorithm]) -> frozenset[str]:
    """Keyword parameters the constructor of ``cls`` accepts, following ``**kwargs`` upwards.

    Examples
    --------
    >>> from screener.algorithms import TolokaRule
    >>> sorted(accepted_parameters(TolokaRule))
    ['accept_after', 'budget', 'lower', 'min_answers', 'seed', 'threshold', 'upper', 'window']
    """
    return frozenset(p.name for p in parameters(cls))


def parameter_choices(name: str) -> tuple[str, ...]:
    """Every value some algorithm accepts for its ``Literal``-typed parameter ``name``
    (``interval``, ``direction``...), read from the constructors' annotations, so that the
    command line offers exactly what the algorithms take; each algorithm checks its own.

    Examples
    --------
    >>> parameter_choices("direction")
    ('high', 'low')
    >>> "mixture" in parameter_choices("interval")
    True
    """
    values: dict[str, None] = {}
    for cls in ALGORITHMS.values():
        for p in parameters(cls):
            if p.name == name:
                values.update(dict.fromkeys(p.choices))
    return tuple(values)


def create_algorithm(name: str, n_workers: int, params: Mapping[str, Any]) -> Algorithm:
    """Build algorithm ``name`` for ``n_workers`` from plain keyword parameters.

    Examples
    --------
    >>> algorithm = create_algorithm("wrr", 10, {"k": 1.5, "direction": "low"})
    >>> type(algorithm).__name__, algorithm.params()["k"], algorithm.params()["delta"]
    ('WeightedRoundRobin', 1.5, 0.1)
    """
    try:
        cls = ALGORITHMS[name]
    except KeyError:
        known = ", ".join(sorted(ALGORITHMS))
        raise ConfigError(f"unknown algorithm {name!r}", f"choose one of: {known}") from None
    try:
        return cls(n_workers, **params)
    except TypeError as error:
        unknown = re.search(r"unexpected keyword argument '(\w+)'", str(error))
        if unknown:
            accepted = ", ".join(sorted(accepted_parameters(cls) - _ALWAYS_SET))
            raise ConfigError(
                f"{name} has no parameter {unknown.group(1)!r}",
                f"it accepts: {accepted}; see help({cls.__module__}.{cls.__qualname__})",
            ) from None
        missing = re.search(r"missing \d+ required keyword-only arguments?: (.+)$", str(error))
        if missing:
            raise ConfigError(
                f"{name} needs the parameter(s) {missing.group(1)}",
                "give them as keyword arguments; on the command line as a flag or -p KEY=VALUE",
            ) from None
        raise ConfigError(f"bad parameters for {name}: {error}") from None
