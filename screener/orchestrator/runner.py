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
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from screener.algorithms import Algorithm, Decision, PullInfo, PullStatus, Result
from screener.bank import GoldQuestion
from screener.errors import ConfigError
from screener.journal import AsyncJournal, Event, EventKind
from screener.oracles import Answer, Oracle, PullRequest
from screener.orchestrator.progress import Progress, ProgressLine
from screener.pool import WorkerPool

__all__ = ["EXHAUSTED", "Orchestrator", "RunOptions"]

EXHAUSTED = "exhausted: no unseen gold question left"


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How a run talks to its oracle."""

    concurrency: int = 16
    timeout: float | None = 60.0
    drain: float = 0.0
    #: A worker whose questions fail or time out this many times in a row is given up on.
    max_failures: int = 10

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.timeout is not None and not self.timeout > 0:
            raise ConfigError(f"timeout must be positive seconds, got {self.timeout}")
        if not self.drain >= 0:
            raise ConfigError(f"drain must be >= 0 seconds, got {self.drain}")
        if self.max_failures < 1:
            raise ConfigError(f"max_failures must be at least 1, got {self.max_failures}")


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
    ) -> None:
        self.algorithm = algorithm
        self.oracle = oracle
        self.journal = journal
        self.run_id = run_id
        self.pool = pool
        self.options = options
        self.progress = progress
        self.seed = seed
        self.counts: collections.Counter[str] = collections.Counter()
        # (deadline on the loop clock, pull id), in ask order; stale entries are skipped.
        self._deadlines: deque[tuple[float, int]] = deque()
        self._done = asyncio.Event()
        self._failures_in_a_row: collections.Counter[int] = collections.Counter()

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
        return self.algorithm.result()

    # --------------------------------------------------------------------- main loop
    async def _drive(self) -> None:
        algorithm = self.algorithm
        while True:
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
        ask = self.algorithm.ask(room)
        if len(ask) == 0:
            return
        now = time.time()
        requests = [
            PullRequest(
                pull.id, self.pool.workers[pull.arm], pull.arm, pull.seq,
                self._question(pull.arm, pull.seq),
            )
            for pull in ask
        ]  # fmt: skip
        asked = [
            Event(
                kind=EventKind.ASKED,
                at=now,
                pull_id=r.pull_id,
                arm=r.arm,
                worker=r.worker,
                seq=r.seq,
                question=_id(r.question),
            )
            for r in requests
        ]
        # A bank that has run dry for a worker: no question to ask, the worker is done. The
        # "unavailable" events follow all "asked" events so a replay asks the same batch.
        exhausted = [r for r in requests if self.pool.bank is not None and r.question is None]
        gone = [
            Event(
                kind=EventKind.UNAVAILABLE,
                at=now,
                pull_id=r.pull_id,
                arm=r.arm,
                worker=r.worker,
                seq=r.seq,
                detail=EXHAUSTED,
            )
            for r in exhausted
        ]
        await self.journal.append(self.run_id, [*asked, *gone])
        for request in exhausted:
            self.algorithm.set_unavailable(request.arm, EXHAUSTED)
            self.algorithm.release(request.pull_id)
        self.counts["unavailable"] += len(exhausted)
        requests = [r for r in requests if self.pool.bank is None or r.question is not None]
        if not requests:
            return
        timeout = self.options.timeout
        deadline = math.inf if timeout is None else asyncio.get_running_loop().time() + timeout
        self._deadlines.extend((deadline, r.pull_id) for r in requests)
        self.counts["asked"] += len(requests)
        await self.oracle.submit(requests)
        await self._journal_retries()

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
        await self.journal.append(self.run_id, events)

    def _question(self, arm: int, seq: int) -> GoldQuestion | None:
        return self.oracle.question_for(self.pool, arm, seq, self.seed)

    async def _receive_until_deadline(self) -> Sequence[Answer]:
        deadline = self._next_deadline()
        try:
            async with asyncio.timeout_at(None if math.isinf(deadline) else deadline):
                return await self.oracle.receive()
        except TimeoutError:
            return ()

    def _next_deadline(self) -> float:
        while self._deadlines:
            deadline, pull_id = self._deadlines[0]
            if self.algorithm.is_pending(pull_id):
                return deadline
            self._deadlines.popleft()
        return math.inf

    # ------------------------------------------------------------------- answers
    async def _handle(self, answers: Sequence[Answer]) -> None:
        """Journal a batch of answers in one commit, then tell the algorithm."""
        algorithm = self.algorithm
        now = time.time()
        events: list[Event] = []
        accepted_ids: list[int] = []
        accepted_rewards: list[float] = []
        releases: list[int] = []
        gone: list[tuple[int, str]] = []
        seen: set[int] = set()
        for answer in answers:
            info = algorithm.pull_info(answer.pull_id)
            if info is None:
                events.append(
                    Event(kind=EventKind.LATE, at=now, pull_id=answer.pull_id, reward=answer.reward,
                          detail="unknown pull id", response=_json(answer.response))
                )  # fmt: skip
                continue
            question = self._question(info.arm, info.seq)
            reward = self._score(answer, question)
            kind, detail = self._classify(answer, reward, info.status, answer.pull_id in seen)
            events.append(self._event(kind, now, answer, info, detail, reward, question))
            if kind is EventKind.ANSWERED:
                assert reward is not None
                self._failures_in_a_row.pop(info.arm, None)
                seen.add(answer.pull_id)
                accepted_ids.append(answer.pull_id)
                accepted_rewards.append(reward)
            elif kind is EventKind.UNAVAILABLE:
                seen.add(answer.pull_id)
                gone.append((answer.pull_id, detail or "unavailable"))
            elif kind is EventKind.FAILED:
                seen.add(answer.pull_id)
                releases.append(answer.pull_id)
            self.counts[kind.value] += 1
        events.extend(self._give_up_events(releases, now))
        await self.journal.append(self.run_id, events)
        if accepted_ids:
            algorithm.tell_many(accepted_ids, accepted_rewards)
        for pull_id, reason in gone:
            info = algorithm.pull_info(pull_id)
            assert info is not None
            algorithm.set_unavailable(info.arm, reason)
            algorithm.release(pull_id)
        for pull_id in releases:
            algorithm.release(pull_id)
        self._apply_give_ups(events)

    def _give_up_events(self, released: Sequence[int], at: float) -> list[Event]:
        """UNAVAILABLE events for workers whose questions failed too often in a row."""
        limit = self.options.max_failures
        events = []
        for pull_id in released:
            info = self.algorithm.pull_info(pull_id)
            assert info is not None
            self._failures_in_a_row[info.arm] += 1
            if self._failures_in_a_row[info.arm] == limit:
                detail = f"no answer to {limit} questions in a row"
                worker = self.pool.workers[info.arm]
                events.append(
                    Event(
                        kind=EventKind.UNAVAILABLE,
                        at=at,
                        arm=info.arm,
                        worker=worker,
                        detail=detail,
                    )
                )
        return events

    def _apply_give_ups(self, events: Sequence[Event]) -> None:
        for event in events:
            if event.kind is EventKind.UNAVAILABLE and event.pull_id is None:
                assert event.arm is not None and event.detail is not None
                self.algorithm.set_unavailable(event.arm, event.detail)

    @staticmethod
    def _score(answer: Answer, question: GoldQuestion | None) -> float | None:
        """The answer's reward: given, or the raw answer scored against the question's key."""
        if answer.response is None or question is None:
            return answer.reward
        return question.score(answer.response)

    def _classify(
        self, answer: Answer, reward: float | None, status: PullStatus, seen_in_batch: bool
    ) -> tuple[EventKind, str | None]:
        if status is PullStatus.ANSWERED or seen_in_batch:
            return EventKind.DUPLICATE, None
        if status is PullStatus.RELEASED:
            return EventKind.LATE, answer.error or answer.unavailable
        if answer.unavailable is not None:
            return EventKind.UNAVAILABLE, answer.unavailable
        if answer.error is not None:
            return EventKind.FAILED, answer.error
        if reward is None:
            return EventKind.FAILED, "a raw answer, but the pool has no gold question to score it"
        if not self.algorithm.accepts_reward(reward):
            return EventKind.FAILED, f"invalid reward {reward!r}"
        return EventKind.ANSWERED, None

    def _event(
        self,
        kind: EventKind,
        at: float,
        answer: Answer,
        info: PullInfo,
        detail: str | None,
        reward: float | None,
        question: GoldQuestion | None,
    ) -> Event:
        return Event(
            kind=kind, at=at, pull_id=answer.pull_id, arm=info.arm,
            worker=self.pool.workers[info.arm], seq=info.seq,
            reward=None if kind is EventKind.FAILED else reward, detail=detail,
            question=_id(question), response=_json(answer.response),
        )  # fmt: skip

    # ------------------------------------------------------------ timeouts and the end
    async def _expire(self) -> None:
        now = asyncio.get_running_loop().time()
        expired: list[int] = []
        while self._deadlines and self._deadlines[0][0] <= now:
            _, pull_id = self._deadlines.popleft()
            if self.algorithm.is_pending(pull_id):
                expired.append(pull_id)
        if expired:
            await self._release_all(expired, EventKind.TIMED_OUT, "no answer within timeout")

    async def _release_all(self, pull_ids: list[int], kind: EventKind, detail: str) -> None:
        at = time.time()
        events = []
        for pull_id in pull_ids:
            info = self.algorithm.pull_info(pull_id)
            assert info is not None
            worker = self.pool.workers[info.arm]
            question = _id(self._question(info.arm, info.seq))
            events.append(
                Event(
                    kind=kind,
                    at=at,
                    pull_id=pull_id,
                    arm=info.arm,
                    worker=worker,
                    seq=info.seq,
                    detail=detail,
                    question=question,
                )
            )
        if kind is EventKind.TIMED_OUT:
            events.extend(self._give_up_events(pull_ids, at))
        await self.journal.append(self.run_id, events)
        for pull_id in pull_ids:
            self.algorithm.release(pull_id)
        self._apply_give_ups(events)
        self.counts[kind.value] += len(pull_ids)
        await self.oracle.cancel(pull_ids)
        await self._journal_retries()

    async def _finish(self) -> None:
        in_flight = [
            pull_id for _, pull_id in self._deadlines if self.algorithm.is_pending(pull_id)
        ]
        self._deadlines.clear()
        if in_flight:
            await self._release_all(in_flight, EventKind.CANCELLED, "run finished")
            await self._drain()
        reason = self.algorithm.stop_reason
        detail = "interrupted" if reason is None else reason.value
        finished = Event(
            kind=EventKind.FINISHED,
            at=time.time(),
            detail=detail,
            response=_final_result(self.algorithm),
        )
        await self.journal.append(self.run_id, [finished])

    async def _drain(self) -> None:
        """Log answers that still arrive for cancelled pulls, for ``drain`` seconds."""
        if self.options.drain <= 0:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.options.drain):
                while True:
                    await self._handle(await self.oracle.receive())

    # ------------------------------------------------------------------- progress
    async def _show_progress(self, progress: Progress) -> None:
        while not self._done.is_set():
            progress.show(self._progress_line())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(progress.interval):
                    await self._done.wait()
        progress.show(self._progress_line())

    def _progress_line(self) -> ProgressLine:
        algorithm = self.algorithm
        result = algorithm.result()
        t = result.threshold
        bound = algorithm.max_questions_per_worker
        most = [algorithm.budget, None if bound is None else bound * algorithm.n_arms]
        return ProgressLine(
            asked=algorithm.n_asked,
            answered=algorithm.n_answered,
            in_flight=algorithm.n_pending,
            decided=sum(w.decision is not Decision.UNDECIDED for w in result.workers),
            workers=algorithm.n_arms,
            budget=algorithm.budget,
            unavailable=algorithm.n_arms - int(algorithm.available.sum()),
            threshold=None if t is None or t.given else (t.estimate, t.lower, t.upper),
            most_answers=min((m for m in most if m is not None), default=None),
        )


def _id(question: GoldQuestion | None) -> str | None:
    return None if question is None else question.id


def _json(response: str | float | None) -> str | None:
    return None if response is None else json.dumps(response)


def _final_result(algorithm: Algorithm) -> str | None:
    """The result as JSON, kept with the finished event so that a report reads it instead of
    replaying every answer; None when a (third-party) algorithm put something in it that JSON
    cannot hold: the report then replays, as it always can."""
    try:
        return algorithm.result().to_json()
    except (TypeError, ValueError):
        return None
