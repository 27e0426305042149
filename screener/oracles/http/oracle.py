"""An oracle that asks a live gold-question service over HTTP (API: docs/live-api.md).

Each pull becomes an assignment ``<namespace>-<pull id>`` (the namespace keeps two runs on one
service apart and is journaled, so a resumed run keeps it). Answers come back by long polling
``GET /v1/answers`` (default) or on a webhook that screener serves and the service signs with
HMAC-SHA256. Transient failures (5xx, 429, timeouts, lost connections) are retried with
exponential backoff and full jitter (seeded); every retry is journaled as a "retried" event.

The bearer token is read from an environment variable at ``open`` and lives only in the HTTP
session's headers: it never reaches ``describe()``, ``repr``, logs, errors or the journal.

Not from the papers: this is how a run reaches real workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import math
import os
import random
import secrets
import time
import uuid
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Self
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web

from screener.bank import parse_number
from screener.crowd import WorkerPool
from screener.errors import ConfigError, OracleError
from screener.oracles.base import Answer, Oracle, OracleOption, PullRequest
from screener.oracles.http.protocol import (
    ANSWERS_PATH,
    ASSIGNMENTS_PATH,
    MAX_LIMIT,
    SIGNATURE_HEADER,
    WEBHOOK_PATH,
    AnswerItem,
    ApiFormatError,
    Assignment,
    Malformed,
    Question,
    assignment_path,
    parse_answer_items,
    parse_answer_page,
    parse_submit_result,
    verify,
)

__all__ = ["NEEDS_BANK", "HttpOracle"]

NEEDS_BANK = "the http oracle needs a gold question bank"
_DELIVERIES = ("poll", "webhook")
_WEBHOOK_ROUTE = "/screener/webhook"
_BACKOFF_CAP = 30.0
_RETRY_AFTER_CAP = 120.0
_CLOSE_GRACE = 1.0  # seconds close() gives outstanding cancellations


class _GaveUp(Exception):
    """A request failed for good (attempts exhausted, or a 4xx a retry will not fix)."""


class HttpOracle(Oracle):
    """Gold questions put to workers through a service that speaks the screener API.

    Options: ``url`` (required), ``token_env`` (default SCREENER_TOKEN; unset or empty: no
    Authorization header), ``delivery`` (poll | webhook), ``poll_wait`` (long-poll seconds),
    ``batch`` (assignments per POST), ``request_timeout`` (seconds), ``max_attempts``,
    ``backoff`` (base seconds), ``webhook_host``/``webhook_port`` (where screener listens,
    127.0.0.1:0 by default), ``webhook_url`` (the address the service should call, when it is
    not http://host:port/...), ``namespace`` (assignment id prefix; generated when absent).
    """

    name = "http"
    OPTIONS: ClassVar[tuple[OracleOption, ...]] = (
        OracleOption("url", "the service's base URL", required=True),
        OracleOption("token_env", "environment variable holding the bearer token (unset or "
                     "empty: no Authorization header)", "SCREENER_TOKEN"),
        OracleOption("delivery", "poll (long-poll the answer stream) or webhook (the service "
                     "calls us)", "poll"),
        OracleOption("poll_wait", "long-poll seconds", 10.0),
        OracleOption("batch", "assignments per POST", 100),
        OracleOption("request_timeout", "seconds per request", 10.0),
        OracleOption("max_attempts", "tries per request (5xx, 429, timeouts)", 5),
        OracleOption("backoff", "base seconds between tries (doubling, capped)", 0.2),
        OracleOption("webhook_host", "where screener listens for webhooks", "127.0.0.1"),
        OracleOption("webhook_port", "port for webhooks (0: any free one)", 0),
        OracleOption("webhook_url", "the address the service should call, when it is not "
                     "http://webhook_host:webhook_port/..."),
        OracleOption("namespace", "assignment id prefix (default: generated per run)"),
    )  # fmt: skip

    def __init__(
        self,
        url: str,
        *,
        namespace: str,
        token_env: str = "SCREENER_TOKEN",
        delivery: str = "poll",
        poll_wait: float = 10.0,
        batch: int = 100,
        request_timeout: float = 10.0,
        max_attempts: int = 5,
        backoff: float = 0.2,
        webhook_host: str = "127.0.0.1",
        webhook_port: int = 0,
        webhook_url: str | None = None,
        seed: int = 0,
    ) -> None:
        self.url = _check_url(url, "url")
        self.namespace = _check_namespace(namespace)
        self.token_env = token_env
        self.delivery = _check_choice(delivery, "delivery", _DELIVERIES)
        self.poll_wait = _check_range(poll_wait, "poll_wait", 0.0, 60.0)
        self.batch = int(_check_range(batch, "batch", 1, MAX_LIMIT))
        self.request_timeout = _check_range(request_timeout, "request_timeout", 1e-3, 3600.0)
        self.max_attempts = int(_check_range(max_attempts, "max_attempts", 1, 100))
        self.backoff = _check_range(backoff, "backoff", 0.0, _BACKOFF_CAP)
        self.webhook_host = webhook_host
        self.webhook_port = int(_check_range(webhook_port, "webhook_port", 0, 65535))
        self.webhook_url = None if webhook_url is None else _check_url(webhook_url, "webhook_url")
        self.seed = seed
        self._jitter = random.Random(f"screener-http-backoff-{seed}")
        self._session: aiohttp.ClientSession | None = None
        self._ready: list[Answer] = []
        self._changed = asyncio.Event()
        self._fatal: OracleError | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._cancels: set[asyncio.Task[None]] = set()
        self._cancelled: set[int] = set()
        self._cursor: str | None = None
        self._webhook_runner: web.AppRunner | None = None
        self._webhook_secret: str | None = None
        self._webhook_address: str | None = None

    @classmethod
    def from_options(cls, pool: WorkerPool, options: Mapping[str, Any], seed: int) -> Self:
        cls.check_options(options)
        if pool.bank is None:
            raise ConfigError(NEEDS_BANK, "give the pool a question bank (--questions)")
        kwargs: dict[str, Any] = {
            "namespace": str(options.get("namespace") or uuid.uuid4().hex[:12]),
            "token_env": str(options.get("token_env", "SCREENER_TOKEN")),
            "delivery": str(options.get("delivery", "poll")),
            "webhook_host": str(options.get("webhook_host", "127.0.0.1")),
            "webhook_url": options.get("webhook_url"),
        }
        for key, kind in _NUMBERS.items():
            if options.get(key) is not None:
                kwargs[key] = _number(options[key], key, kind)
        return cls(str(options["url"]), seed=seed, **kwargs)

    def describe(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "url": self.url,
            "token_env": self.token_env,
            "delivery": self.delivery,
            "poll_wait": self.poll_wait,
            "batch": self.batch,
            "request_timeout": self.request_timeout,
            "max_attempts": self.max_attempts,
            "backoff": self.backoff,
            "webhook_host": self.webhook_host,
            "webhook_port": self.webhook_port,
            "namespace": self.namespace,
        }
        if self.webhook_url is not None:
            options["webhook_url"] = self.webhook_url
        return options

    def __repr__(self) -> str:
        return (
            f"HttpOracle(url={self.url!r}, delivery={self.delivery!r}, "
            f"namespace={self.namespace!r}, token_env={self.token_env!r})"
        )

    @property
    def webhook_address(self) -> str | None:
        """Where the service POSTs answers (webhook delivery, once open), else None."""
        return self._webhook_address

    # -------------------------------------------------------------------- lifecycle
    async def open(self) -> None:
        if self._session is not None:
            return
        token = os.environ.get(self.token_env) or None
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        self._session = aiohttp.ClientSession(headers=headers)
        self._fatal = None
        try:
            if self.delivery == "webhook":
                await self._start_webhook()
            else:
                self._cursor = await self._end_cursor()
                self._spawn(self._poll_forever(), self._tasks)
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        if self._cancels:
            await asyncio.wait(self._cancels, timeout=_CLOSE_GRACE)
        for task in [*self._tasks, *self._cancels]:
            task.cancel()
        for task in [*self._tasks, *self._cancels]:
            with contextlib.suppress(BaseException):
                await task
        self._tasks.clear()
        self._cancels.clear()
        if self._webhook_runner is not None:
            await self._stop_webhook()
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    # -------------------------------------------------------------------- the contract
    async def submit(self, requests: Sequence[PullRequest]) -> None:
        self._check_usable()
        asks = [r for r in requests if r.question is not None]
        self._push(Answer(r.pull_id, error=NEEDS_BANK) for r in requests if r.question is None)
        for start in range(0, len(asks), self.batch):
            self._spawn(self._post_assignments(asks[start : start + self.batch]), self._tasks)

    async def receive(self) -> Sequence[Answer]:
        while True:
            self._check_usable()
            if self._ready:
                ready, self._ready = self._ready, []
                return ready
            self._changed.clear()
            await self._changed.wait()

    async def cancel(self, pull_ids: Sequence[int]) -> None:
        # The DELETE is best effort (the answer may be on its way), so the oracle also drops
        # whatever still arrives for these pulls: after cancel() nothing is sent for them.
        self._cancelled.update(pull_ids)
        self._ready = [a for a in self._ready if a.pull_id not in self._cancelled]
        if self._session is None:
            return
        for pull_id in pull_ids:
            self._spawn(self._delete(self._assignment_id(pull_id)), self._cancels)

    # -------------------------------------------------------------------- submitting
    async def _post_assignments(self, requests: Sequence[PullRequest]) -> None:
        ids = {self._assignment_id(r.pull_id): r for r in requests}
        body = {"assignments": [self._assignment(ident, r).to_json() for ident, r in ids.items()]}
        pull_ids = [r.pull_id for r in requests]
        try:
            data = await self._call("POST", ASSIGNMENTS_PATH, pull_ids, json_body=body)
            result = parse_submit_result(data, list(ids))
        except (_GaveUp, ApiFormatError) as error:
            self._push(Answer(pull_id, error=str(error)) for pull_id in pull_ids)
            return
        answers = []
        for rejection in result.rejected:
            request = ids.get(rejection.id)
            if request is None:
                continue  # not one of ours: nothing to tell
            if rejection.reason.startswith("unavailable"):
                answers.append(Answer(request.pull_id, unavailable=rejection.reason))
            else:
                answers.append(Answer(request.pull_id, error=f"rejected: {rejection.reason}"))
        self._push(answers)

    def _assignment(self, ident: str, request: PullRequest) -> Assignment:
        question = request.question
        assert question is not None
        return Assignment(ident, request.worker, Question(question.id, question.payload))

    async def _delete(self, ident: str) -> None:
        """Cancel one assignment: a single attempt, failures ignored (best effort)."""
        assert self._session is not None
        timeout = aiohttp.ClientTimeout(total=self.request_timeout)
        with contextlib.suppress(aiohttp.ClientError, TimeoutError):
            async with self._session.delete(self.url + assignment_path(ident), timeout=timeout):
                pass

    # -------------------------------------------------------------------- receiving
    async def _end_cursor(self) -> str:
        """The cursor at the end of the answer stream: this run's answers all come after it."""
        try:
            data = await self._call("GET", ANSWERS_PATH, (), params={"cursor": "end"})
            return parse_answer_page(data).cursor
        except _GaveUp as error:
            raise OracleError(f"cannot reach the answer stream of {self.url}: {error}") from None

    async def _poll_forever(self) -> None:
        params = {"limit": str(MAX_LIMIT), "wait": f"{self.poll_wait:g}"}
        timeout = self.poll_wait + self.request_timeout
        malformed_in_a_row = 0
        while True:
            assert self._cursor is not None
            try:
                data = await self._call(
                    "GET", ANSWERS_PATH, (), params={**params, "cursor": self._cursor},
                    timeout=timeout,
                )  # fmt: skip
                page = parse_answer_page(data)
            except _GaveUp as error:
                raise OracleError(f"cannot read answers from {self.url}: {error}") from None
            except ApiFormatError as error:
                malformed_in_a_row += 1
                if malformed_in_a_row >= self.max_attempts:
                    raise
                self.note_retry((), f"{error}, attempt {malformed_in_a_row + 1}")
                await asyncio.sleep(self._backoff_delay(malformed_in_a_row))
                continue
            malformed_in_a_row = 0
            self._cursor = page.cursor
            self._accept(page.items, page.malformed)

    def _accept(self, items: Iterable[AnswerItem], malformed: Iterable[Malformed]) -> None:
        """Queue the answers to this run's assignments; other namespaces are skipped."""
        answers = []
        for item in items:
            pull_id = self._pull_id(item.id)
            if pull_id is None:
                continue
            if item.unavailable is not None:
                answers.append(Answer(pull_id, unavailable=item.unavailable))
            else:
                answers.append(Answer(pull_id, response=item.answer))
        for note in malformed:
            pull_id = None if note.id is None else self._pull_id(note.id)
            if pull_id is not None:
                answers.append(Answer(pull_id, error=note.reason))
        self._push(answers)

    # -------------------------------------------------------------------- webhook
    async def _start_webhook(self) -> None:
        app = web.Application()
        app.router.add_post(_WEBHOOK_ROUTE, self._on_webhook)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        self._webhook_runner = runner
        site = web.TCPSite(runner, self.webhook_host, self.webhook_port)
        await site.start()
        port = runner.addresses[0][1]
        host = f"[{self.webhook_host}]" if ":" in self.webhook_host else self.webhook_host
        self._webhook_address = self.webhook_url or f"http://{host}:{port}{_WEBHOOK_ROUTE}"
        self._webhook_secret = secrets.token_hex(32)
        body = {"url": self._webhook_address, "secret": self._webhook_secret}
        try:
            await self._call("PUT", WEBHOOK_PATH, (), json_body=body)
        except _GaveUp as error:
            raise OracleError(f"cannot register the webhook with {self.url}: {error}") from None

    async def _on_webhook(self, request: web.Request) -> web.Response:
        body = await request.read()
        secret = self._webhook_secret
        if secret is None or not verify(secret, body, request.headers.get(SIGNATURE_HEADER)):
            return web.json_response({"error": "bad signature"}, status=401)
        try:
            items, malformed = parse_answer_items(json.loads(body))
        except (ValueError, ApiFormatError):
            return web.json_response({"error": "malformed answer batch"}, status=400)
        self._accept(items, malformed)
        return web.json_response({"received": len(items)})

    async def _stop_webhook(self) -> None:
        """Unregister (one attempt, best effort) and stop listening."""
        if self._session is not None:
            timeout = aiohttp.ClientTimeout(total=min(self.request_timeout, 2.0))
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                async with self._session.put(
                    self.url + WEBHOOK_PATH, json={"url": None}, timeout=timeout
                ):
                    pass
        runner, self._webhook_runner = self._webhook_runner, None
        self._webhook_secret = None
        self._webhook_address = None
        if runner is not None:
            await runner.cleanup()

    # -------------------------------------------------------------------- HTTP with retries
    async def _call(
        self,
        method: str,
        path: str,
        pull_ids: Sequence[int],
        *,
        json_body: Any = None,
        params: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """One API call, retried on 5xx, 429, timeouts and connection errors; the JSON reply.

        Raises _GaveUp when attempts run out or on a 4xx, OracleError on 401/403, and
        ApiFormatError when a 2xx reply is not JSON.
        """
        session = self._session
        assert session is not None
        limit = aiohttp.ClientTimeout(total=timeout or self.request_timeout)
        for attempt in range(1, self.max_attempts + 1):
            retry_after = 0.0
            try:
                async with session.request(
                    method, self.url + path, json=json_body, params=params, timeout=limit
                ) as response:
                    status = response.status
                    if 200 <= status < 300:
                        return await _json_reply(response)
                    if status in (401, 403):
                        raise OracleError(
                            f"{self.url} refused the credentials (HTTP {status})",
                            f"set {self.token_env} to the service's bearer token",
                        )
                    if status != 429 and status < 500:
                        text = (await response.text())[:200]
                        raise _GaveUp(f"HTTP {status} from {method} {path}: {text}")
                    reason = f"HTTP {status}"
                    retry_after = _retry_after(response.headers.get("Retry-After"))
            except aiohttp.ClientError as error:
                reason = f"connection error ({type(error).__name__})"
            except TimeoutError:
                reason = f"no reply within {limit.total:g} s"
            if attempt == self.max_attempts:
                raise _GaveUp(f"gave up after {attempt} attempts: {reason}")
            self.note_retry(pull_ids, f"{reason}, attempt {attempt + 1} of {self.max_attempts}")
            await asyncio.sleep(max(retry_after, self._backoff_delay(attempt)))
        raise AssertionError("unreachable")  # pragma: no cover

    def _backoff_delay(self, attempt: int) -> float:
        """Exponential backoff with full jitter: uniform on [0, base * 2^(attempt-1)]."""
        ceiling = min(_BACKOFF_CAP, self.backoff * 2.0 ** (attempt - 1))
        return self._jitter.uniform(0.0, ceiling)

    # -------------------------------------------------------------------- plumbing
    def _assignment_id(self, pull_id: int) -> str:
        return f"{self.namespace}-{pull_id}"

    def _pull_id(self, ident: str) -> int | None:
        prefix = self.namespace + "-"
        rest = ident[len(prefix) :] if ident.startswith(prefix) else ""
        return int(rest) if rest.isdigit() and rest.isascii() else None

    def _push(self, answers: Iterable[Answer]) -> None:
        before = len(self._ready)
        self._ready.extend(a for a in answers if a.pull_id not in self._cancelled)
        if len(self._ready) > before:
            self._changed.set()

    def _spawn(self, work: Coroutine[Any, Any, None], into: set[asyncio.Task[None]]) -> None:
        task = asyncio.create_task(work)
        into.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._cancels.discard(task)
        if task.cancelled() or task.exception() is None:
            return
        error = task.exception()
        self._fatal = (
            error
            if isinstance(error, OracleError)
            else OracleError(f"the http oracle failed: {type(error).__name__}: {error}")
        )
        self._changed.set()

    def _check_usable(self) -> None:
        if self._fatal is not None:
            raise self._fatal
        if self._session is None:
            raise OracleError("the http oracle is not open", "use it as `async with oracle:`")


# ------------------------------------------------------------------------ option checks
_NUMBERS: dict[str, type[int] | type[float]] = {
    "poll_wait": float,
    "batch": int,
    "request_timeout": float,
    "max_attempts": int,
    "backoff": float,
    "webhook_port": int,
}


def _number(value: object, name: str, kind: type[int] | type[float]) -> float:
    number = None if isinstance(value, bool) else parse_number(value)
    if number is None:
        raise ConfigError(f"http oracle option {name} must be a number, got {value!r}")
    if kind is int:
        if not number.is_integer():
            raise ConfigError(f"http oracle option {name} must be a whole number, got {value!r}")
        return int(number)
    return number


def _check_range(value: float, name: str, low: float, high: float) -> float:
    if not (math.isfinite(value) and low <= value <= high):
        raise ConfigError(f"http oracle option {name} must lie in [{low:g}, {high:g}], got {value}")
    return value


def _check_choice(value: str, name: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ConfigError(f"http oracle option {name} is {value!r}", f"use {' or '.join(choices)}")
    return value


def _check_url(url: str, name: str) -> str:
    parts = urlsplit(str(url))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"http oracle option {name} is not an http(s) URL: {url!r}")
    if parts.username is not None or parts.password is not None:
        # Said without echoing the URL: it holds a credential.
        raise ConfigError(
            f"http oracle option {name} must not carry credentials",
            "put the token in the environment variable named by token_env",
        )
    return str(url).rstrip("/")


def _check_namespace(namespace: str) -> str:
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
    if not namespace or len(namespace) > 64 or not set(namespace) <= allowed:
        raise ConfigError(
            f"http oracle namespace {namespace!r} is not usable",
            "use 1-64 letters, digits, '_', '.' or '-'",
        )
    return namespace


async def _json_reply(response: aiohttp.ClientResponse) -> Any:
    try:
        return await response.json(content_type=None)
    except (ValueError, UnicodeDecodeError):
        raise ApiFormatError(f"malformed reply to {response.method}: not JSON") from None


def _retry_after(value: str | None) -> float:
    """Seconds from a Retry-After header (decimal seconds or an HTTP date), capped; 0 if none."""
    if not value:
        return 0.0
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return 0.0
        seconds = when.timestamp() - time.time()
    return min(_RETRY_AFTER_CAP, max(0.0, seconds)) if math.isfinite(seconds) else 0.0
