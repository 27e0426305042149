"""The http oracle's calls to the service: one aiohttp session carrying the bearer token,
each call retried on transient failures (5xx, 429, timeouts, lost connections) with
exponential backoff and full jitter, every retry reported so that it is journaled."""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import math
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import aiohttp

from screener.errors import OracleError
from screener.oracles.http.protocol import ApiFormatError
from screener.oracles.http.settings import BACKOFF_CAP, HttpSettings

__all__ = ["GaveUp", "ServiceClient"]

_RETRY_AFTER_CAP = 120.0

#: Told of every retry: the pulls the call was for, and what failed.
RetryNoter = Callable[[Sequence[int], str], None]


class GaveUp(Exception):
    """A request failed for good (attempts exhausted, or a 4xx a retry will not fix)."""


class ServiceClient:
    """The service's API over one session, opened with the token read from the environment
    (the token lives only in the session's headers)."""

    def __init__(self, settings: HttpSettings, note_retry: RetryNoter, jitter: random.Random):
        self.settings = settings
        self._note_retry = note_retry
        self._jitter = jitter
        token = os.environ.get(settings.token_env) or None
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        self._session = aiohttp.ClientSession(headers=headers)

    async def close(self) -> None:
        await self._session.close()

    async def call(
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

        Raises GaveUp when attempts run out or on a 4xx, OracleError on 401/403, and
        ApiFormatError when a 2xx reply is not JSON.
        """
        settings = self.settings
        limit = aiohttp.ClientTimeout(total=timeout or settings.request_timeout)
        for attempt in range(1, settings.max_attempts + 1):
            retry_after = 0.0
            try:
                async with self._session.request(
                    method, settings.url + path, json=json_body, params=params, timeout=limit
                ) as response:
                    status = response.status
                    if 200 <= status < 300:
                        return await _json_reply(response)
                    if status in (401, 403):
                        raise OracleError(
                            f"{settings.url} refused the credentials (HTTP {status})",
                            f"set {settings.token_env} to the service's bearer token",
                        )
                    if status != 429 and status < 500:
                        text = (await response.text())[:200]
                        raise GaveUp(f"HTTP {status} from {method} {path}: {text}")
                    reason = f"HTTP {status}"
                    retry_after = _retry_after(response.headers.get("Retry-After"))
            except aiohttp.ClientError as error:
                reason = f"connection error ({type(error).__name__})"
            except TimeoutError:
                reason = f"no reply within {limit.total:g} s"
            if attempt == settings.max_attempts:
                raise GaveUp(f"gave up after {attempt} attempts: {reason}")
            self._note_retry(
                pull_ids, f"{reason}, attempt {attempt + 1} of {settings.max_attempts}"
            )
            await asyncio.sleep(max(retry_after, self.backoff_delay(attempt)))
        raise AssertionError("unreachable")  # pragma: no cover

    async def send_once(self, method: str, path: str, body: Any, timeout: float) -> None:
        """One attempt at a call whose failure changes nothing (best effort): errors ignored."""
        limit = aiohttp.ClientTimeout(total=timeout)
        with contextlib.suppress(aiohttp.ClientError, TimeoutError):
            response = await self._session.request(
                method, self.settings.url + path, json=body, timeout=limit
            )
            response.release()  # nothing to read: the call's effect is all

    def backoff_delay(self, attempt: int) -> float:
        """Exponential backoff with full jitter: uniform on [0, base * 2^(attempt-1)]."""
        ceiling = min(BACKOFF_CAP, self.settings.backoff * 2.0 ** (attempt - 1))
        return self._jitter.uniform(0.0, ceiling)


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
