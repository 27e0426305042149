"""A request costs the same at any number of workers: the gate reads only the workers whose
decision the method says moved (``verdict_changes``), and streams exactly what reading every
worker's verdict would."""

from __future__ import annotations

from typing import Any

import pytest
from crowd_streams import Crowd, crowd, drive

from screener.gate import FirstGold, Gate, GateSettings, GoldShare, ValueOfGold


def _turning_crowd(seed: int) -> Crowd:
    people = crowd(60, seed, spam=0.25)
    for name in list(people.accuracy)[::7]:
        people.turns[name] = (15, 0.2)  # good workers who turn to spam (audits catch them)
    return people


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"policy": FirstGold(), "audit_rate": 0.2, "on_change": "reopen"},
        {"policy": GoldShare(every=4), "audit_rate": 0.1},
        {"policy": ValueOfGold(tenure=True, bans="cost")},
    ],
    ids=["default", "first-reopen", "share", "tenure-cost"],
)
def test_the_decisions_read_per_worker_are_those_read_from_everyone(
    settings: dict[str, Any], seed: int
) -> None:
    people = _turning_crowd(seed)
    per_worker = Gate(GateSettings(seed=seed, **settings))
    everyone = Gate(GateSettings(seed=seed, **settings))
    everyone.method.verdict_changes = lambda: None  # type: ignore[method-assign]
    replies = drive(per_worker, people, 2500, seed)
    assert drive(everyone, people, 2500, seed) == replies
    assert per_worker.decisions == everyone.decisions
    assert len(per_worker.decisions) >= 3  # the stream decided workers to compare
