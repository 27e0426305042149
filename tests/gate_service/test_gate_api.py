"""The gate's HTTP API on a real aiohttp server (127.0.0.1, any free port) over a real run
database: replies, answers, leaving, the decisions stream (at least once, idempotent reads,
long polls), and every call journaled, with its decisions, before the reply."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import aiohttp
import pytest
from gate_helpers import BANK, QUICK, decided_events, events, kinds, serving

from screener.gate_service import AnswerItem
from screener.gate_service.client import GateClient
from screener.journal import EventKind

CROWD = {"ann": 0.95, "bob": 0.1, "cy": 0.9, "dee": 0.2}


async def drive(
    client: GateClient, rounds: int, seed: int = 0, first: int = 0
) -> list[dict[str, object]]:
    """The crowd asks for work in turns (rounds ``first``, ``first + 1``...; a round's number
    makes its request ids); gold answered at once, right with the worker's accuracy."""
    draw = random.Random(seed)
    replies = []
    for round_ in range(first, first + rounds):
        for worker, accuracy in CROWD.items():
            reply = await client.next(worker, f"{worker}:{round_}")
            replies.append(reply)
            if reply["kind"] == "gold":
                await client.answer(
                    str(reply["gold"]),
                    worker=str(reply["worker"]),
                    reward=float(draw.random() < accuracy),
                )
    return replies


def _item(reply: dict[str, object], reward: float) -> AnswerItem:
    return AnswerItem(str(reply["gold"]), str(reply["worker"]), reward=reward)


async def test_workers_are_screened_and_decisions_stream_out(database_url: str) -> None:
    async with serving(database_url) as (session, url), GateClient(url) as client:
        replies = await drive(client, 30)
        decisions, cursor = await client.decisions()
        status = await client.status()
    assert {(d["worker"], d["decision"]) for d in decisions} == {
        ("bob", "banned"), ("dee", "banned"), ("ann", "accepted"), ("cy", "accepted"),
    }  # fmt: skip
    assert [d["seq"] for d in decisions] == list(range(4)) and cursor == 3
    banned_at = {d["worker"]: d["request"] for d in decisions if d["decision"] == "banned"}
    for worker in banned_at:  # blocked from the request after the ban on
        kinds_seen = [r["kind"] for r in replies if r["worker"] == worker]
        first = kinds_seen.index("blocked")
        assert set(kinds_seen[first:]) == {"blocked"} and first > 0
    assert status["requests"] == 120 and status["decisions"] == 4
    assert status["settings"] == QUICK.to_dict() and status["run"] == session.run_id
    assert status["workers"] == {"screening": 0, "qualified": 2, "banned": 2, "undecided": 0}
    money = status["money"]
    assert money["total"] == pytest.approx(status["gold"] * 0.05 + status["tasks"] * 0.05)
    # The journal holds each call and each decision, in the decided events' format.
    counts = kinds(database_url, session.run_id)
    assert counts["requested"] == 120 and counts["answered"] == status["gold"]
    assert decided_events(database_url, session.run_id) == [
        (d["worker"], d["decision"], {"seq": d["seq"], "reason": d["reason"]}) for d in decisions
    ]


async def test_every_call_is_journaled_before_its_reply(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db) as (session, url), GateClient(url) as client:
        for round_ in range(12):
            for worker in CROWD:
                reply = await client.next(worker, f"{worker}:{round_}")
                last = events(db, session.run_id)[-1]  # read by another journal, at once
                if last.kind is EventKind.DECIDED:
                    last = next(e for e in reversed(events(db, session.run_id))
                                if e.kind is EventKind.REQUESTED)  # fmt: skip
                assert (last.kind, last.worker, last.detail) == (
                    EventKind.REQUESTED, worker, f"{worker}:{round_}",
                )  # fmt: skip
                assert json.loads(last.response or "")["gold"] == reply["gold"]
                if reply["kind"] == "gold":
                    await client.answer(str(reply["gold"]), worker=str(reply["worker"]), reward=1.0)
                    answered = [e for e in events(db, session.run_id)
                                if e.kind is EventKind.ANSWERED]  # fmt: skip
                    assert answered[-1].detail == reply["gold"]
                seen, _ = await client.decisions()
                assert len(seen) == len(decided_events(db, session.run_id))


async def test_a_bank_names_the_question_and_scores_raw_answers(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db, bank=BANK) as (session, url), GateClient(url) as client:
        reply = await client.next("ann", "r1")
        question = BANK.get(str(reply["question"]))
        assert reply["kind"] == "gold" and reply["payload"] == question.payload
        key = float(question.key)
        assert await client.answer(str(reply["gold"]), worker="ann", answer=key) == "accepted"
        wrong = await client.next("ann", "r2")
        assert wrong["question"] != reply["question"]  # never the same question twice
        assert await client.answer(str(wrong["gold"]), worker="ann", answer="no idea") == "accepted"
        recorded = [e for e in events(db, session.run_id) if e.kind is EventKind.ANSWERED]
    assert [json.loads(e.response or "") for e in recorded] == [float(question.key), "no idea"]
    assert session.gate.method.stats.count.sum() == 2  # both scored and told
    async with serving(db, resume=session.run_id) as (again, url), GateClient(url) as client:
        assert again.gate.bank == BANK  # kept in the run
        owed = await client.next("ann", "r3")
        assert owed["payload"] == BANK.get(str(owed["question"])).payload
        assert await client.answer(str(owed["gold"]), worker="ann", answer="7") == "accepted"


