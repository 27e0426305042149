"""A gold-question service that misbehaves on purpose, for the fuzz suite: it rejects, stalls
or lies, each in the way its mode says. It listens on 127.0.0.1 (port 0) in a thread of its
own, and the first segment of the path is the mode (the http oracle appends the API's paths
to its base URL), so that one server plays every part: ``f"{service.url}/{mode}"``."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aiohttp import web

#: What each mode does. Answers are numbers: right for "a+b" payloads, else 0.
MODES = {
    "honest": "accepts every assignment and answers it",
    "reject": "rejects every assignment: unknown worker",
    "unavailable": "rejects every assignment: the worker left",
    "stall": "never replies to a new assignment",
    "stall-answers": "accepts, answers, and never replies to a poll for answers",
    "silent": "accepts every assignment and never answers",
    "not-json": "replies with HTML",
    "error-500": "fails every request with HTTP 500",
    "wrong-ids": "accepts assignments nobody sent, and says nothing of those sent",
    "strangers": "answers assignments that do not exist",
    "bad-answers": "answers with null, true, NaN, lists and objects",
    "duplicates": "answers every assignment three times",
    "stuck-cursor": "answers, and never moves the cursor on",
}


class LiarService:
    """The service's state: each mode's answer log, which polls read from a cursor."""

    def __init__(self) -> None:
        self.logs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/{mode}/v1/assignments", self.post)
        app.router.add_delete("/{mode}/v1/assignments/{id}", self.delete)
        app.router.add_get("/{mode}/v1/answers", self.answers)
        return app

    async def post(self, request: web.Request) -> web.Response:
        mode = request.match_info["mode"]
        if mode in ("stall", "not-json", "error-500"):
            return await _misbehave(mode)
        assignments = (await request.json()).get("assignments", [])
        ids = [str(a.get("id")) for a in assignments]
        if mode in ("reject", "unavailable"):
            reason = "unknown worker" if mode == "reject" else "unavailable: worker left"
            rejected = [{"id": i, "reason": f"{reason} {a.get('worker')!r}"}
                        for i, a in zip(ids, assignments, strict=True)]  # fmt: skip
            return web.json_response({"accepted": [], "rejected": rejected})
        if mode == "wrong-ids":
            return web.json_response({"accepted": ["someone-else-1"], "rejected": []})
        if mode != "silent":
            self.logs[mode].extend(_answers(mode, assignments))
        return web.json_response({"accepted": ids, "rejected": []})

    async def delete(self, request: web.Request) -> web.Response:
        return web.json_response({"id": request.match_info["id"], "cancelled": True})

    async def answers(self, request: web.Request) -> web.Response:
        mode = request.match_info["mode"]
        if mode in ("not-json", "error-500"):
            return await _misbehave(mode)
        log = self.logs.get(mode, [])
        cursor = request.query.get("cursor", "0")
        if cursor == "end":
            return web.json_response({"answers": [], "cursor": str(len(log))})
        if mode == "stall-answers":
            await asyncio.sleep(3600)
        start = int(cursor) if cursor.isdigit() else 0
        if start >= len(log):
            await asyncio.sleep(min(float(request.query.get("wait", "0") or 0), 0.05))
        items = log[start : start + 1000]
        moved = start if mode == "stuck-cursor" else start + len(items)
        # json.dumps writes NaN as the token NaN, which Python's parser reads back.
        body = json.dumps({"answers": items, "cursor": str(moved)})
        return web.Response(text=body, content_type="application/json")


async def _misbehave(mode: str) -> web.Response:
    if mode == "stall":
        await asyncio.sleep(3600)
    if mode == "not-json":
        return web.Response(text="<html>maintenance</html>", content_type="text/html")
    return web.json_response({"error": "down"}, status=500)


def _answers(mode: str, assignments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for index, assignment in enumerate(assignments):
        ident = str(assignment.get("id"))
        if mode == "strangers":
            items.append({"id": f"{ident.rsplit('-', 1)[0]}-99999{index}", "answer": 1})
            items.append({"id": f"nobody-{index}", "answer": 1})
        elif mode == "bad-answers":
            wrong: list[Any] = [None, True, float("nan"), [1], {"a": 1}]
            items.append({"id": ident, "answer": wrong[index % len(wrong)]})
        else:
            copies = 3 if mode == "duplicates" else 1
            items += [{"id": ident, "answer": _solve(assignment)}] * copies
    return items


def _solve(assignment: dict[str, Any]) -> float:
    payload = str((assignment.get("question") or {}).get("payload", ""))
    left, plus, right = payload.partition("+")
    try:
        return float(left) + float(right) if plus else 0.0
    except ValueError:
        return 0.0


@contextmanager
def liar_service() -> Iterator[str]:
    """Serve a LiarService on 127.0.0.1 in a thread; yields its base URL."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="liar-service", daemon=True)
    thread.start()
    runner = web.AppRunner(LiarService().app(), access_log=None, shutdown_timeout=0.1)

    async def start() -> str:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return f"http://127.0.0.1:{runner.addresses[0][1]}"

    async def stop() -> None:
        await runner.cleanup()
        stalled = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in stalled:
            task.cancel()
        await asyncio.gather(*stalled, return_exceptions=True)

    try:
        yield asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=30)
    finally:
        asyncio.run_coroutine_threadsafe(stop(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        loop.close()
