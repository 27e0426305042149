"""Registered items over a real aiohttp server and a real run database: POST /v1/items, the
item a task reply names (among the platform's candidates), the final-label stream with its
cursor and long poll, bad input refused whole, the candidates journaled so that a resumed
gate makes the same choices and holds the same final labels, and the stand-in driving a
gate that chooses its items (no item over its cap, no worker labelling an item twice)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from gate_helpers import events, kinds, serving
from test_standin import made_dataset

from screener.errors import JournalMismatchError
from screener.gate import GateSettings, GoldShare
from screener.gate_service import GateApiError, ItemEntry, LabelItem, replay_gate, run_gate
from screener.gate_service.client import GateClient
from screener.journal import Event, EventKind, Journal
from screener.testing.doubles.arrivals import StandInSettings
from screener.testing.doubles.standin import run_standin

#: Gold every other request while screening (answered right below, so that the workers'
#: accuracies rise and items settle), no audits.
ITEMS = GateSettings(policy=GoldShare(every=2), audit_rate=0.0, confidence=0.9)
TASKS = [ItemEntry(f"t{i}", 3) for i in range(6)]


async def _work(
    client: GateClient, worker: str, request: str, items: list[str] | None = None
) -> dict[str, Any]:
    """One request of ``worker``: a gold answer given right (naming one of three gold items
    and the worker's label, for the gold check), or the named item labelled."""
    reply = await client.next(worker, request, items=items)
    if reply["kind"] == "gold":
        gold = f"g{len(request) % 3}"
        await client.answer(reply["gold"], worker=worker, reward=1.0, answer="yes", item=gold)
    elif reply["item"] is not None:
        await client.labels([LabelItem(worker, reply["item"], "yes", f"{request}:label")])
    return reply


async def test_items_are_registered_named_labelled_and_streamed_final(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db, ITEMS) as (session, url), GateClient(url) as client:
        assert await client.add_items(TASKS) == 6
        assert await client.add_items([*TASKS[:2], ItemEntry("t9", 5, 2.0)]) == 1
        named = []
        for r in range(60):
            reply = await _work(client, f"w{r % 5}", f"r{r}")
            named.append((f"w{r % 5}", reply["item"]))
        page, cursor = await client.final_labels()
        later, same = await client.final_labels(cursor, wait=0.2)  # none more: waits, empty
        status = await client.status()
        expected = [entry.to_dict() for entry in session.gate.final_labels()]
    pairs = [pair for pair in named if pair[1] is not None]
    assert len(pairs) == len(set(pairs)), "a worker labelled an item twice"
    assert pairs[0] == ("w0", "t9")  # the highest priority first
    assert page == expected and cursor == len(expected) - 1 and later == [] and same == cursor
    assert {entry["item"] for entry in page} == {f"t{i}" for i in range(6)} | {"t9"}
    assert all(e["given"] <= (5 if e["item"] == "t9" else 3) for e in page)
    assert status["items"] == {"registered": 7, "done": 7}
    check = status["gold_check"]
    assert check["checks"] > 0 and check["wrong"] == 0  # every gold answer right: "yes"
    assert 0 < check["misleading"] < 0.1  # under the prior's mean: no check was wrong
    assert kinds(db, session.run_id)["registered"] == 2  # the repeat of t0, t1 changed nothing


async def test_a_long_poll_returns_when_an_item_is_settled(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db, ITEMS) as (_, url), GateClient(url) as client:
        await client.add_items([ItemEntry("only", 2)])
        poll = asyncio.create_task(client.final_labels(-1, wait=20.0))
        await asyncio.sleep(0.1)
        assert not poll.done()
        for r in range(6):
            await _work(client, f"w{r % 3}", f"r{r}")
        page, cursor = await asyncio.wait_for(poll, 10)
    assert [(e["seq"], e["item"], e["state"]) for e in page] == [(0, "only", "capped")]
    assert cursor == 0


async def test_bad_items_are_refused_whole_and_write_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db, ITEMS) as (session, url), GateClient(url) as client:
        with pytest.raises(GateApiError) as refused:
            await client.add_items([ItemEntry("ok"), ItemEntry("bad", 0)])
        bodies: list[object] = [
            {"items": []}, {"item": ""}, {"item": "x", "cap": 1.5}, {"item": "x", "cap": True},
            {"item": "x", "priority": "high"}, {"item": "x", "extra": 1}, [{"item": "x"}],
            {"items": [{"item": "ok"}, {"item": "x", "cap": -1}]},
        ]  # fmt: skip
        nexts: list[object] = [
            {"worker": "w", "items": "t1"}, {"worker": "w", "items": [""]},
            {"worker": "w", "items": [1]},
        ]  # fmt: skip
        replies = []
        async with aiohttp.ClientSession() as http:
            for path, body in [("/v1/items", b) for b in bodies] + [("/v1/next", b) for b in nexts]:
                async with http.post(url + path, json=body) as response:
                    error = (await response.json())["error"]
                    replies.append((response.status, "\n" not in error and "malformed" in error))
            async with http.get(url + "/v1/labels/final?cursor=5") as response:
                beyond = response.status, (await response.json())["error"]
        status = await client.status()
    assert refused.value.status == 400 and "items[1]" in str(refused.value)
    assert replies == [(400, True)] * (len(bodies) + len(nexts))
    assert beyond[0] == 400 and "beyond the final labels" in beyond[1]
    assert status["items"]["registered"] == 0 and status["requests"] == 0
    journaled = kinds(db, session.run_id)
    assert journaled["registered"] == 0 and journaled["requested"] == 0


