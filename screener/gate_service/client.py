"""An asyncio client of the gate's HTTP API (docs/gate-api.md), as a platform drives it.

Every call is safe to repeat, so a call that fails on the way (a lost connection, a 503 while
the gate restarts, a timeout) is sent again, with backoff, until ``retry_for`` seconds have
passed: ``next`` always carries a request id (one is made when none is given), so a retry
gets the reply of the first request; a repeated answer is reported ``duplicate``, as is a
second label of one item by one worker (the first counts); reads are idempotent. A refusal
(4xx) is raised at once as ``GateApiError`` with the gate's reason. ``on_retry`` is told, once
per outage, what failed and until when it is retried.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from types import TracebackType
from typing import Any, Self

import aiohttp

from screener.gate_service.protocol import (
    ANSWERS_PATH,
    DECISIONS_PATH,
    FINAL_LABELS_PATH,
    ITEMS_PATH,
    LABELS_PATH,
    LEAVE_PATH,
    NEXT_PATH,
    STATUS_PATH,
    AnswerItem,
    GateApiError,
    ItemEntry,
    LabelItem,
)

__all__ = ["GateClient"]

_TRANSIENT = frozenset({429, 500, 502, 503, 504})
_BACKOFF = 0.05
_BACKOFF_CAP = 1.0


class GateClient:
    """Calls of one gate at ``url`` (``http://host:port``), with the bearer ``token``."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        retry_for: float = 30.0,
        timeout: float = 90.0,
        on_retry: Callable[[str], object] | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.retry_for = retry_for
        self.on_retry = on_retry  # told once per outage: what failed and until when it retries
        self._outage = False
        self._headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    # ------------------------------------------------------------------ the calls
    async def next(
        self, worker: str, request_id: str | None = None, *, items: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """Gold or task for ``worker``: the reply (kind, gold, question, payload, reason, and
        ``item``: the registered item to label, among ``items`` when given, the items the
        platform can show this worker)."""
        body: dict[str, Any] = {"worker": worker, "request_id": request_id or uuid.uuid4().hex}
        if items is not None:
            body["items"] = list(items)
        return await self._call("POST", NEXT_PATH, body)

    async def add_items(self, items: Sequence[ItemEntry]) -> int:
        """Register task items (checked whole: one bad item refuses them all); how many were
        new (an item registered already is left as it is, so a retry changes nothing)."""
        reply = await self._call("POST", ITEMS_PATH, {"items": [i.to_json() for i in items]})
        return int(reply["registered"])

    async def answers(self, items: Sequence[AnswerItem]) -> list[str]:
        """Hand gold answers back; each one's outcome: accepted, duplicate or late."""
        reply = await self._call("POST", ANSWERS_PATH, {"answers": [i.to_json() for i in items]})
        return [str(result["outcome"]) for result in reply["results"]]

    async def answer(
        self,
        gold: str,
        *,
        worker: str,
        reward: float | None = None,
        answer: str | float | None = None,
        item: str | None = None,
    ) -> str:
        """``worker``'s answer to its gold question ``gold``: its ``reward``, or the raw
        ``answer`` scored by the gate; with both (and the gold ``item`` without a bank) the
        answer checks the final labels' confidence."""
        return (await self.answers([AnswerItem(gold, worker, reward, answer, item)]))[0]

    async def labels(self, items: Sequence[LabelItem]) -> list[str]:
        """Report task labels; each one's outcome: accepted, or duplicate (the worker's first
        label of the item counts, so a retry after a lost reply changes nothing)."""
        reply = await self._call("POST", LABELS_PATH, {"labels": [i.to_json() for i in items]})
        return [str(result["outcome"]) for result in reply["results"]]

    async def leave(self, worker: str) -> bool:
        """``worker`` left; False when the gate did not know it or it had left already."""
        return bool((await self._call("POST", LEAVE_PATH, {"worker": worker}))["left"])

    async def decisions(
        self, cursor: int = -1, *, wait: float = 0.0, limit: int | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """The decisions after seq ``cursor`` (waiting up to ``wait`` s for one), and the
        cursor to pass next time."""
        return await self._stream(DECISIONS_PATH, "decisions", cursor, wait, limit)

    async def final_labels(
        self, cursor: int = -1, *, wait: float = 0.0, limit: int | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """The final-label entries after seq ``cursor`` (waiting up to ``wait`` s for one), and
        the cursor to pass next time; keep the last entry per item."""
        return await self._stream(FINAL_LABELS_PATH, "labels", cursor, wait, limit)

    async def follow(
        self, cursor: int = -1, *, wait: float = 10.0
    ) -> AsyncIterator[dict[str, Any]]:
        """Every decision after ``cursor``, each once, as they are made (for ever: cancel the
        task, or stop iterating, to end)."""
        while True:
            page, next_cursor = await self.decisions(cursor, wait=wait)
            for decision in page:
                if decision["seq"] > cursor:  # at least once: a repeat is skipped
                    cursor = int(decision["seq"])
                    yield decision
            cursor = max(cursor, next_cursor)

    async def status(self) -> dict[str, Any]:
        return await self._call("GET", STATUS_PATH)

    # ------------------------------------------------------------------ transport
    async def _stream(
        self, path: str, key: str, cursor: int, wait: float, limit: int | None
    ) -> tuple[list[dict[str, Any]], int]:
        """One read of a stream: its entries after ``cursor`` and the next cursor."""
        query = {"cursor": str(cursor), "wait": str(wait)}
        if limit is not None:
            query["limit"] = str(limit)
        reply = await self._call("GET", path, params=query)
        return list(reply[key]), int(reply["cursor"])

    async def _call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        params: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.retry_for
        attempt = 0
        while True:
            attempt += 1
            try:
                reply = await self._once(method, path, body, params)
                self._outage = False
                return reply
            except (aiohttp.ClientError, TimeoutError, _Transient) as error:
                if not self._outage and self.on_retry is not None:
                    until = time.strftime("%H:%M:%S", time.localtime(time.time() + self.retry_for))
                    self.on_retry(
                        f"the gate at {self.url} did not answer {method} {path} "
                        f"({error or type(error).__name__}): retrying until {until}"
                    )
                self._outage = True
                if loop.time() >= deadline:
                    raise GateApiError(
                        f"the gate at {self.url} did not answer {method} {path} for "
                        f"{self.retry_for:g} s: {error or type(error).__name__}",
                        503,
                    ) from None
            await asyncio.sleep(min(_BACKOFF_CAP, _BACKOFF * 2.0 ** (attempt - 1)))

    async def _once(
        self, method: str, path: str, body: dict[str, Any] | None, params: dict[str, str] | None
    ) -> dict[str, Any]:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self._timeout, headers=self._headers)
        async with self._session.request(
            method, self.url + path, json=body, params=params
        ) as response:
            try:
                reply: dict[str, Any] = await response.json(content_type=None)
            except ValueError:  # not JSON: a proxy's page, a truncated body
                reply = {"error": f"{response.status} {response.reason}"}
            if response.status in _TRANSIENT:
                raise _Transient(f"{response.status}: {reply.get('error', response.reason)}")
            if response.status >= 400:
                raise GateApiError(str(reply.get("error", response.reason)), response.status)
            return reply


class _Transient(Exception):
    """A reply worth trying again (the gate restarting, busy, or failing for now)."""
