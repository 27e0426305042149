"""The gate's view of each worker: where it stands, what it has been given, and the reward of
its answers."""

from __future__ import annotations

import dataclasses
import enum
import operator
from dataclasses import dataclass
from typing import Any, TypeVar

from screener.algorithms import ThresholdingAlgorithm
from screener.bank import GoldBank
from screener.errors import ConfigError, InvalidRewardError
from screener.gate.labels import check_item, label_text
from screener.gate.replies import Decided

__all__ = ["Gold", "Status", "WorkerState", "pack_roster", "reward_of", "unpack_roster"]


class Status(enum.StrEnum):
    """Where a worker stands at the gate.

    ``screening``: undecided, its gold answers go to the algorithm; ``qualified``: accepted,
    audited (the word of the HTTP API's ``GET /v1/status``, kept for compatibility);
    ``banned``: every request is refused; ``undecided``: the algorithm will ask it no more (at
    its bound, or out of gold questions) without a decision, so it works, audited, as the
    platforms keep a worker they never banned.
    """

    SCREENING = "screening"
    QUALIFIED = "qualified"
    BANNED = "banned"
    UNDECIDED = "undecided"


@dataclass(slots=True)
class Gold:
    """One gold question handed out: ``id`` (the gate's name for it), its worker, the
    algorithm's pull (None when the algorithm has no use for the answer), the bank's question (None
    without a bank: the platform picks one), whether it audits a decided worker (the change
    detector watches those answers), whether it has been answered or released (the
    worker left, was banned, or its screening was reopened), and its number among its
    worker's questions (from 0)."""

    id: str
    worker: str
    pull: int | None
    question: str | None
    audit: bool = False  # a decided worker's: the change detector watches its answer
    answered: bool = False
    released: bool = False
    number: int = 0


@dataclass(slots=True)
class WorkerState:
    """One worker: its arm in the algorithm (a reopened screening gives it a new one), its row in
    the change detector, what it was given, and the gold question it still owes, if any."""

    worker: str
    arm: int
    row: int
    status: Status = Status.SCREENING
    requests: int = 0
    tasks: int = 0
    golds: int = 0
    answered: int = 0
    gold_sum: float = 0.0  # the rewards of its answers, scaled to [0, 1]
    labels: int = 0  # task labels reported (first ones of an item)
    since_gold: int = 0  # requests since its last gold question
    owed: Gold | None = None
    left: bool = False
    ban_posterior: float | None = None  # P(below the bar) when the gate banned it itself

    @property
    def banned(self) -> bool:
        return self.status is Status.BANNED

    @property
    def screened(self) -> bool:
        """Whether it has been given a gold question (one a platform may not skip)."""
        return self.golds > 0


def reward_of(
    record: Gold,
    reward: float | None,
    answer: object,
    bank: GoldBank | None,
    method: ThresholdingAlgorithm,
) -> float:
    """The reward of an answer to ``record``: ``reward`` as given (beside it a raw ``answer``
    is the worker's label, kept for the gold check), else the raw ``answer`` scored against
    the bank's key; refused outside the algorithm's reward range."""
    if reward is None and answer is None:
        raise ConfigError("give the gold answer's reward or its raw answer")
    if reward is None:
        if bank is None or record.question is None:
            raise ConfigError(
                "this gate has no gold question bank to score a raw answer",
                "send the reward (1 right, 0 wrong, or a grade in [0, 1])",
            )
        reward = bank.get(record.question).score(answer)
    if not method.accepts_reward(float(reward)):
        raise InvalidRewardError(
            f"reward {reward!r} for gold question {record.id} is outside "
            f"[{method.lower:g}, {method.upper:g}]",
            "send 1 for a right answer, 0 for a wrong one, or a grade in between",
        )
    return float(reward)


def check_gold_item(record: Gold, item: object, answer: object) -> None:
    """Refuse a gold ``item`` that is not an item id, that names another question than the
    bank's, or that comes without the worker's raw ``answer`` (the label it checks with), and
    a raw answer that is not a label (``label_text``)."""
    if item is None:
        if answer is not None and record.question is None:
            raise ConfigError(
                f"a raw answer to gold question {record.id} needs the gold item it answers",
                "send the item the platform showed (or the reward alone)",
            )
        if answer is not None:
            label_text(answer)
        return
    check_item(item)
    if answer is not None:
        label_text(answer)
    if record.question is not None and item != record.question:
        raise ConfigError(
            f"gold question {record.id} asked bank question {record.question!r}, not {item!r}",
            "leave the item out: with a bank the gate knows which question it asked",
        )
    if answer is None:
        raise ConfigError(
            f"gold item {item!r} needs the worker's raw answer beside it",
            "send the answer as the worker gave it (and the reward, without a bank)",
        )


def pack_roster(
    workers: dict[str, WorkerState], golds: list[Gold], decisions: list[Decided]
) -> dict[str, Any]:
    """The gate's workers, gold records and decisions as columns of plain values (a worker's
    owed question by its id), in their order: pickled about ten times faster than as
    objects, which is what a snapshot of a live gate pauses it for
    (``screener.gate_service.snapshots``)."""
    owed = [None if w.owed is None else w.owed.id for w in workers.values()]
    return {
        "workers": {**_columns(list(workers.values()), WorkerState), "owed": owed},
        "golds": _columns(golds, Gold),
        "decisions": _columns(decisions, Decided),
    }


def unpack_roster(
    packed: dict[str, Any],
) -> tuple[dict[str, WorkerState], dict[str, Gold], list[Decided]]:
    """The workers, gold records and decisions ``pack_roster`` packed, each owed question
    the same object as its record, as in the gate that was packed."""
    golds = {g.id: g for g in _rows(packed["golds"], Gold)}
    columns = dict(packed["workers"])
    columns["owed"] = [None if ident is None else golds[ident] for ident in columns["owed"]]
    workers = {w.worker: w for w in _rows(columns, WorkerState)}
    return workers, golds, _rows(packed["decisions"], Decided)


_Record = TypeVar("_Record", WorkerState, Gold, Decided)


def _columns(rows: list[_Record], kind: type[_Record]) -> dict[str, list[Any]]:
    return {f.name: list(map(operator.attrgetter(f.name), rows)) for f in dataclasses.fields(kind)}


def _rows(columns: dict[str, list[Any]], kind: type[_Record]) -> list[_Record]:
    fields = [f.name for f in dataclasses.fields(kind)]
    if set(columns) != set(fields) or len({len(column) for column in columns.values()}) > 1:
        raise ValueError(f"the columns are not those of the gate's {kind.__name__} records")
    return list(map(kind, *(columns[name] for name in fields)))
