"""The Tao 2019 and Chen 2017 reproductions: instances, regret, UCBE's a, plans, engine."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import chen2017, instances, tao2019
from screener import BernoulliRewards, simulate
from screener.algorithms.topk import CLUCBPAC


# ---------------------------------------------------------------------------- Tao 2019
def test_setups_match_the_paper() -> None:
    np.testing.assert_allclose(
        instances.threshold_setup(1), [0.2, 0.25, 0.3, 0.35, 0.45, 0.55, 0.65, 0.7, 0.75, 0.8]
    )
    two = instances.threshold_setup(2)
    assert two.size == 20
    np.testing.assert_allclose(two, [0.405 + (i - 1) / 100 for i in range(1, 21)])
    np.testing.assert_allclose(instances.threshold_setup(3), [0.45] * 5 + [0.505] * 5)


def test_aggregate_regret_against_numpy() -> None:
    rng = np.random.default_rng(0)
    means = instances.threshold_setup(2)
    estimates = rng.uniform(0.3, 0.7, size=(50, means.size))
    direct = [sum((e >= 0.5) != (m >= 0.5) for e, m in zip(row, means, strict=True))
              for row in estimates]  # fmt: skip
    np.testing.assert_array_equal(tao2019.aggregate_regret(estimates, means), direct)
    assert tao2019.aggregate_regret(means, means) == 0


def test_ucbe_a_formula() -> None:
    means = instances.threshold_setup(3)
    hardness = 5 / 0.05**2 + 5 / 0.005**2  # H = sum 1 / Delta_i^2, true gaps
    for b in (-1.0, 0.0, 4.0):
        expected = 4.0**b * (20_000 - 10) / hardness
        assert tao2019.ucbe_a(b, 20_000, means) == pytest.approx(expected, rel=1e-12)


def test_quick_plan_builds_every_task() -> None:
    todo = tao2019.tasks(tao2019.QUICK)
    kinds = {(t.kind, t.setup, t.family) for t in todo}
    for setup in (1, 2, 3):
        for family in tao2019.FAMILIES:
            assert ("engine", setup, family) in kinds
            assert ("check", setup, family) in kinds
        assert ("optkg", setup, "opt-kg") in kinds
    runs = sum(t.n_runs for t in todo if t.kind == "engine" and t.family == "lsa" and t.setup == 1)
    assert runs == tao2019.QUICK.runs[0]


@pytest.mark.parametrize("family", tao2019.FAMILIES)
def test_engine_matches_screener(family: str) -> None:
    """The vectorised engine makes exactly the pulls of screener's class (batch 1)."""
    (record,) = tao2019.run_task(tao2019.Task("check", 1, family, 0, 3, (300,)))
    assert record["identical"] == 3


def test_engine_anytime_rows_equal_separate_runs() -> None:
    means = instances.threshold_setup(1)
    seed = tao2019.setup_seed(1)
    runs = np.arange(4, dtype=np.int64)
    params = np.zeros(4)
    long, _ = tao2019.run_engine("lsa", means, params, runs, np.full(4, 400), (200, 400), seed)
    short, _ = tao2019.run_engine("lsa", means, params, runs, np.full(4, 200), (200,), seed)
    np.testing.assert_array_equal(long[:, 0], short[:, 0])


# --------------------------------------------------------------------------- Chen 2017
@pytest.mark.parametrize("p", [0.5, 1.0, 6.0])
def test_synthetic_spans_unit_interval_and_keeps_order(p: float) -> None:
    means = instances.synthetic_means(1000, 250, p)
    assert means.max() == pytest.approx(1.0) and means.min() == pytest.approx(0.0)
    # Best first; p = 6 squeezes the arms next to the boundary to equal floats.
    assert np.all(np.diff(means) <= 0)
    assert np.all(np.diff(means[:100]) < 0) and np.all(np.diff(means[400:]) < 0)


def test_synthetic_p_moves_means_towards_the_boundary() -> None:
    n, k = 1000, 100
    uniform = instances.synthetic_means(n, k, 1.0)
    np.testing.assert_allclose(uniform, (np.arange(n, 0, -1) - 1) / (n - 1))  # UNIFORM rescaled
    # The boundary c = 1 - (K + 1/2) / n is a fixed point of the map; u spans [0, 1 - 1/n].
    c_rescaled = (1.0 - (k + 0.5) / n) / (1.0 - 1.0 / n)
    distance = {p: np.abs(instances.synthetic_means(n, k, p) - c_rescaled) for p in (0.5, 1, 6)}
    inner = slice(1, n - 1)  # the extremes stay put
    assert np.all(distance[6][inner] < distance[1][inner])
    assert np.all(distance[0.5][inner] > distance[1][inner])
    # The top-K remain the top-K.
    for p in (0.5, 6):
        means = instances.synthetic_means(n, k, p)
        assert means[k - 1] >= c_rescaled >= means[k]
        assert means[k - 10] > c_rescaled > means[k + 10]


