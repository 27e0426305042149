"""Every registered algorithm, run live through the orchestrator, replays to the same result,
and the result it stored with its finished event is that result too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from screener.algorithms import ALGORITHMS, accepted_parameters
from screener.journal import Journal
from screener.orchestrator import RunOptions
from screener.pool import synthetic_pool
from screener.session import RunPlan, load_result, load_results, start_run

POOL = synthetic_pool(12, 1, seed=4)


def _params(name: str) -> dict[str, Any]:
    params: dict[str, Any] = {"budget": 600}
    if "threshold" in accepted_parameters(ALGORITHMS[name]):
        params["threshold"] = 0.8
    if name in ("adaptive-topk", "optmai", "clucb-pac"):
        params.update(k=3, eps=0.2)
    return params


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
async def test_live_run_and_its_replay_agree(tmp_path: Path, name: str) -> None:
    db = str(tmp_path / "runs.db")
    oracle = {"latency": "exponential:0.002", "duplicates": 0.05, "batch_release": 3}
    plan = RunPlan(POOL, name, _params(name), "simulated", oracle, seed=8,
                   options=RunOptions(concurrency=8, timeout=5.0))  # fmt: skip
    run_id, live = await start_run(plan, db)
    assert live.finished
    record, replayed, _ = load_results(db, run_id, from_events=True)
    assert record.algorithm == name
    assert replayed.to_dict() == live.to_dict()
    with Journal(db, create=False) as journal:
        assert journal.stored_result(run_id) is not None
    _, stored = load_result(db, run_id)
    assert stored == live
