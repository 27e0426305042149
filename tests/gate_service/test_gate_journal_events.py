"""What the gate journals (issue 50, item 3: journal only what changes something), and its
ids (item 4), on a real aiohttp server (127.0.0.1, any free port) over a real SQLite file:
repeated requests, duplicate and late answers and no-op leaves add no event and still replay
exactly; a repeat's reply waits for its first reply's commit; the secret gold key stays out
of every output; a journal from before gold keys resumes with its sequential ids."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections import Counter
from pathlib import Path

import pytest
from gate_helpers import QUICK, kinds, serving, start_gate, stop_gate
from test_gate_command import screener

from screener.gate import FirstGold, Gate, GateSettings
from screener.gate_service import GateApiError, LabelItem
from screener.gate_service.client import GateClient
from screener.gate_service.journaled import answer_event, gate_spec, request_event
from screener.gate_service.protocol import AnswerItem, NextRequest
from screener.journal import Event, EventKind, Journal

#: The kinds of the calls' events (the rest: started, resumed, stopped, decided).
CALLS = ("requested", "answered", "duplicate", "late", "labelled", "unavailable")


def calls(db: str, run_id: str) -> Counter[str]:
    counts = kinds(db, run_id)
    return Counter({kind: counts[kind] for kind in CALLS if counts[kind]})


async def test_calls_that_change_nothing_journal_nothing_and_resume_the_same(
    tmp_path: Path,
) -> None:
    """A repeated request id (next, labels), a duplicate or late answer, a second label of an
    item without a request id and a leave of no one each added an event, every time."""
    db = str(tmp_path / "gate.db")
    async with serving(db) as (session, url), GateClient(url) as client:
        run_id = session.run_id
        ann = await client.next("ann", "r1")
        cy = await client.next("cy", "r2")
        first_label = await client.labels([LabelItem("ann", "t1", "cat", "l1")])
        assert await client.answer(str(ann["gold"]), worker="ann", reward=1.0) == "accepted"
        assert await client.leave("cy") is True
        changed = calls(db, run_id)
        assert changed == Counter(requested=2, labelled=1, answered=1, unavailable=1)
        for _ in range(3):
            assert await client.next("ann", "r1") == ann
            assert await client.labels([LabelItem("ann", "t1", "cat", "l1")]) == first_label
            assert await client.answer(str(ann["gold"]), worker="ann", reward=0.0) == "duplicate"
            assert await client.answer(str(cy["gold"]), worker="cy", reward=1.0) == "late"
            assert await client.labels([LabelItem("ann", "t1", "dog")]) == ["duplicate"]
            assert await client.leave("nobody") is False and await client.leave("cy") is False
        assert calls(db, run_id) == changed
        status = await client.status()
    async with serving(db, resume=run_id) as (_, url), GateClient(url) as client:
        assert await client.status() == status
        assert await client.next("ann", "r1") == ann  # the request memory was replayed
        assert await client.labels([LabelItem("ann", "t1", "cat", "l1")]) == first_label
        with pytest.raises(GateApiError) as refused:
            await client.next("bob", "r1")  # still the id of ann's request
        assert refused.value.status == 400
        assert await client.status() == status
    assert calls(db, run_id) == changed


async def test_a_duplicate_label_under_a_new_request_id_is_journaled_for_replay(
    tmp_path: Path,
) -> None:
    """It changes the gate's request memory: a repeat of it after a resume must still be
    ann's, and a duplicate."""
    db = str(tmp_path / "gate.db")
    async with serving(db) as (session, url), GateClient(url) as client:
        await client.next("ann", "r1")
        await client.next("bob", "r2")
        await client.labels([LabelItem("ann", "t1", "cat", "l1")])
        assert await client.labels([LabelItem("ann", "t1", "dog", "l2")]) == ["duplicate"]
    assert calls(db, session.run_id)["labelled"] == 2
    async with serving(db, resume=session.run_id) as (_, url), GateClient(url) as client:
        assert await client.labels([LabelItem("ann", "t1", "dog", "l2")]) == ["duplicate"]
        with pytest.raises(GateApiError):
            await client.labels([LabelItem("bob", "t1", "dog", "l2")])  # ann's request id