def test_instances_are_permutations() -> None:
    for name in chen2017.INSTANCES:
        means = instances.topk_instance(name, 1000, 250)
        assert means.size == 1000
        np.testing.assert_array_equal(
            np.sort(means)[::-1], instances.sorted_topk_means(name, 1000, 250)
        )
    two = instances.topk_instance("twogroup", 1000, 100)
    assert np.count_nonzero(two == 0.7) == 100 and np.count_nonzero(two == 0.3) == 900
    np.testing.assert_allclose(
        np.sort(instances.topk_instance("uniform", 1000, 100)), np.arange(0, 1000) / 1000
    )


def test_chen_regret_against_numpy() -> None:
    rng = np.random.default_rng(1)
    means = instances.topk_instance("synthetic-0.5", 1000, 100)
    chosen = rng.choice(1000, size=100, replace=False)
    expected = (np.sort(means)[-100:].sum() - means[chosen].sum()) / 100
    assert chen2017.aggregate_regret(chosen, means, 100) == pytest.approx(expected)
    assert chen2017.aggregate_regret(np.argsort(means)[-100:], means, 100) == pytest.approx(0.0)


def test_chen_quick_plan_builds_tasks() -> None:
    todo = chen2017.tasks(chen2017.QUICK, ["adaptive-topk", "optmai"])
    plan = chen2017.QUICK
    anytime = [t for t in todo if t.algorithm == "adaptive-topk"]
    assert len(anytime) == len(plan.instances) * len(plan.ks) * plan.runs
    assert all(len(t.budgets) == len(plan.per_arm) for t in anytime)
    others = [t for t in todo if t.algorithm == "optmai"]
    assert len(others) == len(plan.instances) * len(plan.ks) * plan.other_runs * len(plan.per_arm)
    assert not [t for t in todo if t.algorithm == "clucb-pac"]


def test_adaptive_topk_checkpoints_equal_separate_runs() -> None:
    """One run read at budget B selects what a run with budget B selects (anytime)."""
    task = chen2017.Task("adaptive-topk", "uniform", 100, 0, (30_000, 60_000), 1000, 0.01, 0.01)
    records = chen2017.run_task(task)
    means = instances.topk_instance("uniform", 1000, 100)
    for record in records:
        algorithm = chen2017.build("adaptive-topk", task, record["budget"])
        seed = chen2017.run_seed("uniform", 100, 0)
        simulate(algorithm, BernoulliRewards(means, seed), batch=1000)
        regret = chen2017.aggregate_regret(chen2017.selection(algorithm), means, 100)
        assert record["regret"] == pytest.approx(regret)


@pytest.mark.slow
@pytest.mark.parametrize("instance", ["uniform", "twogroup"])
def test_clucb_checkpoints_equal_separate_runs(instance: str) -> None:
    """CLUCB-PAC read at budget B selects what a run with budget B (same asks) selects."""
    budgets = (4_000, 9_000, 20_000)
    task = chen2017.Task("clucb-pac", instance, 25, 0, budgets, 200, 0.01, 0.01)
    records = chen2017.run_task(task)
    assert [r["budget"] for r in records] == list(budgets)
    means = instances.topk_instance(instance, 200, 25)
    seed = chen2017.run_seed(instance, 25, 0)
    for record in records:
        algorithm = chen2017.build("clucb-pac", task, record["budget"])
        assert isinstance(algorithm, CLUCBPAC) and algorithm.liar  # the default fill
        assert algorithm.budget == record["budget"]
        marks = [b for b in budgets if b <= record["budget"]]
        picks = chen2017.checkpoints(algorithm, BernoulliRewards(means, seed), marks, 200)
        budget, chosen, pulls = picks[-1]
        assert algorithm.ask(1).done and pulls == record["pulls"] == budget  # budget spent
        assert chen2017.selection(algorithm) == chosen  # the final selection is that leaning
        assert record["regret"] == chen2017.aggregate_regret(chosen, means, 25)
