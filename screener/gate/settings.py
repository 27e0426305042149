"""What a requester sets for a gate: the method, when gold is asked, the prices, the audits."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from screener.algorithms import ALGORITHMS
from screener.algorithms._checks import check_count, check_seed
from screener.errors import ConfigError

__all__ = ["DEFAULT_PARAMS", "GateSettings", "GoldPolicy", "OnChange", "Prices"]

#: When an undecided worker who asks for work gets a gold question instead of a real task:
#: "value", when its expected saving is worth its price (crowd-prior only); "first", at every
#: request until the method decides (a quiz up front); "share", at one request in ``gold_every``
#: (the platforms' control-task share).
GoldPolicy = Literal["value", "first", "share"]
#: What the change detector's alarm does to a qualified worker: ban it at once, or screen it
#: again from its next answers on.
OnChange = Literal["ban", "reopen"]
#: The gate's default method: crowd-prior against Toloka's bar, its first 20 workers a pilot
#: whose answers fit the prior that judges everyone after them, a qualified worker's audit
#: answers judged too (a ban under the same rule).
DEFAULT_PARAMS: Mapping[str, Any] = {"threshold": 0.6, "pilot": 20, "reconsider": True}


@dataclass(frozen=True)
class Prices:
    """What one gold question and one real task cost the requester (any currency).

    Examples
    --------
    >>> Prices(gold=0.05, task=0.04).task
    0.04
    """

    gold: float = 0.05
    task: float = 0.05

    def __post_init__(self) -> None:
        for label, value in (("gold", self.gold), ("task", self.task)):
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ConfigError(
                    f"the price of a {label} question must be a number > 0, got {value!r}",
                    "give e.g. --price gold=0.05,task=0.05",
                )

    @classmethod
    def parse(cls, text: str) -> Prices:
        """Prices as typed on a command line: ``gold=0.05,task=0.04`` (either may be left out:
        it keeps its default).

        Examples
        --------
        >>> Prices.parse("gold=0.1,task=0.02"), Prices.parse("task=0.5").gold
        (Prices(gold=0.1, task=0.02), 0.05)
        """
        fix = "give e.g. --price gold=0.05,task=0.05"
        given: dict[str, float] = {}
        for part in text.split(","):
            name, sep, value = part.partition("=")
            name = name.strip()
            if not sep or name not in ("gold", "task") or name in given:
                raise ConfigError(f"cannot read prices {text!r}: each is gold=X or task=X", fix)
            try:
                given[name] = float(value)
            except ValueError:
                raise ConfigError(
                    f"the price of {name} must be a number, got {value!r}", fix
                ) from None
        return cls(**given)


@dataclass(frozen=True)
class GateSettings:
    """Everything that defines a gate (plain values: a gate is rebuilt from them to replay).

    ``algorithm`` and ``params``: the screening method (an open-roster one: crowd-prior,
    confident-thresholding and fdr-thresholding with ``max_workers``, toloka-rule, quiz,
    lsa...). ``policy``: when gold is asked (``GoldPolicy``); ``gold_every`` for "share".
    ``max_unscreened``: real tasks a worker may do before its first gold question, whatever
    the policy says. ``gold_share``: the most gold questions may be of all replies, beyond
    those ``max_unscreened`` makes; ``gold_budget``: the most gold questions in all (None:
    no cap). ``audit_rate``: share of a qualified worker's requests that get a gold question,
    watched by the change detector (``alpha`` its false-alarm level, ``on_change`` what its
    alarm does). ``prices``; ``expected_tasks``: real tasks a worker does, before the stream
    says; ``bad_label``: what a label from a worker under the bar costs the requester
    (default: twice the task price: it is worth nothing, and another is bought in its
    place). ``seed``: the audits' draws.

    Examples
    --------
    >>> GateSettings().params["threshold"], GateSettings().policy
    (0.6, 'value')
    """

    algorithm: str = "crowd-prior"
    params: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_PARAMS))
    policy: GoldPolicy = "value"
    gold_every: int = 10
    max_unscreened: int = 3
    gold_share: float | None = None
    gold_budget: int | None = None
    audit_rate: float = 0.02
    alpha: float = 0.001
    on_change: OnChange = "ban"
    prices: Prices = field(default_factory=Prices)
    expected_tasks: float = 20.0
    bad_label: float | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            known = ", ".join(sorted(ALGORITHMS))
            raise ConfigError(f"unknown algorithm {self.algorithm!r}", f"choose one of: {known}")
        cls = ALGORITHMS[self.algorithm]
        if cls.fixed_roster is not None:
            raise ConfigError(
                f"a gate needs a method whose workers may join: {self.algorithm} needs a "
                f"fixed roster ({cls.fixed_roster})",
                "use crowd-prior (the default), toloka-rule, quiz, lsa, or "
                "confident-thresholding / fdr-thresholding with max_workers",
            )
        _choice("policy", self.policy, get_args(GoldPolicy))
        _choice("on_change", self.on_change, get_args(OnChange))
        if self.policy == "value" and self.algorithm != "crowd-prior":
            raise ConfigError(
                f"the value policy prices gold with the crowd prior, and {self.algorithm} has none",
                "use --algorithm crowd-prior, or --policy first or share",
            )
        check_count("gold_every", self.gold_every, 1, "one gold question in N requests, e.g. 10")
        check_count("max_unscreened", self.max_unscreened, 0, "e.g. 3 tasks before the first")
        if self.gold_share is not None:
            _fraction("gold_share", self.gold_share, open_low=True)
        if self.gold_budget is not None:
            check_count("gold_budget", self.gold_budget, 1, "the most gold questions, e.g. 500")
        _fraction("audit_rate", self.audit_rate, open_low=False)
        _fraction("alpha", self.alpha, open_low=True, below_one=True)
        if not (math.isfinite(self.expected_tasks) and self.expected_tasks >= 1):
            raise ConfigError(
                f"expected_tasks must be a number >= 1, got {self.expected_tasks}", "e.g. 20"
            )
        if self.bad_label is not None and not (
            math.isfinite(self.bad_label) and self.bad_label >= 0
        ):
            raise ConfigError(f"bad_label must be a cost >= 0, got {self.bad_label}")
        check_seed(self.seed)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values, which ``from_dict`` turns back into these settings.

        Examples
        --------
        >>> settings = GateSettings(policy="share", prices=Prices(gold=0.1))
        >>> GateSettings.from_dict(settings.to_dict()) == settings
        True
        """
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {**values, "params": dict(self.params), "prices": dataclasses.asdict(self.prices)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GateSettings:
        """The settings ``to_dict`` wrote; ConfigError, naming the keys, for any other."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(
                f"these gate settings hold keys this screener does not know: {unknown}",
                "use the screener version that wrote them",
            )
        values = dict(data)
        if "prices" in values:
            values["prices"] = Prices(**values["prices"])
        return cls(**values)

    @property
    def label_cost(self) -> float:
        """What a label from a worker under the bar costs the requester: by default twice the
        task price (the label is worth nothing, and another must be bought in its place)."""
        return 2.0 * self.prices.task if self.bad_label is None else self.bad_label


def _choice(label: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ConfigError(f"unknown {label} {value!r}", f"use one of: {', '.join(choices)}")


def _fraction(label: str, value: float, *, open_low: bool, below_one: bool = False) -> None:
    low_ok = value > 0 if open_low else value >= 0
    high_ok = value < 1 if below_one else value <= 1
    if not (isinstance(value, int | float) and math.isfinite(value) and low_ok and high_ok):
        raise ConfigError(f"{label} must be a share in [0, 1], got {value!r}", f"e.g. {label}=0.1")
