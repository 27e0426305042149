"""A gate served live: every call journaled, with the decisions it made, before its reply.

``GateSession`` owns a ``Gate``, the run's journal (``AsyncJournal``) and the run's lease. A
call is made on the gate at once (the gate is pure and fast), its events join the batch
being written, and the call's reply waits until that batch is committed: calls are served in
the order they are journaled, and concurrent calls share one commit (group commit). A call
that changes nothing journals nothing (``screener.gate_service.journaled`` says which); its
reply still waits until every call before it is committed, so a repeated request never gets
a reply the journal could lose. Decisions and final labels are streamed only once committed
(``screener.gate_service.streams``), so a client never holds one the journal could lose.

Every so many events (``snapshots.snapshot_due``) the session stores a snapshot of the gate
as it stands after the batch it has just committed (all calls made so far, and no other, are
in that batch or before it), tagged with that batch's last event, so that a resume replays
only the events after it (``snapshots.rebuild_gate``).

If a commit fails, or another process takes the run's lease over, the gate in memory is
ahead of its journal: the session stops serving at once (every call gets
``GateStoppedError``, HTTP 503) and ``stopped`` is set; ``screener gate --resume`` rebuilds
the gate from the journal, which holds exactly the calls whose replies were sent. If the
database file itself was deleted or replaced (found at the next commit or lease renewal),
the run is ``lost``: there is nothing to resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from typing import Any

from screener.bank import GoldBank
from screener.errors import DatabaseGoneError, JournalError, ScreenerError, SnapshotError
from screener.gate import AnswerOutcome, Gate, GateSettings, LabelOutcome, Reply
from screener.gate_service.journaled import (
    answer_event,
    decision_events,
    gate_spec,
    items_event,
    label_event,
    leave_event,
    outside_event,
    request_event,
    run_gate,
)
from screener.gate_service.malloc import hand_back_freed_memory
from screener.gate_service.protocol import (
    AnswerItem,
    ItemEntry,
    LabelItem,
    NextRequest,
    StreamQuery,
)
from screener.gate_service.snapshots import (
    SNAPSHOT_EVENTS,
    RebuiltGate,
    SnapshotSchedule,
    dump_gate,
    rebuild_gate,
)
from screener.gate_service.streams import CommittedStream, Wakeup
from screener.journal import (
    AsyncJournal,
    Event,
    EventKind,
    Journal,
    LeaseLostError,
)
from screener.journal.lease_keeper import LeaseKeeper
from screener.stats.prior.evidence import Pairs, expand_pairs

__all__ = ["GateSession", "GateStoppedError"]


class GateStoppedError(ScreenerError):
    """The gate stopped serving: its journal failed, the run was taken over, or it is
    shutting down."""


class GateSession:
    """One gate run being served (see the module docstring). Build it with ``create`` or
    ``resume``; ``close`` ends it. ``snapshot_every``: the fewest events between snapshots
    (``snapshot_due``; 0: none)."""

    def __init__(
        self, gate: Gate, journal: AsyncJournal, run_id: str, made: list[float],
        *, snapshot_every: int = SNAPSHOT_EVENTS, since_snapshot: int = 0,
    ):  # fmt: skip
        self.gate = gate
        self.journal = journal
        self.run_id = run_id
        self.stopped = asyncio.Event()
        self.failure: str | None = None
        self.lost = False  # the journal's database file is gone: nothing to resume
        self._made = made  # when each decision was made
        self._wakeup = Wakeup()
        self._decisions = CommittedStream(
            "decisions", len(made), self._decision_body, self._wakeup, self.stopped
        )
        self._finals = CommittedStream(
            "final labels", len(gate.items.final), self._final_body, self._wakeup, self.stopped
        )
        self._pending: list[Event] = []
        self._batch: asyncio.Future[None] | None = None  # the events waiting to be written
        self._writing: asyncio.Future[None] | None = None  # the batch being written
        self._flusher: asyncio.Task[None] | None = None
        self._snapshots = SnapshotSchedule(snapshot_every, since_snapshot)
        self._lease = LeaseKeeper(
            journal,
            run_id,
            self._lease_lost,
            ends_on=(LeaseLostError, DatabaseGoneError),
            until=self.stopped,
        )
        self._lease.start()

    @classmethod
    async def create(
        cls, settings: GateSettings, bank: GoldBank | None, db: str,
        *, snapshot_every: int = SNAPSHOT_EVENTS,
    ) -> GateSession:  # fmt: skip
        """A new gate run in ``db``, its lease held by this process."""
        gate = Gate(settings, bank)
        journal = AsyncJournal(Journal(db))
        try:
            run_id = await journal.create_run(gate_spec(settings, bank), claim=True)
        except BaseException:
            await journal.aclose()
            raise
        return cls(gate, journal, run_id, [], snapshot_every=snapshot_every)

    @classmethod
    async def resume(
        cls, run_id: str, db: str, *, snapshot_every: int = SNAPSHOT_EVENTS
    ) -> GateSession:
        """Gate run ``run_id`` of ``db``, rebuilt from its latest snapshot and the events
        after it, or by replaying its whole journal (``rebuild_gate``; checked call by call);
        refused, writing nothing, when another live process serves it."""
        journal = AsyncJournal(Journal.open_existing(db))
        try:
            fresh = run_gate(await journal.get_run(run_id))
            await journal.claim(run_id)
            rebuilt: RebuiltGate = await journal.read(lambda j: rebuild_gate(j, run_id, fresh))
            hand_back_freed_memory()  # what the rebuild freed (screener.gate_service.malloc)
            await journal.append(run_id, [Event(kind=EventKind.RESUMED, at=time.time())])
        except BaseException:
            with contextlib.suppress(JournalError):
                await journal.release(run_id)
            await journal.aclose()
            raise
        return cls(
            rebuilt.gate, journal, run_id, rebuilt.made,
            snapshot_every=snapshot_every, since_snapshot=rebuilt.replayed,
        )  # fmt: skip

    # ------------------------------------------------------------------ the calls
    async def next(self, request: NextRequest) -> dict[str, Any]:
        """POST /v1/next: the gate's reply for a worker asking for work."""
        self._check_serving()
        if self.gate.repeats(request.request_id):  # the first reply, which changes nothing
            reply = self.gate.next(request.worker, request.request_id)
            await self._commit([])
            return self._reply_body(reply, request.request_id)
        known = len(self.gate.decisions)
        reply = self.gate.next(request.worker, request.request_id, request.items)
        at = time.time()
        event = request_event(self.gate, reply, request.request_id, at, request.items)
        await self._commit([event, *self._decided(known, at)])
        return self._reply_body(reply, request.request_id)

    async def answers(self, items: list[AnswerItem]) -> list[dict[str, Any]]:
        """POST /v1/answers: every item is checked before any is used (a bad one refuses the
        whole request); the outcome of each, in order."""
        self._check_serving()
        for given in items:
            self.gate.check_answer(
                given.gold, worker=given.worker, reward=given.reward, answer=given.answer,
                item=given.item,
            )  # fmt: skip
        at = time.time()
        events: list[Event] = []
        results = []
        for given in items:
            known = len(self.gate.decisions)
            outcome = self.gate.answer(
                given.gold, worker=given.worker, reward=given.reward, answer=given.answer,
                item=given.item,
            )  # fmt: skip
            if outcome is AnswerOutcome.ACCEPTED:  # a duplicate or late answer changes nothing
                events.append(answer_event(self.gate, given, at))
            events += self._decided(known, at)
            results.append({"gold": given.gold, "worker": given.worker, "outcome": outcome.value})
        await self._commit(events)
        return results

    async def labels(self, items: list[LabelItem]) -> list[dict[str, Any]]:
        """POST /v1/labels: every label is checked before any is used (a bad one refuses the
        whole request); the outcome of each, in order."""
        self._check_serving()
        for item in items:
            self.gate.check_label(item.worker, item.item, item.label)
        at = time.time()
        events: list[Event] = []
        results = []
        for item in items:
            known = len(self.gate.decisions)
            repeated = self.gate.labels.repeats(item.request_id)
            outcome = self.gate.tell_label(item.worker, item.item, item.label, item.request_id)
            # a new request id is remembered even for a duplicate label: journaled, for replay
            if not repeated and (outcome is LabelOutcome.ACCEPTED or item.request_id is not None):
                events.append(
                    label_event(item.worker, item.item, item.label, item.request_id, outcome, at)
                )
            events += self._decided(known, at)
            results.append({"worker": item.worker, "item": item.item, "outcome": outcome.value})
        await self._commit(events)
        return results

    async def add_items(self, items: list[ItemEntry]) -> dict[str, Any]:
        """POST /v1/items: every item is checked before any is registered; an item registered
        already is left as it is. How many were new, and how many are registered."""
        self._check_serving()
        batch = [entry.as_tuple() for entry in items]
        known = len(self.gate.decisions)
        fresh = self.gate.add_items(batch)
        at = time.time()
        events = [items_event(fresh, at)] if fresh else []
        await self._commit([*events, *self._decided(known, at)])
        return {"registered": len(fresh), "items": len(self.gate.items.items)}

    async def leave(self, worker: str) -> dict[str, Any]:
        """POST /v1/leave: ``left`` is False for a worker unknown or already gone."""
        self._check_serving()
        state = self.gate.workers.get(worker)
        present = state is not None and not state.left
        known = len(self.gate.decisions)
        self.gate.leave(worker, "left")
        at = time.time()
        events = [leave_event(worker, "left", at)] if present else []
        await self._commit([*events, *self._decided(known, at)])
        return {"worker": worker, "left": present}

    async def tell_outside(self, pairs: Pairs) -> None:
        """A pool's other shards' crowd evidence (``Gate.tell_outside``), journaled with the
        decisions it allowed."""
        self._check_serving()
        known = len(self.gate.decisions)
        self.gate.tell_outside(*expand_pairs(pairs))
        at = time.time()
        await self._commit([outside_event(pairs, at), *self._decided(known, at)])

    async def decisions(self, query: StreamQuery) -> dict[str, Any]:
        """GET /v1/decisions: the committed decisions after seq ``cursor``, waiting up to
        ``wait`` seconds for one when there is none yet."""
        self._check_serving()
        entries, cursor = await self._decisions.page(query)
        self._check_serving()
        return {"decisions": entries, "cursor": cursor}

    async def final_labels(self, query: StreamQuery) -> dict[str, Any]:
        """GET /v1/labels/final: the committed final-label entries after seq ``cursor``
        (``screener.gate.items``: keep the last entry per item), waiting as decisions do."""
        self._check_serving()
        entries, cursor = await self._finals.page(query)
        self._check_serving()
        return {"labels": entries, "cursor": cursor}

    def status(self) -> dict[str, Any]:
        """GET /v1/status: counts and money (calls being journaled included), workers per
        status, the decisions streamed, the prices and every setting of the gate."""
        self._check_serving()
        summary = self.gate.summary()
        prices = dataclasses.asdict(self.gate.settings.prices)
        money = {key: round(value, 10) for key, value in summary["money"].items()}
        return {
            "run": self.run_id, **summary, "money": money, "decisions": self._decisions.committed,
            "prices": prices, "settings": self.gate.settings.to_dict(),
        }  # fmt: skip

    # ------------------------------------------------------------------ lifecycle
    def stop_serving(self) -> None:
        """Refuse every call from now on (a shutdown); long polls return at once."""
        self.stopped.set()
        self._wakeup.signal()

    async def close(self, why: str = "interrupted", *, snapshot: bool = False) -> None:
        """Stop, wait for the batch being written, journal how the gate stopped ("stopped":
        ``why``, or "failed: ..." after a failure, where the journal still takes it), store a
        snapshot with ``snapshot`` (a pool's shard handed over), give up the lease, close the
        journal."""
        self.stopped.set()
        await self._lease.stop()
        if self._flusher is not None:
            with contextlib.suppress(Exception):
                await self._flusher
        try:
            detail = why if self.failure is None else f"failed: {self.failure}"
            stop = Event(kind=EventKind.STOPPED, at=time.time(), detail=detail)
            try:
                await self.journal.append(self.run_id, [stop])
            except DatabaseGoneError as error:  # never report such a run as saved
                if self.failure is None:
                    self._fail(f"its journal failed: {error}", lost=True)
            except JournalError:
                pass  # a lost lease or a full disk takes nothing
            if snapshot and self.failure is None:
                with contextlib.suppress(SnapshotError):
                    await self._save_snapshot(dump_gate(self.gate, self._made))
            with contextlib.suppress(JournalError):
                await self.journal.release(self.run_id)
        finally:
            await self.journal.aclose()

    # ------------------------------------------------------------------ journaling
    def _decided(self, known: int, at: float) -> list[Event]:
        made = self.gate.decisions[known:]
        self._made += [at] * len(made)
        return decision_events(self.gate, made, at)

    async def _commit(self, events: list[Event]) -> None:
        """Add ``events`` to the batch being written; return once it is committed. No
        events (a call that changed nothing): return once every call before is committed."""
        if not events:
            waiting = self._batch or self._writing  # batches are committed in order
            if waiting is not None:
                await asyncio.shield(waiting)
            return
        self._pending += events
        if self._batch is None:
            self._batch = asyncio.get_running_loop().create_future()
        batch = self._batch
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush())
        await asyncio.shield(batch)

    async def _flush(self) -> None:
        try:
            while self._pending and self.failure is None:
                events, batch = self._pending, self._batch
                decided = len(self.gate.decisions)  # every one made by a call in this batch
                settled = len(self.gate.items.final)  # and every final label
                # the gate after exactly this batch
                state = self._snapshots.take(len(events), self.gate, self._made)
                self._pending, self._batch = [], None
                assert batch is not None
                self._writing = batch
                try:
                    await self.journal.append(self.run_id, events)
                except Exception as error:
                    lost = isinstance(error, DatabaseGoneError)
                    self._fail(f"its journal failed: {error}", batch, lost=lost)
                    return
                finally:
                    self._writing = None
                self._decisions.committed, self._finals.committed = decided, settled
                batch.set_result(None)
                self._wakeup.signal()
                if state is not None:  # before the next batch: it is tagged with the last event
                    await self._save_snapshot(state)
        finally:
            self._flusher = None

    async def _save_snapshot(self, state: bytes) -> None:
        """Store ``state`` as the run's snapshot, tagged with its last event (the flusher
        appends nothing until it is stored). Derived data: a failure loses nothing, and the
        next append or lease renewal meets whatever caused it."""
        with contextlib.suppress(JournalError):
            await self.journal.save_snapshot(self.run_id, state)

    def fail(self, why: str) -> None:
        """Stop serving for good (an error left the gate's state in doubt)."""
        self._fail(why)

    def _fail(
        self, why: str, batch: asyncio.Future[None] | None = None, *, lost: bool = False
    ) -> None:
        """Stop serving for good: the gate in memory may be ahead of its journal."""
        self.failure, self.lost = why, lost
        self.stopped.set()
        stopped = GateStoppedError(f"the gate stopped: {why}", self._resume_hint())
        for waiting in (batch, self._batch):
            if waiting is not None and not waiting.done():
                waiting.set_exception(stopped)
                waiting.exception()  # retrieved: a caller that went away is no error
        self._batch, self._pending = None, []
        self._wakeup.signal()

    def _lease_lost(self, error: JournalError) -> None:
        """The lease taken over, or the database file gone (found at once, not at the next
        request): stop serving."""
        if isinstance(error, DatabaseGoneError):
            self._fail(f"its journal failed: {error}", lost=True)
        else:
            self._fail(str(error))

    # ------------------------------------------------------------------ helpers
    def _check_serving(self) -> None:
        if self.failure is not None:
            raise GateStoppedError(f"the gate stopped: {self.failure}", self._resume_hint())
        if self.stopped.is_set():
            raise GateStoppedError("the gate is shutting down", "try again once it is back")

    def _resume_hint(self) -> str:
        if self.lost:
            return "its run database is gone: start a new gate run"
        return f"resume it with `screener gate --resume {self.run_id}`"

    def _reply_body(self, reply: Reply, request_id: str | None) -> dict[str, Any]:
        bank = self.gate.bank
        question = reply.question
        payload = None if bank is None or question is None else bank.get(question).payload
        return {**reply.to_dict(), "payload": payload, "request_id": request_id}

    def _decision_body(self, seq: int) -> dict[str, Any]:
        decision = self.gate.decisions[seq]
        return {**decision.to_dict(), "at": self._made[seq]}

    def _final_body(self, seq: int) -> dict[str, Any]:
        return self.gate.items.final[seq].to_dict()
