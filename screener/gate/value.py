"""The value of a gold question in the stream: worth its price, or better spent on a task?

Rule (``GoldValue.wants``): give an undecided worker a gold question when, under the crowd
prior crowd-prior has fitted, asking on is cheaper in expectation than letting the worker go
on working undecided. The costs, in the requester's money:

* a gold question: its price;
* a worker under the bar who keeps working: ``R * bad_label``, R its expected remaining
  tasks (each label it makes is worthless; ``bad_label`` defaults to twice the task price);
* a good worker banned: ``R * task price``, the labels it would have made (lost, or bought
  again from others);
* a ban is open only where the gate's ban rule could take it (``ValueOfGold.bans``):
  ``P(below bar) >= 1 - q`` under "promise", anywhere under "cost"; elsewhere stopping means
  the worker keeps working (accepted, or undecided). Where the table would ban and no ban
  has come (crowd-prior bans only when every prior its answers allow agrees, its robust
  region; the gate's own ban leaves the worker's answers out of its prior), the worker keeps
  getting gold: more answers are what bring that ban about.

The Bayes-optimal choice between those is backward induction over the answers to come, up to
crowd-prior's ``max_answers`` (``screener.stats.stopping_table``, bans open as above):
the value of information of the questions still worth asking, not of the next one alone
(one answer rarely moves a decision, several do). R is the stream's estimate
(``RequestLengths``): a worker's expected further requests given those it has made, from the
requests of every worker seen so far (crowds are heavy-tailed: a worker who has made many
requests will likely make many more). Tables are kept per fitted prior and per power of two
of R. With the tenure prior (``screener.gate.tenure``, the default) the prior is that of the
worker's age: a worker who has stayed long is priced against the workers who stayed as long.

Promise: none of its own (a schedule): it only chooses when gold is asked; every acceptance is
crowd-prior's, every ban crowd-prior's or the gate's rule's, each with its promise. Under the
prior it prices with, it spends a question exactly when the expected saving is larger than
its price.
"""

from __future__ import annotations

import bisect
import math

from screener.algorithms import CrowdPrior
from screener.gate.settings import GateSettings
from screener.gate.tenure import TenurePriors
from screener.stats.prior import GridPrior, StoppingCosts, StoppingTable, stopping_table

__all__ = ["GoldValue", "RequestLengths"]


class GoldValue:
    """Gold-or-task by the value of information (see the module docstring)."""

    def __init__(self, settings: GateSettings, tenure: TenurePriors | None = None) -> None:
        self.settings = settings
        self.tenure = tenure
        self._key: tuple[object, int] | None = None
        self._tables: dict[tuple[int, int], StoppingTable] = {}

    def wants(self, method: CrowdPrior, arm: int, remaining: float, age: int = 0) -> bool:
        """Whether worker ``arm``, expected to make ``remaining`` more requests, should get a
        gold question now (``age``: the requests it has made, for the tenure prior)."""
        if int(method.stats.count[arm]) < method.min_counts[arm]:
            return True  # the pilot's workers fit the prior: their answers are needed
        # Where the prior alone would ban, crowd-prior has not (it bans only when every prior
        # the answers allow agrees): more gold is what brings that ban.
        return self.action(method, arm, remaining, age) != StoppingTable.ACCEPT

    def action(self, method: CrowdPrior, arm: int, remaining: float, age: int = 0) -> int:
        """The stopping table's action (``StoppingTable.CONTINUE``, ``BAN`` or ``ACCEPT``) at
        worker ``arm``'s answers so far."""
        table = self._table(method, max(remaining, 1.0), age)
        # One worker's lattice point, as StoppingTable.lookup finds it (a graded worker's
        # successes rounded), without arrays: this runs at every request.
        count = int(method.stats.count[arm])
        answered = min(count, table.horizon)
        total = float(method.stats.total[arm])
        successes = (total - method.lower * count) / (method.upper - method.lower)
        right = min(max(round(successes), 0), answered)
        return int(table.action[right, answered - right])

    def _table(self, method: CrowdPrior, remaining: float, age: int) -> StoppingTable:
        version = -1 if self.tenure is None else self.tenure.version
        if self._key is None or self._key[0] is not method.prior or self._key[1] != version:
            self._key, self._tables = (method.prior, version), {}
        bucket = max(0, round(math.log2(remaining)))
        age_bucket = 0 if self.tenure is None or age < 1 else int(math.log2(age))
        table = self._tables.get((bucket, age_bucket))
        if table is None:
            prior = method.prior if self.tenure is None else self.tenure.prior(method, age)
            table = self._build(method, prior, float(2**bucket))
            self._tables[bucket, age_bucket] = table
        return table

    def _build(self, method: CrowdPrior, prior: GridPrior, remaining: float) -> StoppingTable:
        prices = self.settings.prices
        costs = StoppingCosts(
            question=prices.gold,
            false_ban=remaining * prices.task,
            missed_bad=remaining * self.settings.label_cost,
        )
        return stopping_table(
            prior, method.bar, costs, horizon=method.max_answers, min_answers=0,
            ban_from=0.0 if self.settings.ban_rule == "cost" else 1.0 - method.q,
        )  # fmt: skip


