"""The value of a gold question in the stream: worth its price, or better spent on a task?

Rule (``GoldValue.wants``): give an undecided worker a gold question when, under the crowd
prior crowd-prior has fitted, asking on is cheaper in expectation than letting the worker go
on working undecided. The costs, in the requester's money:

* a gold question: its price;
* a worker under the bar who keeps working: ``R * bad_label``, R its expected remaining
  tasks (each label it makes is worthless; ``bad_label`` defaults to the task price);
* a good worker banned: ``R * task price``, the labels it would have made (lost, or bought
  again from others);
* a ban is open only where crowd-prior could take it, ``P(below bar) >= 1 - q``; anywhere
  else stopping means the worker keeps working (accepted, or undecided). Where the table
  would ban, the worker keeps getting gold: crowd-prior bans only when every prior its
  answers allow agrees (its robust region), and more answers are what bring that about.

The Bayes-optimal choice between those is backward induction over the answers to come, up to
crowd-prior's ``max_answers`` (``screener.stats.stopping_table`` with ``ban_from = 1 - q``):
the value of information of the questions still worth asking, not of the next one alone
(one answer rarely moves a decision, several do). R is the stream's estimate: the mean
requests per worker so far (at least ``expected_tasks``, the requester's guess before the
stream says) less the worker's own, at least one. Tables are kept per fitted prior and per
power of two of R.

Promise: none of its own (a schedule): it only chooses when gold is asked; every ban and
acceptance is still crowd-prior's, with crowd-prior's promise. Under the fitted prior it
spends a question exactly when the expected saving is larger than its price.
"""

from __future__ import annotations

import math

from screener.algorithms import CrowdPrior
from screener.gate.settings import GateSettings
from screener.stats.prior import GridPrior, StoppingCosts, StoppingTable, stopping_table

__all__ = ["GoldValue"]


class GoldValue:
    """Gold-or-task by the value of information (see the module docstring)."""

    def __init__(self, settings: GateSettings) -> None:
        self.settings = settings
        self._prior: GridPrior | None = None
        self._tables: dict[int, StoppingTable] = {}

    def wants(self, method: CrowdPrior, arm: int, requests: int, mean_requests: float) -> bool:
        """Whether worker ``arm``, after ``requests`` requests, should get a gold question;
        ``mean_requests``: the stream's requests per worker so far."""
        if method.stats.count[arm] < method.min_counts[arm]:
            return True  # the pilot's workers fit the prior: their answers are needed
        expected = max(self.settings.expected_tasks, mean_requests)
        remaining = max(expected - requests, 1.0)
        table = self._table(method, remaining)
        successes = method.scaled_successes()[arm : arm + 1]
        action, _ = table.lookup(successes, method.stats.count[arm : arm + 1])
        # Where the prior alone would ban, crowd-prior has not (it bans only when every prior
        # the answers allow agrees): more gold is what brings that ban.
        return bool(action[0] != StoppingTable.ACCEPT)

    def _table(self, method: CrowdPrior, remaining: float) -> StoppingTable:
        if method.prior is not self._prior:
            self._prior, self._tables = method.prior, {}
        bucket = max(0, round(math.log2(remaining)))
        table = self._tables.get(bucket)
        if table is None:
            table = self._build(method, float(2**bucket))
            self._tables[bucket] = table
        return table

    def _build(self, method: CrowdPrior, remaining: float) -> StoppingTable:
        prices = self.settings.prices
        costs = StoppingCosts(
            question=prices.gold,
            false_ban=remaining * prices.task,
            missed_bad=remaining * self.settings.label_cost,
        )
        return stopping_table(
            method.prior, method.bar, costs, horizon=method.max_answers, min_answers=0,
            ban_from=1.0 - method.q,
        )  # fmt: skip
