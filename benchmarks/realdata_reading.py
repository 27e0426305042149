"""The fair reading of the real-data benchmark: what a requester who states its costs pays.

Per cost setting (a false ban priced c_ban, a missed bad worker c_miss, a question 1), per
worker: the crowd prior's cost mode built for those costs (``cost_method``; never a
configuration built for other costs, picked after the fact), the cheapest platform rule
configuration after the fact (which favours the rule), and doing nothing: the cheaper of
accepting everyone unasked (c_miss x the bad share) and banning everyone (c_ban x the good
share), also after the fact. Whether ANY method can beat doing nothing at that setting is the
oracle's answer (``benchmarks.limits.oracle_cost``: Bernoulli answers at each worker's accuracy,
at most ``cap`` questions each, the crowd's distribution known exactly): "no" means no policy
asking one worker's questions one at a time can, in that model; on the replays a method may
still win there by the luck of the answers, or lose where the model says it could win.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from benchmarks.harness import markdown_table
from benchmarks.limits import doing_nothing_cost, oracle_cost
from benchmarks.realcrowds import COSTS, cost_key

__all__ = [
    "PILOT",
    "RULE_NAMES",
    "TRIVIAL",
    "Cell",
    "cost_method",
    "kind",
    "reading",
    "reading_lines",
    "summary",
    "summary_tables",
]

RULE_NAMES = ("toloka-rule", "quiz")
#: The policies that ask nothing, and whether each bans everyone.
TRIVIAL = {"accept-all": False, "ban-all": True}
#: Workers the crowd prior's cost mode screens before deciding others on the prior alone (a
#: crowd of at most this many is screened whole, as without a pilot).
PILOT = 20


class Scored(Protocol):
    """What the reading needs of a method's score: its label, questions and costs per worker."""

    @property
    def method(self) -> str: ...

    @property
    def questions(self) -> float: ...

    @property
    def costs(self) -> dict[str, float]: ...


def kind(method: str) -> str:
    """ "trivial" (asks nothing), "rule" (a platform's rule) or "screener"."""
    if method in TRIVIAL:
        return "trivial"
    return "rule" if method.partition(":")[0] in RULE_NAMES else "screener"


def cost_method(c_ban: float, c_miss: float) -> str:
    """The crowd prior's cost mode built for these costs: what a requester who states them
    runs (the fair reading compares this one, never one built for other costs)."""
    return f"crowd-prior:contamination=0.2,false_ban={c_ban:g},missed_bad={c_miss:g},pilot={PILOT}"


@dataclass(frozen=True)
class Cell:
    """One cost setting of one (dataset, population, bar), per worker: the crowd prior built for
    these costs (None when the run did not have it), the best rule configuration after the
    fact, doing nothing (the cheaper of accept-all and ban-all), and the oracle's lowest cost
    (Bernoulli answers, the crowd known: no policy goes below it in that model)."""

    ours: float | None
    ours_questions: float | None
    rule: float | None
    rule_method: str | None
    nothing: float
    nothing_method: str
    oracle: float

    @property
    def can_pay(self) -> bool:
        """Whether any policy can beat doing nothing here, by the oracle."""
        return self.oracle < self.nothing - 1e-9


def reading(scores: Sequence[Scored], truth: NDArray[np.float64], bar: float, cap: int
            ) -> dict[str, Cell]:  # fmt: skip
    """The fair reading of one (dataset, population, bar) at every cost setting."""
    by_method = {s.method: s for s in scores}
    rules = [s for s in scores if kind(s.method) == "rule"]
    cells = {}
    for c_ban, c_miss in COSTS:
        key = cost_key(c_ban, c_miss)
        ours = by_method.get(cost_method(c_ban, c_miss))
        rule = min(rules, key=lambda s: s.costs[key], default=None)
        accept, ban = c_miss * float(np.mean(truth < bar)), c_ban * float(np.mean(truth >= bar))
        cells[key] = Cell(
            ours=None if ours is None else ours.costs[key],
            ours_questions=None if ours is None else ours.questions,
            rule=None if rule is None else rule.costs[key],
            rule_method=None if rule is None else rule.method,
            nothing=min(accept, ban),
            nothing_method="accept-all" if accept <= ban else "ban-all",
            oracle=min(oracle_cost(truth, bar, cap, c_ban, c_miss),
                       doing_nothing_cost(truth, bar, c_ban, c_miss)),
        )  # fmt: skip
    return cells


def _x(part: float | None, whole: float | None) -> str:
    if part is None or whole is None:
        return "-"
    return "=" if part == whole else f"{part / whole:.2f}" if whole > 0 else "inf"


