"""The answers a run received, as the journal tells them, after any gold question was
invalidated: an invalidated question's answers are rescored against its corrected key when
the raw answer was kept, and dropped otherwise. Pure functions of the events."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from screener.bank import GoldBank
from screener.journal.events import Event, EventKind

__all__ = [
    "Invalidation",
    "LoggedAnswer",
    "answers_by_worker",
    "invalidation_event",
    "invalidations",
    "logged_answers",
]


@dataclass(frozen=True, slots=True)
class Invalidation:
    """Gold question ``question`` was wrong; ``key`` is its corrected key, if one is known.

    Examples
    --------
    >>> event = invalidation_event(3.0, Invalidation("q1", None, "the key was wrong"))
    >>> event.kind.value, event.question
    ('invalidated', 'q1')
    """

    question: str
    key: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class LoggedAnswer:
    """One answered pull, with its reward after invalidations (``rescored`` if it changed).

    Examples
    --------
    >>> answered = Event(
    ...     kind=EventKind.ANSWERED, at=2.0, pull_id=0, arm=0, worker="ann", seq=0, reward=1.0
    ... )
    >>> answers = logged_answers([answered], None)
    >>> answers[0].worker, answers[0].reward, answers[0].rescored
    ('ann', 1.0, False)
    """

    pull_id: int
    arm: int
    worker: str
    seq: int
    reward: float
    question: str | None
    response: str | float | None
    key: str | None
    rescored: bool = False


def invalidation_event(at: float, invalidation: Invalidation) -> Event:
    """The journal event that records ``invalidation`` (its key and reason as JSON).

    Examples
    --------
    >>> event = invalidation_event(3.0, Invalidation("q1", None, "the key was wrong"))
    >>> event.kind.value, event.question
    ('invalidated', 'q1')
    """
    detail = json.dumps({"key": invalidation.key, "reason": invalidation.reason})
    return Event(kind=EventKind.INVALIDATED, at=at, detail=detail, question=invalidation.question)


def invalidations(events: Sequence[Event]) -> dict[str, Invalidation]:
    """Invalidated questions by id (a later invalidation of the same question wins).

    Examples
    --------
    >>> events = [invalidation_event(3.0, Invalidation("q1", "7", "rescore against 7"))]
    >>> invalidations(events)["q1"].key
    '7'
    """
    found: dict[str, Invalidation] = {}
    for event in events:
        if event.kind is EventKind.INVALIDATED and event.question is not None:
            detail = json.loads(event.detail or "{}")
            found[event.question] = Invalidation(
                event.question, detail.get("key"), str(detail.get("reason", ""))
            )
    return found


def logged_answers(events: Sequence[Event], bank: GoldBank | None) -> list[LoggedAnswer]:
    """Answered pulls in journal order, invalidations applied (dropped answers left out).

    Examples
    --------
    >>> answered = Event(
    ...     kind=EventKind.ANSWERED, at=2.0, pull_id=0, arm=0, worker="ann", seq=0, reward=1.0
    ... )
    >>> answers = logged_answers([answered], None)
    >>> answers[0].worker, answers[0].reward, answers[0].rescored
    ('ann', 1.0, False)
    """
    invalid = invalidations(events)
    answers = []
    for event in events:
        if event.kind is not EventKind.ANSWERED:
            continue
        assert event.pull_id is not None and event.arm is not None and event.seq is not None
        response = None if event.response is None else json.loads(event.response)
        question = None
        if bank is not None and event.question is not None and event.question in bank:
            question = bank.get(event.question)
        answer = LoggedAnswer(
            event.pull_id, event.arm, event.worker or "", event.seq, float(event.reward or 0.0),
            event.question, response, None if question is None else question.key,
        )  # fmt: skip
        fix = invalid.get(event.question or "")
        if fix is not None:
            if fix.key is None or question is None or response is None:
                continue  # nothing to rescore against: the answer no longer counts
            reward = replace(question, key=fix.key).score(response)
            answer = replace(answer, reward=reward, key=fix.key, rescored=True)
        answers.append(answer)
    return answers


def answers_by_worker(
    events: Sequence[Event], n_workers: int, bank: GoldBank | None
) -> list[list[LoggedAnswer]]:
    """``logged_answers`` split by worker (pool index), each in the order received: what a
    rescored result and a log replay feed back through an algorithm.

    Examples
    --------
    >>> pull = {"arm": 1, "worker": "bob", "seq": 0}
    >>> events = [Event(kind=EventKind.ANSWERED, at=2.0, pull_id=0, reward=0.0, **pull)]
    >>> [[a.reward for a in answers] for answers in answers_by_worker(events, 2, None)]
    [[], [0.0]]
    """
    per_worker: list[list[LoggedAnswer]] = [[] for _ in range(n_workers)]
    for answer in logged_answers(events, bank):
        per_worker[answer.arm].append(answer)
    return per_worker
