"""The orchestrator's intake rules on hand-made answers: no event loop, no oracle, no journal."""

from __future__ import annotations

import math

from screener.algorithms import RoundRobin
from screener.bank import GoldQuestion
from screener.journal import EventKind
from screener.oracles import Answer, PullRequest
from screener.orchestrator.intake import (
    NO_KEY,
    FailureStreaks,
    InFlight,
    released_events,
    take_answers,
)

WORKERS = ("ann", "bob", "cy")
Q = GoldQuestion("q1", "2 + 2", "4")


def _sent(n: int, *, question: GoldQuestion | None = None) -> tuple[RoundRobin, InFlight]:
    """A round robin over three workers with ``n`` pulls asked and sent."""
    algorithm = RoundRobin(3)
    in_flight = InFlight()
    ask = algorithm.ask(n)
    requests = [
        PullRequest(int(i), WORKERS[int(a)], int(a), int(s), question)
        for i, a, s in zip(ask.ids, ask.arms, ask.seqs, strict=True)
    ]
    in_flight.add(requests, deadline=10.0)
    return algorithm, in_flight


def _no_question(arm: int, seq: int) -> GoldQuestion | None:
    return None


def _kinds(answers: list[Answer], algorithm: RoundRobin, in_flight: InFlight) -> list[str]:
    intake = take_answers(answers, algorithm, in_flight, WORKERS, _no_question, at=1.0)
    return [event.kind.value for event in intake.events]


def test_a_second_copy_in_the_same_batch_is_a_duplicate() -> None:
    algorithm, in_flight = _sent(3)
    answers = [Answer(0, reward=1.0), Answer(0, reward=0.0), Answer(1, reward=1.0)]
    intake = take_answers(answers, algorithm, in_flight, WORKERS, _no_question, at=1.0)
    assert [e.kind for e in intake.events] == [
        EventKind.ANSWERED, EventKind.DUPLICATE, EventKind.ANSWERED,
    ]  # fmt: skip
    assert intake.tell_ids == [0, 1] and intake.tell_rewards == [1.0, 1.0]
    assert intake.tell_arms == [0, 1]
    assert algorithm.n_answered == 0  # nothing was told: the runner journals first


def test_released_unknown_and_answered_pulls() -> None:
    algorithm, in_flight = _sent(3)
    algorithm.release(1)
    algorithm.tell(2, 1.0)
    answers = [Answer(1, reward=1.0), Answer(2, reward=1.0), Answer(99, reward=1.0)]
    assert _kinds(answers, algorithm, in_flight) == ["late", "duplicate", "late"]
    intake = take_answers(answers, algorithm, in_flight, WORKERS, _no_question, at=1.0)
    assert intake.events[2].detail == "unknown pull id" and intake.events[2].worker is None
    assert intake.events[0].worker == "bob" and intake.tell_ids == []


def test_errors_unavailable_and_bad_rewards_are_not_told() -> None:
    algorithm, in_flight = _sent(3)
    answers = [
        Answer(0, error="HTTP 503"),
        Answer(1, unavailable="left the platform"),
        Answer(2, reward=1.5),  # outside [0, 1]
    ]
    intake = take_answers(answers, algorithm, in_flight, WORKERS, _no_question, at=1.0)
    assert [(e.kind.value, e.detail) for e in intake.events] == [
        ("failed", "HTTP 503"),
        ("unavailable", "left the platform"),
        ("failed", "invalid reward 1.5"),
    ]
    assert intake.events[2].reward is None  # a failed answer's reward is not journaled
    assert [r.pull_id for r in intake.failed] == [0, 2]
    assert [(r.pull_id, why) for r, why in intake.gone] == [(1, "left the platform")]
    assert intake.counts == {"failed": 2, "unavailable": 1}


def test_raw_answers_are_scored_against_the_question_the_pull_carried() -> None:
    algorithm, in_flight = _sent(2, question=Q)
    answers = [Answer(0, response="4"), Answer(1, response="5")]
    intake = take_answers(answers, algorithm, in_flight, WORKERS, _no_question, at=1.0)
    assert intake.tell_rewards == [1.0, 0.0]
    assert [(e.question, e.response) for e in intake.events] == [("q1", '"4"'), ("q1", '"5"')]


def test_a_raw_answer_without_a_question_fails() -> None:
    algorithm, in_flight = _sent(1)
    intake = take_answers(
        [Answer(0, response="4")], algorithm, in_flight, WORKERS, _no_question, at=1.0
    )
    assert (intake.events[0].kind, intake.events[0].detail) == (EventKind.FAILED, NO_KEY)


def test_a_late_answer_names_the_question_its_pull_had() -> None:
    """A pull no longer in flight is described from the algorithm and the bank."""
    algorithm, in_flight = _sent(1, question=Q)
    algorithm.release(0)
    in_flight.settle([0])
    intake = take_answers(
        [Answer(0, response="4")], algorithm, in_flight, WORKERS, lambda arm, seq: Q, at=1.0
    )
    event = intake.events[0]
    assert (event.kind, event.worker, event.question, event.reward) == (
        EventKind.LATE, "ann", "q1", 1.0,
    )  # fmt: skip


def test_in_flight_deadlines_come_in_send_order() -> None:
    in_flight = InFlight()
    assert in_flight.next_deadline() == math.inf and in_flight.expired(1e9) == []
    first = [PullRequest(0, "ann", 0, 0), PullRequest(1, "bob", 1, 0)]
    in_flight.add(first, deadline=5.0)
    in_flight.add([PullRequest(2, "cy", 2, 0)], deadline=7.0)
    assert in_flight.next_deadline() == 5.0
    assert [r.pull_id for r in in_flight.expired(6.0)] == [0, 1]
    in_flight.settle([0, 1, 42])
    assert in_flight.next_deadline() == 7.0 and len(in_flight) == 1
    assert [r.pull_id for r in in_flight] == [2]


def test_a_worker_is_given_up_after_limit_failures_in_a_row() -> None:
    streaks = FailureStreaks(2, WORKERS)
    ann, bob = PullRequest(0, "ann", 0, 0), PullRequest(1, "bob", 1, 0)
    assert streaks.failed([ann, bob], at=1.0, reasons=["x", "y"]) == []
    streaks.answered([1])  # bob answered: his streak starts again
    give_ups = streaks.failed([ann, bob], at=2.0, reasons=["rejected: unknown worker", "z"])
    assert [(e.kind, e.worker, e.pull_id) for e in give_ups] == [
        (EventKind.UNAVAILABLE, "ann", None)
    ]
    assert give_ups[0].detail == (
        "no answer to 2 questions in a row (the last: rejected: unknown worker)"
    )
    assert streaks.failed([ann], at=3.0, reasons=["x"]) == []  # once, at the limit


def test_released_events_carry_the_request() -> None:
    requests = [PullRequest(4, "cy", 2, 1, Q)]
    (event,) = released_events(requests, EventKind.TIMED_OUT, "no answer within timeout", 3.0)
    assert (event.pull_id, event.worker, event.seq, event.question, event.at) == (
        4, "cy", 1, "q1", 3.0,
    )  # fmt: skip
