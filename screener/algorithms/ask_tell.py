"""What the ask/tell contract hands back: an ``Ask`` of ``Pull`` s (or wait, or done), a
``TellOutcome`` per answer, and a ``PullInfo`` with its ``PullStatus`` per pull."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from screener.algorithms import _ledger
from screener.arrays import IntArray

__all__ = ["Ask", "AskState", "Pull", "PullInfo", "PullStatus", "PullTuple", "TellOutcome"]

#: An empty, read-only array of arms: an ask with no pulls.
NO_ARMS = np.empty(0, dtype=np.int64)
NO_ARMS.flags.writeable = False


class AskState(enum.StrEnum):
    """What an ``ask`` returned: pulls to send, nothing now (wait for answers), or done.

    Examples
    --------
    >>> from screener import RoundRobin
    >>> algorithm = RoundRobin(2, budget=2)
    >>> algorithm.ask(5).state, len(algorithm.ask(5))  # two pulls, then the budget is out
    (<AskState.PULL: 'pull'>, 0)
    """

    PULL = "pull"
    WAIT = "wait"
    DONE = "done"


class PullStatus(enum.IntEnum):
    """Where a pull is: asked and unanswered, answered, or released (given up, to be asked
    again).

    Examples
    --------
    >>> algorithm = RoundRobin(2)
    >>> ask = algorithm.ask(2)
    >>> _ = algorithm.tell(0, 1.0)
    >>> _ = algorithm.release(1)
    >>> algorithm.pull_info(0).status, algorithm.pull_info(1).status
    (<PullStatus.ANSWERED: 1>, <PullStatus.RELEASED: 2>)
    """

    PENDING = _ledger.PENDING
    ANSWERED = _ledger.ANSWERED
    RELEASED = _ledger.RELEASED


@dataclass(frozen=True, slots=True)
class PullInfo:
    """What an algorithm knows of one pull: its worker (arm), question number and status.

    Examples
    --------
    >>> algorithm = RoundRobin(3)
    >>> ask = algorithm.ask(3)
    >>> algorithm.pull_info(2)
    PullInfo(arm=2, seq=0, status=<PullStatus.PENDING: 0>)
    """

    arm: int
    seq: int
    status: PullStatus


class TellOutcome(enum.IntEnum):
    """What ``tell`` did with an answer: used it, or ignored it as a second copy or as the
    answer to a pull already released.

    Examples
    --------
    >>> algorithm = RoundRobin(2)
    >>> ask = algorithm.ask(2)
    >>> algorithm.tell(0, 1.0), algorithm.tell(0, 1.0)  # telling twice changes nothing
    (<TellOutcome.ACCEPTED: 0>, <TellOutcome.DUPLICATE: 1>)
    """

    ACCEPTED = 0
    DUPLICATE = 1
    LATE = 2  # the pull had already been released (timed out, failed or cancelled)


@dataclass(frozen=True, slots=True)
class Pull:
    """One gold question to ask: pull ``id`` of ``arm``, the arm's ``seq``-th question.

    Examples
    --------
    >>> pull = next(iter(RoundRobin(3).ask(1)))
    >>> pull.id, pull.arm, pull.seq
    (0, 0, 0)
    """

    id: int
    arm: int
    seq: int


@dataclass(frozen=True, slots=True)
class Ask:
    """The answer to ``ask``: a batch of pulls with consecutive ids, or wait, or done.

    Examples
    --------
    >>> ask = RoundRobin(3).ask(2)
    >>> ask.state.value, ask.ids.tolist(), ask.arms.tolist(), ask.seqs.tolist()
    ('pull', [0, 1], [0, 1], [0, 0])
    >>> list(ask)[1]
    Pull(id=1, arm=1, seq=0)
    """

    state: AskState
    first_id: int = 0
    arms: IntArray = field(default_factory=lambda: NO_ARMS)
    seqs: IntArray = field(default_factory=lambda: NO_ARMS)

    @property
    def ids(self) -> IntArray:
        return np.arange(self.first_id, self.first_id + self.arms.size, dtype=np.int64)

    @property
    def done(self) -> bool:
        return self.state is AskState.DONE

    @property
    def wait(self) -> bool:
        return self.state is AskState.WAIT

    def __len__(self) -> int:
        return int(self.arms.size)

    def __iter__(self) -> Iterator[Pull]:
        pairs = zip(self.arms.tolist(), self.seqs.tolist(), strict=True)
        for offset, (arm, seq) in enumerate(pairs):
            yield Pull(self.first_id + offset, arm, seq)


#: One pull as ``ask1`` hands it out: ``(id, arm, seq)``, ``Pull``'s fields in its order.
PullTuple = tuple[int, int, int]

WAIT = Ask(AskState.WAIT)
#: Indexed by ledger state (PENDING, ANSWERED, RELEASED); cheaper than calling the enums.
STATUSES = tuple(PullStatus)
#: The TellOutcome of an answer to a pull in each ledger state, as enums (``tell1``).
OUTCOMES = (TellOutcome.ACCEPTED, TellOutcome.DUPLICATE, TellOutcome.LATE)
OUTCOME_BY_STATE = np.array(
    [TellOutcome.ACCEPTED, TellOutcome.DUPLICATE, TellOutcome.LATE], dtype=np.int8
)
