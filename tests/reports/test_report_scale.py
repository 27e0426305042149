"""Reports at scale: per-worker work that costs seconds at 100,000 workers is done once per
report, not per worker (the words decisions are shown in), and ``--format json``'s text is
what ``json.dumps(indent=2)`` writes, byte for byte, with the worker lines encoded by json's
C encoder (seconds and hundreds of MB at 100,000 workers)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from screener import BernoulliRewards, simulate, synthetic_pool
from screener.algorithms import CrowdPrior, verdicts
from screener.crowd import WorkerPool
from screener.reports import json_text, render_csv, render_json, render_table


def _report() -> dict[str, Any]:
    pool = synthetic_pool(200, 20, seed=2)
    names = [f'wörker "{i}", \\n' if i % 7 == 0 else name for i, name in enumerate(pool.workers)]
    named = WorkerPool.from_dict({"workers": names, "accuracies": list(pool.accuracies or ())})
    algorithm = CrowdPrior(len(pool), threshold=0.6, max_answers=5)
    result = simulate(algorithm, BernoulliRewards(pool.require_accuracies(), 3))
    data = render_json(result.named(named.workers), named, "run1", oracle="simulated")
    data["run_spec"] = {"options": {"workers": []}, "pool": {"workers": ["a"]}}
    return data


CASES: dict[str, dict[str, Any]] = {
    "report": _report(),
    "undefined-numbers": {"workers": [{"worker": "a", "estimate": math.nan, "upper": math.inf,
                                       "share": None, "flag": True}], "after": [1, {"b": 2}]},
    "no-workers": {"status": "x", "workers": []},
    "no-workers-key": {"status": "x", "banned": ["a"]},
    "nested-lines": {"workers": [{"worker": "a", "scores": [1, 2]}], "x": 1},
    "an-empty-line": {"workers": [{}, {"worker": "a"}]},
    "separators-in-strings": {"workers": [{"worker": '},\x00{"a": 1,\x00"', "b": "},{"},
                                          {'",\x00"': ',"', "c": -0.0}, {"d": "\u2028\n"}]},
}  # fmt: skip


@pytest.mark.parametrize("data", CASES.values(), ids=list(CASES))
def test_the_json_report_is_laid_out_as_json_dumps_lays_it_out(data: dict[str, Any]) -> None:
    assert json_text(data) == json.dumps(data, indent=2)


def test_a_report_looks_each_decisions_word_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = synthetic_pool(1000, 50, seed=5)
    result = simulate(
        CrowdPrior(len(pool), threshold=0.6, max_answers=5),
        BernoulliRewards(pool.require_accuracies(), 4),
    ).named(pool.workers)
    words: list[object] = []
    decision_word = verdicts.decision_word

    def counted(decision: Any, params: Any) -> str:
        words.append(decision)
        return decision_word(decision, params)

    monkeypatch.setattr(verdicts, "decision_word", counted)
    table = render_table(result, pool, "run1", width=100)
    render_json(result, pool, "run1")
    render_csv(result, pool)
    assert table.count("\n") > 1000
    assert len(words) < 100
