"""Agreement anchored on gold: a worker's task labels judged against references' labels.

A *reference* is a worker whose own gold answers put its accuracy above the bar: the lower
end ``a`` of its anytime Beta-mixture interval (``near_mixture_interval`` at level
``REFERENCE_ALPHA``) exceeds the bar. Never a consensus: workers who answered no gold cannot
make a reference, so prolific spammers early in the stream cannot pull the evidence to their
answers.

Each label of a worker on an item is compared once, with one reference's label of that item
(another worker; the reference with the highest ``a`` when the label arrives, else the first
reference to label the item later). If the worker's task accuracy ``p`` is at least the bar
and its errors are independent of the reference's given the item, the comparison agrees with
probability at least ``m``:

* binary labels (``binary=True``): ``m = bar a + (1 - bar)(1 - a)`` (two wrong labels are one
  label; the least over ``p >= bar`` and accuracies at least ``a``, as both exceed 1/2);
* otherwise ``m = bar a`` (no credit for two wrong labels that coincide, a lower bound
  whatever the classes and their balance).

So ``Z - m`` has mean at most 0 under "p >= bar", and the average over ``BET_FRACTIONS`` of
``prod (1 + f (m - Z) / (1 - m))`` is an e-process for it (``BettingEProcess``'s argument with
a bar that moves per comparison, fixed before its outcome). A worker is banned when it reaches
``1 / alpha``: **promise** — a worker banned on agreement is below the bar on its tasks with
probability at least 1 - alpha, whenever it is banned, provided each reference's accuracy on
the compared items is at least its gold lower bound (each bound holds with probability
``1 - REFERENCE_ALPHA``), errors are independent given the item, and the worker does not copy
others. What breaks it: gold easier than the tasks (a reference's task accuracy below its
gold bound), references who recognise gold and answer tasks at chance (until their own
agreement bans them, references are compared too), workers who collude on wrong labels.
Graded answers have no agreement here: labels are compared for equality.

A worker who answers gold right and tasks at chance is caught by the same test: its gold does
not enter it.

The panel: while there are fewer than ``panel`` references, the gate gives gold to at most
that many trainees at a time (``wants_panel_gold``), workers whose gold so far could make
them references, so that references exist where the screening algorithm alone would leave
every worker with a handful of gold answers.

Cost: a label costs O(``len(BET_FRACTIONS)``) plus one comparison per worker waiting on the
item when a reference's label arrives; a new reference compares each of its earlier labels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from screener.arrays import FloatArray
from screener.gate.labels import TaskLabels
from screener.stats.eprocess import BET_FRACTIONS
from screener.stats.scalar import near_mixture_interval

__all__ = ["PANEL_MOST", "PANEL_TRIAL", "REFERENCE_ALPHA", "AgreementJudge", "reference_floor"]

#: The level of each reference's gold lower bound.
REFERENCE_ALPHA = 0.05
#: Panel gold: every trainee gets this many answers; after them, only one whose share right is
#: at least halfway from the bar to 1 goes on, and none beyond ``PANEL_MOST`` answers.
PANEL_TRIAL = 5
PANEL_MOST = 80


def reference_floor(gold_sum: float, gold_count: int) -> float:
    """The lower end of a worker's anytime gold interval (0 without gold answers)."""
    if gold_count <= 0:
        return 0.0
    return near_mixture_interval(gold_sum, float(gold_count), REFERENCE_ALPHA)[0]


@dataclass
class _Evidence:
    """One worker's agreement test: log wealth per bet, comparisons and agreements."""

    log_wealth: FloatArray = field(default_factory=lambda: np.zeros(BET_FRACTIONS.size))
    compared: int = 0
    agreed: int = 0

    def e_value(self) -> float:
        top = float(self.log_wealth.max())
        return math.exp(top) * float(np.exp(self.log_wealth - top).mean())


