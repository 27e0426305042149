"""The static rules crowdsourcing platforms apply today, as ask/tell algorithms.

Requesters screen workers with fixed rules, not bandits: Toloka bans a worker whose share of
correct answers in a window of recent control tasks falls under a bar (``TolokaRule``);
Appen admits a worker who passes a quiz of test questions and removes one whose accuracy
later falls under the bar (``Quiz``). Running them through the same contract as the bandit
algorithms lets a requester compare questions spent and decisions on the same answers, in
simulation, dataset replay, log replay and live.

Neither rule carries a statistical guarantee: a decision is whatever the rule says on the
answers seen, and a worker exactly at the bar is banned or kept by chance.

Shared mechanics (``PlatformRule``): the rule watches each worker's answers one by one, in the
order they were accepted by ``tell`` (within one ``tell_many`` batch, in array order), and
decides the worker on the exact answer where it fires. The next question goes to the
undecided worker with the fewest answers and no question in flight, ties to the lowest index
(round robin); a worker is never asked for more than the rule can still use, and is not asked
again once decided.

Under concurrency (a window wider than the undecided workers): a worker may have more
questions in flight, but only questions it surely needs, so none is paid for and wasted. The
rule cannot fire before the worker's "horizon", the first answer count at which some answers
could make it fire; both rules fire soonest on all-wrong answers (a lower share only brings
a ban or a failure closer, and acceptance comes at a fixed count), so the horizon is where
all-wrong answers from now on would first decide. Every answer up to it is judged whatever
the answers in flight turn out to be. The window is filled with those answers, the worker
with the fewest questions in flight first (then the fewest answers, then the lowest index).
One question at a time, or a batch with nothing in flight and no more room than undecided
workers, the pulls are exactly the round robin's.
"""

from __future__ import annotations

import abc
import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from screener.algorithms.thresholding._base import ThresholdingAlgorithm
from screener.algorithms.worker_result import Decision
from screener.arrays import FloatArray, IntArray, grown

__all__ = ["NO_GUARANTEE", "PlatformRule", "percent"]

_UNDECIDED, _ABOVE, _BELOW = 0, 1, -1
#: The first words of a platform rule's guarantee.
NO_GUARANTEE = "no statistical guarantee: a static platform rule"


def percent(value: float) -> str:
    """A share for people: 60%, 66.67%."""
    return f"{100 * value:.4g}%"