def reading_lines(name: str, cells: dict[str, Cell]) -> list[str]:
    """The reading's lines under one (dataset, population, bar)'s table."""
    rule = "; ".join(f"{key}: {_x(c.ours, c.rule)}x ({c.rule_method})" for key, c in cells.items())
    nothing = "; ".join(
        f"{key}: {_x(c.ours, c.nothing)}x, rule {_x(c.rule, c.nothing)}x"
        f"{'' if c.can_pay else ' (no method can)'}"
        for key, c in cells.items()
    )
    return [
        f"**{name}**",
        "- crowd-prior built for the costs / the best rule after the fact: " + rule,
        "- against doing nothing (the cheaper of accept-all and ban-all): " + nothing,
    ]


def _wins(cells: Iterable[Cell], ours: bool = True) -> tuple[int, int, int]:
    """(cells where ours, or the best rule, beats doing nothing, of those where any method
    can, of all cells)"""
    listed = [c for c in cells if (c.ours if ours else c.rule) is not None]
    beat = sum(((c.ours if ours else c.rule) or 0.0) < c.nothing - 1e-9 for c in listed)
    return beat, sum(c.can_pay for c in listed), len(listed)


def summary(tables: dict[str, Any]) -> list[str]:
    """The fair reading over datasets, per (population, bar)."""
    lines = ["## The fair reading over datasets"]
    by_setting: dict[tuple[str, str], list[tuple[str, dict[str, Cell]]]] = {}
    for key, table in tables.items():
        dataset, pop, bar_name = key.split("|")
        cells = {k: Cell(**c) for k, c in table["reading"].items()}
        by_setting.setdefault((pop, bar_name), []).append((dataset, cells))
    for (pop, bar_name), members in sorted(by_setting.items()):
        every = [c for _, cells in members for c in cells.values()]
        compared = [c for c in every if c.ours is not None and c.rule is not None]
        cheaper = [c for c in compared if c.ours is not None and c.rule is not None
                   and c.ours < c.rule]  # fmt: skip
        all_settings = sum(
            all(c.ours is not None and c.rule is not None and c.ours < c.rule
                for c in cells.values())
            for _, cells in members
        )  # fmt: skip
        ours_beat, can, cells_ours = _wins(every)
        rule_beat, _, _ = _wins(every, ours=False)
        both = sum(
            all(c.ours is not None and c.ours < min(c.nothing, c.rule or math.inf) - 1e-9
                for c in cells.values() if c.can_pay)
            and any(c.can_pay for c in cells.values())
            for _, cells in members
        )  # fmt: skip
        n = len(members)
        lines.append(
            f"- {pop} answers, bar {bar_name}: crowd-prior built for the costs cheaper than the "
            f"best rule (after the fact) at every cost setting in {all_settings}/{n} datasets, "
            f"in {len(cheaper)}/{len(compared)} (dataset, cost) cells; cheaper than doing "
            f"nothing in {ours_beat}/{cells_ours} cells (the best rule: {rule_beat}); any "
            f"method can beat doing nothing (oracle) in {can}/{cells_ours} cells; crowd-prior "
            f"beats both doing nothing and the best rule wherever any method can in {both}/{n} "
            "datasets"
        )
    return lines


def summary_tables(tables: dict[str, Any]) -> list[str]:
    """Per (population, bar): a dataset per row, a cost setting per column, crowd-prior built
    for the costs over the best rule, and over doing nothing ("*": no method can beat doing
    nothing there, by the oracle)."""
    keys = [cost_key(b, m) for b, m in COSTS]
    short = [k.replace("ban ", "").replace(" / miss ", "/") for k in keys]
    groups: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = {}
    for key, table in sorted(tables.items()):
        dataset, pop, bar_name = key.split("|")
        groups.setdefault((pop, bar_name), []).append((dataset, table))
    lines = []
    for (pop, bar_name), members in sorted(groups.items()):
        for title, against in (("the best rule after the fact", "rule"),
                               ("doing nothing", "nothing")):  # fmt: skip
            rows = []
            for dataset, table in members:
                cells = [Cell(**table["reading"][k]) for k in keys]
                ratios = [_x(c.ours, getattr(c, against)) + ("" if c.can_pay else "*")
                          for c in cells]  # fmt: skip
                pays = f"{sum(c.can_pay for c in cells)}/{len(cells)}"
                rows.append([dataset, str(table["workers"]), *ratios, pays])
            lines += [f"\n{pop} answers, bar {bar_name}: crowd-prior built for the costs / "
                      f"{title}", "", markdown_table(["dataset", "workers", *short,
                                                      "screening can pay"], rows)]  # fmt: skip
    return lines
