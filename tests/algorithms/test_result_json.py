"""Result.to_json / from_json: exact round trips, and None (not an exception) for what is not
one, so that a report falls back to replaying the run."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from screener import BernoulliRewards, simulate, synthetic_pool
from screener.algorithms import CrowdPrior, Decision, Result, StopReason, Threshold, WorkerResult


def _worker(arm: int, estimate: float, lower: float, upper: float) -> WorkerResult:
    return WorkerResult(arm, estimate, lower, upper, pulls=arm, pending=0,
                        decision=Decision.UNDECIDED, leaning=Decision.BELOW,
                        reason="no answers yet" if arm == 0 else "", rank=arm + 1,
                        score=None if arm else -math.inf)  # fmt: skip


RESULT = Result(
    algorithm="example",
    params={"delta": 0.1, "k": np.int64(3), "nested": {"a": [1, 2]}},
    workers=(_worker(0, math.nan, -math.inf, math.inf), _worker(1, 0.25, 0.0, 0.5)),
    stop_reason=StopReason.BUDGET_SPENT,
    guarantee="none",
    total_pulls=1,
    pending_pulls=0,
    released_pulls=2,
    threshold=Threshold(0.5, 0.4, 0.6),
    extra={"rounds": np.float64(2.5), "counts": np.arange(3)},
    names=("a", "b"),
    run_id="abc",
)


def test_a_result_comes_back_exactly_without_its_names() -> None:
    back = Result.from_json(RESULT.to_json())
    assert back is not None
    assert back.names == () and back.run_id is None
    first = back.workers[0]
    assert math.isnan(first.estimate) and (first.lower, first.upper) == (-math.inf, math.inf)
    assert first.score == -math.inf
    assert back.workers[1] == RESULT.workers[1]
    assert back.threshold == RESULT.threshold and back.stop_reason is StopReason.BUDGET_SPENT
    assert dict(back.params) == {"delta": 0.1, "k": 3, "nested": {"a": [1, 2]}}
    assert dict(back.extra) == {"rounds": 2.5, "counts": [0, 1, 2]}


def test_an_unfinished_result_without_threshold_comes_back() -> None:
    unfinished = Result("example", {}, (), None, None, 0, 0, 0)
    assert Result.from_json(unfinished.to_json()) == unfinished


@pytest.mark.parametrize(
    "text",
    ["", "not json", "[]", "{}", '{"format": 999}',
     json.dumps({**json.loads(RESULT.to_json()), "stop_reason": "bored"}),
     json.dumps({**json.loads(RESULT.to_json()), "surprise": 1})],
)  # fmt: skip
def test_what_is_not_a_stored_result_reads_as_none(text: str) -> None:
    assert Result.from_json(text) is None


@dataclasses.dataclass(frozen=True)
class _Fit:
    name: str
    weights: tuple[float, ...]


def _as_asdict_wrote(result: Result) -> str:
    """The layout ``to_json`` has always written, as ``dataclasses.asdict`` made it."""
    record = dataclasses.asdict(result)
    del record["names"], record["run_id"]
    record["format"] = json.loads(result.to_json())["format"]

    def plain(value: object) -> object:
        if isinstance(value, np.ndarray | np.generic):
            return value.tolist()
        if isinstance(value, Mapping):
            return dict(value)
        raise TypeError(type(value).__name__)

    return json.dumps(record, default=plain, separators=(",", ":"))


def _simulated() -> Result:
    pool = synthetic_pool(300, 30, seed=4)
    algorithm = CrowdPrior(len(pool), threshold=0.6, max_answers=6)
    return simulate(algorithm, BernoulliRewards(pool.require_accuracies(), 2)).named(pool.workers)


@pytest.mark.parametrize(
    "result",
    [
        RESULT,
        dataclasses.replace(
            RESULT,
            params=OrderedDict(delta=0.1, levels=(0.1, 0.2)),
            extra={"fit": _Fit("beta", (0.5, 0.5)), "fits": [_Fit("grid", ())], "n": None},
        ),
        _simulated(),
    ],
    ids=["numbers", "mappings-and-dataclasses", "crowd-prior"],
)
def test_a_stored_result_is_written_as_it_always_was(result: Result) -> None:
    assert result.to_json() == _as_asdict_wrote(result)


def test_storing_a_result_deep_copies_no_worker_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """dataclasses.asdict deep-copies every value of every line: about 1.2 M copies at
    100,000 workers, seconds of a run's end; a stored result is written without them."""
    copies: list[object] = []
    deepcopy = copy.deepcopy

    def counted(value: object, memo: Any = None) -> object:
        copies.append(value)
        return deepcopy(value, memo)

    workers = tuple(_worker(arm, 0.5, 0.25, 0.75) for arm in range(1, 1001))
    result = dataclasses.replace(RESULT, workers=workers, names=())
    monkeypatch.setattr(copy, "deepcopy", counted)
    text = result.to_json()
    assert len(json.loads(text)["workers"]) == 1000
    assert len(copies) < 10
