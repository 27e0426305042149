"""Money: what a gold question and a real task cost the requester (``Prices``, read from a
flag, a run file's ``[price]`` or the journal's copy, each refused in one line when wrong),
and an amount as output shows it (``money``). Below every layer that prices or reports a run
(the gate, the orchestrator, runs, reports, the commands), so none of them depends on
another for it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from screener.errors import ConfigError

__all__ = ["MAX_PRICE", "Prices", "money"]


#: The most a question or task may cost, so that what the largest budgets buy stays a number
#: far below the float limit (a price near it made totals inf, and JSON Infinity).
MAX_PRICE = 1e9


@dataclass(frozen=True)
class Prices:
    """What one gold question and one real task cost the requester (any currency), and the
    one way prices are read: ``parse`` for a flag's ``gold=0.05,task=0.05``, ``of`` for a
    table of them (a run file's ``[price]``, the journal's copy).

    Examples
    --------
    >>> Prices(gold=0.05, task=0.04).task
    0.04
    >>> Prices.parse("gold=0.1"), Prices.of({"task": 0.02}).to_dict()
    (Prices(gold=0.1, task=0.05), {'gold': 0.05, 'task': 0.02})
    >>> Prices(gold=0.05).questions(1.0)  # what a budget of 1.00 buys
    20
    """

    gold: float = 0.05
    task: float = 0.05

    def __post_init__(self) -> None:
        for label, value in (("gold question", self.gold), ("real task", self.task)):
            if isinstance(value, bool) or not (
                isinstance(value, int | float) and math.isfinite(value) and value > 0
            ):
                raise ConfigError(
                    f"the price of a {label} must be a number > 0, got {value!r}",
                    _PRICE_EXAMPLE,
                )
            if value > MAX_PRICE:
                raise ConfigError(
                    f"the price of a {label} must be at most {MAX_PRICE:,.0f}, got {value:g}",
                    _PRICE_EXAMPLE,
                )

    @classmethod
    def parse(cls, text: str) -> Prices:
        """Prices written ``gold=0.05,task=0.05`` (either left out: its default)."""
        values: dict[str, Any] = {}
        for item in text.split(","):
            key, sep, value = (part.strip() for part in item.partition("="))
            if not sep or key in values:
                why = f"{key} twice" if sep else f"{item.strip()!r} is not KEY=PRICE"
                raise ConfigError(f"bad price list {text!r}: {why}", _PRICE_EXAMPLE)
            try:
                values[key] = float(value)
            except ValueError:
                values[key] = value  # refused by name below
        return cls.of(values)

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> Prices:
        """Prices from a table of them, keys ``gold`` and ``task`` (either left out: its
        default)."""
        unknown = sorted(set(values) - {"gold", "task"})
        if unknown:
            raise ConfigError(f"unknown price {', '.join(unknown)}: a price is gold or task",
                              _PRICE_EXAMPLE)  # fmt: skip
        return cls(**values)

    def to_dict(self) -> dict[str, float]:
        return {"gold": self.gold, "task": self.task}

    def questions(self, money: float) -> int:
        """The most gold questions ``money`` pays for (a budget in money, in questions)."""
        if isinstance(money, bool) or not (isinstance(money, int | float) and money > 0):
            raise ConfigError(f"a budget in money must be a number > 0, got {money!r}",
                              "e.g. --budget-money 25")  # fmt: skip
        bought = math.floor(money / self.gold * (1 + 1e-12))  # 1.00 / 0.05 is 20, not 19
        if bought < 1:
            raise ConfigError(
                f"a budget of {money:g} pays for no gold question at {self.gold:g} each",
                "give a larger budget, or the gold question's price with --price gold=...",
            )
        return bought


_PRICE_EXAMPLE = "give e.g. --price gold=0.05,task=0.05"


def money(amount: float) -> str:
    """An amount of money as output shows it: two decimals, thousands grouped, no currency
    (prices are in the requester's own).

    Examples
    --------
    >>> money(1234.5), money(0.05)
    ('1,234.50', '0.05')
    """
    return f"{amount:,.2f}"
