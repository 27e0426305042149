"""The gate's HTTP API served by one process of a pool (docs/gate-api.md, "A pool").

A call naming a worker goes to the worker's shard (``sharding.shard_of``): served here when
this process serves that shard, else ``307 Temporary Redirect`` to the URL of the process
that does (same path and query; the client resends the body), or ``503`` with
``Retry-After`` when no live process serves it now. Batches (``POST /v1/answers``,
``/v1/labels``, ``/v1/items``) may mix shards: the entries of shards served here are checked
together (a bad one refuses the whole request) and served; every other entry gets
``"outcome": "elsewhere"`` with its ``shard`` and the ``location`` to resend it to (null:
nobody serves it now, resend later). A batch whose entries all belong to shards one other
process serves is redirected whole. Items belong to the shard of their own id; the streams
are per shard (``?shard=K``). ``GET /v1/pool`` says who serves what.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from aiohttp import web

from screener.gate.items import check_new_item
from screener.gate_service.app import guard, read_json
from screener.gate_service.pool import PoolProcess
from screener.gate_service.protocol import (
    ANSWERS_PATH,
    DECISIONS_PATH,
    FINAL_LABELS_PATH,
    ITEMS_PATH,
    LABELS_PATH,
    LEAVE_PATH,
    NEXT_PATH,
    POOL_PATH,
    STATUS_PATH,
    GateApiError,
    ItemEntry,
    parse_answers,
    parse_items,
    parse_labels,
    parse_leave,
    parse_next,
    parse_stream_query,
)
from screener.gate_service.session import GateSession
from screener.gate_service.sharding import HASH_RULE, shard_of

__all__ = ["RETRY_AFTER", "pool_app"]

#: Seconds a client waits before resending a call of a shard nobody serves now (a takeover
#: takes about one look of the pool: ``POOL_BEAT``, or a lease period after a machine died).
RETRY_AFTER = 1
_Entry = TypeVar("_Entry")


def pool_app(pool: PoolProcess, token: str | None) -> web.Application:
    """The API of ``pool``'s process (module docstring), behind the gate's bearer token."""

    async def next_(request: web.Request) -> web.Response:
        given = parse_next(await read_json(request))
        session = _session(pool, request, shard_of(given.worker, pool.shards))
        return web.json_response(await session.next(given))

    async def leave(request: web.Request) -> web.Response:
        worker = parse_leave(await read_json(request))
        session = _session(pool, request, shard_of(worker, pool.shards))
        return web.json_response(await session.leave(worker))

    async def answers(request: web.Request) -> web.Response:
        given = parse_answers(await read_json(request))

        def check(session: GateSession, a: Any) -> None:
            session.gate.check_answer(
                a.gold, worker=a.worker, reward=a.reward, answer=a.answer, item=a.item
            )

        found = await _split(pool, request, given, lambda a: a.worker, check, GateSession.answers)
        return web.json_response({"results": _in_order(given, found, lambda a: a.to_json())})

    async def labels(request: web.Request) -> web.Response:
        given = parse_labels(await read_json(request))

        def check(session: GateSession, label: Any) -> None:
            session.gate.check_label(label.worker, label.item, label.label)

        found = await _split(pool, request, given, lambda a: a.worker, check, GateSession.labels)
        return web.json_response({"results": _in_order(given, found, lambda a: a.to_json())})

    async def items(request: web.Request) -> web.Response:
        given = parse_items(await read_json(request))
        counts = {"registered": 0, "items": 0}

        async def register(session: GateSession, part: list[Any]) -> list[dict[str, Any]]:
            added = await session.add_items(part)
            counts["registered"] += added["registered"]
            return [{"item": entry.item, "outcome": "registered"} for entry in part]

        found = await _split(pool, request, given, lambda e: e.item, _check_item, register)
        results = _in_order(given, found, lambda e: e.to_json())
        elsewhere = [entry for entry in results if entry["outcome"] == "elsewhere"]
        counts["items"] = sum(len(s.gate.items.items) for s in _served(pool).values())
        return web.json_response({**counts, "elsewhere": elsewhere})

    async def decisions(request: web.Request) -> web.Response:
        session, query = _stream(pool, request)
        return web.json_response({"shard": _shard_param(pool, request),
                                  **await session.decisions(query)})  # fmt: skip

    async def final_labels(request: web.Request) -> web.Response:
        session, query = _stream(pool, request)
        return web.json_response({"shard": _shard_param(pool, request),
                                  **await session.final_labels(query)})  # fmt: skip

    async def status(request: web.Request) -> web.Response:
        served = _served(pool)
        return web.json_response({
            "pool": pool.record.name, "shards": pool.shards, "url": pool.url,
            "serving": sorted(served), "status": {str(k): s.status() for k, s in served.items()},
        })  # fmt: skip

    async def pool_(request: web.Request) -> web.Response:
        found = {"pool": pool.record.name, "shards": pool.shards, "hash": HASH_RULE}
        return web.json_response({**found, "owners": list(pool.owners)})

    async def on_shutdown(app: web.Application) -> None:
        for session in pool.sessions.values():
            session.stop_serving()

    app = web.Application(middlewares=[guard(pool.fail, token)])
    for path, handler in ((NEXT_PATH, next_), (ANSWERS_PATH, answers), (LABELS_PATH, labels),
                          (LEAVE_PATH, leave), (ITEMS_PATH, items)):  # fmt: skip
        app.router.add_post(path, handler)
    for path, handler in ((DECISIONS_PATH, decisions), (FINAL_LABELS_PATH, final_labels),
                          (STATUS_PATH, status), (POOL_PATH, pool_)):  # fmt: skip
        app.router.add_get(path, handler)
    app.on_shutdown.append(on_shutdown)
    return app


def _served(pool: PoolProcess) -> dict[int, GateSession]:
    return {k: s for k in range(pool.shards) if (s := pool.serving(k)) is not None}


def _session(pool: PoolProcess, request: web.Request, shard: int) -> GateSession:
    """The shard's session here; else a redirect to its owner, or a 503 to retry."""
    session = pool.serving(shard)
    if session is not None:
        return session
    owner = pool.owners[shard]
    if owner is not None and owner != pool.url:
        raise web.HTTPTemporaryRedirect(owner + request.path_qs)
    raise GateApiError(
        f"no process of pool {pool.record.name} serves shard {shard} now: retry in {RETRY_AFTER} s",
        503,
        {"Retry-After": str(RETRY_AFTER)},
    )


