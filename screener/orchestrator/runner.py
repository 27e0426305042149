"""The asyncio orchestrator: keeps questions in flight, journals every event, tells answers.

One driver coroutine owns the algorithm; it is the only code that asks or tells, so the
journal's order is exactly the order of the algorithm's calls and a replay rebuilds it.

Rules it keeps:
- "asked" events are committed before the questions leave; answers are committed before the
  algorithm is told (persist before use). Each batch of answers is one commit.
- At most ``concurrency`` pulls are in flight. A pull with no answer after ``timeout``
  seconds becomes a "timed_out" event and is released, so the algorithm asks again.
- Answers for released pulls are logged as "late", second copies as "duplicate"; neither is
  told. Rewards outside the algorithm's bounds are logged as "failed" and the pull released.
- With a gold question bank, each pull carries the worker's seq-th unseen question (the
  oracle's ``question_for``: the bank's order, or the recorded item it replays); a worker
  with none left is told unavailable ("exhausted") without asking the oracle. Raw answers
  (``Answer.response``) are scored against the question's key before the algorithm sees them;
  the journal keeps the question and the raw answer, so they can be rescored later.
- When the algorithm stops (condition met, budget spent, workers exhausted), pulls still in
  flight are cancelled; answers arriving within ``drain`` seconds are still logged as late.
- Each decision is journaled as a "decided" event (``decisions.py``): at the top of the loop
  as soon as the algorithm takes it for good, or with the "finished" event, from the final
  result, for an algorithm whose decisions are provisional until it stops.
- Every ``snapshot_every`` events the algorithm's state is stored as the run's snapshot, at
  the top of the loop, where the state is exactly the replay of the events journaled so far
  (asks are journaled right after they are made, answers told right after they are
  journaled), so a report or a resume replays only the events after it. A run stopped
  (Ctrl-C) where that holds too (``settled``: outside a journal-then-apply step and the end)
  is snapshotted as it stops (``save_snapshot``), so that its report replays nothing.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import math
import time
from collections.abc import Iterator, Sequence

from screener.algorithms import Algorithm, Result
from screener.algorithms.snapshot import dump_state
from screener.bank import GoldQuestion
from screener.crowd import WorkerPool
from screener.errors import SnapshotError
from screener.journal import AsyncJournal, Event, EventKind
from screener.money import Prices
from screener.oracles import Answer, Oracle, PullRequest
from screener.orchestrator.decisions import DecisionStream
from screener.orchestrator.intake import (
    EXHAUSTED,
    FailureStreaks,
    InFlight,
    pull_event,
    released_events,
    take_answers,
)
from screener.orchestrator.options import RunOptions
from screener.orchestrator.progress import Progress, ProgressLine

__all__ = ["Orchestrator"]


class Orchestrator:
    """Runs one algorithm against one oracle, journaling as it goes."""

    def __init__(
        self,
        algorithm: Algorithm,
        oracle: Oracle,
        journal: AsyncJournal,
        run_id: str,
        pool: WorkerPool,
        options: RunOptions,
        progress: Progress | None = None,
        *,
        seed: int = 0,
        decisions: DecisionStream | None = None,
        prices: Prices | None = None,
    ) -> None:
        self.algorithm = algorithm
        self.oracle = oracle
        self.journal = journal
        self.run_id = run_id
        self.pool = pool
        self.options = options
        self.progress = progress
        self.seed = seed
        self.decisions = decisions or DecisionStream(pool.workers, algorithm.params())
        self.prices = prices
        self.counts: collections.Counter[str] = collections.Counter()
        self._in_flight = InFlight()
        self._streaks = FailureStreaks(options.max_failures, pool.workers)
        self._done = asyncio.Event()
        self._snapshot_every = options.snapshot_every
        self._since_snapshot = 0
        #: False while the algorithm and the journal may disagree (``_applying``).
        self.settled = True
        self._final: Result | None = None

    async def run(self) -> Result:
        """Drive the run to its end and return the final result."""
        # A plain task, not a TaskGroup: a TaskGroup would wrap the driver's own errors (an
        # oracle that fails mid-run) in an ExceptionGroup, and callers catch the error itself.
        progress = self.progress
        shown = None if progress is None else asyncio.create_task(self._show_progress(progress))
        try:
            await self._drive()
        finally:
            self._done.set()
            if shown is not None and progress is not None:
                await asyncio.shield(shown)  # its last line, even when we are cancelled
                progress.close()
        # The result the finished event stored: building it again costs seconds at 100,000.
        return self.algorithm.result() if self._final is None else self._final

    # --------------------------------------------------------------------- main loop
    async def _drive(self) -> None:
        algorithm = self.algorithm
        while True:
            await self._journal_decisions()
            await self._snapshot_if_due()
            await self._top_up()
            if algorithm.finished:
                break
            if algorithm.n_pending == 0:
                # Nothing in flight (the last workers just ran out of questions): ask again,
                # which hands out pulls or says done; waiting for answers would never end.
                continue
            answers = await self._receive_until_deadline()
            await self._journal_retries()
            if answers:
                await self._handle(answers)
            await self._expire()
        await self._finish()

    async def _top_up(self) -> None:
        room = self.options.concurrency - self.algorithm.n_pending
        if room <= 0:
            return
        with self._applying():
            requests = await self._ask(room)
        if not requests:
            return
        timeout = self.options.timeout
        deadline = math.inf if timeout is None else asyncio.get_running_loop().time() + timeout
        self._in_flight.add(requests, deadline)
        self.counts["asked"] += len(requests)
        await self.oracle.submit(requests)
        await self._journal_retries()

    async def _ask(self, room: int) -> list[PullRequest]:
        """Ask for up to ``room`` pulls and journal them; the requests to send (a worker the
        bank has run dry for is told unavailable instead)."""
        ask = self.algorithm.ask(room)
        if len(ask) == 0:
            return []
        now = time.time()
        requests = [
            PullRequest(
                pull.id, self.pool.workers[pull.arm], pull.arm, pull.seq,
                self._question(pull.arm, pull.seq),
            )
            for pull in ask
        ]  # fmt: skip
        asked = [pull_event(EventKind.ASKED, now, r) for r in requests]
        # A bank that has run dry for a worker: no question to ask, the worker is done. The
        # "unavailable" events follow all "asked" events so a replay asks the same batch.
        exhausted = [r for r in requests if self.pool.bank is not None and r.question is None]
        gone = [pull_event(EventKind.UNAVAILABLE, now, r, detail=EXHAUSTED) for r in exhausted]
        await self._append([*asked, *gone])
        for request in exhausted:
            self.algorithm.set_unavailable(request.arm, EXHAUSTED)
            self.algorithm.release(request.pull_id)
        self.counts["unavailable"] += len(exhausted)
        return [r for r in requests if self.pool.bank is None or r.question is not None]

    async def _journal_retries(self) -> None:
        """ "retried" events for the requests the oracle has resent since the last look."""
        notes = self.oracle.take_retry_notes()
        if not notes:
            return
        at = time.time()
        events = []
        for note in notes:
            for pull_id in note.pull_ids or (None,):
                info = None if pull_id is None else self.algorithm.pull_info(pull_id)
                arm = None if info is None else info.arm
                worker = None if arm is None else self.pool.workers[arm]
                seq = None if info is None else info.seq
                events.append(
                    Event(
                        kind=EventKind.RETRIED,
                        at=at,
                        pull_id=pull_id,
                        arm=arm,
                        worker=worker,
                        seq=seq,
                        detail=note.detail,
                    )
                )
        self.counts["retried"] += len(events)
        await self._append(events)

    def _question(self, arm: int, seq: int) -> GoldQuestion | None:
        return self.oracle.question_for(self.pool, arm, seq, self.seed)

    async def _receive_until_deadline(self) -> Sequence[Answer]:
        deadline = self._in_flight.next_deadline()
        try:
            async with asyncio.timeout_at(None if math.isinf(deadline) else deadline):
                return await self.oracle.receive()
        except TimeoutError:
            return ()

    # ------------------------------------------------------------------- answers
    async def _handle(self, answers: Sequence[Answer]) -> None:
        """Journal a batch of answers in one commit, then tell the algorithm."""
        algorithm, now = self.algorithm, time.time()
        intake = take_answers(
            answers, algorithm, self._in_flight, self.pool.workers, self._question, now
        )
        self._streaks.answered(intake.tell_arms)
        give_ups = self._streaks.failed(intake.failed, now, intake.failure_reasons)
        with self._applying():
            await self._append([*intake.events, *give_ups])
            self.counts.update(intake.counts)
            if intake.tell_ids:
                algorithm.tell_many(intake.tell_ids, intake.tell_rewards)
            for request, reason in intake.gone:
                algorithm.set_unavailable(request.arm, reason)
                algorithm.release(request.pull_id)
            for request in intake.failed:
                algorithm.release(request.pull_id)
            self._in_flight.settle(
                [*intake.tell_ids, *(r.pull_id for r, _ in intake.gone)]
                + [r.pull_id for r in intake.failed]
            )
            self._give_up(give_ups)

    def _give_up(self, give_ups: Sequence[Event]) -> None:
        for event in give_ups:
            assert event.arm is not None and event.detail is not None
            self.algorithm.set_unavailable(event.arm, event.detail)

    # ------------------------------------------------------------ timeouts and the end
    async def _expire(self) -> None:
        expired = self._in_flight.expired(asyncio.get_running_loop().time())
        if expired:
            await self._release_all(expired, EventKind.TIMED_OUT, "no answer within timeout")

    async def _release_all(
        self, requests: Sequence[PullRequest], kind: EventKind, detail: str
    ) -> None:
        at = time.time()
        events = released_events(requests, kind, detail, at)
        timed_out = kind is EventKind.TIMED_OUT
        give_ups = self._streaks.failed(requests, at, [detail] * len(requests)) if timed_out else []
        pull_ids = [r.pull_id for r in requests]
        with self._applying():
            await self._append([*events, *give_ups])
            for pull_id in pull_ids:
                self.algorithm.release(pull_id)
            self._in_flight.settle(pull_ids)
            self._give_up(give_ups)
        self.counts[kind.value] += len(pull_ids)
        await self.oracle.cancel(pull_ids)
        await self._journal_retries()

    async def _finish(self) -> None:
        self.settled = False  # the algorithm has stopped: the journal says so only at the end
        in_flight = list(self._in_flight)
        if in_flight:
            await self._release_all(in_flight, EventKind.CANCELLED, "run finished")
            await self._drain()
        reason = self.algorithm.stop_reason
        detail = "interrupted" if reason is None else reason.value
        result, at = self.algorithm.result(), time.time()
        self._final = result
        decided = self.decisions.final(result, at)
        finished = Event(kind=EventKind.FINISHED, at=at, detail=detail, response=_as_json(result))
        await self._append([*decided, finished])
        self.decisions.publish(decided)

    async def _journal_decisions(self) -> None:
        """The decisions the algorithm has taken for good since the last look."""
        decided = self.decisions.made(self.algorithm, time.time())
        if decided:
            await self._append(decided)
            self.decisions.publish(decided)

    async def _drain(self) -> None:
        """Log answers that still arrive for cancelled pulls, for ``drain`` seconds."""
        if self.options.drain <= 0:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.options.drain):
                while True:
                    await self._handle(await self.oracle.receive())

    # ------------------------------------------------------------------- journal
    async def _append(self, events: Sequence[Event]) -> None:
        await self.journal.append(self.run_id, events)
        self._since_snapshot += len(events)

    async def _snapshot_if_due(self) -> None:
        """Store the state when ``snapshot_every`` events have passed since the last one."""
        if 0 < self._snapshot_every <= self._since_snapshot:
            await self.save_snapshot()

    async def save_snapshot(self) -> None:
        """Store the algorithm's state as the run's snapshot, after the events journaled so
        far: only where it is exactly their replay (``settled``), as at the top of the loop.
        An algorithm whose state cannot be pickled runs on without snapshots (readers
        replay its journal, as they always can)."""
        if not self.settled or self._snapshot_every == 0:
            return
        self._since_snapshot = 0
        try:
            state = dump_state(self.algorithm)
        except SnapshotError:
            self._snapshot_every = 0
            return
        await self.journal.save_snapshot(self.run_id, state)

    @contextlib.contextmanager
    def _applying(self) -> Iterator[None]:
        """Around a step that changes the algorithm and journals it, one after the other: the
        two may disagree until it ends (an ask not journaled yet, answers journaled and not
        told yet), so a stop inside it (its exception) leaves ``settled`` False; the end of
        the run (``_finish``) stays unsettled through the answers it still takes."""
        settled, self.settled = self.settled, False
        yield
        self.settled = settled

    # ------------------------------------------------------------------- progress
    async def _show_progress(self, progress: Progress) -> None:
        while not self._done.is_set():
            progress.show(self._progress_line())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(progress.interval):
                    await self._done.wait()
        progress.show(self._progress_line())

    def _progress_line(self) -> ProgressLine:
        gold = None if self.prices is None else self.prices.gold
        return ProgressLine.of(self.algorithm, gold_price=gold)


def _as_json(result: Result) -> str | None:
    """The result as JSON, kept with the finished event so that a report reads it instead of
    replaying every answer; None when a (third-party) algorithm put something in it that JSON
    cannot hold: the report then replays, as it always can."""
    try:
        return result.to_json()
    except (TypeError, ValueError):
        return None
