"""Bad requests to the gate get a 4xx with one clear reason, as JSON, and change nothing:
neither the gate (its status) nor its journal (not one event)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from gate_helpers import events, serving

from screener.gate_service import TOKEN_ENV

GOLD = "@gold"  # stands for the gold question ann owes when the request is sent
ANNS = {"gold": GOLD, "worker": "ann"}  # an answer to it, by ann

CASES: list[tuple[str, str, Any, int, str]] = [
    # (method, path, body: JSON, or bytes sent as they are, status, words of the reason)
    ("POST", "/v1/next", b"{not json", 400, "not JSON"),
    ("POST", "/v1/next", b"[" * 100_000, 400, "not JSON"),
    ("POST", "/v1/next", b"\xff\xfe", 400, "not JSON"),
    ("POST", "/v1/next", ["ann"], 400, "takes a JSON object"),
    ("POST", "/v1/next", {"worker": ""}, 400, "worker must be a printable string"),
    ("POST", "/v1/next", {"worker": 7}, 400, "worker must be a printable string"),
    ("POST", "/v1/next", {"worker": "a\nb"}, 400, "worker must be a printable string"),
    ("POST", "/v1/next", {"worker": "w" * 300}, 400, "1 to 256 characters"),
    ("POST", "/v1/next", {"worker": "ann", "colour": 1}, 400, "unknown field 'colour'"),
    ("POST", "/v1/next", {"worker": "bob", "request_id": "r-ann"}, 400, "was made for worker"),
    ("POST", "/v1/answers", {**ANNS, "gold": "g99", "reward": 1}, 404, "no gold question 'g99'"),
    ("POST", "/v1/answers", {**ANNS, "reward": 1.5}, 400, "outside [0, 1]"),
    ("POST", "/v1/answers", ANNS, 400, "needs a reward or an answer"),
    ("POST", "/v1/answers", {**ANNS, "reward": 1, "answer": "4"}, 400, "needs the gold item"),
    ("POST", "/v1/answers", {**ANNS, "reward": 1, "item": "q1"}, 400, "raw answer beside it"),
    ("POST", "/v1/answers", {**ANNS, "reward": True}, 400, "reward must be a number"),
    ("POST", "/v1/answers", b'{"gold": "g0", "worker": "ann", "reward": NaN}', 400,
     "reward must be a number"),
    ("POST", "/v1/answers", {**ANNS, "answer": [4]}, 400, "a string or a number"),
    ("POST", "/v1/answers", {**ANNS, "answer": "4"}, 400, "no gold question bank"),
    ("POST", "/v1/answers", {"gold": GOLD, "reward": 1}, 400, "needs worker"),
    ("POST", "/v1/answers", {"gold": GOLD, "worker": 7, "reward": 1}, 400, "worker must be"),
    # ann's gold answered as another worker's (an id passed through a browser): refused
    ("POST", "/v1/answers", {"gold": GOLD, "worker": "bob", "reward": 1}, 404,
     "not given to worker 'bob'"),
    ("POST", "/v1/labels", {"worker": "bob", "item": "t1", "label": 1}, 404, "never asked"),
    ("POST", "/v1/labels", {"worker": "ann", "item": "t1", "label": [1]}, 400, "label must be"),
    ("POST", "/v1/answers", {"answers": []}, 400, "non-empty list"),
    ("POST", "/v1/answers", {"answers": [{**ANNS, "reward": 1}] * 1001}, 400, "too many"),
    # one bad item refuses the batch: the good one before it is not used either
    ("POST", "/v1/answers",
     {"answers": [{**ANNS, "reward": 1}, {**ANNS, "gold": "g7", "reward": 0}]},
     404, "no gold question 'g7'"),
    ("POST", "/v1/leave", {}, 400, "worker must be"),
    ("POST", "/v1/leave", {"worker": "ann", "reason": "bored"}, 400, "unknown field 'reason'"),
    ("GET", "/v1/decisions?cursor=x", None, 400, "cursor must be a number"),
    ("GET", "/v1/decisions?cursor=-2", None, 400, "-1 or more"),
    ("GET", "/v1/decisions?cursor=5", None, 400, "beyond the decisions made so far"),
    ("GET", "/v1/decisions?wait=61", None, 400, "wait must lie in [0, 60]"),
    ("GET", "/v1/decisions?wait=nan", None, 400, "wait must be finite"),
    ("GET", "/v1/decisions?limit=0", None, 400, "limit must lie in [1, 1000]"),
    ("GET", "/v1/decisions?since=3", None, 400, "unknown parameter 'since'"),
    ("GET", "/v1/next", None, 405, "Method Not Allowed: GET /v1/next"),
    ("GET", "/v1/nowhere", None, 404, "Not Found: GET /v1/nowhere"),
    ("POST", "/v1/next", b"x" * (2 * 1024 * 1024), 413, "Too Large"),
]  # fmt: skip


@pytest.mark.parametrize(("method", "path", "body", "status", "reason"), CASES)
async def test_a_bad_request_is_refused_in_one_line_and_changes_nothing(
    tmp_path: Path, method: str, path: str, body: Any, status: int, reason: str
) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db) as (session, url), aiohttp.ClientSession() as http:
        owed = await _post(http, f"{url}/v1/next", {"worker": "ann", "request_id": "r-ann"})
        before = (session.gate.summary(), len(events(db, session.run_id)))
        body = _with_gold(body, str(owed["gold"]))
        data = body if isinstance(body, bytes) else None
        async with http.request(method, url + path, data=data,
                                json=None if data is not None else body) as response:  # fmt: skip
            got = await response.json()
            assert response.status == status, got
        assert set(got) == {"error"} and reason in got["error"]
        assert "\n" not in got["error"] and len(got["error"]) < 400
        assert (session.gate.summary(), len(events(db, session.run_id))) == before
        answered = await _post(
            http, f"{url}/v1/answers", {"gold": owed["gold"], "worker": "ann", "reward": 1}
        )
        assert answered["results"][0]["outcome"] == "accepted"  # still owed: nothing was used


async def test_a_token_is_required_when_set_and_never_echoed(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    token = "s3cret-token-for-the-gate"
    async with serving(db, token=token) as (session, url), aiohttp.ClientSession() as http:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": token}):
            async with http.post(f"{url}/v1/next", json={"worker": "ann"},
                                 headers=headers) as response:  # fmt: skip
                assert response.status == 401
                assert response.headers["WWW-Authenticate"] == "Bearer"
                assert token not in await response.text()
                reason = (await response.json())["error"]
                assert "`Authorization: Bearer <token>`" in reason and TOKEN_ENV in reason
        assert session.gate.requests == 0 and len(events(db, session.run_id)) == 1  # "started"
        good = {"Authorization": f"Bearer {token}"}
        async with http.post(f"{url}/v1/next", json={"worker": "ann"}, headers=good) as response:
            assert response.status == 200
    for written in tmp_path.iterdir():  # the database, its WAL
        assert token.encode() not in written.read_bytes(), written.name


@pytest.mark.parametrize("token", [None, "s3cret-token-for-the-gate"])
async def test_an_authorization_header_that_is_not_utf8_is_no_internal_error(
    tmp_path: Path, token: str | None
) -> None:
    """Issue 50: such a header got a 500 (which the API documents as "the gate stopped
    serving") while the gate went on. It is a wrong token (401), or no matter without one."""
    db = str(tmp_path / "gate.db")
    async with serving(db, token=token) as (session, url):
        status, reason = await _raw_post(url, b"Authorization: Bearer \xff\xfe" + b"x" * 20)
        assert status == (200 if token is None else 401), reason
        if token is not None:
            assert TOKEN_ENV in reason
        assert session.failure is None and not session.stopped.is_set()
        good = {} if token is None else {"Authorization": f"Bearer {token}"}
        async with (
            aiohttp.ClientSession() as http,
            http.post(f"{url}/v1/next", json={"worker": "bob"}, headers=good) as response,
        ):
            assert response.status == 200  # still serving


async def _raw_post(url: str, header: bytes) -> tuple[int, str]:
    """POST /v1/next for ann on a socket of its own, with ``header`` as raw bytes: the
    status and the error's reason (empty for a 200)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    body = b'{"worker": "ann"}'
    writer.write(b"POST /v1/next HTTP/1.1\r\nHost: gate\r\nConnection: close\r\n" + header
                 + b"\r\nContent-Type: application/json\r\nContent-Length: "
                 + str(len(body)).encode() + b"\r\n\r\n" + body)  # fmt: skip
    await writer.drain()
    reply = await reader.read()
    writer.close()
    await writer.wait_closed()
    head, _, payload = reply.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    return status, "" if status == 200 else str(json.loads(payload)["error"])


async def _post(http: aiohttp.ClientSession, url: str, body: object) -> dict[str, Any]:
    async with http.post(url, json=body) as response:
        assert response.status == 200
        reply: dict[str, Any] = await response.json()
        return reply


def _with_gold(body: Any, gold: str) -> Any:
    """``body`` with GOLD replaced by the gold id ann owes."""
    if body == GOLD:
        return gold
    if isinstance(body, dict):
        return {key: _with_gold(value, gold) for key, value in body.items()}
    if isinstance(body, list):
        return [_with_gold(value, gold) for value in body]
    return body
