"""What every report says of a run, whatever its format (the table, JSON, CSV, the HTML page):
which workers it lists, whether the run stopped and its promise holds, the workers per
decision, the banned workers, the money spent."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from screener.algorithms import Decision, Result, Verdict, WorkerResult, verdict_of
from screener.algorithms.result import away
from screener.checks import check_choice, check_count
from screener.money import Prices, money

__all__ = [
    "AWAY",
    "ONLY",
    "Only",
    "banned_workers",
    "cost_line",
    "decision_counts",
    "describe_status",
    "money_spent",
    "shown_counts",
    "shown_workers",
]

Only = Literal["decided", "undecided", "banned", "accepted"]
#: The choices of ``--only``: by decision, or by what a platform does with it
#: (``screener.algorithms.verdicts``).
ONLY: tuple[Only, ...] = ("decided", "undecided", "banned", "accepted")


def shown_workers(
    result: Result, *, only: Only | None = None, limit: int | None = None
) -> tuple[WorkerResult, ...]:
    """The workers a report lists, in rank order: only the decided, the undecided, the
    banned or the accepted ones when ``only`` says so, then the first ``limit`` of them."""
    ranked = result.ranking
    if only in ("banned", "accepted"):
        ranked = tuple(w for w in ranked if verdict_of(w.decision, result.params) == only)
    elif only is not None:
        check_choice("only", only, ONLY)
        want_undecided = only == "undecided"
        ranked = tuple(w for w in ranked if (w.decision is Decision.UNDECIDED) == want_undecided)
    if limit is not None:
        ranked = ranked[: check_count("limit", limit, 1, "show at least one worker, e.g. 10")]
    return ranked


def describe_status(result: Result, state: str | None = None) -> str:
    """Whether the run stopped, and if so whether its promise holds, in one sentence
    (``Result.status``; ``state``: a stored run's lifecycle, see ``run_state``)."""
    return result.status(state)


def money_spent(result: Result, prices: Prices) -> dict[str, float | None]:
    """What the run's gold questions cost at ``prices`` (answered ones: a question is paid
    for when answered), and its budget in money (None without one).

    Examples
    --------
    >>> from screener import RoundRobin
    >>> result = RoundRobin(3, budget=40).result()
    >>> money_spent(result, Prices(gold=0.05))
    {'gold_price': 0.05, 'gold': 0.0, 'budget': 2.0}
    """
    budget = result.params.get("budget")
    return {
        "gold_price": prices.gold,
        "gold": result.total_pulls * prices.gold,
        "budget": None if budget is None else budget * prices.gold,
    }


def cost_line(result: Result, prices: Prices) -> str:
    """The money spent, in words (the table's "cost:" line, the page's Cost).

    Examples
    --------
    >>> from screener import RoundRobin
    >>> cost_line(RoundRobin(3, budget=40).result(), Prices(gold=0.05))
    'cost: 0.00 (0 gold questions at 0.05), of a budget of 2.00'
    """
    spent = money_spent(result, prices)
    line = f"cost: {money(result.total_pulls * prices.gold)} ({result.total_pulls:,} gold "
    line += f"questions at {prices.gold:g})"
    budget = spent["budget"]
    return line if budget is None else f"{line}, of a budget of {money(budget)}"


def decision_counts(result: Result) -> dict[str, int]:
    """Workers per decision (each decision the result gives, and undecided always), then, when
    any, how many ran out of gold questions ("exhausted") or left otherwise ("unavailable").

    The last two are read off the reasons, which say "unavailable: ..." where leaving is what
    the worker's line rests on: a worker decided before it left counts under its decision only.
    """
    counts = result.counts()
    gone = Counter(away(w.reason) for w in result.workers)
    counts.update((kind, gone[kind]) for kind in AWAY if gone[kind])
    return counts


def shown_counts(result: Result) -> dict[str, int]:
    """``decision_counts`` as reports show them: workers per word (``Result.word_counts``:
    banned first, undecided last), then those that ran out of gold questions or left."""
    away = {name: n for name, n in decision_counts(result).items() if name in AWAY}
    return {**result.word_counts(), **away}


#: The counts of ``decision_counts`` that are not decisions: why workers stopped answering.
AWAY = ("exhausted", "unavailable")


def banned_workers(result: Result) -> list[int] | None:
    """The workers ``result`` bans, their arms in order (``screener.algorithms.verdicts``);
    None when its question bans no one (the best K, outliers on the high side or either
    side)."""
    params, bar = result.params, result.threshold is not None and result.threshold.given
    if verdict_of(Decision.BELOW if bar else Decision.OUTLIER, params) is not Verdict.BANNED:
        return None
    return sorted(w.arm for w in result.workers if verdict_of(w.decision, params) is Verdict.BANNED)
