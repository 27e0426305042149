"""POST /v1/labels on a real aiohttp server over a real run database: each label journaled
before its reply, a batch refused whole when one label is bad, a retry counted once, and a
resumed gate holding exactly the labels it was told."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import aiohttp
import pytest
from gate_helpers import events, kinds, serving, start_gate, stop_gate

from screener.gate_service import GateApiError, LabelItem
from screener.gate_service.client import GateClient
from screener.journal import EventKind


async def _ask(client: GateClient, *workers: str) -> None:
    for worker in workers:
        await client.next(worker, f"{worker}:join")


async def test_labels_are_journaled_before_the_reply_and_counted(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db) as (session, url), GateClient(url) as client:
        await _ask(client, "ann", "bob")
        outcomes = await client.labels([
            LabelItem("ann", "i1", "cat", "a1"), LabelItem("bob", "i1", 1, "b1"),
            LabelItem("ann", "i1", "dog", "a2"),
        ])  # fmt: skip
        journaled = [e for e in events(db, session.run_id) if e.kind is EventKind.LABELLED]
        status = await client.status()
    assert outcomes == ["accepted", "accepted", "duplicate"]
    told = [("ann", "i1"), ("bob", "i1"), ("ann", "i1")]
    assert [(e.worker, e.detail) for e in journaled] == told
    assert status["labels"] == 2
    assert session.gate.labels.of_item("i1") == {"ann": "cat", "bob": "1"}


async def test_a_batch_with_one_bad_label_is_refused_whole(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db) as (session, url), GateClient(url) as client:
        await _ask(client, "ann")
        with pytest.raises(GateApiError) as unknown:
            await client.labels([LabelItem("ann", "i1", "cat"), LabelItem("zed", "i1", "cat")])
        async with aiohttp.ClientSession() as http:
            bodies = [{"labels": []}, {"worker": "ann", "item": "i1"},
                      {"worker": "ann", "item": "i1", "label": [1]},
                      {"worker": "ann", "item": "i1", "label": "x", "extra": 1},
                      {"labels": [{"worker": "ann", "item": "i1", "label": True}]}]  # fmt: skip
            statuses = []
            for body in bodies:
                async with http.post(url + "/v1/labels", json=body) as response:
                    statuses.append((response.status, "error" in await response.json()))
    assert unknown.value.status == 404 and "never asked this gate" in str(unknown.value)
    assert statuses == [(400, True)] * len(bodies)
    assert session.gate.labels.count == 0 and kinds(db, session.run_id)["labelled"] == 0


async def test_a_resumed_gate_holds_the_labels_it_was_told(tmp_path: Path) -> None:
    db = str(tmp_path / "gate.db")
    async with serving(db) as (session, url), GateClient(url) as client:
        run_id = session.run_id
        await _ask(client, "ann", "bob", "cy")
        items = [LabelItem(w, f"i{i}", str((i + len(w)) % 3), f"{w}:{i}")
                 for i in range(40) for w in ("ann", "bob", "cy")]  # fmt: skip
        for start in range(0, len(items), 7):
            await client.labels(items[start : start + 7])
        before = {item: dict(labels) for item, labels in session.gate.labels.by_item.items()}
    async with serving(db, resume=run_id) as (resumed, url), GateClient(url) as client:
        assert resumed.gate.labels.by_item == before and resumed.gate.labels.count == 120
        retried = await client.labels(items[:3])  # a retry after the restart counts once
        assert retried == ["accepted"] * 3 and resumed.gate.labels.count == 120


@pytest.mark.subprocess
def test_the_gate_command_takes_the_agreement_ban(tmp_path: Path) -> None:
    process, url = start_gate(tmp_path, "--agreement", "0.05", "--binary-labels")
    try:
        settings = json.loads(urllib.request.urlopen(url + "/v1/status").read())["settings"]
    finally:
        code, _ = stop_gate(process)
    assert (settings["agreement"], settings["binary_labels"], code) == (0.05, True, 130)
    elsewhere = tmp_path / "refused"
    elsewhere.mkdir()
    refused = subprocess.run(
        [sys.executable, "-m", "screener", "gate", "--agreement", "2"], cwd=elsewhere,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert refused.returncode == 2 and "agreement" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not list(elsewhere.iterdir())
