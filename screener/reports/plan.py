"""A cost plan in words, as ``screener plan`` prints it: questions (and money) per worker and
in total over the simulated runs (``screener.runs.planning``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from screener.money import money

__all__ = ["render_plan"]


def render_plan(summary: Mapping[str, Any]) -> str:
    """The plan as the requester reads it (``summary``: ``CostPlan.summary()`` with the
    algorithm, its parameters and the number of workers).

    Examples
    --------
    >>> from screener.runs.planning import plan_cost
    >>> cost = plan_cost("rr", {"budget": 60}, [0.9, 0.85, 0.5], runs=5)
    >>> print(render_plan({"algorithm": "rr", "params": {"budget": 60}, "workers": 3,
    ...                    **cost.summary()}))  # doctest: +NORMALIZE_WHITESPACE
    plan: rr (budget=60) on 3 simulated workers, 5 runs
                           median  90th pct  largest  mean
    questions per worker       20        20       20  20.0
    questions in total         60        60       60  60.0
    runs ending with undecided workers: 100% (stopped: budget spent 5)
    mistakes: not simulated (a question against no bar)
    >>> cost = plan_cost("toloka-rule", {"threshold": 0.6}, [0.9, 0.85, 0.5], runs=5)
    >>> print(render_plan({"algorithm": "toloka-rule", "params": {}, "workers": 3,
    ...                    **cost.summary()}).splitlines()[-1])
    mistakes per run, by the simulated truth: 0.20 good workers banned, 0.20 of 1.00 bad workers kept (80% of them banned)
    """  # noqa: E501
    params = ", ".join(f"{k}={v}" for k, v in summary["params"].items())
    lines = [
        f"plan: {summary['algorithm']}{f' ({params})' if params else ''} on "
        f"{summary['workers']:,} simulated workers, {summary['runs']:,} runs",
        f"{'':22} {'median':>7} {'90th pct':>9} {'largest':>8} {'mean':>7}",
    ]
    for label, key in (("per worker", "questions_per_worker"), ("in total", "questions_in_total")):
        spread = summary[key]
        lines.append(
            f"{'questions ' + label:22} {spread['median']:>7,.0f} {spread['p90']:>9,.0f} "
            f"{spread['max']:>8,.0f} {spread['mean']:>7,.1f}"
        )
        if "money" in summary:
            spent = {name: money(value) for name, value in summary["money"][key].items()}
            lines.append(
                f"{'money ' + label:22} {spent['median']:>7} {spent['p90']:>9} "
                f"{spent['max']:>8} {spent['mean']:>7}"
            )
    if "money" in summary:
        lines.append(f"money at {summary['money']['gold_price']:g} a gold question")
    stops = ", ".join(f"{reason} {count}" for reason, count in summary["stop_reasons"].items())
    lines.append(
        f"runs ending with undecided workers: {summary['runs_with_undecided']:.0%} "
        f"(stopped: {stops})"
    )
    lines.append(_mistakes_line(summary.get("mistakes"), "threshold" in summary["params"]))
    if summary.get("capped"):
        budget = summary["params"]["budget"]
        lines.append(
            f"{summary['algorithm']} bounds no worker's questions: capped at {budget:,} in "
            f"total, {budget / summary['workers']:,.0f} per worker (--budget N to choose)"
        )
    return "\n".join(lines)


def _mistakes_line(mistakes: Mapping[str, float] | None, bar: bool) -> str:
    """The plan's mistakes per run by the simulated truth: what the questions buy; where
    they are not simulated, why (``bar``: the question has one, but its runs keep no bans)."""
    if mistakes is None and bar:
        return "mistakes: not simulated (these runs keep no bans)"
    if mistakes is None:
        return "mistakes: not simulated (a question against no bar)"
    share = mistakes["bad_banned_share"]
    banned = "no bad worker in the crowd" if share != share else f"{share:.0%} of them banned"
    return (
        f"mistakes per run, by the simulated truth: {mistakes['false_bans_per_run']:.2f} good "
        f"workers banned, {mistakes['missed_bad_per_run']:.2f} of "
        f"{mistakes['bad_per_run']:.2f} bad workers kept ({banned})"
    )
