"""The stream benchmark: its verdicts on hand-made means, and its command on a real dataset."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.stream import QUICK, _adjust, _options, policies
from benchmarks.stream_report import MEASURES, overall, summarise
from screener.gate import Prices

ROOT = Path(__file__).resolve().parents[2]


def _row(dataset: str, policy: str, money: float, accuracy: float) -> dict[str, Any]:
    given = ("money", "accuracy", "accuracy_ds", "before_gold")
    measures = dict.fromkeys((m for m in MEASURES if m not in given), 0.0)
    return {
        "dataset": dataset, "policy": policy, "seed": 0, "gold_share": 0.1, "money": money,
        "accuracy": accuracy, "accuracy_ds": float("nan"), "before_gold": 3, **measures,
    }  # fmt: skip


def test_a_rule_that_is_cheaper_and_as_accurate_dominates() -> None:
    rows = [
        _row("d", "none", 100.0, 0.80),
        _row("d", "screener", 95.0, 0.90),
        _row("d", "quiz-5", 90.0, 0.90),  # dominates: cheaper, as accurate
        _row("d", "toloka-10", 99.0, 0.95),  # dearer: does not
    ]
    verdict = summarise(rows, {"d": 0.3})["verdicts"][0]
    assert verdict["dominated_by"] == ["quiz-5"]
    assert verdict["cheaper"] and verdict["no_worse"]
    assert verdict["money_ratio"] == pytest.approx(0.95)


def test_each_variant_is_judged_as_the_default_is() -> None:
    rows = [
        _row("d", "none", 100.0, 0.80),
        _row("d", "screener", 105.0, 0.90),
        _row("d", "screener-tenure", 95.0, 0.90),
        _row("d", "toloka-10", 99.0, 0.85),
    ]
    report = summarise(rows, {"d": 0.3})
    assert not report["verdicts"][0]["cheaper"]
    tenure = report["variants"]["screener-tenure"][0]
    assert tenure["cheaper"] and tenure["no_worse"] and tenure["dominated_by"] == []


def test_means_are_over_answer_orders() -> None:
    rows = [_row("d", "none", 100.0, 0.8), _row("d", "none", 110.0, 0.9)]
    rows[1]["seed"] = 1
    means = summarise(rows, {"d": 0.0})["means"]
    assert means[0]["money"] == pytest.approx(105.0) and means[0]["runs"] == 2


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("SCREENER_DATA"), reason="SCREENER_DATA is not set")
def test_quick_mode_on_one_dataset_prints_the_tables(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.stream", "--quick", "--seeds", "1",
         "--datasets", "Zheng_s4_Dog"],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False,
        env={**os.environ, "SCREENER_RESULTS": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "## Targets" in done.stdout
    assert (tmp_path / "stream-quick.json").is_file()  # not over the committed results
    for policy in (
        "none",
        "screener",
        "screener-tenure",
        "toloka-10",
        "quiz-10",
        "lsa",
        "fdr",
        "oracle",
    ):
        assert f"| {policy} " in done.stdout


def test_params_reach_screeners_gates_only_and_name_the_results() -> None:
    parser = argparse.ArgumentParser()
    _options(parser)
    args = parser.parse_args(
        ["--param", "prior=npmle", "--param", "max_answers=100", "--pilot", "5"]
    )
    plan = _adjust(QUICK, args)
    assert plan.params == (("prior", "npmle"), ("max_answers", 100), ("pilot", 5))
    assert plan.mode == "quick-prior=npmle-max_answers=100-pilot5"
    chosen = policies(Prices(), plan.params)
    for name in ("screener", "screener-tenure", "screener-cost", "screener-first"):
        settings = chosen[name]
        assert settings is not None and settings.params["max_answers"] == 100
        assert settings.params["pilot"] == 5 and settings.params["threshold"] == 0.6
    quiz = chosen["quiz-5"]
    assert quiz is not None and "max_answers" not in quiz.params


def test_over_every_dataset_each_dataset_counts_once() -> None:
    rows = [
        _row("small", "none", 10.0, 0.80),
        _row("small", "screener", 20.0, 0.90),  # 2x the money, +0.10
        _row("large", "none", 1000.0, 0.80),
        _row("large", "screener", 500.0, 0.802),  # 0.5x, +0.002 (not "more accurate")
        _row("large", "toloka-10", 900.0, 0.70),  # on one dataset only
    ]
    found = {r["policy"]: r for r in overall(summarise(rows, {})["means"])}
    assert list(found) == ["screener", "toloka-10"]  # the default first; none is the reference
    ours = found["screener"]
    assert ours["money_ratio"] == pytest.approx(1.0)  # sqrt(2 x 0.5): not the money's sum
    assert ours["accuracy_gain"] == pytest.approx(0.051)
    assert (ours["datasets"], ours["cheaper"], ours["more_accurate"]) == (2, 1, 1)
    rule = found["toloka-10"]
    assert (rule["datasets"], rule["money_ratio"]) == (1, pytest.approx(0.9))