async def test_candidates_are_journaled_and_a_resumed_gate_holds_the_same_labels(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db, ITEMS) as (session, url), GateClient(url) as client:
        run_id = session.run_id
        await client.add_items(TASKS)
        offered = []
        for r in range(40):  # the platform shows each worker the items from the last down
            worker = f"w{r % 4}"
            reply = await _work(client, worker, f"r{r}", [f"t{i}" for i in (5, 4, 3)])
            offered.append(reply["item"])
        before = [entry.to_dict() for entry in session.gate.final_labels()]
    assert set(offered) - {None} <= {"t3", "t4", "t5"} and "t5" in offered
    requested = [json.loads(e.response or "{}") for e in events(db, run_id)
                 if e.kind is EventKind.REQUESTED]  # fmt: skip
    assert all(body["candidates"] == ["t5", "t4", "t3"] for body in requested)
    async with serving(db, resume=run_id) as (resumed, url), GateClient(url) as client:
        page, _ = await client.final_labels()
        assert page == before and resumed.gate.summary()["items"]["registered"] == 6
        assert resumed.gate.items.check.checks == session.gate.items.check.checks > 0
        assert await client.add_items(TASKS) == 0  # registered already: not twice
        assert (await _work(client, "w9", "late", ["t0"]))["kind"] in ("task", "gold")
    # Replayed without the candidates, the gate would choose other items: refused.
    with Journal(db, create=False) as journal:
        record, logged = journal.get_run(run_id), journal.events(run_id)
    stripped = [_without_candidates(e) for e in logged]
    with pytest.raises(JournalMismatchError):
        replay_gate(run_gate(record), stripped)
    replayed = run_gate(record)
    replay_gate(replayed, logged)
    assert [e.to_dict() for e in replayed.final_labels()][: len(before)] == before


def _without_candidates(event: Event) -> Event:
    if event.kind is not EventKind.REQUESTED:
        return event
    body = json.loads(event.response or "{}")
    body.pop("candidates", None)
    return dataclasses.replace(event, response=json.dumps(body))


async def test_the_standin_labels_the_items_the_gate_names(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    data = made_dataset(workers=10, items=40)
    crowd = StandInSettings(register_items=True)
    async with serving(db, ITEMS) as (session, url):
        report = await run_standin(data, url, crowd)
        book = session.gate.items
        logged = events(db, session.run_id)
    labelled = [(e.worker or "", e.detail or "") for e in logged if e.kind is EventKind.LABELLED]
    replies = [(e.worker or "", json.loads(e.response or "{}")) for e in logged
               if e.kind is EventKind.REQUESTED]  # fmt: skip
    named = [(worker, str(body["item"])) for worker, body in replies if "item" in body]
    assert named == labelled  # each worker labels the item the gate named, at once
    caps = Counter(r.item for rs in data.records for r in rs)
    assert report.finished and len(book.items) == report.gate["items"]["registered"] > 0
    assert all(state.cap == caps[item] for item, state in book.items.items())
    assert all(state.given <= (state.cap or 0) for state in book.items.values())
    assert len(labelled) == len(set(labelled)), "a worker labelled an item twice"
    per_item = Counter(item for _, item in labelled)
    assert all(per_item[item] <= caps[item] for item in per_item)
    assert book.done_count > 0 and report.gate["items"]["done"] == book.done_count
