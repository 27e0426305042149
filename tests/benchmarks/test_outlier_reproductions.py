"""The ADE (Zhang et al. 2020) and GOLD (Ban & He 2020) reproductions keep their promises:
instance constraints, the HyunCatherines loader and sampler, and the quick plans' task lists."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from benchmarks import ban2020, instances, zhang2020
from screener.simulation.generic_outliers import outlier_group_violations, outlier_groups

_DATA = os.environ.get("SCREENER_DATA")
needs_data = pytest.mark.skipif(not _DATA, reason="SCREENER_DATA is unset: no HyunCatherines")


# ------------------------------------------------------------------- ADE instances
@pytest.mark.parametrize("n", [100, 400, 1000])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fig2a_instances_have_their_min_gap(n: int, seed: int) -> None:
    means = instances.ade_instance(n, 2.5, seed, (0.1, 0.2))
    assert means.shape == (n,)
    assert np.all((means >= 0.0) & (means <= 1.0))
    theta = means.mean() + 2.5 * means.std()
    assert 0.1 <= np.abs(means - theta).min() <= 0.2
    assert instances.min_gap(means, 2.5) == pytest.approx(np.abs(means - theta).min())


@pytest.mark.parametrize("gap", zhang2020.FIG2B_RANGES)
def test_fig2b_instances_have_their_min_gap(gap: tuple[float, float]) -> None:
    means = instances.ade_instance(900, 2.0, 0, gap)
    assert gap[0] <= instances.min_gap(means, 2.0) <= gap[1]


def test_instances_are_deterministic_and_distinct() -> None:
    first = instances.ade_instance(200, 2.5, 3, (0.1, 0.2))
    np.testing.assert_array_equal(first, instances.ade_instance(200, 2.5, 3, (0.1, 0.2)))
    assert not np.array_equal(first, instances.ade_instance(200, 2.5, 4, (0.1, 0.2)))


def test_impossible_gap_raises() -> None:
    with pytest.raises(instances.InstanceError, match="minimum gap"):
        instances.ade_instance(100, 2.5, 0, (0.6, 0.7), max_blocks=3)


# ------------------------------------------------------------------ GOLD instances
@pytest.mark.parametrize("kind", ["upper", "intermediate"])
@pytest.mark.parametrize("n", [20, 50])
@pytest.mark.parametrize("eps", [2.5, 5.0])
def test_gold_instances_hold_exactly_one_outlier_group(n: int, kind: str, eps: float) -> None:
    inst = instances.gold_instance(n, eps, kind, 0.9)
    assert not outlier_group_violations(inst.means, inst.outliers, eps, 0.9)
    assert outlier_groups(inst.means, eps, 0.9) == [inst.outliers]
    group = inst.means[sorted(inst.outliers)]
    others = np.delete(inst.means, sorted(inst.outliers))
    above = int((others > group.max()).sum())
    if kind == "upper":
        assert above == 0
    else:  # normal arms on both sides, each more than n (1 - rho)
        assert above > n * 0.1 and others.size - above > n * 0.1


# ---------------------------------------------------------------- HyunCatherines
@needs_data
def test_hcb_error_rates_match_numpy() -> None:
    path = Path(str(_DATA)) / zhang2020.HCB_FILE
    workers, answers = zhang2020.load_hcb(path)
    table = np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8")
    names, inverse = np.unique(table["worker"].astype(str), return_inverse=True)
    rates = 1.0 - np.bincount(inverse, weights=table["correct"]) / np.bincount(inverse)
    expected = dict(zip(names.tolist(), rates.tolist(), strict=True))
    assert len(workers) == 722 == len(expected)  # the paper's 722 workers: all of the file
    model = zhang2020.ResampledAnswers(answers, seed=5)
    for worker, mean in zip(workers, model.means.tolist(), strict=True):
        assert mean == pytest.approx(expected[worker], abs=1e-12)


@needs_data
def test_resampled_answers_draw_from_each_workers_own_answers() -> None:
    _, answers = zhang2020.load_hcb(Path(str(_DATA)) / zhang2020.HCB_FILE)
    model = zhang2020.ResampledAnswers(answers, seed=5)
    arm = int(np.argmax([a.size for a in answers]))  # the busiest worker (1726 answers)
    seqs = np.arange(20_000)
    draws = model.sample(np.full(seqs.size, arm), seqs)
    assert set(np.unique(draws).tolist()) <= set(np.unique(answers[arm]).tolist())
    np.testing.assert_array_equal(draws, model.sample(np.full(seqs.size, arm), seqs))
    # With replacement from p = the worker's error rate: within 5 standard errors.
    p = float(model.means[arm])
    assert abs(draws.mean() - p) < 5 * np.sqrt(p * (1 - p) / seqs.size)
    single = int(np.argmin([a.size for a in answers]))
    assert np.all(model.sample(np.full(50, single), np.arange(50)) == answers[single][0])


# ------------------------------------------------------------------------- plans
def test_zhang2020_quick_plan_builds_its_tasks() -> None:
    plain = zhang2020.build_tasks(zhang2020.QUICK, with_hcb=False)
    # (2 Fig. 2(a) sizes + 1 Fig. 2(b) range) x (ADE, ADE-share + 4 RR/WRR)
    assert len(plain) == 3 * 6
    assert {t.part for t in plain} == {"fig2a", "fig2b"}
    assert [t.mode for t in plain[:2]] == ["n", "share"]
    assert {t.algorithm for t in plain[:6]} == {"ade"}
    with_hcb = zhang2020.build_tasks(zhang2020.QUICK, with_hcb=True)
    assert len(with_hcb) == len(plain) + 2 * 6
    assert len(zhang2020.build_tasks(zhang2020.FULL, with_hcb=True)) == (60 + 30 + 2) * 6
    subset = replace(zhang2020.FULL, instances=1, parts=("fig2a",), fig2a_ns=(100, 1000))
    assert len(zhang2020.build_tasks(subset, with_hcb=True)) == 2 * 6


def test_ban2020_quick_plan_builds_its_tasks() -> None:
    plan = ban2020.QUICK
    tasks = ban2020.build_tasks(plan, with_ib=False)
    main = 2 * 1 * 2 * 1 * (1 + 3 * 3)  # n x eps x kinds x runs x (GOLD + RR/WRR/NRR x k)
    # The paper part repeats the comparison (without IB) on the boundary instances.
    assert len(tasks) == 2 * main + len(plan.eps_effect) * plan.runs
    assert len(ban2020.build_tasks(plan, with_ib=True)) == len(tasks) + 2 * 2 * 3
    assert len(ban2020.build_tasks(ban2020.FULL, with_ib=False)) == 2 * 20 * 2 * 10 + 4 * 2


def test_ban2020_paper_part_runs_inclusive_gold_on_boundary_instances() -> None:
    plan = replace(ban2020.QUICK, parts=("paper",))
    tasks = ban2020.build_tasks(plan, with_ib=True)
    assert {t.part for t in tasks} == {"paper"} and "ib" not in {t.algorithm for t in tasks}
    gold = [t for t in tasks if t.algorithm == "gold"]
    assert len(gold) == 4 and {t.cap for t in gold} == {plan.paper_gold_cap}
    assert {t.cap for t in tasks if t.algorithm != "gold"} == {plan.cap}
    only = replace(ban2020.FULL, parts=("main", "speed"), ns=(20,))
    assert {t.part for t in ban2020.build_tasks(only, with_ib=False)} == {"main"}
    assert ban2020.result_name(only) == "ban2020-full-main-speed-n20"
    assert ban2020.result_name(ban2020.QUICK) == "ban2020-quick"


@pytest.mark.parametrize("kind", ["upper", "intermediate"])
@pytest.mark.parametrize("n", [20, 50])
def test_ban2020_boundary_instances_hold_exactly_n_1_minus_rho_outliers(n: int, kind: str) -> None:
    inst = instances.gold_instance(n, 2.5, kind, 0.9, boundary=True)
    assert len(inst.outliers) == round(n * 0.1)
    assert outlier_group_violations(inst.means, inst.outliers, 2.5, 0.9, boundary=True) == []
    assert outlier_groups(inst.means, 2.5, 0.9, boundary=True) == [inst.outliers]
    strict = outlier_group_violations(inst.means, inst.outliers, 2.5, 0.9)
    assert strict == [f"Constraint (2): {n - len(inst.outliers)} normal arms, not more than rho n"]


def test_ban2020_paper_report_shows_the_gold_wrr_ratio() -> None:
    plan = replace(
        ban2020.QUICK, ns=(20,), kinds=("upper",), parts=("paper",), cap=20_000, processes=1
    )
    report = ban2020.run(plan, progress=False)
    gold = [r for r in report["records"] if r["algorithm"] == "gold"]
    assert len(gold) == 1 and gold[0]["group_size"] == 2 and gold[0]["rank_correct"]
    assert not gold[0]["capped"] and report["speed"] is None
    wrr = next(b for b in report["summary"]["best"] if b["algorithm"] == "wrr")
    assert wrr["part"] == "paper"
    text = ban2020.format_report(report)
    assert "Paper setup" in text and "Strict reading" not in text
    ratio = gold[0]["pulls"] / wrr["mean_pulls"]
    row = next(line for line in text.splitlines() if line.startswith("| 20 | 2.5 | upper"))
    assert row.endswith(f" {ratio:.3g} |") and "0.18 (82% fewer) on average" in text


def test_one_task_of_each_script_runs() -> None:
    record = ban2020.run_task(
        ban2020.Task("main", "nrr", 20, 2.5, "upper", 2.0, 0, 10_000, 0.9, 0.1)
    )
    assert record["pulls"] < 10_000 and record["group_size"] == 1
    paper = ban2020.Task("paper", "gold", 20, 2.5, "upper", None, 0, 10**6, 0.9, 0.1)
    record = ban2020.run_task(paper)  # inclusive GOLD stops once the pair splits off
    assert record["group_size"] == 2 and record["correct"] and not record["capped"]
    assert record["pulls"] == record["group_isolated_at"] < 10**5
    task = zhang2020.Task("fig2a", "ade", "n", 100, 2.5, (0.1, 0.2), 0, 2_000, 0.1)
    record = zhang2020.run_task(task)
    assert record["capped"] and record["pulls"] == 2_000
    assert 0.1 <= record["min_gap"] <= 0.2 and record["n_true_outliers"] == 0
