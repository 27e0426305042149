"""The conformance suite against the http oracle and the reference service on 127.0.0.1.

Each check runs in its own event loop (``asyncio.run``), so the services run in a thread
with a loop of their own, as a real service would run in another process.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import pytest
from live_helpers import BANK, POOL

from screener.crowd import WorkerPool
from screener.oracles.http import HttpOracle
from screener.oracles.latency import Latency
from screener.service import Faults, GoldService, start_service
from screener.testing import OracleConformance


class _ServiceThread:
    """A GoldService served on 127.0.0.1 by a loop in a daemon thread."""

    def __init__(self, faults: Faults) -> None:
        self._faults = faults
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stopped: asyncio.Event | None = None
        self.url = ""
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._serve(),))

    async def _serve(self) -> None:
        service = GoldService(POOL, BANK, latency=Latency(), faults=self._faults, seed=7)
        runner, self.url = await start_service(service)
        self._stopped = asyncio.Event()
        self._ready.set()
        try:
            await self._stopped.wait()
        finally:
            await runner.cleanup()

    def __enter__(self) -> _ServiceThread:
        self._thread.start()
        assert self._ready.wait(10.0), "the reference service did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._stopped is not None
        self._loop.call_soon_threadsafe(self._stopped.set)
        self._thread.join(10.0)
        self._loop.close()


@pytest.fixture(scope="module")
def services() -> Iterator[tuple[str, str]]:
    """A service that answers every pull and one that never answers 30% of assignments."""
    with (
        _ServiceThread(Faults()) as prompt,
        _ServiceThread(Faults(silence_rate=0.3)) as silent,
    ):
        yield prompt.url, silent.url


class TestHttpOracleConformance(OracleConformance):
    pool: ClassVar[WorkerPool | None] = POOL
    settle: ClassVar[float] = 0.3
    urls: ClassVar[tuple[str, str]]

    @pytest.fixture(autouse=True)
    def _urls(self, services: tuple[str, str]) -> None:
        type(self).urls = services

    def make_oracle(self, pool: WorkerPool, options: Mapping[str, Any], seed: int) -> HttpOracle:
        url = self.urls[1] if options.get("silent") else self.urls[0]
        chosen = {key: value for key, value in options.items() if key != "silent"}
        return HttpOracle.from_options(pool, {"url": url, "poll_wait": 0.5, **chosen}, seed)

    options: ClassVar[dict[str, Any]] = {}
    silent_options: ClassVar[dict[str, Any]] = {"silent": True}
