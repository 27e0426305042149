"""The reference service's webhook delivery: every answer of the stream POSTed, in order and
signed, to the address a client registered; failed batches retried with capped backoff."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import Counter
from collections.abc import Callable

import aiohttp

from screener.oracles.http.protocol import (
    MAX_LIMIT,
    SIGNATURE_HEADER,
    AnswerItem,
    answers_body,
    sign,
)
from screener.service.answer_log import AnswerLog

__all__ = ["WebhookSender"]

log = logging.getLogger(__name__)

_WEBHOOK_ATTEMPTS = 10
_WEBHOOK_BACKOFF = 0.05
_WEBHOOK_BACKOFF_CAP = 2.0

#: How a batch is ordered before it leaves (the service's reorder fault).
Shuffle = Callable[[list[AnswerItem]], list[AnswerItem]]


class WebhookSender:
    """Feeds the registered webhook from ``answers``; counts posts and dropped answers."""

    def __init__(self, answers: AnswerLog, shuffle: Shuffle, counts: Counter[str]) -> None:
        self._answers = answers
        self._shuffle = shuffle
        self._counts = counts
        self._webhook: tuple[str, str] | None = None
        self._task: asyncio.Task[None] | None = None
        self._client: aiohttp.ClientSession | None = None

    def register(self, url: str | None, secret: str | None) -> None:
        """Deliver the answers from now on to ``url``, signed with ``secret``; either None
        stops delivery."""
        if url is None or secret is None:
            self._webhook = None
            return
        self._webhook = (url, secret)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._deliver(len(self._answers)))

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._client is not None:
            await self._client.close()

    async def _deliver(self, cursor: int) -> None:
        """POST every new answer to the webhook, in order, retrying failed batches."""
        while self._webhook is not None and not self._answers.closing.is_set():
            if cursor >= len(self._answers):
                await self._answers.grown_or_closing()
                continue
            items = self._answers.page(cursor, MAX_LIMIT)
            await self._post_batch(self._shuffle(items))
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
                    self._counts["webhook_posts"] += 1
                    if 200 <= response.status < 300:
                        return
            backoff = min(_WEBHOOK_BACKOFF_CAP, _WEBHOOK_BACKOFF * 2.0 ** (attempt - 1))
            await asyncio.sleep(backoff)
        self._counts["webhook_dropped"] += len(items)
        log.warning("webhook: dropped %d answers after %d attempts", len(items), attempt)

    def _session(self) -> aiohttp.ClientSession:
        if self._client is None:
            self._client = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10.0))
        return self._client