class AgreementJudge:
    """The agreement tests of every worker (see the module docstring). Pure and
    deterministic: the same calls in the same order make the same bans."""

    def __init__(
        self,
        labels: TaskLabels,
        bar: float,
        alpha: float,
        *,
        binary: bool = False,
        panel: int = 0,
    ) -> None:
        self.labels = labels
        self.bar, self.alpha, self.binary, self.panel = bar, alpha, binary, panel
        self.trainees: set[str] = set()
        self.references: dict[str, float] = {}  # worker -> its gold lower bound
        self.evidence: dict[str, _Evidence] = {}
        self._waiting: dict[str, list[str]] = {}  # item -> workers waiting for a reference
        self._done: set[str] = set()  # banned or gone: compared no more

    # ------------------------------------------------------------------ calls
    def labelled(self, worker: str, item: str) -> list[str]:
        """``worker``'s first label of ``item`` was kept in ``labels``; the workers whose
        test now rejects."""
        crossed = self._compare_with_best(worker, item)
        if worker in self.references:
            crossed += self._serve_waiting(worker, item)
        return _unique(crossed)

    def gold_changed(self, worker: str, floor: float) -> list[str]:
        """``worker``'s gold lower bound is now ``floor``: it becomes (or stays) a reference
        above the bar, or stops being one; the workers whose test now rejects."""
        if worker in self._done or floor <= self.bar:
            self.references.pop(worker, None)
            return []
        new = worker not in self.references
        self.references[worker] = floor
        self.trainees.discard(worker)
        if not new:
            return []
        crossed: list[str] = []
        for item in self.labels.items_of(worker):
            crossed += self._serve_waiting(worker, item)
        return _unique(crossed)

    def retire(self, worker: str) -> None:
        """``worker`` was banned: no longer a reference, its test stopped."""
        self._done.add(worker)
        self.references.pop(worker, None)
        self.trainees.discard(worker)

    def wants_panel_gold(self, worker: str, gold_sum: float, answered: int) -> bool:
        """Whether ``worker`` should get a gold question to become a reference: the panel is
        short, and it is a trainee (or a slot is free) whose gold so far could make it one."""
        if worker in self.references or worker in self._done:
            self.trainees.discard(worker)
            return False
        hopeful = answered < PANEL_TRIAL or (
            answered < PANEL_MOST and gold_sum / answered >= (1.0 + self.bar) / 2.0
        )
        if not hopeful:
            self.trainees.discard(worker)
            return False
        if worker in self.trainees:
            return True
        if len(self.references) + len(self.trainees) >= self.panel:
            return False
        self.trainees.add(worker)
        return True

    def left(self, worker: str) -> None:
        """``worker`` left: its trainee slot is free (it keeps its references' standing)."""
        self.trainees.discard(worker)

    def e_value(self, worker: str) -> float:
        found = self.evidence.get(worker)
        return 1.0 if found is None else found.e_value()

    def rejects(self, worker: str) -> bool:
        return worker not in self._done and self.e_value(worker) >= 1.0 / self.alpha

    def ban_reason(self, worker: str) -> str:
        """Why ``worker`` is banned on agreement, in one line."""
        evidence = self.evidence[worker]
        return (
            f"banned on agreement: its task labels matched those of workers whose gold puts "
            f"them above the bar {evidence.agreed} times in {evidence.compared}, e-value "
            f"{evidence.e_value():.3g} >= 1/{self.alpha:g} (below the bar at error "
            f"{self.alpha:g}, if its errors are independent of theirs)"
        )

    def floor_of_agreement(self, reference_floor: float) -> float:
        """``m``: the least chance of agreement of a worker at the bar with this reference."""
        a = reference_floor
        if self.binary:
            return self.bar * a + (1.0 - self.bar) * (1.0 - a)
        return self.bar * a

    # ------------------------------------------------------------------ comparisons
    def _compare_with_best(self, worker: str, item: str) -> list[str]:
        labels = self.labels.of_item(item)
        best = max(
            (r for r in labels if r != worker and r in self.references),
            key=lambda r: (self.references[r], r),
            default=None,
        )
        if best is None:
            self._waiting.setdefault(item, []).append(worker)
            return []
        return self._compare(worker, labels[worker], best, labels[best])

    def _serve_waiting(self, reference: str, item: str) -> list[str]:
        """Compare the labels of ``item`` waiting for a reference with ``reference``'s."""
        waiting = self._waiting.get(item, [])
        labels = self.labels.of_item(item)
        crossed: list[str] = []
        kept = []
        for worker in waiting:
            if worker == reference:
                kept.append(worker)
            else:
                crossed += self._compare(worker, labels[worker], reference, labels[reference])
        if kept:
            self._waiting[item] = kept
        else:
            self._waiting.pop(item, None)
        return crossed

    def _compare(self, worker: str, label: str, reference: str, ref_label: str) -> list[str]:
        if worker in self._done:
            return []
        m = self.floor_of_agreement(self.references[reference])
        agree = float(label == ref_label)
        evidence = self.evidence.setdefault(worker, _Evidence())
        evidence.log_wealth += np.log1p(BET_FRACTIONS * ((m - agree) / (1.0 - m)))
        evidence.compared += 1
        evidence.agreed += int(agree)
        return [worker] if self.rejects(worker) else []


def _unique(workers: list[str]) -> list[str]:
    return list(dict.fromkeys(workers))
