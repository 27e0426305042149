"""A platform stand-in: a real dataset replayed as arriving workers who ask a gate for work over
HTTP (``screener standin``; the gate is ``screener gate``, docs/gate-api.md).

The dataset is a task stream (``screener.testing.doubles.platform.TaskStream``): each
worker asks for work as many times as it answered in the data, at seeded times, so workers
join late, overlap and leave; ``StandInSettings`` adds late joiners, leavers and workers who
turn to spam part way (``screener.testing.doubles.arrivals``). For each request the stand-in
asks the gate
(``POST /v1/next``) and does what it says: a gold question is answered from the worker's
recorded answers (``POST /v1/answers``), a real task is labelled with its recorded answer
(reported to the gate, ``POST /v1/labels``, in batches of ``LABEL_BATCH`` and at the end),
``blocked`` sends the worker away. A worker out of work leaves, and the gate is told, before
it is asked anything (a platform serves no gold question to a worker it has no task for).
Meanwhile it follows the decisions stream (``GET /v1/decisions``) and acts on each ban as it
arrives: the banned worker's labels are discarded and bought again.

When the gate has registered items (``register_items`` registers the stream's task items,
each capped at its recorded number of labels), the gate chooses them: each request names the
worker's recorded task items that still need a label (``POST /v1/next``'s ``items``), a task
reply's ``item`` is the one the worker labels (with its recorded answer), a reply naming no
item sends the worker away, and each label is reported at once, so that the gate counts it
before it offers the item again. At the end the items the gate settled
(``GET /v1/labels/final``: the last entry per item) get no replacement labels.

It is itself an aiohttp service on 127.0.0.1 (``GET /v1/report``: the report so far), and
at the end it reports what was bought: money, labels, their accuracy by majority vote, the
decisions with when each arrived, and the screening limit as the platform saw it.

With ``concurrency`` 1 the requests reach the gate one at a time in the same order every
time, and every draw is seeded, so a gate given the same settings makes the same decisions:
what a gate killed and resumed part way must reproduce.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from aiohttp import web

from screener.gate_service.client import GateClient
from screener.gate_service.protocol import MAX_BATCH, ItemEntry, LabelItem
from screener.oracles.answer_file import RecordedAnswers
from screener.testing.doubles.arrivals import Arrivals, StandInSettings, plan_arrivals
from screener.testing.doubles.outcome import StreamOutcome
from screener.testing.doubles.platform import TaskStream

__all__ = ["StandIn", "StandInReport", "run_standin"]

REPORT_PATH = "/v1/report"
#: Task labels the stand-in reports to the gate in one request.
LABEL_BATCH = 20
_FOLLOW_WAIT = 1.0
#: Seconds a call is retried while the gate does not answer (a restart takes a few).
RETRY_FOR = 120.0


@dataclass
class StandInReport:
    """What the platform bought and saw. ``decisions``: as they arrived (seq, worker,
    decision, reason, ``at`` when the gate made it, ``received`` when the stand-in read it,
    ``during``: read while requests were still being served); ``tasks_before_gold``: the most
    real tasks a worker did before its first gold question; ``unscreened``: workers who did
    real tasks and never got one. ``money`` is what the platform paid: every gold answer and
    task label it received (discarded ones included) and the ``replacements`` it bought
    outside the gate, at the gate's prices; the gate's own status (``gate["money"]``) counts
    only the gold questions and tasks the gate handed out."""

    dataset: str
    requests: int = 0
    gold_answers: int = 0
    task_labels: int = 0
    replacements: int = 0
    discarded: int = 0
    money: dict[str, float] = field(default_factory=dict)
    accuracy: float | None = None
    workers: int = 0
    banned: list[str] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    tasks_before_gold: int = 0
    unscreened: list[str] = field(default_factory=list)
    late: list[str] = field(default_factory=list)
    leavers: list[str] = field(default_factory=list)
    turned: dict[str, int] = field(default_factory=dict)
    gate: dict[str, Any] = field(default_factory=dict)
    finished: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class StandIn:
    """One replay of ``answers`` against the gate of ``client`` (see the module docstring)."""

    def __init__(
        self, answers: RecordedAnswers, client: GateClient, settings: StandInSettings | None = None
    ) -> None:
        self.settings = settings or StandInSettings()
        self.client = client
        self.stream = TaskStream(answers, self.settings.stream())
        self.arrivals: Arrivals = plan_arrivals(self.stream, self.settings)
        self.report = StandInReport(
            answers.source, workers=len(answers.workers), late=list(self.arrivals.late),
            leavers=sorted(self.arrivals.leave_at), turned=dict(self.arrivals.turn_at),
        )  # fmt: skip
        self._gone: set[str] = set()
        self._tasks_done: Counter[str] = Counter()  # real tasks before the first gold question
        self._screened: set[str] = set()
        self._seen: set[int] = set()  # decisions read (by seq)
        self._labels: list[LabelItem] = []  # task labels not yet reported
        self._serving = True
        self._decisions_made: int | None = None  # known once the requests are done
        self._gate_items = False  # whether the gate chooses the task items

    async def run(self) -> StandInReport:
        """Serve every request, follow the decisions until the last, and report."""
        if self.settings.register_items:
            recorded = sorted(self.stream.recorded.items())
            await self.client.add_items([ItemEntry(item, cap) for item, cap in recorded])
        self._gate_items = bool((await self.client.status())["items"]["registered"])
        follower = asyncio.create_task(self._follow())
        try:
            await self._serve_requests()
            await self._report_labels()
            self._serving = False
            self._decisions_made = int((await self.client.status())["decisions"])
            await follower
        finally:
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await follower
        if self._gate_items:
            self.stream.settle(await self._settled_items())
        await self._finish()
        return self.report

    # ------------------------------------------------------------------ requests
    async def _serve_requests(self) -> None:
        slots = asyncio.Semaphore(self.settings.concurrency)
        previous: dict[str, asyncio.Task[None]] = {}
        async with asyncio.TaskGroup() as group:
            for worker, index in self.arrivals.requests:
                await slots.acquire()
                earlier = previous.get(worker)
                previous[worker] = group.create_task(self._in_turn(earlier, worker, index, slots))

    async def _in_turn(
        self,
        earlier: asyncio.Task[None] | None,
        worker: str,
        index: int,
        slots: asyncio.Semaphore,
    ) -> None:
        """A worker's requests one after another (each waits for its previous one)."""
        try:
            if earlier is not None:
                await earlier
            await self._visit(worker, index)
        finally:
            slots.release()

    async def _visit(self, worker: str, index: int) -> None:
        if worker in self._gone:
            return
        if self.arrivals.leave_at.get(worker) == index or not self.stream.has_work(worker):
            await self._send_away(worker)  # it leaves, or no work is left for it
            return
        candidates = self.stream.candidates(worker, MAX_BATCH) if self._gate_items else None
        reply = await self.client.next(worker, f"{worker}:{index}", items=candidates)
        self.report.requests += 1
        kind = reply["kind"]
        if kind == "blocked":
            self._gone.add(worker)
            self.stream.block(worker)
        elif kind == "gold":
            self._screened.add(worker)
            given = self.stream.gold(worker)
            if self._wrong(worker, index):  # a spoiled answer: no label to check with
                given = given._replace(reward=0.0, label=None)
            await self.client.answer(
                str(reply["gold"]), worker=worker, reward=given.reward, answer=given.label,
                item=None if given.label is None else given.item,
            )  # fmt: skip
        elif self._gate_items and reply.get("item") is None:
            await self._send_away(worker)  # the gate has no open item for it
        elif (item := self.stream.task(worker, reply.get("item"))) is None:
            await self._send_away(worker)  # no work left for this worker
        else:
            if self._wrong(worker, index):
                self._spoil(worker, item)
            if worker not in self._screened:
                self._tasks_done[worker] += 1
            label = self.stream.kept[item][-1][1]
            self._labels.append(LabelItem(worker, item, label, f"{worker}:{index}:label"))
            if self._gate_items or len(self._labels) >= LABEL_BATCH:
                await self._report_labels()

    async def _report_labels(self) -> None:
        """Send the task labels given so far (each with its request id: a retry counts once)."""
        batch, self._labels = self._labels, []
        if batch:
            await self.client.labels(batch)

    async def _send_away(self, worker: str) -> None:
        self._gone.add(worker)
        self.stream.block(worker)
        await self.client.leave(worker)

    def _wrong(self, worker: str, index: int) -> bool:
        rate = self.settings.turn_wrong
        return self.arrivals.wrong(self.settings.seed, worker, index, rate)

    def _spoil(self, worker: str, item: str) -> None:
        """A turned worker's label: a wrong answer instead of its recorded one."""
        truth = self.stream.truth[item]
        wrong = sorted({a for a in self.stream.answer_set[item] if a != truth}) or ["(spam)"]
        self.stream.kept[item][-1] = (worker, wrong[len(worker) % len(wrong)])

    # ------------------------------------------------------------------ decisions
    async def _follow(self) -> None:
        """Read the decisions stream until the last decision the gate made, acting on bans."""
        cursor = -1
        while self._decisions_made is None or cursor + 1 < self._decisions_made:
            page, cursor = await self.client.decisions(cursor, wait=_FOLLOW_WAIT)
            for decision in page:
                if decision["seq"] not in self._seen:  # at least once: a repeat is skipped
                    self._seen.add(decision["seq"])
                    self._act(decision)

    def _act(self, decision: dict[str, Any]) -> None:
        received = {"received": time.time(), "during": self._serving}
        self.report.decisions.append({**decision, **received})
        if decision["decision"] == "banned":
            self.stream.ban(str(decision["worker"]))

    async def _settled_items(self) -> list[str]:
        """The items the gate settled: the last final-label entry of each is not a reopening."""
        last: dict[str, str] = {}
        cursor = -1
        while True:
            page, cursor = await self.client.final_labels(cursor)
            if not page:
                return [item for item, state in last.items() if state != "reopened"]
            last.update((str(entry["item"]), str(entry["state"])) for entry in page)

    async def _finish(self) -> None:
        outcome: StreamOutcome = self.stream.finish()
        status = await self.client.status()
        prices = status["prices"]
        report = self.report
        report.gate = status
        report.gold_answers, report.task_labels = outcome.gold_answers, outcome.task_labels
        report.replacements, report.discarded = outcome.replacements, outcome.discarded
        gold, tasks = outcome.gold_answers * prices["gold"], outcome.task_labels * prices["task"]
        bought_outside = outcome.replacements * prices["task"]
        report.money = {"gold": round(gold, 10), "tasks": round(tasks, 10),
                        "total": round(gold + tasks, 10),
                        "replacements": round(bought_outside, 10)}  # fmt: skip
        accuracy = outcome.label_accuracy(self.settings.seed)
        report.accuracy = None if accuracy != accuracy else accuracy
        report.banned = sorted(outcome.banned)
        report.tasks_before_gold = max(self._tasks_done.values(), default=0)
        report.unscreened = sorted(set(self._tasks_done) - self._screened)
        report.finished = True


