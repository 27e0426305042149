"""Appen's quiz mode: test questions up front, then optionally hidden ones at work."""

from __future__ import annotations

from typing import Any, ClassVar

from screener.algorithms._test_setups import BUDGET, AlgorithmSetup
from screener.algorithms.thresholding.platform_rule import NO_GUARANTEE, PlatformRule, percent
from screener.arrays import IntArray
from screener.checks import check_count

__all__ = ["Quiz"]


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
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup({"quiz_size": 6, "hidden": 4, **BUDGET}),
    )
    guarantee: ClassVar[str | None] = (
        f"{NO_GUARANTEE} (Appen quiz mode: pass when the share correct on the quiz is at "
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
        summary = f"{total:g} of {count} correct ({percent(accuracy)}"
        bar = percent(self.threshold)
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
