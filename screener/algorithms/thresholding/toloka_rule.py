"""Toloka's control-task rule: ban a worker whose share correct in a recent window is under
the bar."""

from __future__ import annotations

import math
from collections import deque
from typing import Any, ClassVar

from screener.algorithms._test_setups import BUDGET, AlgorithmSetup
from screener.algorithms.thresholding.platform_rule import NO_GUARANTEE, PlatformRule, percent
from screener.arrays import IntArray
from screener.checks import check_count
from screener.errors import ConfigError

__all__ = ["TolokaRule"]


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
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup({"window": 5, "accept_after": 12, **BUDGET}),
    )
    guarantee: ClassVar[str | None] = (
        f"{NO_GUARANTEE} (Toloka control tasks: a ban when the share correct in the recent "
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
                f"({percent(share)} < {percent(self.threshold)}) at answer {count}",
            )
            return
        if count == self.accept_after:
            self._decide_now(
                arm, True, f"accepted: {count} answers without a ban (Toloka control-task rule)"
            )
