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
from collections import deque
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._checks import check_count
from screener.algorithms.result import Decision
from screener.algorithms.thresholding import ThresholdingAlgorithm, _grown
from screener.arrays import FloatArray, IntArray
from screener.errors import ConfigError

__all__ = ["PlatformRule", "Quiz", "TolokaRule"]

_UNDECIDED, _ABOVE, _BELOW = 0, 1, -1
_NO_GUARANTEE = "no statistical guarantee: a static platform rule"


def _percent(value: float) -> str:
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
        self.verdict = _grown(self.verdict, count, _UNDECIDED)
        self._answers_seen += [0] * count
        self._horizons = _grown(self._horizons, count, 0)
        self._horizons_stale = _grown(self._horizons_stale, count, True)

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


class TolokaRule(PlatformRule):
    """Toloka's control-task rule: ban when the share correct in a recent window is too low.

    Follows Toloka's documentation, "Control tasks" (https://toloka.ai/docs/guide/concepts/
    goldenset, also github.com/Toloka/docs en/guide/concepts/goldenset.md), example "Ban
    Tolokers based on control tasks and the percentage of correct responses": "If the Toloker
    gives at least 3 responses to the control tasks and the percentage of correct answers is
    less than 60%, they lose access to the project. The calculation uses up to 10 of the
    Toloker's recent responses" (the field "Recent control and training task responses to
    use", ``history_size`` in the API, explained on the page "Remember values parameter",
    https://toloka.ai/docs/guide/concepts/remember-values). The defaults are that example:
    ``window=10``, ``min_answers=3``, ``threshold=0.6``.

    After each answer of worker i, once it has given at least ``min_answers``: banned (BELOW)
    when the mean reward over its last ``min(window, answers)`` answers is under
    ``threshold`` (strictly: "less than 60%"). Graded rewards count as their value, so the
    "share correct" is the mean reward. A worker who reaches ``accept_after`` answers (default
    20) without a ban is accepted (ABOVE) and gets no more control questions.

    Readings where the documentation is open:

    * The number of responses in the condition is counted inside the window (the page warns
      that a rule whose "number of responses" exceeds the history size "will never take
      effect"), so ``min_answers`` must not exceed ``window``; within that, counting all
      answers or the window's is the same test.
    * ``accept_after`` is not part of the control-task rule: it is where the requester stops
      paying for control questions (Toloka's limit on submitted task suites, or the end of
      the pool). The rule itself never accepts.
    * Answers are in the order ``tell`` accepted them, the order Toloka would have them if
      answers arrive as the questions were asked (as they do one question at a time).

    Under concurrency: a worker's questions up to its first possible ban are all in flight at
    once: ``min_answers`` fresh; after that, the answers until all-wrong ones would bring the
    share in the window under the bar (three right of three, bar 60%: three more, since 3 of
    6 is the first share under it), or until ``accept_after``.

    Examples
    --------
    On six simulated workers (three workers under the bar of 0.5, three over it):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.2, 0.35, 0.45, 0.65, 0.75, 0.9]
    >>> algorithm = TolokaRule(6, threshold=0.6, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('condition met', 75)
    >>> [w.decision.value for w in sorted(result.workers, key=lambda w: w.arm)]
    ['below', 'below', 'above', 'below', 'above', 'above']
    """

    name = "toloka-rule"
    guarantee: ClassVar[str | None] = (
        f"{_NO_GUARANTEE} (Toloka control tasks: a ban when the share correct in the recent "
        "window is under the bar); each decision is the rule's, not a confidence statement"
    )

    def __init__(
        self,
        n_workers: int,
        *,
        threshold: float = 0.6,
        window: int = 10,
        min_answers: int = 3,
        accept_after: int = 20,
        **kwargs: Any,
    ) -> None:
        super().__init__(n_workers, threshold=threshold, **kwargs)
        self.window = check_count("window", window, 1, "try window=10 (Toloka's example)")
        self.min_answers = check_count("min_answers", min_answers, 1, "try min_answers=3")
        if self.min_answers > self.window:
            raise ConfigError(
                f"min_answers ({self.min_answers}) must not exceed window ({self.window}): "
                "the rule would never fire",
                "lower min_answers or widen the window",
            )
        self.accept_after = check_count(
            "accept_after", accept_after, self.min_answers,
            "accept after at least min_answers answers, e.g. accept_after=20",
        )  # fmt: skip
        self._recent: list[deque[float]] = [deque(maxlen=self.window) for _ in range(self.n_arms)]

    @property
    def max_answers(self) -> int:
        return self.accept_after

    def _on_joined(self, arms: IntArray) -> None:
        super()._on_joined(arms)
        self._recent += [deque(maxlen=self.window) for _ in range(arms.size)]

    def _bans(self, count: int, recent: deque[float]) -> bool:
        """The rule's ban: enough answers, and the share correct in the window under the bar."""
        return count >= self.min_answers and math.fsum(recent) / len(recent) < self.threshold

    def _earliest_decision(self, arm: int) -> int:
        recent = self._recent[arm].copy()
        for count in range(self._answers_seen[arm] + 1, self.accept_after):
            recent.append(self.lower)
            if self._bans(count, recent):
                return count
        return self.accept_after

    def _judge(self, arm: int, count: int, reward: float) -> None:
        recent = self._recent[arm]
        recent.append(reward)
        if self._bans(count, recent):
            total = math.fsum(recent)
            share = total / len(recent)
            self._decide_now(
                arm,
                False,
                f"banned: {total:g} of the last {len(recent)} answers correct "
                f"({_percent(share)} < {_percent(self.threshold)}) at answer {count}",
            )
            return
        if count == self.accept_after:
            self._decide_now(
                arm, True, f"accepted: {count} answers without a ban (Toloka control-task rule)"
            )


