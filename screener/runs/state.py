"""An algorithm's state rebuilt from a run's journal: replay it, call by call."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from screener.algorithms import Algorithm, PullStatus
from screener.errors import JournalMismatchError
from screener.journal import Event, EventKind

__all__ = ["pending_pulls", "replay"]

_RELEASING = frozenset({EventKind.TIMED_OUT, EventKind.FAILED, EventKind.CANCELLED})


def replay(algorithm: Algorithm, events: Sequence[Event]) -> None:
    """Apply ``events`` (in journal order) to a freshly built ``algorithm``.

    Consecutive "asked" events become one ``ask`` (the contract makes ``ask(k)`` equal to k
    calls of ``ask(1)``) and must reproduce the recorded workers and question numbers, or the
    journal was written by a different algorithm or version and JournalMismatchError is raised.
    Consecutive "answered" events become one ``tell_many``. Late and duplicate answers were
    never told, so they are skipped here too.

    Examples
    --------
    >>> from screener import RoundRobin
    >>> from screener.journal import Event, EventKind
    >>> pull = {"pull_id": 0, "arm": 0, "worker": "ann", "seq": 0}
    >>> events = [Event(kind=EventKind.ASKED, at=1.0, **pull),
    ...           Event(kind=EventKind.ANSWERED, at=2.0, reward=1.0, **pull)]
    >>> algorithm = RoundRobin(2)
    >>> replay(algorithm, events)
    >>> algorithm.n_answered, algorithm.stats.count.tolist()
    (1, [1, 0])
    """
    index = 0
    while index < len(events):
        kind = events[index].kind
        end = index + 1
        if kind in (EventKind.ASKED, EventKind.ANSWERED):
            while end < len(events) and events[end].kind is kind:
                end += 1
        group = events[index:end]
        if kind is EventKind.ASKED:
            _replay_asks(algorithm, group)
        elif kind is EventKind.ANSWERED:
            ids = [_pull_id(event) for event in group]
            algorithm.tell_many(ids, [float(event.reward or 0.0) for event in group])
        elif kind in _RELEASING:
            algorithm.release(_pull_id(events[index]))
        elif kind is EventKind.UNAVAILABLE:
            event = events[index]
            if event.arm is not None:
                algorithm.set_unavailable(event.arm, event.detail or "unavailable")
            if event.pull_id is not None:
                algorithm.release(event.pull_id)
        index = end


def pending_pulls(algorithm: Algorithm) -> list[int]:
    """Ids of pulls asked but neither answered nor released, in ask order.

    Examples
    --------
    >>> from screener import RoundRobin
    >>> algorithm = RoundRobin(3)
    >>> ask = algorithm.ask(3)
    >>> _ = algorithm.tell(0, 1.0)
    >>> _ = algorithm.release(2)
    >>> pending_pulls(algorithm)
    [1]
    """
    return [
        pull_id
        for pull_id in range(algorithm.n_asked)
        if (info := algorithm.pull_info(pull_id)) and info.status is PullStatus.PENDING
    ]


def _replay_asks(algorithm: Algorithm, group: Sequence[Event]) -> None:
    ask = algorithm.ask(len(group))
    recorded_ids = np.array([_pull_id(event) for event in group], dtype=np.int64)
    recorded_arms = np.array([event.arm for event in group], dtype=np.int64)
    recorded_seqs = np.array([event.seq for event in group], dtype=np.int64)
    if (
        len(ask) != len(group)
        or not np.array_equal(ask.ids, recorded_ids)
        or not np.array_equal(ask.arms, recorded_arms)
        or not np.array_equal(ask.seqs, recorded_seqs)
    ):
        first = group[0]
        raise JournalMismatchError(
            f"replaying the journal diverged at pull {first.pull_id}: the algorithm no longer "
            "asks what the run recorded",
            "replay with the screener version and parameters that wrote the run",
        )


def _pull_id(event: Event) -> int:
    if event.pull_id is None:
        raise JournalMismatchError(f"a {event.kind} event has no pull id (event {event.id})")
    return event.pull_id
