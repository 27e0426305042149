"""The http oracle: whole runs against the reference service, faults, webhooks, secrets."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from live_helpers import BANK, POOL, SPAMMER, serving
from plan_helpers import make_plan

from screener.errors import ConfigError, OracleError
from screener.journal import Event, EventKind, Journal
from screener.oracles import Answer, PullRequest
from screener.oracles.http import NEEDS_BANK, HttpOracle
from screener.oracles.http.protocol import SIGNATURE_HEADER, sign
from screener.oracles.latency import Latency
from screener.orchestrator import RunOptions
from screener.runs.session import start_run
from screener.service import Faults, GoldService

SEED = 3
PARAMS = {"k": 1.5, "delta": 0.1, "direction": "low"}
CLIENT = {"poll_wait": 0.5, "request_timeout": 0.25, "backoff": 0.01, "max_attempts": 6}
LATENCY = Latency("exponential", 0.004)


OPTIONS = RunOptions(concurrency=16, timeout=10.0)


def _events(db: Path, run_id: str) -> list[Event]:
    with Journal(str(db), create=False) as journal:
        return journal.events(run_id)


def _rewards(events: list[Event]) -> dict[tuple[int, int], float]:
    return {
        (e.arm, e.seq): e.reward
        for e in events
        if e.kind is EventKind.ANSWERED and e.arm is not None and e.seq is not None
        if e.reward is not None
    }


async def _run(tmp_path: Path, name: str, faults: Faults | None = None, **options: Any) -> Any:
    service = GoldService(POOL, BANK, latency=LATENCY, faults=faults, seed=1)
    async with serving(service) as url:
        db = tmp_path / f"{name}.db"
        run_id, result = await start_run(
            make_plan(POOL, "rr", PARAMS, seed=SEED, oracle="http", options=OPTIONS,
                      oracle_options={"url": url, **CLIENT, **options}), str(db),
        )  # fmt: skip
    return result, _events(db, run_id), service


async def test_a_run_finds_the_spammer_and_journals_questions_and_raw_answers(
    tmp_path: Path,
) -> None:
    # No fault is injected, so no request may time out: the 0.25 s that the fault tests use
    # was missed on a loaded CI machine (the service shares the run's event loop), and the
    # retries it caused are another test's subject.
    result, events, service = await _run(tmp_path, "clean", request_timeout=10.0)
    assert result.condition_met
    assert result.outliers == (SPAMMER,)
    answered = [e for e in events if e.kind is EventKind.ANSWERED]
    kinds = Counter(e.kind.value for e in events)
    assert len(answered) == result.total_pulls
    assert service.counts["assignments"] == kinds["asked"] == len(answered) + kinds["cancelled"]
    for event in answered:
        assert event.arm is not None and event.seq is not None and event.response is not None
        question = POOL.question_for(event.arm, event.seq, SEED)
        assert question is not None and event.question == question.id
        raw = json.loads(event.response)
        assert raw == service.answer_for(POOL.workers[event.arm], question)
        assert event.reward == question.score(raw)
    assert kinds["retried"] == kinds["duplicate"] == kinds["failed"] == 0


@pytest.mark.slow
async def test_faults_change_nothing_but_the_journal(tmp_path: Path) -> None:
    clean, clean_events, _ = await _run(tmp_path, "clean")
    faults = Faults(
        error_rate=0.1, timeout_rate=0.05, timeout_delay=1.0, duplicate_rate=0.1, reorder=True
    )
    faulty, faulty_events, service = await _run(tmp_path, "faulty", faults)
    assert faulty.outliers == clean.outliers == (SPAMMER,)
    assert [w.decision for w in faulty.workers] == [w.decision for w in clean.workers]
    kinds = Counter(e.kind.value for e in faulty_events)
    assert kinds["retried"] > 0 and kinds["duplicate"] > 0
    assert service.counts["503"] > 0 and service.counts["timeouts"] > 0
    details = [e.detail or "" for e in faulty_events if e.kind is EventKind.RETRIED]
    assert any(d.startswith("HTTP 503, attempt ") for d in details)
    assert any(d.startswith("no reply within") for d in details)
    # The same question to the same worker gets the same answer, faults or not.
    clean_rewards, faulty_rewards = _rewards(clean_events), _rewards(faulty_events)
    common = clean_rewards.keys() & faulty_rewards.keys()
    assert len(common) > 0.9 * len(clean_rewards)
    assert all(clean_rewards[key] == faulty_rewards[key] for key in common)


async def test_webhook_delivery_run(tmp_path: Path) -> None:
    result, events, service = await _run(tmp_path, "webhook", delivery="webhook")
    assert result.outliers == (SPAMMER,)
    assert service.counts["webhook_posts"] > 0
    assert Counter(e.kind.value for e in events)["answered"] == result.total_pulls


async def test_webhook_rejects_a_bad_signature_and_tells_nothing() -> None:
    service = GoldService(POOL, BANK, latency=Latency("constant", 60.0), seed=1)
    async with serving(service) as url:
        oracle = HttpOracle.from_options(POOL, {"url": url, "delivery": "webhook"}, SEED)
        async with oracle, aiohttp.ClientSession() as session:
            hook = oracle.webhook_address
            assert hook is not None
            namespace = oracle.describe()["namespace"]
            body = json.dumps({"answers": [{"id": f"{namespace}-0", "answer": "1"}]}).encode()
            for signature in (sign("not-the-secret-at-all", body), None):
                headers = {} if signature is None else {SIGNATURE_HEADER: signature}
                async with session.post(hook, data=body, headers=headers) as reply:
                    assert reply.status == 401
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.3):
                    await oracle.receive()
            secret = oracle._webhook_secret  # the test plays the service, which knows it
            assert secret is not None
            headers = {SIGNATURE_HEADER: sign(secret, body)}
            async with session.post(hook, data=body, headers=headers) as reply:
                assert reply.status == 200
            async with asyncio.timeout(2.0):
                assert await oracle.receive() == [Answer(0, response="1")]


async def test_the_token_never_leaks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "tok-" + "3f9a7c1e5b" * 4
    monkeypatch.setenv("SCREENER_TOKEN", token)
    service = GoldService(POOL, BANK, token=token, latency=LATENCY, seed=1)
    db = tmp_path / "secret.db"
    async with serving(service) as url:
        plan = make_plan(POOL, "rr", PARAMS, seed=SEED, oracle="http", options=OPTIONS,
                         oracle_options={"url": url, **CLIENT})  # fmt: skip
        run_id, result = await start_run(plan, str(db))
        oracle = HttpOracle.from_options(POOL, {"url": url, **CLIENT}, SEED)
        monkeypatch.setenv("SCREENER_TOKEN", token[::-1])  # a wrong token: the run must stop
        with pytest.raises(OracleError) as refused:
            await start_run(plan, str(tmp_path / "refused.db"))
    assert result.outliers == (SPAMMER,)
    assert "SCREENER_TOKEN" in str(refused.value)
    texts = [json.dumps(oracle.describe()), repr(oracle), str(refused.value), repr(refused.value)]
    assert not any(token in text or token[::-1] in text for text in texts)
    stored = b"".join(path.read_bytes() for path in tmp_path.iterdir() if path.is_file())
    assert stored and token.encode() not in stored and token[::-1].encode() not in stored
    assert len(_events(db, run_id)) > result.total_pulls


# ----------------------------------------------------------- against a scripted service
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def _scripted(post: Handler, tmp_answers: list[dict[str, Any]] | None = None) -> Any:
    """A stand-in service: POST /v1/assignments runs ``post``; GET /v1/answers serves
    ``tmp_answers`` once."""
    pending = list(tmp_answers or [])

    async def answers(request: web.Request) -> web.Response:
        if request.query.get("cursor") == "end":
            return web.json_response({"answers": [], "cursor": "0"})
        if not pending:
            await asyncio.sleep(float(request.query.get("wait", "0")))
        page, pending[:] = list(pending), []
        return web.json_response({"answers": page, "cursor": "1"})

    app = web.Application()
    app.router.add_post("/v1/assignments", post)
    app.router.add_get("/v1/answers", answers)
    app.router.add_delete("/v1/assignments/{id}", _ok)
    runner = web.AppRunner(app, shutdown_timeout=0.5)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"


async def _ok(request: web.Request) -> web.Response:
    return web.json_response({})


def _requests(n: int) -> list[PullRequest]:
    return [PullRequest(i, POOL.workers[i], i, 0, POOL.question_for(i, 0, SEED)) for i in range(n)]


async def _collect(oracle: HttpOracle, count: int) -> list[Answer]:
    got: list[Answer] = []
    async with asyncio.timeout(5.0):
        while len(got) < count:
            got.extend(await oracle.receive())
    return got


async def test_exhausted_retries_and_429_retry_after() -> None:
    calls: list[float] = []

    async def post(request: web.Request) -> web.Response:
        calls.append(time.monotonic())
        if len(calls) == 1:
            return web.json_response({}, status=429, headers={"Retry-After": "0.3"})
        return web.json_response({"error": "down"}, status=503)

    runner, url = await _scripted(post)
    try:
        options = {"url": url, "max_attempts": 3, "backoff": 0.01, "poll_wait": 0.2}
        oracle = HttpOracle.from_options(POOL, options, SEED)
        async with oracle:
            await oracle.submit(_requests(2))
            answers = await _collect(oracle, 2)
            notes = oracle.take_retry_notes()
    finally:
        await runner.cleanup()
    assert len(calls) == 3
    assert calls[1] - calls[0] >= 0.29  # Retry-After honoured
    assert [a.pull_id for a in answers] == [0, 1]
    assert all((a.error or "").startswith("gave up after 3 attempts: HTTP 503") for a in answers)
    assert [n.detail for n in notes] == ["HTTP 429, attempt 2 of 3", "HTTP 503, attempt 3 of 3"]
    assert all(n.pull_ids == (0, 1) for n in notes)


async def test_rejections_malformed_replies_and_missing_questions() -> None:
    replies: list[Any] = []

    async def post(request: web.Request) -> web.Response:
        ids = [a["id"] for a in (await request.json())["assignments"]]
        if not replies:
            replies.append(ids)
            rejected = [
                {"id": ids[0], "reason": "unavailable: gone"},
                {"id": ids[1], "reason": "unknown worker 'w02'"},
            ]
            return web.json_response({"accepted": ids[2:], "rejected": rejected})
        return web.Response(text="<html>oops</html>")

    runner, url = await _scripted(post)
    try:
        oracle = HttpOracle.from_options(POOL, {"url": url, "poll_wait": 0.2}, SEED)
        async with oracle:
            await oracle.submit(_requests(3))
            first = await _collect(oracle, 2)
            await oracle.submit([*_requests(5)[3:], PullRequest(9, "w10", 9, 0, None)])
            second = await _collect(oracle, 3)
    finally:
        await runner.cleanup()
    assert first == [Answer(0, unavailable="unavailable: gone"),
                     Answer(1, error="rejected: unknown worker 'w02'")]  # fmt: skip
    assert Answer(9, error=NEEDS_BANK) in second
    malformed = [a for a in second if a.pull_id in (3, 4)]
    assert len(malformed) == 2 and all((a.error or "").startswith("malformed") for a in malformed)


async def test_malformed_answer_items_become_errors_for_known_pulls() -> None:
    async def post(request: web.Request) -> web.Response:
        ids = [a["id"] for a in (await request.json())["assignments"]]
        return web.json_response({"accepted": ids, "rejected": []})

    items: list[dict[str, Any]] = [
        {"id": "ns-0", "answer": "12"},
        {"id": "ns-1", "answer": None},
        {"id": "other-run-2", "answer": "5"},
        {"id": "ns-3", "unavailable": "unavailable: left"},
        {"no": "id"},
    ]
    runner, url = await _scripted(post, items)
    try:
        oracle = HttpOracle.from_options(POOL, {"url": url, "namespace": "ns"}, SEED)
        async with oracle:
            answers = await _collect(oracle, 3)
    finally:
        await runner.cleanup()
    assert answers[0] == Answer(0, response="12")
    assert answers[1] == Answer(3, unavailable="unavailable: left")
    assert answers[2].pull_id == 1 and (answers[2].error or "").startswith("malformed")


def test_options_are_checked_and_described() -> None:
    oracle = HttpOracle.from_options(
        POOL, {"url": "http://127.0.0.1:8080/", "batch": "50", "poll_wait": 2}, SEED
    )
    described = oracle.describe()
    assert described["url"] == "http://127.0.0.1:8080"
    assert described["batch"] == 50 and described["poll_wait"] == 2.0
    assert HttpOracle.from_options(POOL, described, SEED).describe() == described
    other = HttpOracle.from_options(POOL, {"url": "http://127.0.0.1:8080"}, SEED)
    assert other.describe()["namespace"] != described["namespace"]
    bad: list[dict[str, Any]] = [
        {},
        {"url": "ftp://x"},
        {"url": "http://user:pw@127.0.0.1"},
        {"url": "http://127.0.0.1", "batch": 0},
        {"url": "http://127.0.0.1", "batch": 1.5},
        {"url": "http://127.0.0.1", "delivery": "carrier-pigeon"},
        {"url": "http://127.0.0.1", "namespace": "has space"},
        {"url": "http://127.0.0.1", "tokne_env": "X"},
    ]
    for options in bad:
        with pytest.raises(ConfigError) as error:
            HttpOracle.from_options(POOL, options, SEED)
        assert "pw" not in str(error.value)
