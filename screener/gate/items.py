"""Task items the gate owns: which one a worker labels next, when one is done, its final label.

A requester registers its task items (``Gate.add_items``, ``POST /v1/items``), each with an
optional cap on its labels and a priority. From then on the gate's ``task`` and ``qualified``
replies name the item the worker labels, and the gate settles each item as its labels arrive.

The model is the one-coin model (``screener.gate.one_coin``): ``p_w`` is the posterior mean
of the worker's accuracy from its gold answers (under crowd-prior's fitted crowd prior, else a
uniform prior). With a uniform prior over the ``k`` classes, an item's posterior is exact under
that model *given* the workers' posteriors are right: one label per worker and item, so
averaging ``p_w`` over its posterior is its mean. ``k`` is 2 with ``binary_labels``, else the
number of distinct labels seen so far, gold answers' too (at least 2). The model settles an
item; the confidence printed with its final label is that posterior checked against gold
(``screener.gate.calibration``: the shares of items that mislead a crowd, among those the
labels settle and those they do not, measured by settling gold items the same way).

Rules:

* **labels that count**: the first label of each worker on the item, but never a banned
  worker's (a ban re-weighs the items it labelled; a reopened worker's are re-weighed with
  its new estimate);
* **done**: an item is done when its posterior probability of its top label reaches the
  requester's ``confidence``, or when its labels (every label given, banned workers' too: they
  were paid) reach its cap. A done item is offered to no one, nor is one whose labels and
  open offers reach its cap: an offer (a task reply naming the item) stays open until the
  worker's label of it arrives, the worker is offered another item (each worker holds one
  offer: report a label before the worker's next task, or the cap may be passed by the labels
  in flight), leaves or is banned. Its final label is streamed
  (``FinalLabel``, ``since``); a ban that drops a done item under ``confidence`` below its cap
  reopens it (a ``reopened`` entry; it settles again later), and a ban that changes a done
  item's top label streams the new one. A consumer keeps the last entry per item. A done item's
  confidence is the one computed when it was settled: later gold answers move the workers'
  estimates without re-weighing items (that would cost a request work in every item a worker
  labelled);
* **which item**: the uncertainty rule. The open item with the highest priority, then the
  lowest confidence, then the earliest registered, that the worker has not labelled and that
  is under its cap; among the platform's ``candidates`` when it names them (the items it can
  show this worker), else among all registered items (a heap: a request costs ``O(log n)``
  plus the items the worker already labelled, whatever the number of items).

**Promise** (of the printed confidence): among final labels printed at confidence ``c``, about
``1 - c`` are wrong, when gold items are like task items (``screener.gate.calibration`` says
what breaks it). The settling target is the model's: with misleading items no overlap reaches
a printed ``confidence``, so the gate stops where the model is sure and says how sure that is.
BENCHMARKS.md measures how far the shared data is from it.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from screener.errors import ConfigError
from screener.gate.calibration import GoldCheck
from screener.gate.labels import TaskLabels, check_item
from screener.gate.one_coin import item_posterior

__all__ = ["NO_ITEM", "FinalLabel", "ItemBook", "ItemState", "check_new_item"]

#: A task reply's reason when no open item is left for the worker (it names no item).
NO_ITEM = "no open item for this worker"

#: What an entry of the final-label stream says about its item.
Settlement = Literal["settled", "capped", "reopened"]


@dataclass(slots=True)
class ItemState:
    """One registered item: its cap (None: no cap), priority, registration order, what its
    counted labels say, and whether it is done."""

    item: str
    cap: int | None
    priority: float
    order: int
    label: str | None = None
    confidence: float = 0.0
    given: int = 0  # every label given (paid), banned workers' too
    counted: int = 0  # labels the posterior used
    done: bool = False
    version: int = 0  # the heap entries of an older version are stale

    def full(self) -> bool:
        return self.cap is not None and self.given >= self.cap


@dataclass(frozen=True, slots=True)
class FinalLabel:
    """One entry of the final-label stream: its position ``seq`` (a cursor), the item, its
    label and printed confidence (checked against gold), the labels counted and given, what
    the given ones cost, and ``state``: ``settled`` (the model's confidence reached),
    ``capped`` (its cap reached first: the label is the best the labels give) or ``reopened``
    (a ban took it under the confidence: it takes labels again; no label)."""

    seq: int
    item: str
    label: str | None
    confidence: float
    labels: int
    given: int
    money: float
    state: Settlement

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class ItemBook:
    """The registered items (see the module docstring). Pure and deterministic: the same
    calls in the same order choose the same items and settle them the same way.

    ``accuracy(worker)`` is the gate's estimate of a worker's accuracy, None for a banned
    worker (its labels do not count)."""

    def __init__(
        self,
        labels: TaskLabels,
        accuracy: Callable[[str], float | None],
        *,
        confidence: float,
        task_price: float,
        binary: bool = False,
    ) -> None:
        self.labels = labels
        self.accuracy = accuracy
        self.confidence, self.task_price, self.binary = confidence, task_price, binary
        self.items: dict[str, ItemState] = {}
        self.final: list[FinalLabel] = []
        self._heap: list[tuple[float, float, int, int, str]] = []
        self._vocabulary: set[str] = set()
        self.done_count = 0
        self._offers: dict[str, str] = {}  # worker -> the item its last task reply named
        self._pending: dict[str, int] = {}  # item -> open offers
        self._caps = [0, 0]  # the registered caps' sum and number (the typical cap, in O(1))
        self.check = GoldCheck(confidence)

    def __getstate__(self) -> dict[str, Any]:
        """Every attribute but ``accuracy`` (its owner attaches it again on unpickling)."""
        return {k: v for k, v in self.__dict__.items() if k != "accuracy"}

    # ------------------------------------------------------------------ calls
    def add(self, item: str, cap: int | None = None, priority: float = 0.0) -> bool:
        """Register ``item``; False (and nothing changes) if it is registered already."""
        check_new_item(item, cap, priority)
        if item in self.items:
            return False
        state = ItemState(item, cap, float(priority), len(self.items))
        self.items[item] = state
        if cap is not None:
            self._caps[0] += cap
            self._caps[1] += 1
        self._reweigh(state)
        return True

    def choose(self, worker: str, candidates: Sequence[str] | None = None) -> str | None:
        """The item ``worker`` labels next (the uncertainty rule), or None: no open item it
        has not labelled (among ``candidates``, when the platform names them). The worker's
        previous offer lapses; the one made here stays open until its label arrives."""
        self.withdraw(worker)
        if candidates is not None:
            open_ones = [self.items[c] for c in candidates if self._offerable(c, worker)]
            chosen = min(open_ones, key=_rank).item if open_ones else None
        else:
            chosen = self._from_heap(worker)
        if chosen is not None:
            self._offers[worker] = chosen
            self._pending[chosen] = self._pending.get(chosen, 0) + 1
        return chosen

    def withdraw(self, worker: str) -> None:
        """``worker``'s open offer, if any, lapses (it asked again, left or was banned)."""
        item = self._offers.pop(worker, None)
        if item is not None:
            self._pending[item] -= 1
            if not self._pending[item]:
                del self._pending[item]

    def _from_heap(self, worker: str) -> str | None:
        skipped = []
        chosen = None
        while self._heap:
            entry = heapq.heappop(self._heap)
            state = self.items[entry[4]]
            if entry[3] != state.version or state.done:
                continue  # stale: the item moved or closed since
            skipped.append(entry)
            if self._offerable(state.item, worker):
                chosen = state.item
                break
        for entry in skipped:
            heapq.heappush(self._heap, entry)
        return chosen

    def labelled(self, worker: str, item: str) -> None:
        """``worker``'s first label of ``item`` was kept in ``labels``: weigh the item again."""
        state = self.items.get(item)
        if state is None:
            return  # an item the platform chose itself
        if self._offers.get(worker) == item:
            self.withdraw(worker)
        self._vocabulary.add(self.labels.of_item(item)[worker])
        state.given += 1
        self._reweigh(state)

    def gold_answered(self, item: str, worker: str, label: str, weight: float, right: bool) -> None:
        """``worker``'s gold answer naming its item and the worker's ``label``, weighed at
        ``weight`` (``GoldCheck.answered``)."""
        self._vocabulary.add(label)
        self.check.answered(item, worker, label, weight, right, self._classes(), self.typical_cap())

    def typical_cap(self) -> int | None:
        """The registered items' mean cap, rounded (None: no item has a cap): where a gold
        item's check stops unsettled, as a task item would."""
        total, capped = self._caps
        return max(1, round(total / capped)) if capped else None

    def reweigh_worker(self, worker: str) -> None:
        """``worker`` was banned or reopened: weigh the items it labelled again."""
        for item in self.labels.items_of(worker):
            state = self.items.get(item)
            if state is not None:
                self._reweigh(state)

    def is_open(self, item: str) -> bool:
        """Whether ``item`` is registered and still takes labels."""
        state = self.items.get(item)
        return state is not None and not state.done

    def judge(self, votes: Iterable[tuple[str, str]]) -> tuple[str | None, float]:
        """The top label and its confidence for ``votes`` (worker, label): what the book
        would make of them (a platform's own labels; workers it cannot weigh count at
        the crowd's estimate)."""
        weighed = [
            (label, p) for worker, label in votes if (p := self.accuracy(worker)) is not None
        ]
        return item_posterior(weighed, self._classes())

    def printed(self, confidence: float) -> float:
        """The confidence printed for a label the model puts at ``confidence``: checked
        against gold (``GoldCheck.corrected``: settled and unsettled labels apart)."""
        return self.check.corrected(confidence, self._classes())

    def since(self, cursor: int = -1) -> list[FinalLabel]:
        """The final-label entries after position ``cursor`` (-1: all)."""
        return self.final[max(cursor + 1, 0) :]

    # ------------------------------------------------------------------ settling
    def _reweigh(self, state: ItemState) -> None:
        votes = self.labels.of_item(state.item)
        weighed = [
            (label, p)
            for worker, label in votes.items()
            if (p := self.accuracy(worker)) is not None
        ]
        before = (state.done, state.label)
        state.label, state.confidence = item_posterior(weighed, self._classes())
        state.counted = len(weighed)
        reached = state.confidence >= self.confidence and state.label is not None
        state.done = reached or state.full()
        self.done_count += int(state.done) - int(before[0])
        if state.done and (not before[0] or before[1] != state.label):
            self._stream(state, "settled" if reached else "capped")
        elif before[0] and not state.done:
            self._stream(state, "reopened")
        if not state.done:
            state.version += 1
            entry = (-state.priority, state.confidence, state.order, state.version, state.item)
            heapq.heappush(self._heap, entry)

    def _stream(self, state: ItemState, settlement: Settlement) -> None:
        label = None if settlement == "reopened" else state.label
        money = state.given * self.task_price
        self.final.append(
            FinalLabel(
                len(self.final), state.item, label, self.printed(state.confidence),
                state.counted, state.given, money, settlement,
            )
        )  # fmt: skip

    def _offerable(self, item: str, worker: str) -> bool:
        state = self.items.get(item)
        if state is None or state.done or worker in self.labels.of_item(item):
            return False
        return state.cap is None or state.given + self._pending.get(item, 0) < state.cap

    def _classes(self) -> int:
        return 2 if self.binary else max(2, len(self._vocabulary))


def _rank(state: ItemState) -> tuple[float, float, int]:
    return (-state.priority, state.confidence, state.order)


def check_new_item(item: object, cap: object, priority: object) -> None:
    """Refuse an item id that is not a printable string, a cap that is not a whole number
    >= 1, or a priority that is not a finite number."""
    check_item(item)
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
        raise ConfigError(
            f"an item's cap must be a whole number of labels >= 1, got {cap!r}",
            "give e.g. cap 5, or leave it out (no cap)",
        )
    if isinstance(priority, bool) or not (
        isinstance(priority, int | float) and math.isfinite(priority)
    ):
        raise ConfigError(
            f"an item's priority must be a finite number, got {priority!r}",
            "give e.g. priority 1 (higher first), or leave it out (0)",
        )
