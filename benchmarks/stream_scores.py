"""How one streamed run is scored: what the requester paid and the final labels it got.

Final labels of the task items: majority vote over the labels kept (ties broken by a seeded
draw; ``StreamOutcome.label_accuracy``, which the platform stand-in reports too), and
Dawid-Skene through crowd-kit when it is installed (its EM over the same labels); graded
answers: the mean answer, scored ``1 - |mean - truth|``. Accuracy is over the task items only
(the gold items' truth was the policies' to use).

A worker is under the bar by its accuracy on real tasks as it gave them (``accuracy_of``: an
adversary's, a colluder's or gold recogniser's, not its recorded one), so banning an adversary
is a right ban. On an adversarial stream with gold recognisers: how many reached a 50th real
task (``StreamOutcome.reached_milestone``), and how many of them were banned before it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from screener.money import Prices
from screener.testing.doubles.outcome import StreamOutcome
from screener.testing.doubles.platform import REPLACEMENT

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
    bad_labels_kept: int  # final labels from workers under the bar (fills included)
    labels_kept: int  # final labels from the stream (fills aside)
    final_labels: int  # every final label, fills included
    short_items: int
    recognisers_reached: int  # gold recognisers who reached a 50th real task
    recognisers_caught: int  # of them, banned before it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def score_outcome(
    outcome: StreamOutcome, prices: Prices, bar: float, *, seed: int, dawid_skene: bool = True
) -> RunScore:
    accuracy_of = outcome.accuracy_of
    final = [worker for labels in outcome.labels.values() for worker, _ in labels]
    kept = [worker for worker in final if not worker.startswith(REPLACEMENT)]
    makers = [worker.removeprefix(REPLACEMENT) for worker in final]
    recognisers = {w for w, role in outcome.roles.items() if role == "recogniser"}
    return RunScore(
        money=outcome.gold_answers * prices.gold + outcome.task_labels * prices.task,
        accuracy=outcome.label_accuracy(seed),
        accuracy_ds=_dawid_skene_accuracy(outcome) if dawid_skene else math.nan,
        gold=outcome.gold_answers,
        task_labels=outcome.task_labels,
        replacements=outcome.replacements,
        discarded=outcome.discarded,
        banned=len(outcome.banned),
        good_banned=sum(accuracy_of[w] >= bar for w in outcome.banned),
        bad_labels_kept=sum(accuracy_of[w] < bar for w in makers),
        labels_kept=len(kept),
        final_labels=len(final),
        short_items=outcome.short_items,
        recognisers_reached=len(recognisers & outcome.reached_milestone),
        recognisers_caught=len(recognisers & outcome.banned_before_milestone),
    )


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
    if not rows:  # every item delivered unlabelled (``label_accuracy`` scores them 0)
        return 0.0
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    labels = DawidSkene(n_iter=50).fit_predict(frame)
    truth = pd.Series(outcome.truth)
    return float((labels.reindex(truth.index) == truth).mean())