async def test_concurrent_calls_share_commits_and_replay_the_same(tmp_path: Path) -> None:
    """Many workers at once: calls are served in the order they are journaled, so the gate a
    resume rebuilds is the gate that served them."""
    db = str(tmp_path / "gate.db")

    async def worker(client: GateClient, name: str, accuracy: float) -> None:
        draw = random.Random(name)
        for round_ in range(15):
            reply = await client.next(name, f"{name}:{round_}")
            if reply["kind"] == "gold":
                await client.answer(
                    str(reply["gold"]),
                    worker=str(reply["worker"]),
                    reward=float(draw.random() < accuracy),
                )

    async with serving(db) as (session, url), GateClient(url) as client:
        crowd = {f"w{i:02d}": 0.15 if i % 4 == 0 else 0.9 for i in range(24)}
        await asyncio.gather(*(worker(client, name, a) for name, a in crowd.items()))
        live = (await client.status(), await client.decisions(limit=1000))
    assert live[0]["requests"] == 24 * 15 and live[1][0]
    async with serving(db, resume=session.run_id) as (_, url), GateClient(url) as client:
        assert (await client.status(), await client.decisions(limit=1000)) == live


async def test_repeated_and_late_calls_change_nothing_twice(tmp_path: Path) -> None:
    """At least once from the platform's side: a request sent again gets its first reply, an
    answer sent again is a duplicate, an answer after its worker left is late, a worker who
    comes back is screened again; a batch mixes them in any order. Only the calls that
    changed the gate are journaled."""
    db = str(tmp_path / "gate.db")
    async with serving(db) as (session, url), GateClient(url) as client:
        first = await client.next("ann", "r1")
        assert await client.next("ann", "r1") == first
        assert session.gate.requests == 1
        other = await client.next("bob", "r2")
        outcomes = await client.answers([
            _item(other, 0.0), _item(first, 1.0), _item(other, 0.0),
        ])  # fmt: skip
        assert outcomes == ["accepted", "accepted", "duplicate"]
        third = await client.next("cy", "r3")
        assert await client.leave("cy") is True and await client.leave("cy") is False
        assert await client.answer(str(third["gold"]), worker="cy", reward=1.0) == "late"
        back = await client.next("cy", "r4")
        assert back["kind"] == "gold" and back["gold"] != third["gold"]
        assert await client.leave("nobody") is False
    counts = kinds(db, session.run_id)
    assert (counts["requested"], counts["answered"], counts["duplicate"], counts["late"]) == (
        4, 2, 0, 0,
    )  # fmt: skip
    assert counts["unavailable"] == 1  # a leave that changed nothing is not journaled


async def test_the_stream_is_read_idempotently_in_any_order(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db) as (_, url), GateClient(url) as client:
        await drive(client, 30)
        everything, end = await client.decisions()
        assert len(everything) == 4
        for cursor in (2, -1, 0, 3, 1, 2, -1):  # reordered and repeated reads
            page, after = await client.decisions(cursor)
            assert page == everything[cursor + 1 :]
            assert after == (end if page else cursor)
        page, after = await client.decisions(-1, limit=2)
        assert page == everything[:2] and after == 1
        followed = []
        async for decision in client.follow(0, wait=0.0):
            followed.append(decision)
            if decision["seq"] == end:
                break
        assert followed == everything[1:]


async def test_a_long_poll_returns_the_decision_made_while_it_waits(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db) as (session, url), GateClient(url) as client:
        waiting = asyncio.create_task(client.decisions(-1, wait=60.0))
        await asyncio.sleep(0.2)
        assert not waiting.done()
        rounds = 0
        while not session.gate.decisions:  # requests until the first decision is made
            await drive(client, 1, seed=rounds, first=rounds)
            rounds += 1
        # The poll ends with that decision, long before its 60 s are up.
        done, _ = await asyncio.wait({waiting}, timeout=20.0)
        assert done
        page, cursor = waiting.result()
        assert page[0]["seq"] == 0 and cursor == page[-1]["seq"]
        empty, same = await client.decisions(cursor, wait=0.3)  # nothing new: empty, same
        assert (empty, same) == ([], cursor)


async def test_decisions_and_their_times_survive_a_restart(database_url: str) -> None:
    async with serving(database_url) as (session, url), GateClient(url) as client:
        await drive(client, 12)
        before, _ = await client.decisions()
        status = await client.status()
    run_id = session.run_id
    async with serving(database_url, resume=run_id) as (_, url), GateClient(url) as client:
        after, _ = await client.decisions()
        assert after == before and (await client.status())["requests"] == status["requests"]
        await drive(client, 30)  # and the gate goes on where it stopped
        assert len((await client.decisions())[0]) == 4
    assert kinds(database_url, run_id)["resumed"] == 1


async def test_a_long_poll_ends_when_the_gate_shuts_down(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db) as (session, url), aiohttp.ClientSession() as http:
        poll = asyncio.create_task(http.get(f"{url}/v1/decisions?wait=30"))
        await asyncio.sleep(0.2)
        session.stop_serving()
        response = await asyncio.wait_for(poll, 5.0)
        assert response.status == 503
        assert "shutting down" in (await response.json())["error"]
