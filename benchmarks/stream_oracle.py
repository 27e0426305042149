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

Bounds in that reading, on policies that ban the workers under the bar and no one over it (what
the stream benchmark's first target asks of screening), and up to the stream's path (who finds
work depends on who was turned away when); not on every policy: keeping a worker just under
the bar can raise a vote's accuracy, and turning one just over it away can save money.
"""

from __future__ import annotations

from collections import Counter

from screener.testing.doubles.outcome import StreamOutcome
from screener.testing.doubles.platform import TaskStream

__all__ = ["ORACLES", "run_oracle"]

#: Each bound by name: the real tasks a kept worker does before its one gold question (None:
#: no gold question at all).
ORACLES: dict[str, int | None] = {"oracle": None, "oracle-limit": 3}


def run_oracle(stream: TaskStream, bar: float, limit: int | None) -> tuple[StreamOutcome, int]:
    """Drive ``stream`` as the bound ``limit`` names (see ``ORACLES``). Returns what was
    bought and the most real tasks a worker did before its first gold question."""
    unscreened: Counter[str] = Counter()
    screened: set[str] = set()
    for worker in stream.requests():
        if stream.workers[worker].task_accuracy < bar:
            stream.ban(worker)
        elif limit is not None and worker not in screened and unscreened[worker] >= limit:
            screened.add(worker)
            stream.gold(worker)
        elif stream.task(worker) is not None and worker not in screened:
            unscreened[worker] += 1
    return stream.finish(), max(unscreened.values(), default=0)
