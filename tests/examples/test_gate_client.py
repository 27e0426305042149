"""examples/gate_client.py, the client a platform integrator copies, against a real gate on
127.0.0.1: the calls, the refusals, the retries, and the script that follows decisions."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from screener.bank import GoldBank, GoldQuestion, Scoring
from screener.gate import DEFAULT_PARAMS, FirstGold, GateSettings
from screener.gate_service import GateSession, listen, serve_gate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gate_client.py"
SETTINGS = GateSettings(
    policy=FirstGold(), max_unscreened=0, params={**DEFAULT_PARAMS, "pilot": 2}, audit_rate=0.0
)
BANK = GoldBank(tuple(GoldQuestion(f"q{i}", f"{i} + {i}?", str(2 * i), Scoring.NUMERIC)
                      for i in range(40)))  # fmt: skip
TOKEN = "the-platform-token"


@pytest.fixture(scope="module")
def example() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("gate_client", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gate_client"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    del sys.modules["gate_client"]


def screen(example: ModuleType, url: str) -> list[object]:
    """What a platform does, in its own (synchronous) code: ask, answer, and follow."""
    client = example.GateClient(url, TOKEN, retries=2)
    accuracy = {"ann": 1.0, "bob": 0.0, "cy": 1.0}
    for round_ in range(25):
        for worker, right in accuracy.items():
            reply = client.next(worker, f"{worker}:{round_}")
            if reply.kind == "gold":
                key = BANK.get(reply.question).key
                assert reply.payload == BANK.get(reply.question).payload
                answer = key if right else "wrong"
                assert client.answer(reply.gold, worker=worker, answer=answer) == "accepted"
                assert client.answer(reply.gold, worker=worker, reward=1.0) == "duplicate"
    assert client.leave("cy") is True
    decisions, cursor = client.decisions()
    followed = []
    for decision in client.follow(-1, wait=0.0):
        followed.append(decision)
        if decision.seq == cursor:
            break
    assert followed == decisions
    with pytest.raises(example.GateError) as refused:
        client.answer("g999", worker="ann", reward=1.0)
    assert refused.value.status == 404 and "g999" in refused.value.message
    with pytest.raises(example.GateError) as unauthorised:
        example.GateClient(url, "wrong").status()
    assert unauthorised.value.status == 401
    return [client.status(), decisions]


async def test_the_example_client_screens_through_a_gate(
    example: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = await GateSession.create(SETTINGS, BANK, str(tmp_path / "gate.db"))
    runner, url = await serve_gate(session, TOKEN, listen())
    try:
        status, decisions = await asyncio.to_thread(screen, example, url)
        cursor_file = tmp_path / "cursor.txt"
        args = [url, "--cursor-file", str(cursor_file), "--once"]
        monkey = pytest.MonkeyPatch()
        monkey.setenv(example.TOKEN_ENV, TOKEN)
        try:
            assert await asyncio.to_thread(example.main, args) == 0
            printed = capsys.readouterr().out.splitlines()
            assert await asyncio.to_thread(example.main, args) == 0  # nothing new: none again
            assert capsys.readouterr().out == ""
        finally:
            monkey.undo()
    finally:
        await runner.cleanup()
        await session.close()
    assert {(d.worker, d.decision) for d in decisions} == {  # type: ignore[attr-defined]
        ("ann", "accepted"), ("bob", "banned"), ("cy", "accepted"),
    }  # fmt: skip
    assert [json.loads(line)["seq"] for line in printed] == [0, 1, 2]
    assert cursor_file.read_text() == "2"
    assert status["workers"]["banned"] == 1  # type: ignore[index]


def test_the_example_client_gives_up_after_its_retries(example: ModuleType) -> None:
    with listen() as sock:  # a port nobody answers on once closed
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    client = example.GateClient(url, retries=2, timeout=1.0)
    with pytest.raises(example.GateError) as failed:
        client.status()
    assert failed.value.status == 503 and "after 2 retries" in failed.value.message
