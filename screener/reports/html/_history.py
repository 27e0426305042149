"""What the page plots over the course of a run, read from its journal: the answers over
time and, for the k-sigma family, the threshold's interval as the answers came in.

The threshold's history is not stored in the journal: it is rebuilt by replaying the journal
through a fresh copy of the run's algorithm and reading its result at up to
``THRESHOLD_POINTS`` checkpoints (reading a result never changes an algorithm, so the replay
stays exact). It costs one more replay of the run, for the k-sigma family only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from screener.algorithms import Result, Threshold
from screener.journal import Event, EventKind, RunRecord
from screener.runs import build_algorithm, invalidations, replay

__all__ = ["ANSWER_POINTS", "THRESHOLD_POINTS", "RunHistory", "run_history"]

#: Most points drawn for the answers-over-time curve and for the threshold's history.
ANSWER_POINTS = 500
THRESHOLD_POINTS = 100


@dataclass(frozen=True)
class RunHistory:
    """What the page plots over the course of a run, read from its journal.

    ``answers`` and ``seconds``: the number of answers received by that many seconds after
    the run started (at most ``ANSWER_POINTS`` points). ``threshold``: (answers, threshold)
    at up to ``THRESHOLD_POINTS`` checkpoints, for algorithms that estimate a threshold.
    """

    seconds: tuple[float, ...]
    answers: tuple[int, ...]
    threshold: tuple[tuple[int, Threshold], ...]
    invalidated: tuple[str, ...]


def run_history(record: RunRecord, events: Sequence[Event], result: Result) -> RunHistory:
    """The answers over time, and the threshold's history when ``result`` has an estimated
    threshold (the k-sigma family), from the run's journal."""
    answered = [i for i, event in enumerate(events) if event.kind is EventKind.ANSWERED]
    start = events[0].at if events else 0.0
    picks = _checkpoints(len(answered), ANSWER_POINTS)
    seconds = tuple(events[answered[n - 1]].at - start for n in picks)
    threshold: tuple[tuple[int, Threshold], ...] = ()
    t = result.threshold
    if t is not None and t.lower < t.upper:
        threshold = _threshold_history(record, events, answered)
    return RunHistory((0.0, *seconds), (0, *picks), threshold, tuple(sorted(invalidations(events))))


def _checkpoints(total: int, points: int) -> tuple[int, ...]:
    """Up to ``points`` counts from 1 to ``total``, evenly spread, ending at ``total``."""
    if total == 0:
        return ()
    return tuple(int(n) for n in np.unique(np.ceil(np.linspace(0, total, points + 1)[1:])))


def _threshold_history(
    record: RunRecord, events: Sequence[Event], answered: Sequence[int]
) -> tuple[tuple[int, Threshold], ...]:
    algorithm = build_algorithm(record)
    history = []
    done = 0
    for count in _checkpoints(len(answered), THRESHOLD_POINTS):
        cut = answered[count - 1] + 1  # just after the count-th answer
        replay(algorithm, events[done:cut])
        done = cut
        threshold = algorithm.result().threshold
        if threshold is not None:
            history.append((count, threshold))
    return tuple(history)