class RequestLengths:
    """How many more requests a worker will make, from how many every worker made so far.

    ``remaining(a)``: the mean residual ``E[T - a | T > a]`` over the workers seen with more
    than ``a`` requests (their counts so far, a lower bound on their totals while they work),
    shrunk towards the requester's guess ``expected`` (less ``a``) with the weight of
    ``PRIOR_WORKERS`` workers, so that the first workers do not decide it alone; and at least
    ``a`` itself: crowds are heavy-tailed (a Pareto tail of index 2 gives exactly
    ``E[T - a | T > a] = a``), and the most prolific worker so far has no longer peers to
    learn its future from, yet is the likeliest to go on. The counts are sorted again every
    ``REFRESH`` requests (a cheap, deterministic schedule).
    """

    PRIOR_WORKERS = 5
    REFRESH = 256

    def __init__(self, expected: float) -> None:
        self.expected = float(expected)
        self._counts: dict[int, int] = {}  # requests made -> workers at that count
        self._sorted: list[int] = []  # the distinct request counts, ascending
        self._longer: list[int] = [0]  # workers at _sorted[i] or more requests
        self._suffix: list[int] = [0]  # their requests, summed
        self._since = 0

    def grew(self, count: int) -> None:
        """A worker made its ``count``-th request."""
        self._counts[count] = self._counts.get(count, 0) + 1
        if count > 1:
            self._counts[count - 1] -= 1
        self._since += 1
        if self._since >= self.REFRESH:
            self._rebuild()

    def remaining(self, age: int) -> float:
        """Expected further requests of a worker who has made ``age``."""
        first = bisect.bisect_right(self._sorted, age)
        longer = self._longer[first]
        total = self._suffix[first] - age * longer
        weight = self.PRIOR_WORKERS
        guess = max(self.expected - age, 1.0)
        return max((total + weight * guess) / (longer + weight), float(age))

    def _rebuild(self) -> None:
        """Suffix sums over the distinct counts, not over workers: k distinct counts take at
        least k (k + 1) / 2 requests, so there are a few thousand at most."""
        self._since = 0
        self._sorted = sorted(c for c, n in self._counts.items() if n > 0)
        longer, suffix = [0] * (len(self._sorted) + 1), [0] * (len(self._sorted) + 1)
        for index in range(len(self._sorted) - 1, -1, -1):
            count = self._sorted[index]
            workers = self._counts[count]
            longer[index] = longer[index + 1] + workers
            suffix[index] = suffix[index + 1] + count * workers
        self._longer, self._suffix = longer, suffix
