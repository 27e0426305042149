"""How one streamed run is scored: what the requester paid and the final labels it got.

Final labels of the task items: majority vote over the labels kept (ties broken by a seeded
draw), and Dawid-Skene through crowd-kit when it is installed (its EM over the same labels);
graded answers: the mean answer, scored ``1 - |mean - truth|``. Accuracy is over the task
items only (the gold items' truth was the policies' to use).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from screener.gate import Prices
from screener.testing.platform import StreamOutcome

__all__ = ["RunScore", "score_outcome"]


@dataclass(frozen=True)
class RunScore:
    money: float
    accuracy: float  # majority vote (graded: mean answer)
    accuracy_ds: float  # Dawid-Skene (NaN without crowd-kit, or graded)
    gold: int
    task_labels: int
    replacements: int
    discarded: int
    banned: int
    good_banned: int
    bad_labels_kept: int  # labels kept from workers under the bar
    labels_kept: int
    short_items: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def score_outcome(
    outcome: StreamOutcome, prices: Prices, bar: float, *, seed: int, dawid_skene: bool = True
) -> RunScore:
    accuracy_of = outcome.accuracy_of
    kept = [
        worker
        for labels in outcome.labels.values()
        for worker, _ in labels
        if not worker.startswith("replacement:")
    ]
    return RunScore(
        money=outcome.gold_answers * prices.gold + outcome.task_labels * prices.task,
        accuracy=_majority_accuracy(outcome, seed),
        accuracy_ds=_dawid_skene_accuracy(outcome) if dawid_skene else math.nan,
        gold=outcome.gold_answers,
        task_labels=outcome.task_labels,
        replacements=outcome.replacements,
        discarded=outcome.discarded,
        banned=len(outcome.banned),
        good_banned=sum(accuracy_of[w] >= bar for w in outcome.banned),
        bad_labels_kept=sum(accuracy_of[w] < bar for w in kept),
        labels_kept=len(kept),
        short_items=outcome.short_items,
    )


def _majority_accuracy(outcome: StreamOutcome, seed: int) -> float:
    rng = np.random.default_rng(seed)
    right = []
    for item in sorted(outcome.labels):
        answers = [answer for _, answer in outcome.labels[item]]
        truth = outcome.truth[item]
        if outcome.graded:
            mean = float(np.mean([float(a) for a in answers]))
            right.append(max(0.0, 1.0 - abs(mean - float(truth))))
            continue
        counts = Counter(answers).most_common()
        top = sorted(a for a, n in counts if n == counts[0][1])
        right.append(float(top[int(rng.integers(len(top)))] == truth))
    return float(np.mean(right)) if right else math.nan


def _dawid_skene_accuracy(outcome: StreamOutcome) -> float:
    if outcome.graded:
        return math.nan
    try:
        import pandas as pd
        from crowdkit.aggregation import DawidSkene
    except ImportError:
        return math.nan
    rows = [
        (item, worker, answer)
        for item, labels in outcome.labels.items()
        for worker, answer in labels
    ]
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    labels = DawidSkene(n_iter=50).fit_predict(frame)
    truth = pd.Series(outcome.truth)
    return float((labels.reindex(truth.index) == truth).mean())
