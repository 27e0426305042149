"""A pool's processes: the fair share and the handover when a member joins, the redirect to
a shard's owner (503 with Retry-After when nobody serves it), the batches split by shard,
the per-shard streams and ``GET /v1/pool``; on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import aiohttp
from pool_helpers import make_pool, pool_process, workers_of

from screener.gate_service.pool import PoolProcess
from screener.gate_service.sharding import HASH_RULE
from screener.journal import EventKind, Journal


async def _post(url: str, path: str, body: object, *, follow: bool = True) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as client,
        client.post(url + path, json=body, allow_redirects=follow) as response,
    ):
        text = await response.text()
        return response.status, (response.headers, text)


async def _json(url: str, path: str, body: object) -> Any:
    async with aiohttp.ClientSession() as client, client.post(url + path, json=body) as response:
        assert response.status == 200, await response.text()
        return await response.json()


async def _two_halves(a: PoolProcess, b: PoolProcess) -> None:
    """A alone takes every shard; B joins; A hands its extra shards over; B claims them."""
    await a.look()
    assert sorted(a.sessions) == [0, 1, 2, 3]
    await b.look()  # two members now, but every shard is A's
    assert not b.sessions
    await a.look()  # over its fair share of 2: hands 3 and 2 over
    assert sorted(a.sessions) == [0, 1]
    await b.look()
    await a.look()  # A learns where shards 2 and 3 went
    assert sorted(b.sessions) == [2, 3]


async def test_a_joining_member_gets_its_fair_share_by_a_clean_handover(
    database_url: str,
) -> None:
    record = make_pool(database_url, 4)
    async with pool_process(database_url, record) as a, pool_process(database_url, record) as b:
        await _two_halves(a, b)
        assert a.owners == [a.url, a.url, b.url, b.url] == b.owners
    with Journal(database_url, create=False) as journal:
        for shard in (2, 3):  # handed over: stopped, a snapshot kept, resumed by B
            run = record.runs[shard]
            kinds = [e.kind for e in journal.events(run)]
            assert kinds.count(EventKind.RESUMED) == 2 and EventKind.STOPPED in kinds
            assert journal.snapshot(run) is not None


async def test_a_worker_of_another_shard_is_redirected_to_its_owner(database_url: str) -> None:
    record = make_pool(database_url, 4)
    async with pool_process(database_url, record) as a, pool_process(database_url, record) as b:
        await _two_halves(a, b)
        worker = next(workers_of(2, 4))
        status, (headers, _) = await _post(a.url, "/v1/next", {"worker": worker}, follow=False)
        assert status == 307 and headers["Location"] == b.url + "/v1/next"
        reply = await _json(a.url, "/v1/next", {"worker": worker, "request_id": "r1"})
        assert reply["kind"] == "gold" and worker in b.sessions[2].gate.workers
        assert worker not in a.sessions[0].gate.workers
        again = await _json(b.url, "/v1/next", {"worker": worker, "request_id": "r1"})
        assert again == reply  # the shard's request memory answers a resend
        pool = await _get(b.url, "/v1/pool")
        assert pool == {"pool": "p", "shards": 4, "hash": HASH_RULE, "owners": a.owners}


async def test_a_shard_nobody_serves_is_a_503_to_retry(database_url: str) -> None:
    record = make_pool(database_url, 4)
    async with pool_process(database_url, record) as a, pool_process(database_url, record) as b:
        await a.look()
        await b.look()
        await a.look()  # shards 2 and 3 handed over, B has not claimed them yet
        status, (headers, text) = await _post(a.url, "/v1/next", {"worker": next(workers_of(3, 4))})
        assert status == 503 and headers["Retry-After"] == "1" and "shard 3" in text


async def test_a_batch_is_split_by_shard_and_the_rest_resent(database_url: str) -> None:
    record = make_pool(database_url, 4)
    async with pool_process(database_url, record) as a, pool_process(database_url, record) as b:
        await _two_halves(a, b)
        here, there = next(workers_of(0, 4)), next(workers_of(2, 4))
        golds = {w: (await _json(a.url, "/v1/next", {"worker": w}))["gold"] for w in (here, there)}
        batch = {"answers": [{"gold": golds[w], "worker": w, "reward": 1.0} for w in (here, there)]}
        results = (await _json(a.url, "/v1/answers", batch))["results"]
        assert results[0] == {"gold": golds[here], "worker": here, "outcome": "accepted"}
        rest = results[1]
        assert rest == {"gold": golds[there], "worker": there, "reward": 1.0,
                        "outcome": "elsewhere", "shard": 2, "location": b.url}  # fmt: skip
        assert b.sessions[2].gate.gold(golds[there]).answered is False  # type: ignore[union-attr]
        resent = {k: rest[k] for k in ("gold", "worker", "reward")}
        results = (await _json(rest["location"], "/v1/answers", {"answers": [resent]}))["results"]
        assert results[0]["outcome"] == "accepted"
        only_there = {"answers": [resent]}  # a batch of B's shards alone: redirected whole
        status, (headers, _) = await _post(a.url, "/v1/answers", only_there, follow=False)
        assert status == 307 and headers["Location"] == b.url + "/v1/answers"


async def test_the_streams_are_per_shard(database_url: str) -> None:
    record = make_pool(database_url, 4)
    async with pool_process(database_url, record) as a, pool_process(database_url, record) as b:
        await _two_halves(a, b)
        async with aiohttp.ClientSession() as client:
            async with client.get(a.url + "/v1/decisions") as response:
                assert response.status == 400 and "?shard=K" in await response.text()
            async with client.get(
                a.url + "/v1/decisions?shard=3&cursor=-1", allow_redirects=False
            ) as response:
                assert response.status == 307
                assert response.headers["Location"] == b.url + "/v1/decisions?shard=3&cursor=-1"
            async with client.get(a.url + "/v1/decisions?shard=3") as response:
                assert await response.json() == {"shard": 3, "decisions": [], "cursor": -1}


async def _get(url: str, path: str) -> Any:
    async with aiohttp.ClientSession() as client, client.get(url + path) as response:
        return await response.json()
