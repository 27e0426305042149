"""What the gate says: its reply to a request, what it did with an answer, a decision streamed."""

from __future__ import annotations

import enum
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from screener.algorithms.verdicts import Verdict
from screener.errors import ConfigError

__all__ = [
    "MAX_ID",
    "AnswerOutcome",
    "Decided",
    "Reply",
    "ReplyKind",
    "RequestMemory",
    "check_id",
    "check_worker",
]

#: The longest id (a worker's, an item's, a request's) the gate takes.
MAX_ID = 256
#: Request ids remembered for repeated requests (the oldest are forgotten first).
REMEMBERED_REQUESTS = 100_000
_Kept = TypeVar("_Kept")


class ReplyKind(enum.StrEnum):
    """What the gate tells the platform to give an arriving worker."""

    GOLD = "gold"
    TASK = "task"
    QUALIFIED = "qualified"
    BLOCKED = "blocked"


class AnswerOutcome(enum.StrEnum):
    """What the gate did with a gold answer: used it, or ignored a second copy or an answer
    to a question it had released."""

    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"
    LATE = "late"


@dataclass(frozen=True, slots=True)
class Reply:
    """The gate's answer for one request: ``kind``; for a gold question its id (answer with
    it) and the bank's question id (None without a bank: the platform picks the question);
    ``reason``: why, in a few words; ``item``: for a task, the registered item to label
    (None when the platform chooses its own items)."""

    kind: ReplyKind
    worker: str
    gold: str | None = None
    question: str | None = None
    reason: str = ""
    item: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "worker": self.worker,
            "gold": self.gold,
            "question": self.question,
            "reason": self.reason,
            "item": self.item,
        }


@dataclass(frozen=True, slots=True)
class Decided:
    """One decision, as streamed: its position ``seq`` in the stream (a cursor), the worker,
    ``banned``, ``accepted`` (its requests are answered ``qualified`` from now on) or
    ``reopened`` (screened again after the change detector's alarm), why, and the gate's
    request count when it was made (the gate has no clock; a service stamps the time)."""

    seq: int
    worker: str
    decision: Verdict
    reason: str
    request: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "worker": self.worker,
            "decision": self.decision.value,
            "reason": self.reason,
            "request": self.request,
        }


class RequestMemory(Generic[_Kept]):
    """What the last ``REMEMBERED_REQUESTS`` request ids got (a reply, a label's outcome), and
    for which worker: a repeated request (a platform's retry) gets the same, for the same
    worker only."""

    def __init__(self, what: str = "request") -> None:
        self._what = what
        self._kept: OrderedDict[str, tuple[str, _Kept]] = OrderedDict()

    def __contains__(self, request_id: str) -> bool:
        return request_id in self._kept

    def remember(self, request_id: str, worker: str, kept: _Kept) -> None:
        self._kept[request_id] = (worker, kept)
        if len(self._kept) > REMEMBERED_REQUESTS:
            self._kept.popitem(last=False)

    def repeated(self, request_id: str, worker: str) -> _Kept:
        first, kept = self._kept[request_id]
        if first != worker:
            raise ConfigError(
                f"{self._what} {request_id!r} was made for worker {first!r}, not {worker!r}",
                "give each request its own id",
            )
        return kept


def check_worker(worker: object) -> None:
    """Refuse a worker id that is not a printable string of 1 to ``MAX_ID`` characters."""
    check_id(worker, "a worker id", "send the platform's worker id")


def check_id(value: object, what: str, hint: str) -> None:
    """Refuse an id (``what``: "a worker id", "an item id") that is not a printable string
    of 1 to ``MAX_ID`` characters."""
    if not isinstance(value, str) or not value or not value.isprintable() or len(value) > MAX_ID:
        raise ConfigError(
            f"{what} must be a printable string of 1 to {MAX_ID} characters, got {value!r}", hint
        )
