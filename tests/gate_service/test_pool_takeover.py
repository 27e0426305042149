"""Two ``screener gate --pool`` processes on one run database (SQLite and PostgreSQL): each
serves about half the shards; a seeded crowd goes through both with a client that follows
redirects and resends on failure; kill -9 of either mid-stream, the other takes its shards
over, the client's resends complete, and every reply the client got is in the journal of its
shard exactly once."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import numpy as np
import pytest
from gate_helpers import start_gate, stop_gate

from screener.gate_service.sharding import shard_of
from screener.journal import EventKind, Journal
from screener.journal.pools import PoolStore

SHARDS = 4
SETTINGS = ("--policy", "first", "--max-unscreened", "0", "--audit-rate", "0", "-p", "pilot=2")
#: The longest a resend goes on: a takeover takes about one look of the pool (1 s).
RESEND_SECONDS = 30.0


class Client:
    """A platform's client: posts to any process of the pool, follows 307s, resends the same
    request (same request id) to the next process on a connection error or a 503."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        self.replies: list[tuple[str, str, dict[str, Any]]] = []  # (worker, request id, reply)
        self.answered: list[str] = []  # gold ids answered, each once

    async def post(self, http: aiohttp.ClientSession, path: str, body: object) -> Any:
        deadline, turn = time.monotonic() + RESEND_SECONDS, 0
        while time.monotonic() < deadline:
            url = self.urls[turn % len(self.urls)]
            turn += 1
            try:
                async with http.post(url + path, json=body) as response:
                    if response.status == 200:
                        return await response.json()
                    assert response.status == 503, await response.text()
            except aiohttp.ClientConnectionError:
                pass
            await asyncio.sleep(0.2)
        raise AssertionError(f"{path} {body} got no reply in {RESEND_SECONDS} s")

    async def worker(self, http: aiohttp.ClientSession, worker: str, accuracy: float) -> None:
        rng = np.random.default_rng(abs(hash(worker)) % 2**32)
        for step in range(6):
            request_id = f"{worker}-{step}"
            reply = await self.post(http, "/v1/next", {"worker": worker, "request_id": request_id})
            self.replies.append((worker, request_id, reply))
            if reply["kind"] == "gold":
                answer = {"gold": reply["gold"], "worker": worker,
                          "reward": float(rng.random() < accuracy)}  # fmt: skip
                result = await self.post(http, "/v1/answers", answer)
                # "duplicate": a resend of an answer used before its reply was lost (kill -9)
                assert result["results"][0]["outcome"] in ("accepted", "duplicate")
                self.answered.append(reply["gold"])


def _pool(url: str) -> Any:
    import urllib.request

    with urllib.request.urlopen(url + "/v1/pool", timeout=5) as response:
        return json.loads(response.read())


def _wait_for(check: Any, what: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"not in {seconds} s: {what}")


def _journaled(db: str) -> tuple[dict[str, list[Any]], list[str]]:
    """Each shard run's requested events by (worker, request id, gold), and answered golds."""
    requested: dict[str, list[Any]] = {}
    answered: list[str] = []
    with Journal(db, create=False) as journal:
        pool = PoolStore(journal).find("p")
        assert pool is not None
        for shard, run_id in enumerate(pool.runs):
            for event in journal.events(run_id):
                if event.kind is EventKind.REQUESTED:
                    assert event.worker is not None and shard_of(event.worker, SHARDS) == shard
                    gold = json.loads(event.response or "{}")["gold"]
                    requested.setdefault(f"{event.worker}/{event.detail}", []).append(gold)
                elif event.kind is EventKind.ANSWERED:
                    answered.append(str(event.detail))
    return requested, answered


@pytest.mark.subprocess
@pytest.mark.parametrize("victim", ["first", "second"])
async def test_kill_9_of_either_process_loses_and_doubles_nothing(
    tmp_path: Path, database_url: str, victim: str
) -> None:
    first, url_a = start_gate(tmp_path, "--pool", "p", "--shards", str(SHARDS),
                              "--db", database_url, *SETTINGS)  # fmt: skip
    processes: list[subprocess.Popen[str]] = [first]
    try:
        _wait_for(lambda: _pool(url_a)["owners"] == [url_a] * SHARDS, "the first serves all")
        second, url_b = start_gate(tmp_path, "--pool", "p", "--db", database_url)
        processes.append(second)
        halves = Counter([url_a, url_a, url_b, url_b])
        _wait_for(lambda: Counter(_pool(url_a)["owners"]) == halves, "half the shards each")
        client = Client([url_a, url_b])
        crowd = [(f"w{i}", 0.5 if i % 5 == 0 else 0.9) for i in range(24)]
        killed, survivor = (first, url_b) if victim == "first" else (second, url_a)
        async with aiohttp.ClientSession() as http:
            tasks = [asyncio.create_task(client.worker(http, w, acc)) for w, acc in crowd]
            while len(client.replies) < 40:
                await asyncio.sleep(0.05)
            killed.send_signal(signal.SIGKILL)  # mid-stream: requests are in flight
            assert killed.wait(timeout=10) == -signal.SIGKILL  # reaped, as its parent would
            await asyncio.gather(*tasks)
        assert _pool(survivor)["owners"] == [survivor] * SHARDS
    finally:
        for process in processes:
            if process.poll() is None:
                stop_gate(process)
    requested, answered = _journaled(database_url)
    assert len(client.replies) == 6 * len(crowd)
    for worker, request_id, reply in client.replies:
        assert requested[f"{worker}/{request_id}"] == [reply["gold"]]  # there, exactly once
    assert Counter(answered) == Counter(client.answered)  # each answer used once
