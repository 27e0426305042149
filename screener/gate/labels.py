"""The task labels a platform reports to the gate: evidence it has already paid for.

A worker's label of a real task item reaches the gate with ``Gate.tell_label``
(``POST /v1/labels``). Rules:

* one label per worker and item: the first counts; a second (a platform that shows an item
  twice) is a ``duplicate`` and changes nothing; a repeated request id (a retry) gets the
  first request's outcome and changes nothing;
* a label is text: a number is kept as its shortest float text (``1``, ``1.0`` and ``"1"``
  are one label), so a platform may send its answer codes as numbers or strings;
* the labels of a worker the gate banned are kept (a reopened worker's are judged again) but
  never serve as evidence about anyone else.
"""

from __future__ import annotations

import enum
import math
import sys

from screener.errors import ConfigError
from screener.gate.replies import RequestMemory, check_id

__all__ = ["MAX_LABEL", "LabelOutcome", "TaskLabels", "check_item", "label_text", "one_copy"]

#: The longest label kept: multi-label answers run to hundreds of characters.
MAX_LABEL = 4096


class LabelOutcome(enum.StrEnum):
    """What the gate did with a task label: kept it, or ignored a second copy."""

    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"


def label_text(label: object) -> str:
    """The label as the gate keeps it; ConfigError for anything but a string of 1 to
    ``MAX_LABEL`` characters or a finite number.

    >>> label_text("cat"), label_text(1), label_text(1.0), label_text(0.25)
    ('cat', '1', '1', '0.25')
    """
    if isinstance(label, bool) or not isinstance(label, str | int | float):
        raise ConfigError(
            f"a task label must be a string or a number, got {label!r}",
            "send the worker's answer as it was given",
        )
    if isinstance(label, str):
        text = label
    elif math.isfinite(label):
        text = repr(float(label)).removesuffix(".0")
    else:
        raise ConfigError(f"a task label must be finite, got {label!r}", "send a number")
    if not text or len(text) > MAX_LABEL:
        raise ConfigError(
            f"a task label must be text of 1 to {MAX_LABEL} characters",
            "send the worker's answer as it was given",
        )
    return text


def one_copy(text: str) -> str:
    """The one copy of ``text`` kept for every record that holds it (``sys.intern``)."""
    return sys.intern(str(text))  # str(): intern takes no subclass


def check_item(item: object) -> None:
    """Refuse an item id that is not a printable string of 1 to ``MAX_ID`` characters."""
    check_id(item, "an item id", "send the platform's id of the task item")


class TaskLabels:
    """Every task label kept: per item, each worker's label, in the order they arrived."""

    def __init__(self) -> None:
        self.by_item: dict[str, dict[str, str]] = {}
        self.count = 0
        self._items: dict[str, list[str]] = {}  # worker -> the items it labelled, in order
        self._requests: RequestMemory[LabelOutcome] = RequestMemory("label request")

    def add(
        self, worker: str, item: str, label: str, request_id: str | None = None
    ) -> LabelOutcome:
        """Keep ``worker``'s ``label`` of ``item`` (text from ``label_text``), unless it is a
        second one or its request was seen; the outcome."""
        if self.repeats(request_id):
            assert request_id is not None
            return self._requests.repeated(request_id, worker)  # a retry: the first reply
        # One copy of each id and label for all the labels that name it: each request
        # brings its own copies, which would otherwise be kept a label each.
        worker, item, label = one_copy(worker), one_copy(item), one_copy(label)
        labels = self.by_item.setdefault(item, {})
        outcome = LabelOutcome.DUPLICATE if worker in labels else LabelOutcome.ACCEPTED
        if outcome is LabelOutcome.ACCEPTED:
            labels[worker] = label
            self._items.setdefault(worker, []).append(item)
            self.count += 1
        if request_id is not None:
            self._requests.remember(request_id, worker, outcome)
        return outcome

    def repeats(self, request_id: str | None) -> bool:
        """Whether a label request with this id was told (then ``add`` returns its outcome
        and changes nothing)."""
        return request_id is not None and request_id in self._requests

    def of_item(self, item: str) -> dict[str, str]:
        """The labels of ``item`` by worker (empty if none)."""
        return self.by_item.get(item, {})

    def items_of(self, worker: str) -> list[str]:
        """The items ``worker`` labelled, in the order its labels arrived."""
        return self._items.get(worker, [])