class PlatformRule(ThresholdingAlgorithm):
    """Base of the static platform rules: per-answer decisions, surely-needed questions only.

    Subclasses supply ``_judge(arm, count, reward)``, called once per accepted answer of an
    undecided worker (``count`` is that worker's answer number, 1-based), which calls
    ``_decide_now`` when the rule fires; ``_earliest_decision(arm)``, the worker's horizon
    (see the module docstring); and ``max_answers``, the most answers the rule can use per
    worker.

    Result: a decided worker is ABOVE (accepted) or BELOW (banned, failed, removed) with the
    rule that fired in its reason; an undecided worker with answers is UNDECIDED, leaning
    ABOVE (the platform keeps a worker it never banned). The estimate and its informational
    Hoeffding interval describe all the worker's answers; the decision does not use them.

    Examples
    --------
    A rule bounds what one worker can cost before the first question:

    >>> from screener.algorithms import Quiz, TolokaRule
    >>> TolokaRule(5, threshold=0.6).max_questions_per_worker
    20
    >>> issubclass(Quiz, PlatformRule)
    True
    """

    fixed_budget: ClassVar[bool] = False
    decisions_final: ClassVar[bool] = True
    pull_each_first: ClassVar[bool] = False
    needs_answers: ClassVar[bool] = False

    def __init__(self, n_workers: int, *, threshold: float, **kwargs: Any) -> None:
        super().__init__(n_workers, threshold=threshold, **kwargs)
        self.verdict = np.zeros(self.n_arms, dtype=np.int8)
        self.verdict_reason: dict[int, str] = {}
        self._answers_seen = [0] * self.n_arms
        self._horizons = np.zeros(self.n_arms, dtype=np.int64)
        #: Workers with answers since their horizon was last worked out: only a window with
        #: room reads horizons, so they are computed then, not on every answer.
        self._horizons_stale = np.ones(self.n_arms, dtype=np.bool_)

    def verdicts(self) -> NDArray[np.int8]:
        """+1 accepted, -1 banned, 0 undecided: the rule's decisions, final when taken."""
        return self.verdict.copy()

    def _on_joined(self, arms: IntArray) -> None:
        super()._on_joined(arms)
        count = arms.size
        self.verdict = grown(self.verdict, count, _UNDECIDED)
        self._answers_seen += [0] * count
        self._horizons = grown(self._horizons, count, 0)
        self._horizons_stale = grown(self._horizons_stale, count, True)

    @property
    @abc.abstractmethod
    def max_answers(self) -> int:
        """The most answers the rule can use for one worker."""

    @property
    def max_questions_per_worker(self) -> int:
        return self.max_answers

    @abc.abstractmethod
    def _judge(self, arm: int, count: int, reward: float) -> None:
        """Apply the rule to the ``count``-th answer of undecided worker ``arm``."""

    @abc.abstractmethod
    def _earliest_decision(self, arm: int) -> int:
        """The first answer count at which the rule could fire for undecided worker ``arm``
        (all-wrong answers from now on decide there, or it is ``max_answers``)."""

    @property
    def decided(self) -> NDArray[np.bool_]:
        return np.asarray(self.verdict != _UNDECIDED)

    def _decide_now(self, arm: int, accept: bool, reason: str) -> None:
        self.verdict[arm] = _ABOVE if accept else _BELOW
        self.verdict_reason[arm] = reason

    # ------------------------------------------------------------------ contract steps
    def _on_answers(self, pull_ids: IntArray, arms: IntArray, rewards: NDArray[np.float64]) -> None:
        super()._on_answers(pull_ids, arms, rewards)
        for arm, reward in zip(arms.tolist(), rewards.tolist(), strict=True):
            if self.verdict[arm] != _UNDECIDED:
                continue  # cannot happen (only surely-needed questions fly); final
            self._answers_seen[arm] += 1
            self._judge(arm, self._answers_seen[arm], reward)
            self._horizons_stale[arm] = True

    def _horizon(self) -> NDArray[np.int64]:
        for arm in np.flatnonzero(self._horizons_stale).tolist():
            self._horizons[arm] = 0 if self.decided[arm] else self._earliest_decision(arm)
        self._horizons_stale[:] = False
        return self._horizons

    def _condition_met(self) -> bool:
        return bool(self.decided.all())

    def _can_progress(self) -> bool:
        return bool((self.available & ~self.decided).any())

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        """Fewest answers first; +inf for a worker decided, with a question in flight (or
        already chosen in this batch), or at the rule's limit."""
        answered = self.stats.count[arms]
        askable = ~self.decided[arms] & (effective <= answered) & (effective < self.max_answers)
        return np.where(askable, effective, math.inf)

    # ------------------------------------------------------------------------- result
    def _above(self) -> NDArray[np.bool_]:
        """Leaning: the rule's decision; an undecided worker leans the way its share correct
        so far lies against the bar."""
        return np.asarray(np.where(self.decided, self.verdict == _ABOVE, super()._above()))

    def _decide(self, arm: int, leaning: Decision) -> tuple[Decision, str]:
        if self.verdict[arm] != _UNDECIDED:
            return leaning, self.verdict_reason[arm]
        seen = self._answers_seen[arm]
        total = float(self.stats.total[arm]) - self.lower * seen
        reason = f"undecided after {seen} answer{'s' if seen != 1 else ''}"
        reason += f", {total / self.width:g} right"
        unavailable = self._availability_reason(arm)
        if unavailable is not None:
            reason += f" ({unavailable})"
        elif self.finished:
            reason += f" ({self.stop_reason})"
        return Decision.UNDECIDED, reason + "; the platform keeps a worker until the rule fires"
