"""The gate's view of each worker: where it stands, what it has been given, and the reward of
its answers."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from screener.algorithms import ThresholdingAlgorithm
from screener.bank import GoldBank
from screener.errors import ConfigError, InvalidRewardError

__all__ = ["Gold", "Status", "WorkerState", "reward_of"]


class Status(enum.StrEnum):
    """Where a worker stands at the gate.

    ``screening``: undecided, its gold answers go to the method; ``qualified``: accepted,
    audited; ``banned``: every request is refused; ``undecided``: the method will ask it no
    more (at its bound, or out of gold questions) without a decision, so it works, audited, as
    the platforms keep a worker they never banned.
    """

    SCREENING = "screening"
    QUALIFIED = "qualified"
    BANNED = "banned"
    UNDECIDED = "undecided"


@dataclass(slots=True)
class Gold:
    """One gold question handed out: ``id`` (the gate's name for it), its worker, the
    method's pull (None when the method has no use for the answer), the bank's question (None
    without a bank: the platform picks one), whether it audits a decided worker (the change
    detector watches those answers), and whether it has been answered or released (the
    worker left, was banned, or its screening was reopened)."""

    id: str
    worker: str
    pull: int | None
    question: str | None
    audit: bool = False  # a decided worker's: the change detector watches its answer
    answered: bool = False
    released: bool = False


@dataclass(slots=True)
class WorkerState:
    """One worker: its arm in the method (a reopened screening gives it a new one), its row in
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
    """The reward of an answer to ``record``: ``reward`` as given, or the raw ``answer``
    scored against the bank's key; refused outside the method's reward range."""
    if (reward is None) == (answer is None):
        raise ConfigError("give the gold answer's reward or its raw answer, not both")
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
