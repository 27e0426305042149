"""The gate's asyncio client against a real aiohttp server on 127.0.0.1: what it says while it
retries a gate that does not answer."""

from __future__ import annotations

from aiohttp import web

from screener.gate_service import listen
from screener.gate_service.client import GateClient


async def test_the_client_says_once_per_outage_that_it_retries_and_until_when() -> None:
    """A gate that answers 503 for a while (a restart): the client retries, and its
    ``on_retry`` is told once per outage, not once per attempt."""
    replies = iter([503, 503, 503, 200, 503, 200])

    async def status(request: web.Request) -> web.Response:
        code = next(replies)
        return web.json_response({"error": "restarting"} if code == 503 else {}, status=code)

    app = web.Application()
    app.router.add_get("/v1/status", status)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.SockSite(runner, listen())
    await site.start()
    told: list[str] = []
    url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        async with GateClient(url, retry_for=30.0, on_retry=told.append) as client:
            await client.status()
            await client.status()
    finally:
        await runner.cleanup()
    assert len(told) == 2, told
    assert all("did not answer GET /v1/status" in line and "retrying until" in line
               for line in told)  # fmt: skip
