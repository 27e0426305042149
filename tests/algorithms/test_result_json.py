"""Result.to_json / from_json: exact round trips, and None (not an exception) for what is not
one, so that a report falls back to replaying the run."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from screener.algorithms import Decision, Result, StopReason, Threshold, WorkerResult


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
