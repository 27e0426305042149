"""The gold questions a gate handed out, found by their ids (``GoldRecords``).

With sealed ids (``GateSettings.gold_ids``, the default: ``screener.gate.ids``) the gate keeps
no record of a question once it is answered or released: the id opens to the worker's arm and
the question's number among the worker's, and the worker says the rest (the question it owes,
how many it was given, which of them were released), so the gate's memory grows with its
workers, not with the questions it asked. The bank's question of a finished one is found again
(``GoldBank.question_for`` is a fixed order per worker). With hashed or sequential ids (a gate
journaled before sealed ids) every record is kept, as it was.
"""

from __future__ import annotations

from collections.abc import Callable

from screener.gate.ids import gold_id, sealed_gold_id, unsealed
from screener.gate.roster import Gold, WorkerState

__all__ = ["GoldRecords"]

#: The worker on an arm (None: no such arm), and the bank's question for a worker's
#: ``number``-th gold question (None without a bank).
Owner = Callable[[int], WorkerState | None]
QuestionAt = Callable[[WorkerState, int], str | None]


class GoldRecords:
    """Every gold question a gate handed out: the records it keeps (``kept``: every one for
    hashed or sequential ids, none for sealed ones) and, for sealed ids, the numbers of each
    worker's released questions."""

    def __init__(self, key: str | None, *, sealed: bool) -> None:
        self.key = key
        self.sealed = sealed and key is not None  # no key: a gate of sequential ids
        self.count = 0
        self.kept: dict[str, Gold] = {}
        self.released: dict[str, set[int]] = {}

    def issue(
        self, state: WorkerState, pull: int | None, question: str | None, audit: bool
    ) -> Gold:
        """The record of a new gold question for ``state``'s worker (its ``golds`` not yet
        counted)."""
        number = state.golds
        if self.sealed:
            assert self.key is not None
            ident = sealed_gold_id(self.key, state.arm, number)
        else:
            ident = gold_id(self.key, self.count, self.kept)
        record = Gold(ident, state.worker, pull, question, audit, number=number)
        if not self.sealed:
            self.kept[ident] = record
        self.count += 1
        return record

    def release(self, record: Gold) -> None:
        """``record``'s question is no longer wanted (its answer will be late)."""
        record.released = True
        if self.sealed:
            self.released.setdefault(record.worker, set()).add(record.number)

    def find(self, ident: str, owner: Owner, question_at: QuestionAt) -> Gold | None:
        """The record of gold question ``ident``, None if the gate never handed it out. For
        sealed ids a finished question's record is made again: its worker, its bank
        question, answered or released (no pull: the algorithm has its answer, or gave it
        up)."""
        if not self.sealed:
            return self.kept.get(ident)
        assert self.key is not None
        opened = unsealed(self.key, ident)
        if opened is None:
            return None
        arm, number = opened
        state = owner(arm)
        if state is None or number >= state.golds:
            return None
        if state.owed is not None and state.owed.id == ident:
            return state.owed
        released = number in self.released.get(state.worker, ())
        return Gold(
            ident, state.worker, None, question_at(state, number), answered=not released,
            released=released, number=number,
        )  # fmt: skip

    def __getstate__(self) -> dict[str, object]:
        """Pickled without ``kept``: the gate packs the records with its workers'
        (``screener.gate.roster.pack_roster``) and gives them back (``restore``)."""
        return {k: v for k, v in self.__dict__.items() if k != "kept"}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self.kept = {}

    def restore(self, records: dict[str, Gold]) -> None:
        """The records the gate packed beside this (``__getstate__``)."""
        if not self.sealed:
            self.kept = records
