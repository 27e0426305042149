"""What the runner does with what comes back: pure, synchronous rules, no asyncio, no clock.

The runner (``runner.py``) only drives: it sends, waits and commits. Everything it decides
about a pull is here, so it can be tested on hand-made answers:

* ``InFlight``: the pulls sent and not settled, each with its request and its deadline.
* ``take_answers``: a batch of answers -> the events to journal (in order), the rewards to
  tell, the pulls to release and the workers that are gone. Duplicates and late answers are
  told apart by the algorithm's own rule (``Algorithm.preview``), so the journal and the
  algorithm never disagree on which copy counted.
* ``FailureStreaks``: a worker whose questions fail or time out ``limit`` times in a row is
  given up on (an "unavailable" event).
* ``released_events``: the events for pulls the runner gives up on (timed out, cancelled).
"""

from __future__ import annotations

import collections
import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from screener.algorithms import Algorithm, TellOutcome
from screener.bank import GoldQuestion
from screener.journal import Event, EventKind
from screener.oracles import Answer, PullRequest

__all__ = [
    "EXHAUSTED",
    "FailureStreaks",
    "InFlight",
    "Intake",
    "QuestionOf",
    "pull_event",
    "released_events",
    "take_answers",
]

EXHAUSTED = "exhausted: no unseen gold question left"
NO_KEY = "a raw answer, but the pool has no gold question to score it"

#: (arm, seq) -> the gold question that pull carries (None without a bank).
QuestionOf = Callable[[int, int], GoldQuestion | None]


class InFlight:
    """Pulls sent to the oracle and not yet settled: pull id -> (request, deadline on the
    loop clock), in the order they were sent. One timeout per run and a clock that only goes
    forward make that order the order of the deadlines too."""

    def __init__(self) -> None:
        self._sent: dict[int, tuple[PullRequest, float]] = {}

    def __len__(self) -> int:
        return len(self._sent)

    def __iter__(self) -> Iterator[PullRequest]:
        return (request for request, _ in self._sent.values())

    def add(self, requests: Sequence[PullRequest], deadline: float) -> None:
        for request in requests:
            self._sent[request.pull_id] = (request, deadline)

    def get(self, pull_id: int) -> PullRequest | None:
        sent = self._sent.get(pull_id)
        return None if sent is None else sent[0]

    def settle(self, pull_ids: Sequence[int]) -> None:
        """Forget these pulls (answered, failed, released); unknown ids are ignored."""
        for pull_id in pull_ids:
            self._sent.pop(pull_id, None)

    def next_deadline(self) -> float:
        """The earliest deadline (inf when none is pending or no timeout applies)."""
        return next((deadline for _, deadline in self._sent.values()), math.inf)

    def expired(self, now: float) -> list[PullRequest]:
        """The pulls whose deadline is at or before ``now``, in send order."""
        due: list[PullRequest] = []
        for request, deadline in self._sent.values():
            if deadline > now:
                break
            due.append(request)
        return due


@dataclass
class Intake:
    """What a batch of answers asks of the runner, in the order it must be done: journal
    ``events``, tell ``tell_ids``/``tell_rewards``, then for each of ``gone`` mark the worker
    unavailable and release the pull, and release ``failed``."""

    events: list[Event] = field(default_factory=list)
    tell_ids: list[int] = field(default_factory=list)
    tell_rewards: list[float] = field(default_factory=list)
    tell_arms: list[int] = field(default_factory=list)
    gone: list[tuple[PullRequest, str]] = field(default_factory=list)
    failed: list[PullRequest] = field(default_factory=list)
    #: Why each of ``failed`` failed, in the same order (the service's reason, if it gave one).
    failure_reasons: list[str] = field(default_factory=list)
    counts: collections.Counter[str] = field(default_factory=collections.Counter)


