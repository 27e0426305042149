"""The reference service on 127.0.0.1:0, driven with a plain aiohttp client."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from live_helpers import BANK, POOL, serving
from stats_helpers import assert_rate_at_most

from screener.bank import GoldBank, GoldQuestion, Scoring
from screener.crowd import WorkerPool
from screener.errors import ConfigError
from screener.oracles.http.protocol import (
    ANSWERS_PATH,
    ASSIGNMENTS_PATH,
    SIGNATURE_HEADER,
    WEBHOOK_PATH,
    assignment_path,
    verify,
)
from screener.oracles.latency import Latency
from screener.service import Faults, GoldService

FAST = Latency("constant", 0.01)


def _assignment(ident: str, worker: str = "w01", question: str = "q001") -> dict[str, Any]:
    return {"id": ident, "worker": worker, "question": {"id": question, "payload": "?"}}


async def _post(
    session: aiohttp.ClientSession, url: str, *assignments: dict[str, Any]
) -> dict[str, Any]:
    async with session.post(url + ASSIGNMENTS_PATH, json={"assignments": assignments}) as reply:
        assert reply.status == 200, await reply.text()
        body: dict[str, Any] = await reply.json()
        return body


async def _answers(
    session: aiohttp.ClientSession, url: str, cursor: str = "0", wait: float = 0.0, limit: int = 100
) -> dict[str, Any]:
    params = {"cursor": cursor, "wait": str(wait), "limit": str(limit)}
    async with session.get(url + ANSWERS_PATH, params=params) as reply:
        assert reply.status == 200, await reply.text()
        body: dict[str, Any] = await reply.json()
        return body


async def _all_answers(session: aiohttp.ClientSession, url: str, count: int) -> list[Any]:
    """Long-poll until ``count`` answers have arrived (from the start of the stream)."""
    got: list[Any] = []
    cursor = "0"
    while len(got) < count:
        page = await _answers(session, url, cursor, wait=2.0)
        got.extend(page["answers"])
        cursor = page["cursor"]
    return got


async def test_a_repeated_id_is_accepted_again_but_asked_once() -> None:
    service = GoldService(POOL, BANK, latency=FAST, seed=1)
    async with serving(service) as url, aiohttp.ClientSession() as session:
        first = await _post(session, url, _assignment("a1"))
        again = await _post(session, url, _assignment("a1"), _assignment("a2", "w02"))
        conflict = await _post(session, url, _assignment("a1", "w03"))
        answers = await _all_answers(session, url, 2)
        await asyncio.sleep(0.05)
        late = await _answers(session, url, str(len(answers)))
    assert first == {"accepted": ["a1"], "rejected": []}
    assert again == {"accepted": ["a1", "a2"], "rejected": []}
    assert conflict["rejected"][0]["reason"].startswith("conflict")
    assert sorted(item["id"] for item in answers) == ["a1", "a2"]
    assert late["answers"] == []
    assert service.counts["assignments"] == 2


async def test_unknown_and_departed_workers_are_rejected() -> None:
    service = GoldService(POOL, BANK, latency=Latency("constant", 5.0), seed=1)
    async with serving(service) as url, aiohttp.ClientSession() as session:
        await _post(session, url, _assignment("pending", "w05"))
        service.remove_worker("w05", "unavailable: left the platform")
        reply = await _post(
            session, url, _assignment("x", "nobody"), _assignment("y", "w05"),
            _assignment("z", "w01", "no-such-question"),
        )  # fmt: skip
        page = await _answers(session, url)
    reasons = {r["id"]: r["reason"] for r in reply["rejected"]}
    assert reply["accepted"] == []
    assert reasons["x"].startswith("unknown worker")
    assert reasons["y"] == "unavailable: left the platform"
    assert reasons["z"].startswith("unknown question")
    assert page["answers"] == [{"id": "pending", "unavailable": "unavailable: left the platform"}]


async def test_cursor_paging_is_at_least_once() -> None:
    service = GoldService(POOL, BANK, latency=Latency(), seed=1)
    async with serving(service) as url, aiohttp.ClientSession() as session:
        end = await _answers(session, url, "end")
        await _post(session, url, *(_assignment(f"a{i}", POOL.workers[i]) for i in range(5)))
        await asyncio.sleep(0.05)
        first = await _answers(session, url, end["cursor"], limit=3)
        again = await _answers(session, url, end["cursor"], limit=3)
        rest = await _answers(session, url, first["cursor"])
        async with session.get(url + ANSWERS_PATH, params={"cursor": "99"}) as beyond:
            beyond_status = beyond.status
    assert end == {"answers": [], "cursor": "0"}
    assert first == again  # nothing is consumed until the client moves its cursor
    assert [a["id"] for a in first["answers"] + rest["answers"]] == [f"a{i}" for i in range(5)]
    assert rest["cursor"] == "5"
    assert beyond_status == 400


async def test_long_poll_returns_as_soon_as_an_answer_arrives() -> None:
    service = GoldService(POOL, BANK, latency=Latency("constant", 0.1), seed=1)
    async with serving(service) as url, aiohttp.ClientSession() as session:
        started = time.monotonic()
        empty = await _answers(session, url, wait=0.2)
        waited = time.monotonic() - started
        await _post(session, url, _assignment("a"))
        started = time.monotonic()
        page = await _answers(session, url, wait=5.0)
        elapsed = time.monotonic() - started
    assert empty["answers"] == [] and waited >= 0.19
    assert [a["id"] for a in page["answers"]] == ["a"]
    assert 0.05 < elapsed < 2.0


async def test_cancel_withdraws_a_pending_assignment() -> None:
    service = GoldService(POOL, BANK, latency=Latency("constant", 0.1), seed=1)
    async with serving(service) as url, aiohttp.ClientSession() as session:
        await _post(session, url, _assignment("keep"), _assignment("drop", "w02"))
        async with session.delete(url + assignment_path("drop")) as reply:
            cancelled = await reply.json()
        async with session.delete(url + assignment_path("never-made")) as missing:
            missing_status = missing.status
        answers = await _all_answers(session, url, 1)
        await asyncio.sleep(0.2)
        later = await _answers(session, url, "1")
    assert cancelled == {"id": "drop", "cancelled": True}
    assert missing_status == 404
    assert [a["id"] for a in answers] == ["keep"]
    assert later["answers"] == []


async def test_the_token_is_required() -> None:
    service = GoldService(POOL, BANK, token="sekrit-token-123", seed=1)
    async with serving(service) as url:
        statuses = []
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "sekrit"}):
            async with (
                aiohttp.ClientSession(headers=headers) as session,
                session.get(url + ANSWERS_PATH) as reply,
            ):
                statuses.append(reply.status)
                assert "sekrit" not in await reply.text()
        good = {"Authorization": "Bearer sekrit-token-123"}
        async with aiohttp.ClientSession(headers=good) as session:
            page = await _answers(session, url)
    assert statuses == [401, 401, 401]
    assert page == {"answers": [], "cursor": "0"}
    assert "sekrit" not in repr(service)


def test_answers_follow_the_accuracy_and_are_deterministic() -> None:
    pool = WorkerPool(("good", "half", "bad"), (1.0, 0.7, 0.0))
    service = GoldService(pool, BANK, seed=4)
    twin = GoldService(pool, BANK, seed=4)
    scores = {w: [q.score(service.answer_for(w, q)) for q in BANK.questions] for w in pool.workers}
    assert scores["good"] == [1.0] * len(BANK)
    assert scores["bad"] == [0.0] * len(BANK)
    correct = int(sum(scores["half"]))
    assert_rate_at_most(correct, len(BANK), 0.7)
    assert_rate_at_most(len(BANK) - correct, len(BANK), 0.3)
    assert [twin.answer_for("half", q) for q in BANK.questions] == [
        service.answer_for("half", q) for q in BANK.questions
    ]


@pytest.mark.parametrize("scoring", list(Scoring))
def test_wrong_answers_score_low_for_every_scoring_rule(scoring: Scoring) -> None:
    numeric = scoring in (Scoring.NUMERIC, Scoring.GRADED)
    questions = tuple(
        GoldQuestion(f"q{i}", f"question {i}", str(i * 7) if numeric else f"Key {i}", scoring,
                     2.0 if numeric else 0.0)
        for i in range(20)
    )  # fmt: skip
    bank = GoldBank(questions)
    service = GoldService(WorkerPool(("a", "b"), (0.0, 1.0)), bank, seed=2)
    wrong = [q.score(service.answer_for("a", q)) for q in questions]
    right = [q.score(service.answer_for("b", q)) for q in questions]
    assert right == [1.0] * 20
    assert max(wrong) <= (0.5 if scoring is Scoring.GRADED else 0.0)


def test_bad_fault_settings_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="error_rate"):
        Faults(error_rate=1.0)
    with pytest.raises(ConfigError, match="slow"):
        Faults(slow=-1.0)


async def test_503s_are_decided_before_processing() -> None:
    service = GoldService(POOL, BANK, latency=Latency("constant", 60.0), seed=3,
                          faults=Faults(error_rate=0.4))  # fmt: skip
    statuses: Counter[int] = Counter()
    async with serving(service) as url, aiohttp.ClientSession() as session:
        for i in range(150):
            body = {"assignments": [_assignment(f"a{i}")]}
            async with session.post(url + ASSIGNMENTS_PATH, json=body) as reply:
                statuses[reply.status] += 1
    assert set(statuses) == {200, 503}
    assert service.counts["assignments"] == statuses[200]
    assert_rate_at_most(statuses[503], 150, 0.4)
    assert_rate_at_most(statuses[200], 150, 0.6)


async def test_a_held_response_times_out_and_the_retry_is_idempotent() -> None:
    faults = Faults(timeout_rate=0.999, timeout_delay=2.0)
    service = GoldService(POOL, BANK, latency=Latency("constant", 60.0), seed=3, faults=faults)
    body = {"assignments": [_assignment("once")]}
    async with serving(service) as url, aiohttp.ClientSession() as session:
        for _ in range(2):
            with pytest.raises(TimeoutError):
                async with session.post(
                    url + ASSIGNMENTS_PATH, json=body, timeout=aiohttp.ClientTimeout(total=0.2)
                ):
                    pass
    assert service.counts["timeouts"] == 2
    assert service.counts["assignments"] == 1


async def test_duplicates_and_reordering() -> None:
    faults = Faults(duplicate_rate=0.5, reorder=True)
    service = GoldService(POOL, BANK, latency=Latency(), seed=5, faults=faults)
    ids = [f"a{i:02d}" for i in range(40)]
    async with serving(service) as url, aiohttp.ClientSession() as session:
        await _post(
            session, url, *(_assignment(i, POOL.workers[n % 10]) for n, i in enumerate(ids))
        )
        await asyncio.sleep(0.1)
        page = await _answers(session, url, limit=1000)
    seen = [item["id"] for item in page["answers"]]
    twice = [ident for ident, n in Counter(seen).items() if n == 2]
    assert set(seen) == set(ids)
    assert len(seen) == len(ids) + len(twice) == len(ids) + service.counts["duplicates"]
    assert 0 < len(twice) < len(ids)
    assert seen[: len(ids)] != ids  # shuffled within the page


@pytest.mark.slow
async def test_slow_and_rate_limited_replies() -> None:
    service = GoldService(POOL, BANK, seed=1, faults=Faults(slow=0.15, rate_limit=4.0))
    statuses = []
    retry_after = []
    async with serving(service) as url, aiohttp.ClientSession() as session:
        started = time.monotonic()
        await _answers(session, url)
        slow = time.monotonic() - started
        for _ in range(8):
            async with session.get(url + ANSWERS_PATH) as reply:
                statuses.append(reply.status)
                if reply.status == 429:
                    retry_after.append(float(reply.headers["Retry-After"]))
    assert slow >= 0.15
    assert 429 in statuses
    assert all(0.0 < wait <= 0.25 for wait in retry_after)


async def test_webhook_batches_are_signed_and_retried() -> None:
    received: list[tuple[bytes, str | None]] = []
    refusals = [500, 503]  # the first two deliveries fail: the service must try again

    async def hook(request: web.Request) -> web.Response:
        received.append((await request.read(), request.headers.get(SIGNATURE_HEADER)))
        return web.Response(status=refusals.pop(0) if refusals else 200)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    hook_url = f"http://127.0.0.1:{runner.addresses[0][1]}/hook"
    secret = "w" * 32
    service = GoldService(POOL, BANK, latency=FAST, seed=1)
    try:
        async with serving(service) as url, aiohttp.ClientSession() as session:
            async with session.put(url + WEBHOOK_PATH, json={"url": hook_url, "secret": secret}):
                pass
            await _post(session, url, _assignment("a1"), _assignment("a2", "w02"))
            for _ in range(100):
                if not refusals and len(received) >= 3:
                    break
                await asyncio.sleep(0.05)
    finally:
        await runner.cleanup()
    assert len(received) >= 3
    assert all(verify(secret, body, signature) for body, signature in received)
    delivered = [item["id"] for body, _ in received[2:] for item in json.loads(body)["answers"]]
    assert sorted(delivered) == ["a1", "a2"]


def test_serve_prints_the_url_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from screener.cli.serve import TOKEN_ENV, serve

    monkeypatch.setenv(TOKEN_ENV, "serve-token-0123456789")
    result = CliRunner().invoke(serve, ["--stop-after", "0.1", "--latency", "constant:0.01"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("http://127.0.0.1:")
    assert "serve-token" not in result.output


async def test_silenced_assignments_are_never_answered_until_cancelled() -> None:
    service = GoldService(POOL, BANK, latency=Latency(), seed=6, faults=Faults(silence_rate=0.5))
    ids = [f"s{i:02d}" for i in range(40)]
    async with serving(service) as url, aiohttp.ClientSession() as session:
        await _post(
            session, url, *(_assignment(i, POOL.workers[n % 10]) for n, i in enumerate(ids))
        )
        await asyncio.sleep(0.2)
        answered = {item["id"] for item in (await _answers(session, url, limit=1000))["answers"]}
        silent = [i for i in ids if i not in answered]
        async with session.delete(url + assignment_path(silent[0])) as reply:
            cancelled = (await reply.json())["cancelled"]
    assert 0 < len(silent) < len(ids)
    assert len(silent) == service.counts["silenced"]
    assert cancelled  # still pending: the worker never answered it


async def test_posting_an_answered_id_again_delivers_its_answer_again() -> None:
    service = GoldService(POOL, BANK, latency=Latency(), seed=8)
    async with serving(service) as url, aiohttp.ClientSession() as session:
        await _post(session, url, _assignment("again"))
        await asyncio.sleep(0.05)
        first = await _answers(session, url, limit=10)
        await _post(session, url, _assignment("again"))
        later = await _answers(session, url, cursor=first["cursor"], limit=10)
    assert [item["id"] for item in first["answers"]] == ["again"]
    assert later["answers"] == first["answers"]  # the same answer, after the old cursor
    assert service.counts["assignments"] == 1
    assert service.counts["redelivered"] == 1
