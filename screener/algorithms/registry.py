"""Algorithms by name, so runs can be described by plain data and rebuilt from a journal."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Mapping
from typing import Any

from screener.algorithms.ade import ADE
from screener.algorithms.base import Algorithm
from screener.algorithms.crowd_prior import CrowdPrior
from screener.algorithms.fdr import FDRThresholding
from screener.algorithms.gold import GOLD
from screener.algorithms.iterated_best_arm import IteratedBestArm
from screener.algorithms.platform_rules import Quiz, TolokaRule
from screener.algorithms.round_robin import NaiveRoundRobin, RoundRobin
from screener.algorithms.thresholding import LSA, ConfidentThresholding
from screener.algorithms.thresholding_baselines import APT, UCBE, OptKG, UniformThresholding
from screener.algorithms.topk import AdaptiveTopK
from screener.algorithms.topk_baselines import CLUCBPAC, OptMAI
from screener.algorithms.weighted_round_robin import WeightedRoundRobin
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
    """Keyword parameters the constructor of ``cls`` accepts, following ``**kwargs`` upwards."""
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        parameters = inspect.signature(init).parameters.values()
        names.update(p.name for p in parameters if p.kind is p.KEYWORD_ONLY)
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            break
    return frozenset(names)


def parameter_choices(name: str) -> tuple[str, ...]:
    """Every value some algorithm accepts for its ``Literal``-typed parameter ``name``
    (``interval``, ``direction``...), read from the constructors' annotations, so that the
    command line offers exactly what the algorithms take; each algorithm checks its own."""
    values: dict[str, None] = {}
    for cls in ALGORITHMS.values():
        for klass in cls.__mro__:
            init = klass.__dict__.get("__init__")
            hint = None if init is None else typing.get_type_hints(init).get(name)
            if typing.get_origin(hint) is typing.Literal:
                values.update(dict.fromkeys(str(v) for v in typing.get_args(hint)))
    return tuple(values)


def create_algorithm(name: str, n_workers: int, params: Mapping[str, Any]) -> Algorithm:
    """Build algorithm ``name`` for ``n_workers`` from plain keyword parameters."""
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
