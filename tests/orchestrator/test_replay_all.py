"""Every registered algorithm, run live through the orchestrator, replays to the same result,
and the result it stored with its finished event is that result too."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from plan_helpers import make_plan

from screener.algorithms import ALGORITHMS, accepted_parameters
from screener.crowd import synthetic_pool
from screener.journal import Journal
from screener.runs.results import load_result, load_results
from screener.runs.session import start_run

POOL = synthetic_pool(12, 1, seed=4)


def _params(name: str) -> dict[str, Any]:
    params: dict[str, Any] = {"budget": 600}
    if "threshold" in accepted_parameters(ALGORITHMS[name]):
        params["threshold"] = 0.8
    if name in ("adaptive-topk", "optmai", "clucb-pac"):
        params.update(k=3, eps=0.2)
    return params


def assert_same(replayed: Any, live: Any, where: str = "result") -> None:
    """Equal, numbers to 1e-12 relative: replay tells each stretch of answers in one batch,
    and numpy's vectorised log/exp may round the last bit differently from the live run's
    smaller batches (crowd-prior's probabilities: 1e-16 apart); decisions, counts and every
    other value must be exactly the same."""
    if isinstance(live, float) and isinstance(replayed, float):
        assert math.isclose(replayed, live, rel_tol=1e-12, abs_tol=1e-15), where
    elif isinstance(live, dict) and isinstance(replayed, dict):
        assert replayed.keys() == live.keys(), where
        for key in live:
            assert_same(replayed[key], live[key], f"{where}.{key}")
    elif isinstance(live, list | tuple) and isinstance(replayed, list | tuple):
        assert len(replayed) == len(live), where
        for i, (a, b) in enumerate(zip(replayed, live, strict=True)):
            assert_same(a, b, f"{where}[{i}]")
    else:
        assert replayed == live, where


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
async def test_live_run_and_its_replay_agree(tmp_path: Path, name: str) -> None:
    db = str(tmp_path / "runs.db")
    oracle = {"latency": "exponential:0.002", "duplicates": 0.05, "batch_release": 3}
    plan = make_plan(POOL, name, _params(name), seed=8, oracle_options=oracle)
    run_id, live = await start_run(plan, db)
    assert live.finished
    record, replayed, _ = load_results(db, run_id, from_events=True)
    assert record.algorithm == name
    assert_same(replayed.to_dict(), live.to_dict())
    with Journal(db, create=False) as journal:
        assert journal.stored_result(run_id) is not None
    _, stored = load_result(db, run_id)
    assert stored == live