def take_answers(
    answers: Sequence[Answer],
    algorithm: Algorithm,
    in_flight: InFlight,
    workers: Sequence[str],
    question_of: QuestionOf,
    at: float,
) -> Intake:
    """Classify a batch of answers (see the module docstring); nothing is changed."""
    intake = Intake()
    infos = [algorithm.pull_info(answer.pull_id) for answer in answers]
    known = [a.pull_id for a, info in zip(answers, infos, strict=True) if info is not None]
    outcomes = iter(algorithm.preview(known))
    for answer, info in zip(answers, infos, strict=True):
        if info is None:
            intake.events.append(
                Event(kind=EventKind.LATE, at=at, pull_id=answer.pull_id, reward=answer.reward,
                      detail="unknown pull id", response=_json(answer.response))
            )  # fmt: skip
            intake.counts[EventKind.LATE.value] += 1
            continue
        request = in_flight.get(answer.pull_id) or PullRequest(
            answer.pull_id, workers[info.arm], info.arm, info.seq, question_of(info.arm, info.seq)
        )
        kind, detail, reward = _classify(answer, request, TellOutcome(next(outcomes)), algorithm)
        intake.events.append(_answer_event(kind, at, answer, request, detail, reward))
        intake.counts[kind.value] += 1
        if kind is EventKind.ANSWERED:
            assert reward is not None
            intake.tell_ids.append(answer.pull_id)
            intake.tell_rewards.append(reward)
            intake.tell_arms.append(request.arm)
        elif kind is EventKind.UNAVAILABLE:
            intake.gone.append((request, detail or "unavailable"))
        elif kind is EventKind.FAILED:
            intake.failed.append(request)
            intake.failure_reasons.append(detail or "failed")
    return intake


def _classify(
    answer: Answer, request: PullRequest, outcome: TellOutcome, algorithm: Algorithm
) -> tuple[EventKind, str | None, float | None]:
    """(kind, detail, reward) of one answer; the reward scored against the question."""
    reward = _score(answer, request.question)
    if outcome is TellOutcome.DUPLICATE:
        return EventKind.DUPLICATE, None, reward
    if outcome is TellOutcome.LATE:
        return EventKind.LATE, answer.error or answer.unavailable, reward
    if answer.unavailable is not None:
        return EventKind.UNAVAILABLE, answer.unavailable, reward
    if answer.error is not None:
        return EventKind.FAILED, answer.error, reward
    if reward is None:
        return EventKind.FAILED, NO_KEY, reward
    if not algorithm.accepts_reward(reward):
        return EventKind.FAILED, f"invalid reward {reward!r}", reward
    return EventKind.ANSWERED, None, reward


def _score(answer: Answer, question: GoldQuestion | None) -> float | None:
    """The answer's reward: given, or the raw answer scored against the question's key."""
    if answer.response is None or question is None:
        return answer.reward
    return question.score(answer.response)


def pull_event(
    kind: EventKind,
    at: float,
    request: PullRequest,
    *,
    detail: str | None = None,
    reward: float | None = None,
    response: str | None = None,
) -> Event:
    """The journal event of something that happened to one pull: its worker, question number
    and gold question come from the request that was (or would have been) sent."""
    return Event(
        kind=kind, at=at, pull_id=request.pull_id, arm=request.arm, worker=request.worker,
        seq=request.seq, question=_question_id(request.question), detail=detail, reward=reward,
        response=response,
    )  # fmt: skip


def _answer_event(
    kind: EventKind,
    at: float,
    answer: Answer,
    request: PullRequest,
    detail: str | None,
    reward: float | None,
) -> Event:
    kept = None if kind is EventKind.FAILED else reward
    return pull_event(
        kind, at, request, detail=detail, reward=kept, response=_json(answer.response)
    )


def released_events(
    requests: Sequence[PullRequest], kind: EventKind, detail: str, at: float
) -> list[Event]:
    """One ``kind`` event (timed out, cancelled) per pull given up on."""
    return [pull_event(kind, at, request, detail=detail) for request in requests]


class FailureStreaks:
    """Questions of each worker that failed or timed out in a row since its last answer."""

    def __init__(self, limit: int, workers: Sequence[str]) -> None:
        self.limit = limit
        self._workers = workers
        self._streak: collections.Counter[int] = collections.Counter()

    def answered(self, arms: Sequence[int]) -> None:
        for arm in arms:
            self._streak.pop(arm, None)

    def failed(
        self, requests: Sequence[PullRequest], at: float, reasons: Sequence[str]
    ) -> list[Event]:
        """Count these failures (``reasons``: why each failed); an "unavailable" event (no
        pull id) for each worker that has just reached the limit, saying why the last one
        failed (a service that refuses a worker says why: the reason reaches the report)."""
        give_ups = []
        for request, reason in zip(requests, reasons, strict=True):
            self._streak[request.arm] += 1
            if self._streak[request.arm] == self.limit:
                give_ups.append(
                    Event(kind=EventKind.UNAVAILABLE, at=at, arm=request.arm,
                          worker=self._workers[request.arm],
                          detail=f"no answer to {self.limit} questions in a row (the last: "
                          f"{reason})")
                )  # fmt: skip
        return give_ups


def _question_id(question: GoldQuestion | None) -> str | None:
    return None if question is None else question.id


def _json(response: str | float | None) -> str | None:
    return None if response is None else json.dumps(response)
