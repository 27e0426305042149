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
import json
import random
import secrets
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Self

from aiohttp import web

from screener.crowd import WorkerPool
from screener.errors import ConfigError, OracleError
from screener.oracles.base import Answer, Oracle, OracleOption, PullRequest
from screener.oracles.http.client import GaveUp, ServiceClient
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
from screener.oracles.http.settings import HttpSettings

__all__ = ["NEEDS_BANK", "HttpOracle"]

NEEDS_BANK = "the http oracle needs a gold question bank"
_WEBHOOK_ROUTE = "/screener/webhook"
_CLOSE_GRACE = 1.0  # seconds close() gives outstanding cancellations


class HttpOracle(Oracle):
    """Gold questions put to workers through a service that speaks the screener API.

    Its options are ``OPTIONS``, held checked in one ``HttpSettings``; the seed drives the
    backoff's jitter.
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
        self, settings: HttpSettings, *, seed: int = 0, workers: Iterable[str] = ()
    ) -> None:
        self.settings = settings
        self.seed = seed
        # The pool's workers the service has not refused (for a reason other than "gone") while
        # it accepted nothing: once none is left, no answer can come (a configuration error).
        self._not_refused: set[str] | None = set(workers) or None
        self._jitter = random.Random(f"screener-http-backoff-{seed}")
        self._client: ServiceClient | None = None
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
        return cls(HttpSettings.from_options(options), seed=seed, workers=pool.workers)

    def describe(self) -> dict[str, Any]:
        return self.settings.as_options()

    def __repr__(self) -> str:
        s = self.settings
        return (
            f"HttpOracle(url={s.url!r}, delivery={s.delivery!r}, "
            f"namespace={s.namespace!r}, token_env={s.token_env!r})"
        )

    @property
    def webhook_address(self) -> str | None:
        """Where the service POSTs answers (webhook delivery, once open), else None."""
        return self._webhook_address

    # -------------------------------------------------------------------- lifecycle
    async def open(self) -> None:
        if self._client is not None:
            return
        self._client = ServiceClient(self.settings, self.note_retry, self._jitter)
        self._fatal = None
        try:
            if self.settings.delivery == "webhook":
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
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    # -------------------------------------------------------------------- the contract
    async def submit(self, requests: Sequence[PullRequest]) -> None:
        self._check_usable()
        asks = [r for r in requests if r.question is not None]
        self._push(Answer(r.pull_id, error=NEEDS_BANK) for r in requests if r.question is None)
        batch = self.settings.batch
        for start in range(0, len(asks), batch):
            self._spawn(self._post_assignments(asks[start : start + batch]), self._tasks)

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
        if self._client is None:
            return
        for pull_id in pull_ids:
            self._spawn(self._delete(self._assignment_id(pull_id)), self._cancels)

    # -------------------------------------------------------------------- submitting
    async def _post_assignments(self, requests: Sequence[PullRequest]) -> None:
        ids = {self._assignment_id(r.pull_id): r for r in requests}
        body = {"assignments": [self._assignment(ident, r).to_json() for ident, r in ids.items()]}
        pull_ids = [r.pull_id for r in requests]
        try:
            data = await self._api.call("POST", ASSIGNMENTS_PATH, pull_ids, json_body=body)
            result = parse_submit_result(data, list(ids))
        except (GaveUp, ApiFormatError) as error:
            self._push(Answer(pull_id, error=str(error)) for pull_id in pull_ids)
            return
        if result.accepted:
            self._not_refused = None  # the service knows some worker: refusals are its own
        answers = []
        for rejection in result.rejected:
            request = ids.get(rejection.id)
            if request is None:
                continue  # not one of ours: nothing to tell
            if rejection.reason.startswith("unavailable"):
                answers.append(Answer(request.pull_id, unavailable=rejection.reason))
            else:
                answers.append(Answer(request.pull_id, error=f"rejected: {rejection.reason}"))
                self._refused(request.worker, rejection.reason)
        self._push(answers)

    def _refused(self, worker: str, reason: str) -> None:
        """A service that refuses every worker of the pool and accepts nothing is the wrong
        service, or the pool is not its: the run stops with one line rather than ending as
        if its workers had run out of questions."""
        if self._not_refused is None:
            return
        self._not_refused.discard(worker)
        if not self._not_refused:
            raise OracleError(
                f"the service at {self.settings.url} refused every worker of the pool and "
                f"accepted no question (the last: {reason})",
                "check that the pool's worker ids are the service's, and the url",
            )

    def _assignment(self, ident: str, request: PullRequest) -> Assignment:
        question = request.question
        assert question is not None
        return Assignment(ident, request.worker, Question(question.id, question.payload))

    async def _delete(self, ident: str) -> None:
        """Cancel one assignment: a single attempt, failures ignored (best effort)."""
        path = assignment_path(ident)
        await self._api.send_once("DELETE", path, None, self.settings.request_timeout)

    # -------------------------------------------------------------------- receiving
    async def _end_cursor(self) -> str:
        """The cursor at the end of the answer stream: this run's answers all come after it."""
        try:
            data = await self._api.call("GET", ANSWERS_PATH, (), params={"cursor": "end"})
            return parse_answer_page(data).cursor
        except GaveUp as error:
            raise OracleError(
                f"cannot reach the answer stream of {self.settings.url}: {error}"
            ) from None

    async def _poll_forever(self) -> None:
        settings = self.settings
        params = {"limit": str(MAX_LIMIT), "wait": f"{settings.poll_wait:g}"}
        timeout = settings.poll_wait + settings.request_timeout
        malformed_in_a_row = 0
        while True:
            assert self._cursor is not None
            try:
                data = await self._api.call(
                    "GET", ANSWERS_PATH, (), params={**params, "cursor": self._cursor},
                    timeout=timeout,
                )  # fmt: skip
                page = parse_answer_page(data)
            except GaveUp as error:
                raise OracleError(f"cannot read answers from {settings.url}: {error}") from None
            except ApiFormatError as error:
                malformed_in_a_row += 1
                if malformed_in_a_row >= settings.max_attempts:
                    raise
                self.note_retry((), f"{error}, attempt {malformed_in_a_row + 1}")
                await asyncio.sleep(self._api.backoff_delay(malformed_in_a_row))
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
        settings = self.settings
        site = web.TCPSite(runner, settings.webhook_host, settings.webhook_port)
        await site.start()
        port = runner.addresses[0][1]
        host = settings.webhook_host
        host = f"[{host}]" if ":" in host else host
        self._webhook_address = settings.webhook_url or f"http://{host}:{port}{_WEBHOOK_ROUTE}"
        self._webhook_secret = secrets.token_hex(32)
        body = {"url": self._webhook_address, "secret": self._webhook_secret}
        try:
            await self._api.call("PUT", WEBHOOK_PATH, (), json_body=body)
        except GaveUp as error:
            raise OracleError(f"cannot register the webhook with {settings.url}: {error}") from None

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
        if self._client is not None:
            timeout = min(self.settings.request_timeout, 2.0)
            await self._client.send_once("PUT", WEBHOOK_PATH, {"url": None}, timeout)
        runner, self._webhook_runner = self._webhook_runner, None
        self._webhook_secret = None
        self._webhook_address = None
        if runner is not None:
            await runner.cleanup()

    # -------------------------------------------------------------------- plumbing
    @property
    def _api(self) -> ServiceClient:
        assert self._client is not None, "the oracle is open while its tasks run"
        return self._client

    def _assignment_id(self, pull_id: int) -> str:
        return f"{self.settings.namespace}-{pull_id}"

    def _pull_id(self, ident: str) -> int | None:
        prefix = self.settings.namespace + "-"
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
        if self._client is None:
            raise OracleError("the http oracle is not open", "use it as `async with oracle:`")
