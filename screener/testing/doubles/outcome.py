"""What a replayed task stream bought (``screener.testing.doubles.platform``)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from screener.testing.doubles.adversaries import Role

__all__ = ["StreamOutcome"]


@dataclass(frozen=True)
class StreamOutcome:
    """What the requester bought: the labels kept per task item, and the counts."""

    labels: dict[str, list[tuple[str, str]]]  # item -> (worker, answer), kept labels
    truth: dict[str, str]
    graded: bool
    gold_answers: int
    task_labels: int  # task labels paid for, discarded ones and replacements included
    replacements: int
    discarded: int
    accuracy_of: dict[str, float]  # worker -> accuracy on real tasks (recorded, if honest)
    banned: frozenset[str]
    short_items: int  # items that needed replacement labels
    roles: dict[str, Role]  # the adversaries of an adversarial stream, by worker
    #: workers who did their MILESTONE-th real task, or were banned before it with enough of
    #: their recorded task items left still needing a label to reach it; and those of them
    #: banned before it
    reached_milestone: frozenset[str]
    banned_before_milestone: frozenset[str]
    #: under gate overlap, each item's final label (the gate's) and its stated confidence
    final: dict[str, str] | None = None
    confidence: dict[str, float] | None = None

    def label_accuracy(self, seed: int = 0) -> float:
        """The accuracy of the final labels of the task items (NaN without any): majority vote
        over the labels kept, ties broken by a draw seeded with ``seed``; graded answers: the
        mean answer, scored ``1 - |mean - truth|``; an item left with no label (every worker
        who could label it banned) scores 0. Under gate overlap: the gate's final labels."""
        if self.final is not None:
            right = [float(self.final[item] == self.truth[item]) for item in sorted(self.labels)]
            return float(np.mean(right)) if right else math.nan
        rng = np.random.default_rng(seed)
        right = []
        for item in sorted(self.labels):
            answers = [answer for _, answer in self.labels[item]]
            truth = self.truth[item]
            if not answers:  # every worker who could label it was banned: none delivered
                right.append(0.0)
                continue
            if self.graded:
                mean = float(np.mean([float(a) for a in answers]))
                right.append(max(0.0, 1.0 - abs(mean - float(truth))))
                continue
            counts = Counter(answers).most_common()
            top = sorted(a for a, n in counts if n == counts[0][1])
            right.append(float(top[int(rng.integers(len(top)))] == truth))
        return float(np.mean(right)) if right else math.nan
