"""The compiled reference loops of benchmarks.speed make exactly the pulls of ours.

Each loop is checked pull for pull against ``simulate(algorithm, rewards, batch=1)`` on several
seeds and sizes, to termination where that is quick and capped otherwise; its pieces (the
reward draw, numpy's pairwise sum, one worker's mixture interval) against the library.
"""

from __future__ import annotations

from math import lgamma, log

import numpy as np
import pytest

# CI installs numba with the dev extra; a checkout without it skips this module.
pytest.importorskip("numba", reason="numba is in the dev extra: pip install -e '.[dev]'")

from benchmarks import compiled
from benchmarks.instances import gold_instance, ksigma_instance
from benchmarks.speed import same_pulls
from screener import BernoulliRewards, RoundRobin, WeightedRoundRobin, simulate
from screener.algorithms import GOLD, LSA
from screener.simulation.hashing import stream_key
from screener.stats import JEFFREYS, mixture_bounds, mixture_radius

KSIGMA = {"rr": (RoundRobin, compiled.round_robin),
          "wrr": (WeightedRoundRobin, compiled.weighted_round_robin)}  # fmt: skip
CAP = 10**7


@pytest.mark.slow
@pytest.mark.parametrize("name", list(KSIGMA))
@pytest.mark.parametrize(("n", "k", "instance"), [(20, 2.5, 5), (12, 2.0, 3)])
@pytest.mark.parametrize("seed", [1, 7])
def test_ksigma_to_termination(name: str, n: int, k: float, instance: int, seed: int) -> None:
    cls, loop = KSIGMA[name]
    means = ksigma_instance(n, k, instance)
    algorithm = cls(n, k=k, delta=0.1, budget=CAP)
    result = simulate(algorithm, BernoulliRewards(means, seed), batch=1)
    run = loop(means, seed, k=k, delta=0.1, budget=CAP)
    assert result.condition_met
    assert run.pulls == result.total_pulls
    np.testing.assert_array_equal(run.counts, algorithm.stats.count)


@pytest.mark.parametrize("name", list(KSIGMA))
@pytest.mark.parametrize("seed", [1, 3])
def test_ksigma_capped_at_n_100(name: str, seed: int) -> None:
    cls, loop = KSIGMA[name]
    means = ksigma_instance(100, 2.0, 0)
    algorithm = cls(100, k=2.0, delta=0.1, budget=4_000)
    simulate(algorithm, BernoulliRewards(means, seed), batch=1)
    run = loop(means, seed, k=2.0, delta=0.1, budget=4_000)
    np.testing.assert_array_equal(run.counts, algorithm.stats.count)


@pytest.mark.parametrize(("n", "budget"), [(6, 600), (20, 2_000), (200, 3_000)])
@pytest.mark.parametrize("seed", [1, 5])
def test_lsa(n: int, budget: int, seed: int) -> None:
    means = np.linspace(0.3, 0.7, n)
    algorithm = LSA(n, threshold=0.5, budget=budget)
    simulate(algorithm, BernoulliRewards(means, seed), batch=1)
    run = compiled.lsa(means, seed, threshold=0.5, budget=budget)
    np.testing.assert_array_equal(run.counts, algorithm.stats.count)


@pytest.mark.slow
@pytest.mark.parametrize(("n", "kind"), [(30, "upper"), (40, "intermediate")])
@pytest.mark.parametrize("seed", [1, 4])
def test_gold(n: int, kind: str, seed: int) -> None:
    budget = 20_000  # ours runs some 4,000 pulls/s one at a time
    means = gold_instance(n, 2.5, kind, 0.9).means
    algorithm = GOLD(n, rho=0.9, budget=budget)
    simulate(algorithm, BernoulliRewards(means, seed), batch=1)
    run, rounds = compiled.gold(means, seed, rho=0.9, budget=budget)
    np.testing.assert_array_equal(run.counts, algorithm.stats.count)
    np.testing.assert_array_equal(rounds, algorithm.rounds)


def test_gold_separates_the_group() -> None:
    """The GOLD cases above are not vacuous: workers turn terminal within their budget (at
    12,132 pulls with seed 1), and to termination the compiled loop stops as GOLD does."""
    means = gold_instance(30, 2.5, "upper", 0.9).means
    _, rounds = compiled.gold(means, 1, rho=0.9, budget=20_000)
    assert (rounds > 0).sum() >= 2
    run, rounds = compiled.gold(means, 1, rho=0.9, budget=CAP)
    assert run.pulls < CAP
    assert (rounds > 0).sum() >= 3  # n (1 - rho) = 3 terminal workers stop the run


def test_the_draws_are_bernoulli_rewards() -> None:
    means = np.array([0.1, 0.5, 0.9, 0.33])
    key = np.uint64(stream_key(11, 0))
    arms = np.array([0, 1, 2, 3, 2, 1, 0, 3] * 50)
    seqs = np.arange(arms.size) // 3
    expected = BernoulliRewards(means, 11).sample(arms, seqs)
    drawn = [compiled._reward(key, means, int(a), int(s)) for a, s in zip(arms, seqs, strict=True)]
    np.testing.assert_array_equal(drawn, expected)


def test_sums_are_numpys_to_the_bit() -> None:
    rng = np.random.default_rng(0)
    for size in range(1, 400):
        values = rng.random(size) * 10.0 ** rng.integers(-3, 4, size)
        assert compiled._sum(values) == float(np.sum(values)), size


def test_one_workers_mixture_interval_is_the_librarys() -> None:
    a, b = JEFFREYS
    log_beta_prior = lgamma(a) + lgamma(b) - lgamma(a + b)
    alpha = 0.1 / 200
    for t in (1, 2, 7, 50, 999, 12_345):
        for s in sorted({0, 1, t // 3, t // 2, t - 1, t}):
            low, high = mixture_bounds(float(s), float(t), alpha)
            mine = compiled._mixture_interval(float(s), float(t), log(1.0 / alpha), log_beta_prior)
            assert mine == pytest.approx((float(low), float(high)), rel=1e-14, abs=1e-15)
        radius = compiled._mixture_radius(float(t), log(1.0 / alpha), log_beta_prior)
        assert radius == pytest.approx(float(mixture_radius(t, alpha)), rel=1e-14)


def test_the_check_says_when_pulls_differ(capsys: pytest.CaptureFixture[str]) -> None:
    counts = np.array([3, 4, 5])
    assert same_pulls(counts, counts.copy(), "same")
    assert not same_pulls(counts, np.array([3, 5, 4]), "swapped")
    assert "DIFFER on 2 workers" in capsys.readouterr().err
