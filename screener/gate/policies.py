"""When an undecided worker who asks for work gets a gold question instead of a real task:
the gate's gold policy, one small frozen type per choice, each holding its own parameters
and checking them itself (as Toloka-Kit states each quality-control rule as its own type).

* ``ValueOfGold(tenure=False, bans=None)``: when its expected saving is worth its price. It
  prices gold with the crowd prior, so its gate's algorithm must be crowd-prior (checked where
  the gate builds its judge, ``screener.gate.judge.value_judge``). ``tenure`` and ``bans``
  are heuristics, off by default (their bans are wrong more often than they claim on some
  crowds, BENCHMARKS.md): ``tenure`` prices and judges each worker against the workers who
  made as many requests (``screener.gate.tenure``); ``bans`` is when the gate bans a worker
  itself, beside its algorithm's bans (``BanRule``; None: "promise" with ``tenure``, else only
  the algorithm bans).
* ``FirstGold()``: at every request until the algorithm decides (a quiz up front).
* ``GoldShare(every=10)``: at one request in ``every`` of each worker (the platforms'
  control-task share). Not ``GateSettings.gold_share``, which caps gold over all replies.

``GoldPolicy`` is any of the three. ``policy_dict`` and ``policy_of`` are a policy as plain
JSON values (``{"name": "share", "every": 10}``) and back; ``GOLD_POLICIES`` names them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

from screener.checks import check_choice, check_count, check_flag
from screener.errors import ConfigError

__all__ = [
    "GOLD_POLICIES",
    "BanRule",
    "FirstGold",
    "GoldPolicy",
    "GoldShare",
    "ValueOfGold",
    "policy_dict",
    "policy_of",
]

#: When the value policy bans a worker itself: "promise", when its posterior probability of
#: being under the bar is at least 1 - q; "cost", when keeping the worker costs more in
#: expectation than losing it at the stated prices and no further gold question is worth its
#: price (the Bayes decision were the prior exact).
BanRule = Literal["cost", "promise"]


@dataclass(frozen=True)
class ValueOfGold:
    """Gold when its expected saving is worth its price (crowd-prior only; module docstring).

    Examples
    --------
    >>> ValueOfGold().ban_rule, ValueOfGold(tenure=True).ban_rule
    (None, 'promise')
    >>> ValueOfGold(bans="sometimes")
    Traceback (most recent call last):
    ...
    screener.errors.ConfigError: unknown bans 'sometimes' (use 'cost' or 'promise')
    """

    name: ClassVar[str] = "value"
    tenure: bool = False
    bans: BanRule | None = None

    def __post_init__(self) -> None:
        check_flag("tenure", self.tenure)
        if self.bans is not None:
            check_choice("bans", self.bans, get_args(BanRule))

    @property
    def ban_rule(self) -> BanRule | None:
        """The policy's own ban rule, if any (None: only the algorithm bans)."""
        return self.bans or ("promise" if self.tenure else None)


@dataclass(frozen=True)
class FirstGold:
    """Gold at every request of a worker until the algorithm decides (a quiz up front)."""

    name: ClassVar[str] = "first"


@dataclass(frozen=True)
class GoldShare:
    """Gold at one request in ``every`` of each worker (the platforms' control-task share).

    Examples
    --------
    >>> GoldShare(every=0)
    Traceback (most recent call last):
    ...
    screener.errors.ConfigError: every must be a whole number >= 1, got 0 (one gold question in N requests, e.g. --gold-every 10)
    """  # noqa: E501

    name: ClassVar[str] = "share"
    every: int = 10

    def __post_init__(self) -> None:
        check_count("every", self.every, 1, "one gold question in N requests, e.g. --gold-every 10")


#: The gate's gold policy: one of the three (module docstring).
GoldPolicy = ValueOfGold | FirstGold | GoldShare
#: Each policy by the name ``screener gate --policy`` and the journal give it.
GOLD_POLICIES: Mapping[str, type[GoldPolicy]] = {
    policy.name: policy for policy in (ValueOfGold, FirstGold, GoldShare)
}


def policy_dict(policy: GoldPolicy) -> dict[str, Any]:
    """``policy`` as plain JSON values: its name and its parameters.

    Examples
    --------
    >>> policy_dict(GoldShare(every=5)), policy_dict(FirstGold())
    ({'name': 'share', 'every': 5}, {'name': 'first'})
    """
    return {"name": policy.name, **dataclasses.asdict(policy)}


def policy_of(data: Mapping[str, Any]) -> GoldPolicy:
    """The policy ``policy_dict`` wrote; ConfigError, naming what is wrong, for any other.

    Examples
    --------
    >>> policy_of({"name": "value", "tenure": True, "bans": "cost"})
    ValueOfGold(tenure=True, bans='cost')
    >>> policy_of({"name": "first", "every": 5})
    Traceback (most recent call last):
    ...
    screener.errors.ConfigError: the first policy takes no parameter every (give it only its own: none)
    """  # noqa: E501
    values = dict(data)
    name = values.pop("name", None)
    if name not in GOLD_POLICIES:
        known = ", ".join(GOLD_POLICIES)
        raise ConfigError(f"unknown gold policy {name!r}", f"use one of: {known}")
    policy = GOLD_POLICIES[name]
    own = [field.name for field in dataclasses.fields(policy)]
    unknown = sorted(set(values) - set(own))
    if unknown:
        raise ConfigError(
            f"the {name} policy takes no parameter {', '.join(unknown)}",
            f"give it only its own: {', '.join(own) or 'none'}",
        )
    return policy(**values)
