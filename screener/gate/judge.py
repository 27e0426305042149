"""The value policy's reading of a worker: is gold worth asking it, and does the gate ban it.

``ValueJudge`` holds what the value policy keeps about the stream: how long workers stay
(``RequestLengths``), every arm's age, the tenure priors when they are on
(``screener.gate.tenure``), and the value of gold (``GoldValue``). ``wants`` is the value
policy's gold-or-task; ``ban`` the gate's own ban (``ValueOfGold.bans``, a heuristic, off by
default): "promise" at P(below the bar) >= 1 - q under the prior of the worker's age; "cost"
where the stopping table at the stated prices bans and a ban is cheaper than keeping the
worker even with its own answers left out of its prior. ``value_judge`` builds a gate's
judge, the one place that checks that the value policy has a crowd prior to price gold with.
"""

from __future__ import annotations

import numpy as np

from screener.algorithms import CrowdPrior, ThresholdingAlgorithm
from screener.arrays import grown
from screener.errors import ConfigError
from screener.gate.policies import ValueOfGold
from screener.gate.roster import WorkerState
from screener.gate.settings import GateSettings
from screener.gate.tenure import TenurePriors
from screener.gate.value import GoldValue, RequestLengths
from screener.stats.prior import StoppingTable

__all__ = ["ValueJudge", "value_judge"]


def value_judge(settings: GateSettings, method: ThresholdingAlgorithm) -> ValueJudge | None:
    """The judge of a gate of ``settings`` screening with ``method``: None unless its policy
    is the value of gold, which prices gold with the crowd prior (ConfigError when
    ``method`` has none)."""
    if not isinstance(settings.policy, ValueOfGold):
        return None
    if not isinstance(method, CrowdPrior):
        raise ConfigError(
            f"the value policy prices gold with the crowd prior, and {settings.algorithm} has none",
            "use --algorithm crowd-prior, or --policy first or share",
        )
    return ValueJudge(settings, method)


class ValueJudge:
    """Gold worth asking, and the gate's own bans, under the value policy (module docstring)."""

    def __init__(self, settings: GateSettings, method: CrowdPrior) -> None:
        self.settings = settings
        self.method = method
        self.tenure = TenurePriors() if settings.uses_tenure else None
        self.value = GoldValue(settings, self.tenure)
        self.lengths = RequestLengths(settings.expected_tasks)
        self._ages = np.zeros(0)  # requests made, per arm

    def add_arm(self, age: int) -> None:
        """A new arm (a worker joined, or was screened again at ``age`` requests)."""
        self._ages = grown(self._ages, 1, float(age))

    def grew(self, state: WorkerState) -> None:
        """``state`` made a request."""
        self.lengths.grew(state.requests)
        self._ages[state.arm] = state.requests
        if self.tenure is not None:
            self.tenure.grew(self.method, self._ages)

    def wants(self, state: WorkerState) -> bool:
        """Whether a gold question is worth its price for ``state`` now."""
        remaining = self.lengths.remaining(state.requests - 1)
        return self.value.wants(self.method, state.arm, remaining, state.requests - 1)

    def ban(self, state: WorkerState) -> tuple[float, str] | None:
        """(P(below the bar), why) when the gate's own rule bans ``state`` after its last
        answer; None otherwise."""
        method, rule = self.method, self.settings.ban_rule
        if rule is None or method.stats.count[state.arm] < method.min_answers:
            return None
        p_bad = self._prob_below(state)
        if rule == "promise" and p_bad < 1.0 - method.q:
            return None
        if rule == "cost" and not self._ban_pays(state, p_bad):
            return None
        why = "keeping it costs more than losing it" if rule == "cost" else "its answers"
        return p_bad, f"P(below {method.threshold:g}) = {p_bad:.3f}: {why}"

    def _prob_below(self, state: WorkerState) -> float:
        method = self.method
        if self.tenure is not None:
            return self.tenure.prob_below(method, state.arm, state.requests)
        count = method.stats.count[state.arm : state.arm + 1]
        successes = (
            method.stats.total[state.arm : state.arm + 1] - method.lower * count
        ) / method.width
        return float(method.prior.prob_below(successes, count, method.bar)[0])

    def _ban_pays(self, state: WorkerState, p_bad: float) -> bool:
        if p_bad * self.settings.label_cost <= (1.0 - p_bad) * self.settings.prices.task:
            return False
        remaining = self.lengths.remaining(state.requests)
        action = self.value.action(self.method, state.arm, remaining, state.requests)
        return action == StoppingTable.BAN
