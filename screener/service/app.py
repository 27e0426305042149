"""The reference gold-question service: the API of docs/live-api.md over simulated workers.

The service admits assignments, has ``SimulatedWorkers`` answer them after their delay,
appends the answers to its ``AnswerLog`` and serves that stream by long polling or webhook.
Fault switches (``Faults``) make it misbehave the way real platforms do, to test clients:
HTTP 503s, responses slower than the client's timeout, answers delivered twice, answers out
of order, slow responses, and 429 rate limiting. Fault draws come from their own generator
seeded by the service seed; which request gets which fault depends on arrival order.

Not from the papers: a test double for ``screener.oracles.http`` and the ``serve`` command.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import math
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from aiohttp import web

from screener.bank import GoldBank, GoldQuestion
from screener.crowd import WorkerPool
from screener.oracles.http.protocol import (
    ANSWERS_PATH,
    ASSIGNMENTS_PATH,
    MAX_LIMIT,
    WEBHOOK_PATH,
    AnswerItem,
    ApiFormatError,
    Assignment,
    Rejection,
    SubmitResult,
    answers_body,
    parse_assignments,
    parse_webhook_config,
)
from screener.oracles.latency import Latency
from screener.service.answer_log import AnswerLog
from screener.service.faults import Faults, TokenBucket
from screener.service.webhooks import WebhookSender
from screener.service.workers import SimulatedWorkers

__all__ = ["GoldService", "start_service"]

_MAX_WAIT = 60.0
_DUPLICATE_GAP = 0.01  # seconds between an answer and its second copy

_N = TypeVar("_N", int, float)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(slots=True)
class _Record:
    assignment: Assignment
    state: str  # "pending", "answered" or "cancelled"
    timer: asyncio.TimerHandle | None = None
    delivered: AnswerItem | None = None  # kept to deliver again when the id is posted again


class GoldService:
    """The service's state and handlers; ``app()`` wires them into an aiohttp application.

    ``token``: the bearer token requests must carry (None: no authentication). It is compared
    with ``hmac.compare_digest`` and never logged.
    """

    def __init__(
        self,
        pool: WorkerPool,
        bank: GoldBank,
        *,
        token: str | None = None,
        latency: Latency | None = None,
        faults: Faults | None = None,
        seed: int = 0,
    ) -> None:
        self.pool = pool
        self.bank = bank
        self.workers = SimulatedWorkers(pool, bank, latency or Latency(), seed)
        self.faults = faults or Faults()
        self.seed = seed
        self.counts: Counter[str] = Counter()
        self._expected_auth = None if token is None else f"Bearer {token}".encode()
        self._gone: dict[str, str] = {}
        self._records: dict[str, _Record] = {}
        self._log = AnswerLog()
        self._fault_rng = random.Random(f"screener-service-faults-{seed}")
        self._bucket = TokenBucket(self.faults.rate_limit)
        self._webhooks = WebhookSender(self._log, self._shuffled, self.counts)

    def __repr__(self) -> str:
        auth = "token" if self._expected_auth is not None else "no auth"
        return f"GoldService({len(self.pool)} workers, {len(self.bank)} questions, {auth})"

    # ------------------------------------------------------------------ public helpers
    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._faults_middleware])
        app.router.add_post(ASSIGNMENTS_PATH, self._post_assignments)
        app.router.add_delete(ASSIGNMENTS_PATH + "/{id}", self._delete_assignment)
        app.router.add_get(ANSWERS_PATH, self._get_answers)
        app.router.add_put(WEBHOOK_PATH, self._put_webhook)
        app.on_shutdown.append(self._on_shutdown)
        return app

    def remove_worker(self, worker: str, reason: str = "unavailable: worker left") -> None:
        """Worker ``worker`` leaves: new assignments are rejected, pending ones answered
        ``unavailable``."""
        self._gone[worker] = reason
        for ident, record in self._records.items():
            if record.assignment.worker == worker and record.state == "pending":
                self._settle(record)
                record.delivered = AnswerItem(ident, unavailable=reason)
                self._append(record.delivered)

    def answer_for(self, worker: str, question: GoldQuestion) -> str | float:
        """What ``worker`` answers to ``question`` (a pure function of seed, worker, question)."""
        return self.workers.answer_for(worker, question)

    # ------------------------------------------------------------------ handlers
    async def _post_assignments(self, request: web.Request) -> web.Response:
        assignments = parse_assignments(await _json_body(request))
        accepted: list[str] = []
        rejected: list[Rejection] = []
        for assignment in assignments:
            reason = self._admit(assignment)
            if reason is None:
                accepted.append(assignment.id)
            else:
                rejected.append(Rejection(assignment.id, reason))
        return web.json_response(SubmitResult(tuple(accepted), tuple(rejected)).to_json())

    async def _delete_assignment(self, request: web.Request) -> web.Response:
        ident = request.match_info["id"]
        record = self._records.get(ident)
        if record is None:
            return _error(404, f"no assignment {ident!r}")
        cancelled = record.state == "pending"
        if cancelled:
            self._settle(record, "cancelled")
            self.counts["cancelled"] += 1
        return web.json_response({"id": ident, "cancelled": cancelled})

    async def _get_answers(self, request: web.Request) -> web.Response:
        query = request.query
        if query.get("cursor") == "end":  # where a new client starts: no past answers
            return web.json_response(answers_body([], str(len(self._log))))
        cursor = _query_number(query.get("cursor", "0"), "cursor", int, len(self._log))
        limit = _query_number(query.get("limit", "100"), "limit", int, MAX_LIMIT)
        wait = _query_number(query.get("wait", "0"), "wait", float, _MAX_WAIT)
        if limit < 1:
            raise ApiFormatError("malformed query: limit must be at least 1")
        if cursor >= len(self._log) and wait > 0:
            await self._wait_for_answers(cursor, wait)
        items = self._log.page(cursor, limit)
        body = answers_body(self._shuffled(items), str(cursor + len(items)))
        return web.json_response(body)

    async def _put_webhook(self, request: web.Request) -> web.Response:
        config = parse_webhook_config(await _json_body(request))
        self._webhooks.register(config.url, config.secret)
        # The secret is never echoed back.
        return web.json_response({"url": config.url})

    # ------------------------------------------------------------------ assignments
    def _admit(self, assignment: Assignment) -> str | None:
        """None when ``assignment`` is accepted (a repeated id is accepted again), else why not.

        A repeated id whose answer is already in the stream gets it appended again: a client
        that starts over (a rebuilt oracle, a restarted process) from ``cursor=end`` still
        receives it, and clients deduplicate by id anyway.
        """
        known = self._records.get(assignment.id)
        if known is not None:
            if known.assignment != assignment:
                return f"conflict: id {assignment.id!r} already names another assignment"
            if known.delivered is not None:
                self.counts["redelivered"] += 1
                self._append(known.delivered)
            return None
        if assignment.worker not in self.workers.accuracies:
            return f"unknown worker {assignment.worker!r}"
        if assignment.worker in self._gone:
            return self._gone[assignment.worker]
        if assignment.question.id not in self.bank:
            return f"unknown question {assignment.question.id!r}"
        record = _Record(assignment, "pending")
        self._records[assignment.id] = record
        self.counts["assignments"] += 1
        if self.faults.silence_rate and self._fault_rng.random() < self.faults.silence_rate:
            self.counts["silenced"] += 1
            return None  # accepted, never answered
        question = self.bank.get(assignment.question.id)
        delay = self.workers.delay_for(assignment.worker, question)
        loop = asyncio.get_running_loop()
        record.timer = loop.call_later(delay, self._answer, record, question)
        return None

    def _answer(self, record: _Record, question: GoldQuestion) -> None:
        if record.state != "pending":
            return
        self._settle(record)
        worker = record.assignment.worker
        item = AnswerItem(record.assignment.id, answer=self.workers.answer_for(worker, question))
        record.delivered = item
        self._append(item)
        if self._fault_rng.random() < self.faults.duplicate_rate:
            self.counts["duplicates"] += 1
            asyncio.get_running_loop().call_later(_DUPLICATE_GAP, self._append, item)

    def _settle(self, record: _Record, state: str = "answered") -> None:
        record.state = state
        if record.timer is not None:
            record.timer.cancel()
            record.timer = None

    def _append(self, item: AnswerItem) -> None:
        self._log.append(item)
        self.counts["answers"] += 1

    async def _wait_for_answers(self, cursor: int, wait: float) -> None:
        deadline = asyncio.get_running_loop().time() + wait
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout_at(deadline):
                while cursor >= len(self._log) and not self._log.closing.is_set():
                    await self._log.grown_or_closing()

    def _shuffled(self, items: list[AnswerItem]) -> list[AnswerItem]:
        if self.faults.reorder and len(items) > 1:
            items = list(items)
            self._fault_rng.shuffle(items)
        return items

    # ------------------------------------------------------------------ shutdown
    async def _on_shutdown(self, app: web.Application) -> None:
        self._log.closing.set()
        for record in self._records.values():
            if record.timer is not None:
                record.timer.cancel()
        await self._webhooks.close()

    # ------------------------------------------------------------------ middleware
    @web.middleware
    async def _faults_middleware(
        self, request: web.Request, handler: Handler
    ) -> web.StreamResponse:
        """Authentication, then the faults: 429, 503, the handler, slow and timed-out replies."""
        self.counts["requests"] += 1
        if not self._authorised(request):
            self.counts["401"] += 1
            return _error(401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"})
        wait = self._bucket.wait()
        if wait > 0:
            self.counts["429"] += 1
            return _error(429, "rate limit exceeded", {"Retry-After": f"{wait:.3f}"})
        if self._fault_rng.random() < self.faults.error_rate:
            self.counts["503"] += 1
            return _error(503, "injected fault: service unavailable")
        try:
            response = await handler(request)
        except ApiFormatError as error:
            return _error(400, str(error))
        held = self._fault_rng.random() < self.faults.timeout_rate
        extra = self.faults.slow + (self.faults.timeout_delay if held else 0.0)
        if held:
            self.counts["timeouts"] += 1
        if extra > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(extra):
                    await self._log.closing.wait()
        return response

    def _authorised(self, request: web.Request) -> bool:
        if self._expected_auth is None:
            return True
        given = request.headers.get("Authorization", "").encode()
        return hmac.compare_digest(given, self._expected_auth)


async def start_service(
    service: GoldService, *, host: str = "127.0.0.1", port: int = 0
) -> tuple[web.AppRunner, str]:
    """Serve ``service`` on ``host:port`` (port 0: any free port); returns the runner (call
    ``await runner.cleanup()`` to stop) and the base URL."""
    runner = web.AppRunner(service.app(), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0]
    return runner, f"http://{_url_host(host)}:{bound[1]}"


# --------------------------------------------------------------------------- helpers
async def _json_body(request: web.Request) -> Any:
    try:
        return await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ApiFormatError("malformed request: the body is not JSON") from None


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error": message}, status=status, headers=headers)


def _query_number(text: str, name: str, kind: type[_N], ceiling: _N) -> _N:
    """A query parameter as a number in [0, ceiling] (the cursor may not run past the log)."""
    try:
        value = kind(text)
    except ValueError:
        raise ApiFormatError(f"malformed query: {name} must be a number, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise ApiFormatError(f"malformed query: {name} must be >= 0")
    if name == "cursor" and value > ceiling:
        raise ApiFormatError(f"malformed query: cursor {text} is beyond the answers")
    return min(value, ceiling)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
