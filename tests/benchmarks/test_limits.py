"""The oracle bound of benchmarks/limits.py: its pieces against their definitions."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.limits import (
    Operating,
    doing_nothing_cost,
    dominates,
    empirical_prior,
    evaluate_policy,
    lowest_cost,
    oracle_cost,
    oracle_points,
)
from screener.stats.prior import GridPrior, StoppingCosts, StoppingTable, stopping_table

ROOT = Path(__file__).resolve().parents[2]


def _follow(table: StoppingTable, p: float, rng: np.random.Generator) -> tuple[bool, int]:
    """One worker walked through ``table`` answer by answer: (banned, questions)."""
    s = f = 0
    while True:
        action = table.action[s, f]
        if action == StoppingTable.BAN:
            return True, s + f
        if action == StoppingTable.ACCEPT:
            return False, s + f
        if rng.random() < p:
            s += 1
        else:
            f += 1


def test_the_forward_pass_matches_workers_walked_through_the_table() -> None:
    accuracies = np.array([0.35, 0.55, 0.7, 0.9])
    prior = GridPrior(accuracies, np.full(4, 0.25))
    table = stopping_table(prior, 0.6, StoppingCosts(1.0, 20.0, 20.0), horizon=15, min_answers=0)
    banned, questions = evaluate_policy(table, accuracies)
    rng = np.random.default_rng(7)
    runs = 4000
    for i, p in enumerate(accuracies):
        walks = [_follow(table, float(p), rng) for _ in range(runs)]
        ban_share = np.mean([b for b, _ in walks])
        mean_questions = np.mean([q for _, q in walks])
        # 5 standard errors: a wrong forward pass is off by far more
        assert abs(ban_share - banned[i]) <= 5 * math.sqrt(0.25 / runs) + 1e-9
        spread = np.std([q for _, q in walks]) / math.sqrt(runs)
        assert abs(mean_questions - questions[i]) <= 5 * spread + 1e-9
    assert banned[0] > 0.5 > banned[-1]  # the table bans the weak, keeps the strong


def test_asking_nothing_is_the_oracles_choice_when_mistakes_are_cheap() -> None:
    accuracies = np.array([0.5] + [0.9] * 19)  # one bad worker in twenty
    (point,) = oracle_points(accuracies, 0.6, 30, [(1.0, 1.0, 1.0)])
    # accepting everyone unseen costs 1/20 of a miss per worker; any question costs 1
    assert point == Operating(0.0, 0.0, 1.0)


def test_lowest_cost_mixes_two_policies_to_spend_the_budget_exactly() -> None:
    points = [Operating(0.0, 0.0, 1.0), Operating(4.0, 0.0, 0.0), Operating(10.0, 0.0, 0.0)]

    def cost(point: Operating) -> float:
        return point.questions + 10.0 * point.missed_bad

    # half of each of the first two: 2 questions and half a miss, 2 + 5
    assert lowest_cost(points, 2.0, cost) == pytest.approx(7.0)
    assert lowest_cost(points, 0.0, cost) == pytest.approx(10.0)
    assert lowest_cost(points, 6.0, cost) == pytest.approx(4.0)
    assert lowest_cost(points[1:], 2.0, cost) == math.inf


def test_dominates_finds_mixtures_and_refuses_what_no_mixture_reaches() -> None:
    points = [Operating(2.0, 0.4, 0.0), Operating(2.0, 0.0, 0.4)]
    rule = Operating(8.0, 0.2, 0.2)
    assert dominates(points, rule, 2.0)  # the half-half mix: 0.2 and 0.2
    assert not dominates(points, Operating(8.0, 0.1, 0.1), 4.0)
    assert not dominates(points, rule, 1.5)  # every point asks 2


@pytest.mark.subprocess
@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("SCREENER_DATA"), reason="SCREENER_DATA is not set")
def test_the_command_prints_its_table() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.limits", "--seeds", "3", "--datasets", "Snow08_rte"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| Snow08_rte " in done.stdout
    assert "T1 possible on" in done.stdout
    assert "T2 possible against toloka-rule:accept_after=10" in done.stdout
    assert "beats nothing" in done.stdout


def test_the_oracles_cost_is_its_policys_exact_cost_over_the_crowd() -> None:
    """The stopping table's expected cost at the start, under the crowd's own distribution, is
    the average over its workers of each one's exact cost under that table (the forward
    pass): the lowest any policy reaches in the model, and never above doing nothing."""
    accuracies = np.array([0.3, 0.45, 0.55, 0.7, 0.8, 0.85, 0.9, 0.95])
    for c_ban, c_miss in ((10.0, 100.0), (30.0, 1000.0), (100.0, 10.0)):
        cost = oracle_cost(accuracies, 0.6, 40, c_ban, c_miss)
        costs = StoppingCosts(1.0, c_ban, c_miss)
        table = stopping_table(empirical_prior(accuracies), 0.6, costs, horizon=40, min_answers=0)
        banned, questions = evaluate_policy(table, accuracies)
        bad = accuracies < 0.6
        walked = questions + np.where(bad, c_miss * (1 - banned), c_ban * banned)
        assert cost == pytest.approx(float(walked.mean()), rel=1e-9)
        assert cost <= doing_nothing_cost(accuracies, 0.6, c_ban, c_miss) + 1e-12


def test_nothing_can_be_beaten_only_where_a_question_is_worth_asking() -> None:
    good = np.array([0.5] + [0.9] * 19)  # one bad worker in twenty
    # a miss at 10: accepting everyone costs 0.5 per worker, less than any question
    assert oracle_cost(good, 0.6, 30, 10.0, 10.0) == pytest.approx(0.5)
    assert doing_nothing_cost(good, 0.6, 10.0, 10.0) == pytest.approx(0.5)
    # a miss at 1,000 and a ban at 100 (doing nothing: 50 per worker): questions pay
    nothing = doing_nothing_cost(good, 0.6, 100.0, 1000.0)
    assert nothing == pytest.approx(50.0)
    assert oracle_cost(good, 0.6, 30, 100.0, 1000.0) < 0.5 * nothing
