"""The stream benchmark: its verdicts on hand-made means, and its command on a real dataset."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.stream import QUICK, Plan, _adjust, _options, _tasks, policies
from benchmarks.stream_adversary import POLICIES as ADVERSARY_POLICIES
from benchmarks.stream_adversary import format_adversaries
from benchmarks.stream_report import MEASURES, not_dominated, overall, summarise
from benchmarks.stream_timing import estimate
from screener.money import Prices

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
    assert "## Adversarial streams" in done.stdout
    assert "the full plan estimated from this run" in done.stdout
    for policy in (
        "none",
        "none-lead3",
        "none-lead4",
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


def test_a_policy_dearer_and_less_accurate_than_a_none_row_is_dominated() -> None:
    rows = [
        _row("d", "none", 100.0, 0.80),
        _row("d", "none-lead3", 110.0, 0.85),
        _row("d", "none-lead4", 120.0, 0.87),
        _row("d", "screener", 115.0, 0.84),  # dearer and less accurate than none-lead3
        _row("d", "toloka-10", 115.0, 0.86),  # between the none rows: not dominated
        _row("d", "quiz-5", 100.0, 0.80),  # the same as none: dominated (no more for it)
        _row("e", "none", 100.0, 0.80),
        _row("e", "screener", 90.0, 0.79),  # cheaper than every none row
    ]
    means = summarise(rows, {})["means"]
    assert not_dominated(means, "screener") == 1  # on e only
    assert not_dominated(means, "toloka-10") == 1
    assert not_dominated(means, "quiz-5") == 0
    assert not_dominated(means, "none-lead4") == 1  # dearest, most accurate: not by the others
    found = {r["policy"]: r["not_dominated"] for r in overall(means)}
    assert found["screener"] == 1 and found["quiz-5"] == 0


def _adversarial(
    policy: str, dataset: str, banned: int, good: int, adversary: str = "collude-20"
) -> dict[str, Any]:
    row = _row(dataset, policy, 100.0 if policy == "none" else 90.0, 0.7)
    row.update(adversary=adversary, banned=banned, good_banned=good)
    return row


def test_adversarial_runs_are_read_apart_from_the_real_orders() -> None:
    rows = [
        _row("d", "none", 100.0, 0.8),
        _row("d", "screener", 100.0, 0.9),
        _adversarial("none", "d", 0, 0),
        _adversarial("screener", "d", 12, 3),  # 25% wrong, over 15%
        _adversarial("none", "e", 0, 0),
        _adversarial("screener", "e", 20, 1),
        _adversarial("toloka-10", "e", 5, 5),  # under 10 bans: not read
        {**_adversarial("screener", "d", 4, 0, "recognise-10"), "recognisers_reached": 3,
         "recognisers_caught": 2},
        _adversarial("none", "d", 0, 0, "recognise-10"),
    ]  # fmt: skip
    report = summarise(rows, {"d": 0.3}, skipped=["graded_one"])
    assert [(m["policy"], m["money"]) for m in report["means"]] == [
        ("none", 100.0), ("screener", 100.0)
    ]  # fmt: skip
    table = {(r["adversary"], r["policy"]): r for r in report["adversaries"]["table"]}
    collude = table[("collude-20", "screener")]
    assert collude["money_ratio"] == pytest.approx(0.9) and collude["datasets"] == 2
    assert (collude["wrong"], collude["banned"], collude["crowds"]) == (4, 32, 2)
    assert collude["crowds_over"] == 1
    assert table[("collude-20", "toloka-10")]["crowds"] == 0
    recognise = table[("recognise-10", "screener")]
    assert (recognise["caught"], recognise["reached"]) == (2, 3)
    text = "\n".join(format_adversaries(report["adversaries"]))
    assert "2 of 3 (66.7%)" in text and "graded_one" in text


def test_the_plan_runs_each_adversary_and_skips_the_categorical_ones_on_graded_data(
    tmp_path: Path,
) -> None:
    for folder, name in (("gold_answers", "binary"), ("graded", "scores")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"{name}.csv").write_text("worker,item,answer,gold\n")
    tasks = _tasks(Plan("t", (), seeds=1), tmp_path)
    adversarial = {(Path(t.path).stem, t.adversary, t.policy) for t in tasks if t.adversary}
    wanted = {("binary", a, p) for a in ("spammers-first", "collude-20", "collude-40",
              "recognise-10") for p in ADVERSARY_POLICIES}  # fmt: skip
    wanted |= {("scores", "spammers-first", p) for p in ADVERSARY_POLICIES}
    assert adversarial == wanted
    real = {t.policy for t in tasks if not t.adversary}
    assert {"none", "none-lead3", "none-lead4"} <= real


def test_the_full_plan_is_estimated_from_each_policys_time_per_answer() -> None:
    rows = [
        {"policy": "none", "dataset": "small", "cpu": 1.0},
        {"policy": "screener", "dataset": "small", "cpu": 3.0},
    ]
    planned = [("none", "big"), ("screener", "big"), ("screener", "small"), ("lsa", "big")]
    found = estimate(rows, 2.0, planned, {"small": 100, "big": 1000})
    # none 0.01 s an answer, screener 0.03, lsa (not run) the mean 0.02
    assert found["cpu"] == pytest.approx(10.0 + 30.0 + 3.0 + 20.0)
    assert found["seconds"] == pytest.approx(found["cpu"] * 2.0 / 4.0)
    assert found["runs"] == 4
