"""The reference gold-question service: the API of docs/live-api.md over simulated workers.

Workers answer from a ``WorkerPool`` with accuracies and a ``GoldBank``: worker w answers
question q with its key with probability = w's accuracy, else wrongly; the draw is keyed by
(seed, w, q), so a question asked again (a retry, a resumed run) gets the same answer. Answers
arrive after a ``Latency`` delay keyed the same way.

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
import logging
import math
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import aiohttp
import numpy as np
from aiohttp import web

from screener.bank import GoldBank, GoldQuestion, Scoring, parse_number
from screener.crowd import WorkerPool
from screener.errors import ConfigError
from screener.oracles.http.protocol import (
    ANSWERS_PATH,
    ASSIGNMENTS_PATH,
    MAX_LIMIT,
    SIGNATURE_HEADER,
    WEBHOOK_PATH,
    AnswerItem,
    ApiFormatError,
    Assignment,
    Rejection,
    SubmitResult,
    answers_body,
    parse_assignments,
    parse_webhook_config,
    sign,
)
from screener.oracles.latency import Latency
from screener.simulation.hashing import worker_rng

__all__ = ["Faults", "GoldService", "arithmetic_bank", "start_service"]

log = logging.getLogger(__name__)

_ANSWER_STREAM = 21
_BANK_STREAM = 22
_MAX_WAIT = 60.0
_DUPLICATE_GAP = 0.01  # seconds between an answer and its second copy
_WEBHOOK_ATTEMPTS = 10
_WEBHOOK_BACKOFF = 0.05
_WEBHOOK_BACKOFF_CAP = 2.0

_N = TypeVar("_N", int, float)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True, slots=True)
class Faults:
    """How the service misbehaves (all off by default).

    - ``error_rate``: share of requests answered HTTP 503, decided before any processing.
    - ``timeout_rate``: share of requests processed normally whose response is then held
      ``timeout_delay`` seconds (longer than the client's timeout: it retries, same ids).
    - ``duplicate_rate``: share of answers delivered a second time.
    - ``silence_rate``: share of new assignments the worker never answers (they stay pending
      until cancelled; the client must time them out).
    - ``reorder``: answers within a page or webhook batch are shuffled.
    - ``slow``: extra seconds before every response.
    - ``rate_limit``: requests per second allowed (token bucket, burst of one second's
      worth); beyond it, HTTP 429 with ``Retry-After`` in decimal seconds. 0: no limit.
    """

    error_rate: float = 0.0
    timeout_rate: float = 0.0
    timeout_delay: float = 5.0
    duplicate_rate: float = 0.0
    silence_rate: float = 0.0
    reorder: bool = False
    slow: float = 0.0
    rate_limit: float = 0.0

    def __post_init__(self) -> None:
        for label in ("error_rate", "timeout_rate", "duplicate_rate", "silence_rate"):
            rate = getattr(self, label)
            if not 0.0 <= rate < 1.0:
                raise ConfigError(f"{label} must lie in [0, 1), got {rate}")
        for label in ("timeout_delay", "slow", "rate_limit"):
            value = getattr(self, label)
            if not (math.isfinite(value) and value >= 0.0):
                raise ConfigError(f"{label} must be a finite number >= 0, got {value}")


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
        self.accuracies = dict(zip(pool.workers, pool.require_accuracies(), strict=True))
        self.bank = bank
        self.latency = latency or Latency()
        self.faults = faults or Faults()
        self.seed = seed
        self.counts: Counter[str] = Counter()
        self._expected_auth = None if token is None else f"Bearer {token}".encode()
        self._arms = {worker: arm for arm, worker in enumerate(pool.workers)}
        self._positions = {q.id: index for index, q in enumerate(bank.questions)}
        self._keys = tuple(dict.fromkeys(q.key for q in bank.questions))
        self._gone: dict[str, str] = {}
        self._records: dict[str, _Record] = {}
        self._log: list[AnswerItem] = []
        self._grown = asyncio.Event()
        self._closing = asyncio.Event()
        self._fault_rng = random.Random(f"screener-service-faults-{seed}")
        self._tokens = self.faults.rate_limit
        self._refilled = time.monotonic()
        self._webhook: tuple[str, str] | None = None
        self._webhook_task: asyncio.Task[None] | None = None
        self._client: aiohttp.ClientSession | None = None

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
        rng = worker_rng(self.seed, _ANSWER_STREAM, f"{worker}\x1f{question.id}")
        if rng.random() < self.accuracies[worker]:
            return _as_number(question.key) if _numeric(question) else question.key
        return self._wrong_answer(question, rng)

    def delay_for(self, worker: str, question: GoldQuestion) -> float:
        arm, position = self._arms[worker], self._positions[question.id]
        return float(self.latency.delays(self.seed, [arm], [position])[0])

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
        items = self._log[cursor : cursor + limit]
        body = answers_body(self._shuffled(items), str(cursor + len(items)))
        return web.json_response(body)

    async def _put_webhook(self, request: web.Request) -> web.Response:
        config = parse_webhook_config(await _json_body(request))
        if config.url is None or config.secret is None:
            self._webhook = None
        else:
            self._webhook = (config.url, config.secret)
            if self._webhook_task is None or self._webhook_task.done():
                self._webhook_task = asyncio.create_task(self._deliver_webhooks(len(self._log)))
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
        if assignment.worker not in self.accuracies:
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
        delay = self.delay_for(assignment.worker, question)
        loop = asyncio.get_running_loop()
        record.timer = loop.call_later(delay, self._answer, record, question)
        return None

    def _answer(self, record: _Record, question: GoldQuestion) -> None:
        if record.state != "pending":
            return
        self._settle(record)
        worker = record.assignment.worker
        item = AnswerItem(record.assignment.id, answer=self.answer_for(worker, question))
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
        self._grown.set()
        self._grown = asyncio.Event()

    async def _wait_for_answers(self, cursor: int, wait: float) -> None:
        deadline = asyncio.get_running_loop().time() + wait
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout_at(deadline):
                while cursor >= len(self._log) and not self._closing.is_set():
                    await _first(self._grown.wait(), self._closing.wait())

    def _shuffled(self, items: list[AnswerItem]) -> list[AnswerItem]:
        if self.faults.reorder and len(items) > 1:
            items = list(items)
            self._fault_rng.shuffle(items)
        return items

    def _wrong_answer(self, question: GoldQuestion, rng: np.random.Generator) -> str | float:
        """A wrong answer of the kind the question expects (scored 0, or low when graded)."""
        key = parse_number(question.key)
        if question.scoring is Scoring.NUMERIC and key is not None:
            return _tidy(key + 10.0 * question.tolerance + 1.0)
        if question.scoring is Scoring.GRADED and key is not None:
            sign_ = 1.0 if rng.random() < 0.5 else -1.0
            return _tidy(key + sign_ * question.tolerance * (0.5 + rng.random()))
        others = [k for k in self._keys if question.score(k) == 0.0]
        if others:
            return others[int(rng.integers(len(others)))]
        return "wrong" if question.score("wrong") == 0.0 else "not " + question.key

    # ------------------------------------------------------------------ webhooks
    async def _deliver_webhooks(self, cursor: int) -> None:
        """POST every new answer to the webhook, in order, retrying failed batches."""
        while self._webhook is not None and not self._closing.is_set():
            if cursor >= len(self._log):
                await _first(self._grown.wait(), self._closing.wait())
                continue
            items = self._log[cursor : cursor + MAX_LIMIT]
            await self._post_batch(self._shuffled(items))
            cursor += len(items)

    async def _post_batch(self, items: list[AnswerItem]) -> None:
        body = json.dumps(answers_body(items)).encode()
        for attempt in range(1, _WEBHOOK_ATTEMPTS + 1):
            if self._webhook is None:
                return
            url, secret = self._webhook
            headers = {"Content-Type": "application/json", SIGNATURE_HEADER: sign(secret, body)}
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                async with self._session().post(url, data=body, headers=headers) as response:
                    self.counts["webhook_posts"] += 1
                    if 200 <= response.status < 300:
                        return
            backoff = min(_WEBHOOK_BACKOFF_CAP, _WEBHOOK_BACKOFF * 2.0 ** (attempt - 1))
            await asyncio.sleep(backoff)
        self.counts["webhook_dropped"] += len(items)
        log.warning("webhook: dropped %d answers after %d attempts", len(items), attempt)

    def _session(self) -> aiohttp.ClientSession:
        if self._client is None:
            self._client = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10.0))
        return self._client

    async def _on_shutdown(self, app: web.Application) -> None:
        self._closing.set()
        if self._webhook_task is not None:
            self._webhook_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._webhook_task
        for record in self._records.values():
            if record.timer is not None:
                record.timer.cancel()
        if self._client is not None:
            await self._client.close()

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
        wait = self._rate_limited()
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
                    await self._closing.wait()
        return response

    def _authorised(self, request: web.Request) -> bool:
        if self._expected_auth is None:
            return True
        given = request.headers.get("Authorization", "").encode()
        return hmac.compare_digest(given, self._expected_auth)

    def _rate_limited(self) -> float:
        """Seconds to wait when the token bucket is empty, else 0 (and a token is spent)."""
        rate = self.faults.rate_limit
        if rate <= 0:
            return 0.0
        now = time.monotonic()
        self._tokens = min(rate, self._tokens + (now - self._refilled) * rate)
        self._refilled = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0.0
        return (1.0 - self._tokens) / rate


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


def arithmetic_bank(n_questions: int = 200, *, seed: int = 0) -> GoldBank:
    """``n_questions`` questions "What is a + b?" (a, b in 1..99) with numeric keys, seeded."""
    if n_questions < 1:
        raise ConfigError(f"a bank needs at least 1 question, got {n_questions}")
    rng = worker_rng(seed, _BANK_STREAM, "arithmetic")
    pairs = rng.integers(1, 100, size=(n_questions, 2))
    width = len(str(n_questions))
    questions = tuple(
        GoldQuestion(f"q{i + 1:0{width}d}", f"What is {a} + {b}?", str(a + b), Scoring.NUMERIC)
        for i, (a, b) in enumerate(pairs.tolist())
    )
    return GoldBank(questions, f"arithmetic({n_questions}, seed={seed})")


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


async def _first(*waits: Awaitable[Any]) -> None:
    """Wait until the first of ``waits`` finishes; cancel the others."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


def _numeric(question: GoldQuestion) -> bool:
    return question.scoring in (Scoring.NUMERIC, Scoring.GRADED)


def _as_number(text: str) -> float:
    value = parse_number(text)
    assert value is not None  # the bank checks numeric keys
    return _tidy(value)


def _tidy(value: float) -> float:
    """Whole numbers as ints, so JSON says 42 rather than 42.0."""
    return int(value) if float(value).is_integer() else value


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
