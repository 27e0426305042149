"""The gate's HTTP API (docs/gate-api.md) over a ``GateSession``, with aiohttp.

Every request but the reads (decisions, final labels, status) is a call of the gate,
journaled before its reply (``GateSession``). Errors are JSON ``{"error": "..."}``, one line
each: 400 for a request the API or the gate refuses (nothing of it is used), 401 for a
missing or wrong bearer token, 404 for an unknown gold id, worker or path, 405, 413 for a body
over 1 MiB, 503 when the gate has stopped serving.
"""

from __future__ import annotations

import hmac
import json
import logging
import socket
from collections.abc import Callable

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from screener.errors import ScreenerError, UnknownPullError, UnknownWorkerError, one_line
from screener.gate_service.protocol import (
    ANSWERS_PATH,
    DECISIONS_PATH,
    FINAL_LABELS_PATH,
    ITEMS_PATH,
    LABELS_PATH,
    LEAVE_PATH,
    NEXT_PATH,
    STATUS_PATH,
    TOKEN_ENV,
    GateApiError,
    parse_answers,
    parse_items,
    parse_labels,
    parse_leave,
    parse_next,
    parse_stream_query,
)
from screener.gate_service.session import GateSession, GateStoppedError

__all__ = ["gate_app", "guard", "listen", "read_json", "serve_app", "serve_gate"]

log = logging.getLogger(__name__)

#: The 401's reason: how to send the token, and where the gate took it from.
WRONG_TOKEN = (
    "missing or wrong bearer token: send the header `Authorization: Bearer <token>` with the "
    f"token the gate was started with (its {TOKEN_ENV})"
)


def gate_app(session: GateSession, token: str | None) -> web.Application:
    """The API over ``session``; requests must carry ``Authorization: Bearer <token>`` (None:
    no authentication). The token is compared in constant time and never logged."""

    async def next_(request: web.Request) -> web.Response:
        return web.json_response(await session.next(parse_next(await read_json(request))))

    async def answers(request: web.Request) -> web.Response:
        results = await session.answers(parse_answers(await read_json(request)))
        return web.json_response({"results": results})

    async def labels(request: web.Request) -> web.Response:
        results = await session.labels(parse_labels(await read_json(request)))
        return web.json_response({"results": results})

    async def items(request: web.Request) -> web.Response:
        return web.json_response(await session.add_items(parse_items(await read_json(request))))

    async def leave(request: web.Request) -> web.Response:
        return web.json_response(await session.leave(parse_leave(await read_json(request))))

    async def decisions(request: web.Request) -> web.Response:
        return web.json_response(await session.decisions(parse_stream_query(request.query)))

    async def final_labels(request: web.Request) -> web.Response:
        return web.json_response(await session.final_labels(parse_stream_query(request.query)))

    async def status(request: web.Request) -> web.Response:
        return web.json_response(session.status())

    async def on_shutdown(app: web.Application) -> None:
        session.stop_serving()

    app = web.Application(middlewares=[guard(session.fail, token)])
    app.router.add_post(NEXT_PATH, next_)
    app.router.add_post(ANSWERS_PATH, answers)
    app.router.add_post(LABELS_PATH, labels)
    app.router.add_post(LEAVE_PATH, leave)
    app.router.add_post(ITEMS_PATH, items)
    app.router.add_get(DECISIONS_PATH, decisions)
    app.router.add_get(FINAL_LABELS_PATH, final_labels)
    app.router.add_get(STATUS_PATH, status)
    app.on_shutdown.append(on_shutdown)
    return app


def guard(on_bug: Callable[[str], None], token: str | None) -> Middleware:
    """The bearer token first; then every error as one line of JSON with its status (a
    bug's: ``on_bug`` stops serving)."""
    expected = None if token is None else f"Bearer {token}".encode()

    @web.middleware
    async def guarded(request: web.Request, handler: Handler) -> web.StreamResponse:
        if expected is not None and not hmac.compare_digest(_authorization(request), expected):
            return _error(401, WRONG_TOKEN, {"WWW-Authenticate": "Bearer"})
        try:
            return await handler(request)
        except web.HTTPException as error:
            if error.status < 400:
                raise
            return _error(error.status, f"{error.reason}: {request.method} {request.path}")
        except ScreenerError as error:
            headers = error.headers if isinstance(error, GateApiError) else None
            return _error(_status_of(error), one_line(error), headers)
        except Exception:  # a bug: the gate may be ahead of its journal, so stop serving
            log.exception("internal error serving %s %s", request.method, request.path)
            on_bug("an internal error (see the log; please report it)")
            return _error(500, "internal error: the gate stopped serving")

    return guarded


def listen(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A socket listening on ``host:port`` (0: any free port), bound before anything else
    happens, so that a port in use is refused before a run is written. OSError if not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family)


async def serve_gate(
    session: GateSession, token: str | None, sock: socket.socket
) -> tuple[web.AppRunner, str]:
    """Serve ``session`` on the listening ``sock``: the runner (``await runner.cleanup()``
    stops it) and the base URL."""
    return await serve_app(gate_app(session, token), sock)


async def serve_app(app: web.Application, sock: socket.socket) -> tuple[web.AppRunner, str]:
    """Serve ``app`` (a gate's or a pool's) on the listening ``sock``: the runner and the
    base URL."""
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    host, port = sock.getsockname()[:2]
    return runner, f"http://{f'[{host}]' if ':' in host else host}:{port}"


def _authorization(request: web.Request) -> bytes:
    """The Authorization header's bytes as sent: aiohttp keeps bytes that are not UTF-8 as
    surrogates, which a plain ``encode`` refuses (a 500 for a header that is only wrong)."""
    return request.headers.get("Authorization", "").encode("utf-8", "surrogateescape")


def _status_of(error: ScreenerError) -> int:
    if isinstance(error, GateApiError):
        return error.status
    if isinstance(error, UnknownPullError | UnknownWorkerError):
        return 404
    if isinstance(error, GateStoppedError):
        return 503
    return 400  # the gate refused the call (a bad worker id, a reward out of range...)


async def read_json(request: web.Request) -> object:
    """The request's body as JSON; GateApiError (400) when it is not."""
    try:
        return json.loads(await request.read())
    except (ValueError, RecursionError):  # not JSON, not UTF-8, nested too deep, a huge int
        raise GateApiError("malformed request: the body is not JSON") from None


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error": message}, status=status, headers=headers)
