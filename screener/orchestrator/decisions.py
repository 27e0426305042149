"""Decisions as they are made: the "decided" events a run journals, one per worker's
decision (``screener.algorithms.verdicts`` says what banned and accepted mean per question).

An algorithm whose decisions are final as it takes them (``streamable_verdicts``: the
crowd-prior, the platform rules, the settled e-BH lists) has each one journaled as soon as
the runner sees it, at the top of its loop, right after the answers that caused it were
journaled and told; the rest (decisions provisional until the run stops, the k-sigma
family's, confident-thresholding's, the best K) are journaled from the final result, in the
same commit as the "finished" event. A provisional decision is never journaled.

The events are derived data: a replay (a report, a resume) makes the same decisions and
writes none. A resumed run starts from the decisions its journal holds, so a decision the
killed process made but had not journaled yet is journaled once, and none twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from screener.algorithms import (
    Algorithm,
    Result,
    ThresholdingAlgorithm,
    Verdict,
    verdict_of,
)
from screener.journal import Event, EventKind

__all__ = ["DecisionSink", "DecisionStream", "decided_event"]

#: What sees the decided events once they are committed (``screener run --decisions``).
DecisionSink = Callable[[Sequence[Event]], None]

#: A verdict's sign in the stream's memory: banned -1, accepted +1, none (or reopened) 0.
_SIGNS = {Verdict.BANNED: -1, Verdict.ACCEPTED: 1, Verdict.REOPENED: 0}


def decided_event(
    at: float, arm: int, worker: str, verdict: Verdict, seq: int, reason: str
) -> Event:
    """The journal's "decided" event (``EventKind.DECIDED`` says what each field holds).

    Examples
    --------
    >>> event = decided_event(2.0, 3, "ann", Verdict.BANNED, 0, "below the bar")
    >>> event.detail, event.response
    ('banned', '{"seq": 0, "reason": "below the bar"}')
    """
    response = json.dumps({"seq": seq, "reason": reason})
    return Event(
        kind=EventKind.DECIDED, at=at, arm=arm, worker=worker, detail=verdict.value,
        response=response,
    )  # fmt: skip


class DecisionStream:
    """The decisions a run has journaled (restored from ``journaled``, its "decided" events
    so far), and the events for the ones it has not.

    ``params``: the algorithm's, which say what a decision means (its ``direction``).
    ``sink``: told the events once the runner has committed them.
    """

    def __init__(
        self,
        workers: Sequence[str],
        params: Mapping[str, Any],
        journaled: Sequence[Event] = (),
        sink: DecisionSink | None = None,
    ) -> None:
        self.workers = workers
        self.params = params
        self.sink = sink
        self._signs = np.zeros(len(workers), dtype=np.int8)
        self._seq = 0
        self._watching = False  # whether the algorithm logs its decisions for ``made``
        for event in journaled:
            if event.kind is EventKind.DECIDED and event.arm is not None and event.detail:
                self._signs[event.arm] = _SIGNS[Verdict(event.detail)]
                self._seq += 1

    @property
    def count(self) -> int:
        """Decisions journaled so far (the next one's ``seq``)."""
        return self._seq

    def made(self, algorithm: Algorithm, at: float) -> list[Event]:
        """Events for the decisions ``algorithm`` has taken for good and the journal does not
        hold yet (none for an algorithm whose decisions are provisional until it stops)."""
        if not isinstance(algorithm, ThresholdingAlgorithm):
            return []
        if not algorithm.verdicts_final:
            return []  # provisional until it stops (``streamable_verdicts``)
        # The workers decided since the last look, where the algorithm logs them; the first
        # look (a resumed run's too), and an algorithm that cannot say, read everyone.
        arms = algorithm.verdict_changes() if self._watching else None
        if not self._watching:
            algorithm.verdict_changes()  # starts the log
            self._watching = True
        if arms is None:
            verdicts = algorithm.verdicts()
            arms = np.flatnonzero(verdicts != 0)
            signs = verdicts[arms]
        else:
            signs = algorithm.verdicts_of(arms)
        changed = (signs != 0) & (signs != self._signs[arms])
        return [
            self._event(at, arm, Verdict.of_sign(sign), algorithm.explain(arm))
            for arm, sign in zip(arms[changed].tolist(), signs[changed].tolist(), strict=True)
        ]

    def final(self, result: Result, at: float) -> list[Event]:
        """Events for the decisions of the final ``result`` the journal does not hold yet,
        in rank order (a decision journaled earlier is never taken back)."""
        events = []
        for line in result.ranking:
            verdict = verdict_of(line.decision, self.params)
            if verdict is not None and _SIGNS[verdict] != self._signs[line.arm]:
                events.append(self._event(at, line.arm, verdict, line.reason))
        return events

    def publish(self, events: Sequence[Event]) -> None:
        """Hand committed decided events to the sink, if any."""
        if self.sink is not None and events:
            self.sink(events)

    def _event(self, at: float, arm: int, verdict: Verdict, reason: str) -> Event:
        event = decided_event(at, arm, self.workers[arm], verdict, self._seq, reason)
        self._signs[arm] = _SIGNS[verdict]
        self._seq += 1
        return event
