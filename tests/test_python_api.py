"""The Python API: ``screener.run`` from a script and from inside a running event loop (as in
a notebook), ``arun``, named results, ``to_dataframe``, and the docstring examples."""

from __future__ import annotations

import asyncio
import doctest
from pathlib import Path
from typing import Any

import pytest

import screener
import screener.api
from screener import Decision, Result
from screener.errors import ConfigError
from screener.gate import FirstGold, GateSettings
from screener.runs.decisions import block_list, run_decisions
from screener.runs.results import load_result

POOL = screener.synthetic_pool(12, 2, seed=1)
ALGORITHM = "confident-thresholding"
PARAMS = {"threshold": 0.65, "eps": 0.1}


def _check(result: Result) -> None:
    assert result.condition_met
    assert result.names == POOL.workers
    banned = {result.name(w.arm) for w in result.workers if w.decision is Decision.BELOW}
    assert banned == {"w10", "w11"}  # the two synthetic outliers, accuracies 0.504 and 0.525


def test_run_from_a_script_is_journaled_in_the_given_file(tmp_path: Path) -> None:
    db = tmp_path / "api.db"
    result = screener.run(POOL, algorithm=ALGORITHM, params=PARAMS, db=db, seed=3)
    _check(result)
    assert result.run_id is not None
    record, stored = load_result(str(db), result.run_id)
    assert record.algorithm == ALGORITHM
    assert stored.to_dict() == {**result.to_dict(), "run_id": None, "workers": [
        {**line, "worker": None} for line in result.to_dict()["workers"]
    ]}  # fmt: skip


def test_run_inside_a_running_event_loop_as_in_a_notebook() -> None:
    async def cell() -> tuple[Result, bool]:
        result = screener.run(POOL, algorithm=ALGORITHM, params=PARAMS, seed=3)
        return result, asyncio.get_running_loop().is_running()

    result, loop_still_running = asyncio.run(cell())
    _check(result)
    assert loop_still_running


def test_arun_equals_run_on_the_same_seed() -> None:
    awaited = asyncio.run(screener.arun(POOL, algorithm=ALGORITHM, params=PARAMS, seed=5))
    called = screener.run(POOL, algorithm=ALGORITHM, params=PARAMS, seed=5)
    _check(awaited)
    assert [w.to_dict() for w in awaited.workers] == [w.to_dict() for w in called.workers]


def test_named_results_carry_names_into_dict_and_dataframe() -> None:
    pandas = pytest.importorskip("pandas", reason="pandas is the optional [pandas] extra")
    result = screener.run(POOL, algorithm=ALGORITHM, params=PARAMS, seed=3)
    data = result.to_dict()
    assert data["run_id"] == result.run_id
    assert [line["worker"] for line in data["workers"]] == [
        POOL.workers[w.arm] for w in result.ranking
    ]
    frame = result.to_dataframe()
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame.index) == [w.rank for w in result.ranking]
    assert list(frame["worker"]) == [POOL.workers[w.arm] for w in result.ranking]
    assert set(frame.loc[frame["decision"] == "banned", "worker"]) == {"w10", "w11"}
    assert frame["pulls"].sum() == result.total_pulls


def test_names_must_match_the_workers() -> None:
    result = screener.run(POOL, algorithm=ALGORITHM, params=PARAMS, seed=3)
    with pytest.raises(ConfigError, match="12 workers"):
        result.named(("a", "b"))


def test_docstring_examples_run() -> None:
    failures, tried = doctest.testmod(screener.api, verbose=False)
    assert tried >= 3 and failures == 0


def test_the_gate_is_exported_at_the_top_level_like_run() -> None:
    assert "Gate" in screener.__all__
    gate = screener.Gate(GateSettings(policy=FirstGold(), max_unscreened=0, seed=2))
    rewards = {"spammer": 0.0, "steady": 1.0}
    for _ in range(60):
        for worker, reward in rewards.items():
            reply = gate.next(worker)
            if reply.gold is not None:
                gate.answer(reply.gold, worker=reply.worker, reward=reward)
    result = gate.result()
    assert [result.name(arm) for arm in result.banned] == ["spammer"]
    assert "steady" not in {result.name(arm) for arm in result.banned}


#: (algorithm, params): a question per kind of decision (a bar, outliers on the low side and
#: on the high side, the best K), each a real run whose journaled decisions are the reference.
#: The budget cuts the high-side run short: some workers stay undecided.
DECISION_RUNS: dict[str, tuple[str, dict[str, Any]]] = {
    "bar": ("fdr-thresholding", {"threshold": 0.6, "q": 0.1, "eps": 0.05, "min_answers": 3}),
    "low outliers": ("rr", {"k": 1.5, "direction": "low"}),
    "high outliers": ("rr", {"k": 1.5, "direction": "high", "budget": 4000}),
    "best k": ("adaptive-topk", {"k": 3, "eps": 0.1}),
}


@pytest.mark.parametrize("kind", DECISION_RUNS)
@pytest.mark.parametrize("seed", [0, 1])
def test_banned_and_accepted_are_the_decisions_a_run_journals(
    tmp_path: Path, kind: str, seed: int
) -> None:
    algorithm, params = DECISION_RUNS[kind]
    db = tmp_path / "decisions.db"
    result = screener.run(POOL, algorithm=algorithm, params=params, db=db, seed=seed)
    assert result.run_id is not None
    standing = block_list(run_decisions(str(db), result.run_id))
    journaled = {
        verdict: {d.worker for d in standing if d.decision == verdict}
        for verdict in ("banned", "accepted")
    }
    banned = {result.name(arm) for arm in result.banned}
    accepted = {result.name(arm) for arm in result.accepted}
    assert bool(banned) == (kind in ("bar", "low outliers"))  # the two questions that ban
    assert banned == journaled["banned"]
    assert accepted == journaled["accepted"]
    undecided = {result.name(w.arm) for w in result.workers if w.decision is Decision.UNDECIDED}
    assert not undecided & (banned | accepted)
    assert list(result.word_counts())[-1] == "undecided"
    if banned:
        assert repr(result).startswith(
            f"<Result {algorithm}: banned {result.name(result.banned[0])}"
        )


@pytest.mark.parametrize("kind", DECISION_RUNS)
def test_the_data_frames_decision_column_says_banned_and_accepted(kind: str) -> None:
    pytest.importorskip("pandas", reason="pandas is the optional [pandas] extra")
    algorithm, params = DECISION_RUNS[kind]
    result = screener.run(POOL, algorithm=algorithm, params=params, seed=4)
    frame = result.to_dataframe()
    for word, arms in (("banned", result.banned), ("accepted", result.accepted)):
        assert set(frame.loc[frame["decision"] == word, "arm"]) == set(arms)
    words = set(frame["decision"])
    assert not words & {"below", "above", "selected", "rejected"}
    assert words <= {"banned", "accepted", "outlier", "normal", "not selected", "undecided"}
