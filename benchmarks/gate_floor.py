"""The floor under the gate's HTTP numbers: a bare aiohttp server on the same load (issue 50).

Before calling a latency or a rate out of reach, measure the leanest server that could
answer the same calls: this one speaks the gate's three paths (``/v1/next``,
``/v1/answers``, ``/v1/labels``) with the same JSON bodies and the same reply shapes, in its
own process on 127.0.0.1, and does nothing else: no gate, no journal, no token, no checks.
A reply to ``/v1/next`` is a gold question with probability ``--gold-share`` (the share the
gate gave in the same run, so the follow-up calls are as many), a task otherwise.
Whatever the gate's HTTP numbers are beside it, no server in one Python process with aiohttp
on the machine can do better than this one's, so ``benchmarks.gate_load`` prints both.

``measure_floor`` starts it (``python -m benchmarks.gate_floor --gold-share S``, which prints
its URL and serves until SIGINT) and loads it as ``benchmarks.gate_load`` loads the gate.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import signal
import socket
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from benchmarks.gate_harness import Crowd, cpu_seconds, steady
from screener.gate_service.protocol import ANSWERS_PATH, LABELS_PATH, NEXT_PATH


def floor_app(gold_share: float, seed: int = 0) -> web.Application:
    """The three paths, each reading its JSON body and answering the gate's reply shape."""
    rng = random.Random(seed)
    golds = 0

    async def next_(request: web.Request) -> web.Response:
        nonlocal golds
        body = json.loads(await request.read())
        if rng.random() < gold_share:
            golds += 1
            reply = {"worker": body["worker"], "kind": "gold", "gold": f"g{golds}"}
        else:
            reply = {"worker": body["worker"], "kind": "task", "gold": None}
        return web.json_response(reply)

    async def results(request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        entries = body if isinstance(body, list) else [body]
        return web.json_response({"results": [{"outcome": "used"} for _ in entries]})

    app = web.Application()
    app.router.add_post(NEXT_PATH, next_)
    app.router.add_post(ANSWERS_PATH, results)
    app.router.add_post(LABELS_PATH, results)
    return app


def measure_floor(
    crowd: Crowd, gold_share: float, connections: int, seconds: float, *, seed: int
) -> dict[str, Any]:
    """The floor server in its own process under ``steady``'s load: requests a second,
    p50 / p99 ms and its CPU ms a request."""
    command = [sys.executable, "-m", "benchmarks.gate_floor", "--gold-share", str(gold_share)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        cpu = cpu_seconds(process.pid)
        load = asyncio.run(steady(url, crowd, connections, seconds, seed=seed))
        cpu = cpu_seconds(process.pid) - cpu
    finally:
        process.send_signal(signal.SIGINT)
        process.wait()
    calls = sum(load.calls.values())
    return {**load.rates(), "cpu_ms": cpu / calls * 1000, "errors": sum(load.errors.values())}


async def serve(gold_share: float) -> None:
    sock = socket.create_server(("127.0.0.1", 0))
    runner = web.AppRunner(floor_app(gold_share), access_log=None)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stop.set)
    await stop.wait()
    await runner.cleanup()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--gold-share", type=float, default=0.3)
    asyncio.run(serve(parser.parse_args(argv).gold_share))
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