async def _split(
    pool: PoolProcess,
    request: web.Request,
    entries: Sequence[_Entry],
    key: Callable[[_Entry], str],
    check: Callable[[GateSession, _Entry], None],
    serve: Callable[[GateSession, list[_Entry]], Awaitable[list[dict[str, Any]]]],
) -> list[dict[str, Any] | None]:
    """Each entry's result in order (None where ``_in_order`` fills the entry in): the
    entries of shards served here checked, all before any is used, then served shard by
    shard; every other one "elsewhere". Redirected whole when one other process serves
    every entry's shard."""
    shards = [shard_of(key(entry), pool.shards) for entry in entries]
    local = {k for k in set(shards) if pool.serving(k) is not None}
    if not local:
        owners = {pool.owners[k] for k in shards}
        if len(owners) == 1:
            _session(pool, request, shards[0])  # a redirect, or a 503 to retry
    sessions = {k: pool.serving(k) for k in local}
    for entry, shard in zip(entries, shards, strict=True):
        if (session := sessions.get(shard)) is not None:
            check(session, entry)
    found: list[dict[str, Any] | None] = [None] * len(entries)
    for shard, session in sorted(sessions.items()):
        assert session is not None
        rows = [i for i, k in enumerate(shards) if k == shard]
        for row, result in zip(rows, await serve(session, [entries[i] for i in rows]),
                               strict=True):  # fmt: skip
            found[row] = result
    for row, shard in enumerate(shards):
        if shard not in local:
            found[row] = {"outcome": "elsewhere", "shard": shard, "location": pool.owners[shard]}
    return found


def _in_order(
    entries: Sequence[_Entry],
    found: list[dict[str, Any] | None],
    shown: Callable[[_Entry], dict[str, Any]],
) -> list[dict[str, Any]]:
    """The results, an entry sent elsewhere shown with its fields, to resend as it is."""
    return [result if result is not None and result.get("outcome") != "elsewhere"
            else {**shown(entry), **(result or {})}
            for entry, result in zip(entries, found, strict=True)]  # fmt: skip


def _check_item(session: GateSession, entry: ItemEntry) -> None:
    check_new_item(*entry.as_tuple())


def _shard_param(pool: PoolProcess, request: web.Request) -> int:
    text = request.query.get("shard")
    if text is None or not text.isdigit() or int(text) >= pool.shards:
        raise GateApiError(
            f"malformed query: this gate serves pool {pool.record.name} of {pool.shards} "
            f"shards: add ?shard=K with K in [0, {pool.shards - 1}] (streams are per shard)"
        )
    return int(text)


def _stream(pool: PoolProcess, request: web.Request) -> tuple[GateSession, Any]:
    shard = _shard_param(pool, request)
    query = parse_stream_query({k: v for k, v in request.query.items() if k != "shard"})
    return _session(pool, request, shard), query
