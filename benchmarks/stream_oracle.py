"""What right and free screening would buy on a stream: bounds to read the policies against.

``oracle`` knows every worker's accuracy on real tasks (its recorded one; on an adversarial
stream an adversary's own: a colluder 0, a gold recogniser chance), turns each worker under
the bar away at its first request (it has made no label, so nothing is discarded or paid
again) and asks no gold question: the money and final labels of screening that is always
right and costs nothing.
``oracle-limit`` is the same but gives every worker it keeps one gold question before its
fourth real task, the fewest the gate's limit of ``max_unscreened`` = 3 unscreened tasks
allows: a policy keeping that limit asks at least that of every worker reaching a fourth task,
and also pays to find the workers under the bar, which the bound turns away for nothing.

``run_oracle`` with an item book (``screener.gate.items``) is the bound of the items pipeline:
the same screening, and the book names each kept worker's item among the platform's page and
settles it weighing each label at its worker's recorded accuracy, known for free (in sample: a
worker's recorded accuracy counts the very labels it weighs, so a worker with few answers is
known better than any policy could know it).

Bounds in that reading, on policies that ban the workers under the bar and no one over it (what
the stream benchmark's first target asks of screening), and up to the stream's path (who finds
work depends on who was turned away when); not on every policy: keeping a worker just under
the bar can raise a vote's accuracy, and turning one just over it away can save money.
"""

from __future__ import annotations

from collections import Counter

from screener.gate.items import ItemBook
from screener.gate.labels import TaskLabels
from screener.money import Prices
from screener.testing.doubles.outcome import StreamOutcome
from screener.testing.doubles.platform import TaskStream

__all__ = ["ORACLES", "recorded_book", "run_oracle"]

#: Each bound by name: the real tasks a kept worker does before its one gold question (None:
#: no gold question at all).
ORACLES: dict[str, int | None] = {"oracle": None, "oracle-limit": 3}


def run_oracle(
    stream: TaskStream, bar: float, limit: int | None, book: ItemBook | None = None
) -> tuple[StreamOutcome, int]:
    """Drive ``stream`` as the bound ``limit`` names (see ``ORACLES``), the items settled by
    ``book`` when one is given (weighing labels at the workers' recorded accuracies).
    Returns what was bought and the most real tasks a worker did before its first gold
    question."""
    unscreened: Counter[str] = Counter()
    screened: set[str] = set()
    if book is not None:
        stream.settle_with(book)
    for worker in stream.requests():
        if stream.workers[worker].task_accuracy < bar:
            stream.ban(worker)
        elif limit is not None and worker not in screened and unscreened[worker] >= limit:
            screened.add(worker)
            stream.gold(worker)
        elif _task(stream, worker, book) and worker not in screened:
            unscreened[worker] += 1
    return stream.finish(), max(unscreened.values(), default=0)


def recorded_book(stream: TaskStream, confidence: float, binary: bool) -> ItemBook:
    """An item book settling at ``confidence`` that knows every worker's recorded accuracy
    on real tasks (``_Worker.task_accuracy``)."""
    accuracy = {name: worker.task_accuracy for name, worker in stream.workers.items()}
    return ItemBook(
        TaskLabels(), accuracy.get, confidence=confidence, task_price=Prices().task, binary=binary
    )


def _task(stream: TaskStream, worker: str, book: ItemBook | None) -> bool:
    """One real task for ``worker``, its item named by ``book`` as a gate names it (none
    open for it: the platform's next); whether a label was given."""
    named = None if book is None else book.choose(worker, stream.candidates(worker))
    item = stream.task(worker, named)
    if item is not None and book is not None:
        book.labels.add(worker, item, stream.kept[item][-1][1])
        book.labelled(worker, item)
    return item is not None
