"""A gate run journaled before the gold policy types (issue 52, item 4), its settings flat as
the earlier ``GateSettings.to_dict`` wrote them, resumes over a real SQLite file: the policy
and its parameters are read back as the types, and the replay of its journal, checked call
by call, gives the decisions the gate served."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gate_helpers import serving

from screener.gate import DEFAULT_PARAMS, Gate, GateSettings, GoldShare, ReplyKind, ValueOfGold
from screener.gate.policies import policy_dict
from screener.gate_service import AnswerItem, rebuild_gate, run_gate
from screener.gate_service.journaled import answer_event, decision_events, gate_spec, request_event
from screener.journal import Event, Journal

PILOT = {**DEFAULT_PARAMS, "pilot": 2}
#: The settings every flat form below shares, as the earlier ``to_dict`` wrote them.
FLAT: dict[str, Any] = {
    "algorithm": "crowd-prior", "params": PILOT, "max_unscreened": 3, "gold_share": None,
    "gold_budget": None, "audit_rate": 0.1, "alpha": 0.001, "on_change": "ban",
    "prices": {"gold": 0.05, "task": 0.05}, "expected_tasks": 20.0, "bad_label": None,
    "agreement": None, "binary_labels": False, "panel": 5, "confidence": 0.95, "seed": 4,
}  # fmt: skip


def _journaled(gate: Gate, workers: int, requests: int, seed: int) -> list[Event]:
    """Seeded requests of ``workers`` (a fifth of them spammers) on ``gate``, each gold
    question answered at once; the events a gate service journals for those calls."""
    rng = np.random.default_rng(seed)
    accuracy = np.where(rng.random(workers) < 0.2, 0.35, 0.85)
    events: list[Event] = []
    for step in range(requests):
        number, at, made = int(rng.integers(workers)), time.time(), len(gate.decisions)
        reply = gate.next(f"w{number:02d}", f"r{step}")
        events.append(request_event(gate, reply, f"r{step}", at))
        events += decision_events(gate, gate.decisions[made:], at)
        if reply.kind is ReplyKind.GOLD:
            assert reply.gold is not None
            answer = AnswerItem(reply.gold, reply.worker, float(rng.random() < accuracy[number]))
            made = len(gate.decisions)
            gate.answer(answer.gold, worker=answer.worker, reward=answer.reward)
            events.append(answer_event(gate, answer, at))
            events += decision_events(gate, gate.decisions[made:], at)
    return events


@pytest.mark.parametrize(
    ("flat", "policy"),
    [
        ({"policy": "share", "gold_every": 3, "tenure": False, "bans": None}, GoldShare(every=3)),
        ({"policy": "value", "gold_every": 10, "tenure": True, "bans": "cost"},
         ValueOfGold(tenure=True, bans="cost")),
    ],
    ids=["share", "value-tenure-cost"],
)  # fmt: skip
async def test_a_journal_with_flat_settings_resumes_with_the_decisions_it_served(
    tmp_path: Path, flat: dict[str, Any], policy: ValueOfGold | GoldShare
) -> None:
    # a gate of that time: its gold ids hashed (no gold_ids stored: run_gate reads them so)
    settings = GateSettings(params=PILOT, policy=policy, audit_rate=0.1, seed=4, gold_ids="hashed")
    served = Gate(settings)
    events = _journaled(served, 30, 900, seed=5)
    assert len(served.decisions) >= 5  # decisions to compare
    old = {"gate": {**FLAT, **flat}, "gold_key": settings.gold_key}
    spec = dataclasses.replace(gate_spec(settings, None), config=old)
    db = str(tmp_path / "gate.db")
    with Journal(db) as journal:
        run_id = journal.create_run(spec)
        journal.append(run_id, events)
        rebuilt = rebuild_gate(journal, run_id, run_gate(journal.get_run(run_id)))
    assert rebuilt.gate.settings == settings
    assert rebuilt.gate.decisions == served.decisions
    async with serving(db, resume=run_id) as (session, _):  # the gate command's --resume
        assert session.gate.decisions == served.decisions
        assert session.status()["settings"]["policy"] == policy_dict(policy)