async def test_a_repeat_waits_until_its_first_reply_is_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repeat journals nothing, yet must not reply before the journal holds the first
    reply: neither while that batch is being written nor while it waits to be."""
    db = str(tmp_path / "gate.db")
    async with serving(db) as (session, _):
        write = session.journal.append
        held = asyncio.Event()

        async def slow_append(run_id: str, events: list[Event]) -> None:
            await held.wait()  # the real journal writes them, once let through
            await write(run_id, events)

        monkeypatch.setattr(session.journal, "append", slow_append)
        writing = asyncio.create_task(session.next(NextRequest("bob", "b1")))
        await asyncio.sleep(0.05)  # bob's batch is being written
        waiting = asyncio.create_task(session.next(NextRequest("ann", "a1")))
        await asyncio.sleep(0)  # ann's request is in the next batch, waiting to be written
        repeats = [asyncio.create_task(session.next(NextRequest(w, f"{w[0]}1"))) for w in
                   ("bob", "ann")]  # fmt: skip
        try:
            await asyncio.sleep(0.05)
            assert not any(task.done() for task in (writing, waiting, *repeats))
        finally:
            held.set()  # let the writes through, or the session never closes
        first = [await writing, await waiting]
        assert [await task for task in repeats] == first
    assert calls(db, session.run_id) == Counter(requested=2)


async def test_the_gold_key_stays_out_of_the_status(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db) as (session, url), GateClient(url) as client:
        key = session.gate.settings.gold_key
        assert key is not None
        reply = await client.next("ann", "r1")
        status = await client.status()
    assert key not in json.dumps(status) and str(reply["gold"]) not in ("g0", "g1")
    with Journal(db, create=False) as journal:  # kept where a resume needs it
        assert journal.get_run(session.run_id).config["gold_key"] == key


@pytest.mark.subprocess
def test_the_gold_key_stays_out_of_the_command_lines_output(tmp_path: Path) -> None:
    process, url = start_gate(tmp_path, "--policy", "first", "--max-unscreened", "0")
    said = asyncio.run(_ask_once(url))
    code, err = stop_gate(process)
    with Journal(str(tmp_path / "screener.db"), create=False) as journal:
        record = journal.get_run(str(said["run"]))
    key = record.config["gold_key"]
    shown = [url, err, json.dumps(said)]
    for args in (
        ["runs", "--json"],
        ["report", record.id, "--json"],
        ["report", record.id],
        ["decisions", record.id, "--json"],
        ["export", record.id, "--decisions"],
    ):
        done = screener(tmp_path, *args)
        shown += [done.stdout, done.stderr]
    assert code == 130 and len(key) == 64
    assert not [text for text in shown if key in text]


async def _ask_once(url: str) -> dict[str, object]:
    async with GateClient(url) as client:
        await client.next("ann", "r1")
        await client.next("bob", "r2")
        return await client.status()


async def test_a_journal_from_before_gold_keys_resumes_with_its_sequential_ids(
    tmp_path: Path,
) -> None:
    """No key stored: the gate's ids stay g0, g1, ...; its journal's repeated requests and
    duplicate answers (journaled then) replay as they were served."""
    db = str(tmp_path / "gate.db")
    settings = dataclasses.replace(QUICK, gold_key=None)
    spec = gate_spec(settings, None)
    old = dataclasses.replace(spec, config={"gate": settings.to_dict()})
    gate, at = Gate(settings), time.time()
    ann = gate.next("ann", "r1")
    events = [request_event(gate, ann, "r1", at), request_event(gate, ann, "r1", at)]
    assert ann.gold == "g0"
    gate.answer("g0", worker="ann", reward=1.0)
    answered = answer_event(gate, AnswerItem("g0", "ann", 1.0), at)
    events += [answered, dataclasses.replace(answered, kind=EventKind.DUPLICATE)]
    bob = gate.next("bob", "r2")
    events.append(request_event(gate, bob, "r2", at))
    with Journal(db) as journal:
        run_id = journal.create_run(old)
        journal.append(run_id, events)
    async with serving(db, resume=run_id) as (session, url), GateClient(url) as client:
        assert session.gate.settings.gold_key is None
        assert (await client.next("ann", "r1"))["gold"] == "g0"
        assert (await client.next("cy", "r3"))["gold"] == "g2"
        with pytest.raises(GateApiError) as refused:
            await client.answer("g1", worker="ann", reward=1.0)  # bob's question
        assert refused.value.status == 404
        assert await client.answer("g1", worker="bob", reward=1.0) == "accepted"


def test_settings_with_a_key_replay_alike() -> None:
    """The key in the journal is the key of the gate that served (``gate_spec``)."""
    settings = GateSettings(policy=FirstGold(), max_unscreened=0)
    stored = gate_spec(settings, None).config
    assert stored["gold_key"] == settings.gold_key and "gold_key" not in stored["gate"]