def report_app(standin: StandIn) -> web.Application:
    """The stand-in's own service: ``GET /v1/report``, the report so far."""

    async def report(request: web.Request) -> web.Response:
        return web.json_response(standin.report.to_dict())

    app = web.Application()
    app.router.add_get(REPORT_PATH, report)
    return app


async def run_standin(
    answers: RecordedAnswers,
    gate_url: str,
    settings: StandInSettings | None = None,
    *,
    token: str | None = None,
    port: int = 0,
    on_url: Callable[[str], None] | None = None,
    on_retry: Callable[[str], object] | None = None,
) -> StandInReport:
    """Replay ``answers`` against the gate at ``gate_url``, serving the report on 127.0.0.1
    ``port`` meanwhile (``on_url`` is told its URL; ``on_retry`` when the gate stops answering
    and until when it is retried); the final report."""
    client = GateClient(gate_url, token=token, retry_for=RETRY_FOR, on_retry=on_retry)
    async with client:
        standin = StandIn(answers, client, settings)
        runner = web.AppRunner(report_app(standin), access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(runner, "127.0.0.1", port)
            await site.start()
            if on_url is not None:
                on_url(f"http://127.0.0.1:{runner.addresses[0][1]}{REPORT_PATH}")
            return await standin.run()
        finally:
            await runner.cleanup()
