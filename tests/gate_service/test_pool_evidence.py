"""The crowd prior shared through the database: outside evidence is journaled before it is
used, so a resume (from the whole journal or a snapshot) makes the same decisions, and a
pool's shards exchange their evidence through the pool table: a shard whose own workers
cannot identify a prior judges them once the other shard's evidence arrives."""

from __future__ import annotations

import json

import pytest
from gate_helpers import QUICK
from pool_helpers import make_pool, pool_process, workers_of

from screener.algorithms import CrowdPrior
from screener.gate_service import AnswerItem, GateSession
from screener.gate_service.protocol import NextRequest
from screener.journal import EventKind, Journal

OUTSIDE = [(1.0, 5, 10), (5.0, 5, 30)]


async def _answer_right(session: GateSession, worker: str, answers: int) -> None:
    for step in range(answers):
        reply = await session.next(NextRequest(worker, f"{worker}-{step}"))
        if reply["kind"] != "gold":
            return
        await session.answers([AnswerItem(reply["gold"], worker, reward=1.0)])


@pytest.mark.parametrize("snapshot_every", [0, 1])
async def test_a_resume_replays_the_outside_evidence(
    database_url: str, snapshot_every: int
) -> None:
    session = await GateSession.create(QUICK, None, database_url, snapshot_every=snapshot_every)
    run_id = session.run_id
    try:
        await _answer_right(session, "lone", 4)
        assert not session.gate.decisions
        await session.tell_outside(OUTSIDE)
        await _answer_right(session, "next", 4)
        made = [(d.worker, d.decision, d.reason) for d in session.gate.decisions]
        assert made[0][:2] == ("lone", "accepted")
    finally:
        await session.close()
    with Journal(database_url, create=False) as journal:
        told = [e for e in journal.events(run_id) if e.kind is EventKind.OUTSIDE]
    assert [json.loads(e.response or "") for e in told] == [[list(p) for p in OUTSIDE]]
    resumed = await GateSession.resume(run_id, database_url)
    try:
        assert [(d.worker, d.decision, d.reason) for d in resumed.gate.decisions] == made
        assert isinstance(resumed.gate.method, CrowdPrior) and resumed.gate.method.identified
    finally:
        await resumed.close()


async def test_a_shard_judges_its_workers_on_the_other_shards_evidence(database_url: str) -> None:
    record = make_pool(database_url, 2)
    async with pool_process(database_url, record) as a, pool_process(database_url, record) as b:
        await a.look()
        await b.look()
        await a.look()
        await b.look()
        assert sorted(a.sessions) == [0] and sorted(b.sessions) == [1]
        lone = next(workers_of(0, 2))
        await _answer_right(a.sessions[0], lone, 4)
        await a.share_evidence()  # B has published nothing yet: nothing to tell
        assert not a.sessions[0].gate.decisions
        crowd = workers_of(1, 2)
        for _ in range(12):
            await _answer_right(b.sessions[1], next(crowd), 5)
        await b.share_evidence()  # publishes shard 1's evidence
        await a.share_evidence()  # tells shard 0 the sum of the others'
        decided = [(d.worker, d.decision.value) for d in a.sessions[0].gate.decisions]
        assert decided == [(lone, "accepted")]