class Quiz(PlatformRule):
    """Appen's quiz mode: Q test questions up front, then optionally hidden ones at work.

    Follows Appen's documentation: "Test Question Enabling and Quiz Mode"
    (https://success.appen.com/hc/en-us/articles/211363686): "Before a contributor can enter
    your job, they must pass Quiz Mode which is composed entirely of test questions.
    Contributors that fail Quiz Mode are ... permanently disqualified", and "Guide To: Test
    Question Settings" (success.figure-eight.com/hc/en-us/articles/202702975): the Minimum
    Accuracy "is the minimum accuracy a contributor must maintain during the job to continue
    working. If the contributor falls below this accuracy at any time, they will be removed
    from the job ... If Quiz Mode is enabled, this is the minimum accuracy percentage (Trust
    Score) a contributor must achieve to pass Quiz Mode".

    Rule: after ``quiz_size`` answers (Q, default 10), the worker fails (BELOW) when the share
    correct (mean reward) is under ``threshold``, else passes. The quiz is graded when it is
    complete, never earlier (even when passing has become impossible). With ``hidden = 0`` a
    pass is ABOVE at once. With ``hidden = H > 0`` the worker then answers H hidden test
    questions (Appen's work mode); after each one it is removed (BELOW) when its running
    accuracy over all its test questions so far (quiz included: the Trust Score) is under the
    bar, and it is ABOVE after Q + H answers without removal.

    Readings and choices:

    * The pacing of hidden questions ("one test question per page of work", configurable as X
      per X pages) is the platform's business, not the decision's: here the hidden questions
      are asked one after the other, and only their order and number matter.
    * Default ``threshold = 0.7``: the pages above name the Minimum Accuracy setting but give
      no default value; 0.7 is this package's choice. The default quiz length on Appen is the
      Rows Per Page setting; 10 is the page's own example.

    Under concurrency: the whole quiz is in flight at once (it is graded at Q answers,
    whatever they are); after a pass with hidden questions, the hidden ones until all-wrong
    answers would bring the running accuracy under the bar, or until Q + H.

    Examples
    --------
    On six simulated workers (three workers under the bar of 0.5, three over it):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.2, 0.35, 0.45, 0.65, 0.75, 0.9]
    >>> algorithm = Quiz(6, threshold=0.6, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('condition met', 60)
    >>> [w.decision.value for w in sorted(result.workers, key=lambda w: w.arm)]
    ['below', 'above', 'above', 'above', 'above', 'above']
    """

    name = "quiz"
    guarantee: ClassVar[str | None] = (
        f"{_NO_GUARANTEE} (Appen quiz mode: pass when the share correct on the quiz is at "
        "least the bar, removal when the running accuracy falls under it); each decision is "
        "the rule's, not a confidence statement"
    )

    def __init__(
        self,
        n_workers: int,
        *,
        threshold: float = 0.7,
        quiz_size: int = 10,
        hidden: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(n_workers, threshold=threshold, **kwargs)
        self.quiz_size = check_count("quiz_size", quiz_size, 1, "try quiz_size=10")
        self.hidden = check_count(
            "hidden", hidden, 0, "give the number of hidden test questions after the quiz, e.g. 5"
        )
        self._totals = [0.0] * self.n_arms

    @property
    def max_answers(self) -> int:
        return self.quiz_size + self.hidden

    def _on_joined(self, arms: IntArray) -> None:
        super()._on_joined(arms)
        self._totals += [0.0] * arms.size

    def _fires(self, count: int, total: float) -> bool:
        """The quiz is graded at Q answers (failed under the bar, else passed when there are
        no hidden questions); after it, removal under the bar, or a pass at Q + H."""
        if count < self.quiz_size:
            return False
        return total / count < self.threshold or count == self.max_answers

    def _earliest_decision(self, arm: int) -> int:
        seen = self._answers_seen[arm]
        for count in range(seen + 1, self.max_answers):
            if self._fires(count, self._totals[arm] + (count - seen) * self.lower):
                return count
        return self.max_answers

    def _judge(self, arm: int, count: int, reward: float) -> None:
        self._totals[arm] += reward
        total = self._totals[arm]
        if not self._fires(count, total):
            return
        accuracy = total / count
        summary = f"{total:g} of {count} correct ({_percent(accuracy)}"
        bar = _percent(self.threshold)
        if accuracy < self.threshold and count == self.quiz_size:
            self._decide_now(arm, False, f"failed the quiz: {summary} < {bar})")
        elif accuracy < self.threshold:
            self._decide_now(
                arm, False, f"removed at answer {count} (hidden question "
                f"{count - self.quiz_size} of {self.hidden}): {summary} < {bar})",
            )  # fmt: skip
        elif self.hidden == 0:  # graded at Q = Q + H answers
            self._decide_now(arm, True, f"passed the quiz: {summary} >= {bar})")
        else:
            passed = f"passed the quiz and {self.hidden} hidden questions"
            self._decide_now(arm, True, f"{passed}: {summary} >= {bar})")
