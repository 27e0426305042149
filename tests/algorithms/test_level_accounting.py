"""Exact accounting of delta (issue 19, items 1 and 2), for every interval option of the
k-sigma family that claims a guarantee: the mixture defaults of RR, WRR, IB and GOLD, k-sigma
Hoeffding (RR, WRR, IB), GOLD Hoeffding with the normal quantile rule, and ADE.

The levels are not recomputed here from the algorithms' formulas: they are read off the radii
the algorithms computed, each radius turned back into the one-sided miss probability that its
own bound certifies (Hoeffding: ``exp(-2 m r^2 / R^2)``; theta's McDiarmid bound:
``exp(-2 h r^2 / (l(k) R^2))``; the Beta-mixture sequence: ``exp(-(t kl(S/t, q) - R(S, t)))``
for an end q). Each level is then counted once per interval end a decision can lean on (see
the docstrings of KSigmaAlgorithm, GOLD and ADE), and summed over T >= 1. The spend at T is
read at every T of a run and must be ``c / T^2`` with one constant c, so the whole sum is
``c pi^2 / 6``: exactly delta where the split is meant to be exact. The mixture sequences hold
at every count at once: their levels are not summed over T, and must be the same at every T.
Agresti-Coull intervals are heuristic (no bound to invert) and are not counted.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.typing import ArrayLike, NDArray

from screener.algorithms import IteratedBestArm, RoundRobin, WeightedRoundRobin
from screener.algorithms.base import Algorithm
from screener.algorithms.ksigma import ADE, GOLD, KSigmaAlgorithm
from screener.stats import round_level

FloatArray = NDArray[np.float64]
ZETA2 = math.pi**2 / 6.0  # sum of 1 / T^2 over T >= 1


def hoeffding_miss(radius: ArrayLike, count: ArrayLike, width: float) -> FloatArray:
    """The one-sided miss Hoeffding's inequality certifies for the mean of ``count`` rewards
    in a range of ``width`` at ``radius``: ``P(mean - mu > r) <= exp(-2 m r^2 / R^2)``."""
    r = np.asarray(radius, dtype=np.float64)
    m = np.asarray(count, dtype=np.float64)
    return np.asarray(np.exp(-2.0 * m * r * r / (width * width)), dtype=np.float64)


def mcdiarmid_miss(radius: float, counts: FloatArray, lk: float, width: float) -> float:
    """The one-sided miss of theta's interval for bounded rewards (Zhuang et al. 2017,
    Section 4.3): ``exp(-2 h(m) r^2 / (l(k) R^2))``, h the harmonic mean of the counts."""
    harmonic = counts.size / float(np.sum(1.0 / counts))
    return math.exp(-2.0 * harmonic * radius * radius / (lk * width * width))


def run_and_read(
    alg: Algorithm, means: FloatArray, steps: int, read: Callable[[], float | None]
) -> dict[int, float]:
    """Drive ``alg`` one answer at a time (Bernoulli rewards scaled to its range) and read the
    spend at every T once ``read`` can tell it (None: not yet)."""
    rng = np.random.default_rng(19)
    spend: dict[int, float] = {}
    for _ in range(steps):
        ask = alg.ask(1)
        if ask.done:
            break
        hits = rng.random(len(ask)) < means[ask.arms]
        alg.tell_many(ask.ids, np.where(hits, alg.upper, alg.lower))
        alg.result()  # refresh on the answers so far
        value = read()
        if value is not None:
            spend[alg.n_answered] = value
    return spend


def total_over_all_t(spend: dict[int, float]) -> float:
    """``c pi^2 / 6`` after checking that the spend at every T read is ``c / T^2``."""
    assert len(spend) >= 50, "too few T read to check the shape of the schedule"
    scaled = np.array([value * t * t for t, value in spend.items()])
    np.testing.assert_allclose(scaled, scaled[0], rtol=1e-9)
    return float(scaled[0]) * ZETA2


# ------------------------------------------------------------------ k-sigma Hoeffding
def ksigma_spend(alg: KSigmaAlgorithm) -> float | None:
    """n worker ends (one per worker, the one its true side needs) and both ends of theta's
    interval, at the levels read off the radii (``highs - means``, ``theta_high - theta``)."""
    counts = alg.stats.count.astype(np.float64)
    if not (counts > 0).all() or not math.isfinite(alg.theta_high):
        return None
    radii = alg.highs - alg.means
    np.testing.assert_allclose(alg.means - alg.lows, radii, rtol=1e-12)  # symmetric
    worker = hoeffding_miss(radii, counts, alg.width)
    np.testing.assert_allclose(worker, worker[0], rtol=1e-9)  # one level for every worker
    theta_radius = alg.theta_high - alg.theta
    assert alg.theta - alg.theta_low == pytest.approx(theta_radius, rel=1e-12)
    theta = mcdiarmid_miss(theta_radius, counts, alg.lk, alg.width)
    return alg.n_arms * 1 * float(worker[0]) + 2 * theta


KSIGMA_CASES = [
    pytest.param(RoundRobin, [0.2, 0.9], {"delta": 0.1}, id="rr-n2"),
    pytest.param(RoundRobin, [0.1, 0.2, 0.3, 0.4, 0.95], {"delta": 0.01}, id="rr-n5"),
    pytest.param(
        RoundRobin, [0.1, 0.3, 0.5, 0.9], {"delta": 0.2, "lower": 1.0, "upper": 5.0}, id="rr-1to5"
    ),
    pytest.param(RoundRobin, [0.1, 0.6, 0.7, 0.8], {"direction": "low"}, id="rr-low"),
    pytest.param(WeightedRoundRobin, [0.1, 0.2, 0.2, 0.3, 0.3, 0.95], {}, id="wrr-n6"),
    pytest.param(IteratedBestArm, [0.1, 0.2, 0.3, 0.9], {"delta": 0.05}, id="ib-n4"),
]


@pytest.mark.parametrize(("cls", "means", "params"), KSIGMA_CASES)
def test_ksigma_hoeffding_spends_delta_exactly(
    cls: type[KSigmaAlgorithm], means: list[float], params: dict[str, Any]
) -> None:
    alg = cls(len(means), k=1.0, interval="hoeffding", **params)
    spend = run_and_read(alg, np.array(means), 400, lambda: ksigma_spend(alg))
    assert sum(spend.values()) < alg.delta
    assert total_over_all_t(spend) == pytest.approx(alg.delta, rel=1e-9)


class _PaperSplit(RoundRobin):
    """RR with Eq. (1) as printed: delta over n + 1 intervals, theta's counted once."""

    def interval_level(self, total_pulls: int) -> float:
        return round_level(self.delta, self.n_arms, total_pulls)


@pytest.mark.parametrize("n", [2, 5])
def test_the_check_catches_the_papers_split(n: int) -> None:
    # The same reading on Eq. (1)'s levels finds the overspend this issue is about.
    means = np.linspace(0.1, 0.9, n)
    alg = _PaperSplit(n, k=1.0, delta=0.1, interval="hoeffding")
    spend = run_and_read(alg, means, 300, lambda: ksigma_spend(alg))
    assert total_over_all_t(spend) == pytest.approx(0.1 * (n + 2) / (n + 1), rel=1e-9)


def test_interval_level_is_the_level_the_radii_use() -> None:
    # The public level schedule and the refresh agree (the radii are built at it).
    alg = RoundRobin(3, k=1.0, delta=0.1, interval="hoeffding")
    run_and_read(alg, np.array([0.2, 0.5, 0.9]), 40, lambda: None)
    counts = alg.stats.count.astype(np.float64)
    level = alg.interval_level(alg.n_answered)
    radii = alg.highs - alg.means
    np.testing.assert_allclose(hoeffding_miss(radii, counts, alg.width), level, rtol=1e-9)
    theta = mcdiarmid_miss(alg.theta_high - alg.theta, counts, alg.lk, alg.width)
    assert theta == pytest.approx(level, rel=1e-9)


# ------------------------------------------------------------- the mixture defaults
def mixture_regret(sums: FloatArray, counts: FloatArray) -> FloatArray:
    """``R(S, t)``: log of the maximum likelihood over the Beta(1/2, 1/2) mixture likelihood
    ``B(1/2 + S, 1/2 + t - S) / B(1/2, 1/2)`` (Howard et al. 2021), with math.lgamma."""
    out = []
    for s, t in zip(sums.tolist(), counts.tolist(), strict=True):
        p = s / t
        best = (s * math.log(p) if s > 0 else 0.0) + ((t - s) * math.log(1 - p) if s < t else 0.0)
        mixed = math.lgamma(0.5 + s) + math.lgamma(0.5 + t - s) - math.lgamma(1 + t)
        out.append(best - mixed + math.log(math.pi))
    return np.array(out)


def kl(p: FloatArray, q: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        ones = np.where(p > 0, p * np.log(p / q), 0.0)
        zeros = np.where(p < 1, (1 - p) * np.log((1 - p) / (1 - q)), 0.0)
    return np.asarray(ones + zeros, dtype=np.float64)


def mixture_level(ends: FloatArray, sums: FloatArray, counts: FloatArray) -> FloatArray:
    """The level at which the Beta-mixture sequence of (S, t) ends at ``ends`` (rewards on
    [0, 1]): ``{q : t kl(S/t, q) <= log(1/alpha) + R(S, t)}``, so
    ``alpha = exp(-(t kl(S/t, q) - R(S, t)))``."""
    return np.exp(-(counts * kl(sums / counts, ends) - mixture_regret(sums, counts)))


def ksigma_mixture_spend(alg: KSigmaAlgorithm) -> float | None:
    """Each worker's level, read off both ends of its interval (a decision may lean on either,
    through theta's range): one level per worker, for the whole sequence. theta's interval is
    the range over the workers' box (tests/algorithms/test_default_intervals.py): no level."""
    counts = alg.stats.count.astype(np.float64)
    if not (counts > 0).all():
        return None
    sums = (alg.stats.total - alg.lower * counts) / alg.width
    low = (alg.lows - alg.lower) / alg.width
    high = (alg.highs - alg.lower) / alg.width
    levels = []
    for end, edge in ((low, 0.0), (high, 1.0)):
        inside = end != edge  # an end at 0 or 1 certifies no level of its own
        levels.append(mixture_level(end, sums, counts)[inside])
    every = np.concatenate(levels)
    np.testing.assert_allclose(every, every[0], rtol=1e-6)  # one level, both ends, all workers
    return alg.n_arms * float(every[0])


@pytest.mark.parametrize(("cls", "means", "params"), KSIGMA_CASES)
def test_ksigma_mixture_spends_delta_exactly(
    cls: type[KSigmaAlgorithm], means: list[float], params: dict[str, Any]
) -> None:
    alg = cls(len(means), k=1.0, **params)
    assert alg.interval == "mixture"
    spend = run_and_read(alg, np.array(means), 400, lambda: ksigma_mixture_spend(alg))
    assert len(spend) >= 50
    np.testing.assert_allclose(list(spend.values()), alg.delta, rtol=1e-6)  # at every T


def gold_mixture_spend(alg: GOLD) -> float | None:
    """Both ends of every arm's radius, one level per arm for the whole sequence:
    ``r = sqrt(b_max(m) / 2m)``, ``b_max = log(1/alpha) + max(R(0, m), R(m, m))``."""
    counts = alg.stats.count.astype(np.float64)
    if not (counts > 0).all():
        return None
    widest = np.maximum(mixture_regret(0 * counts, counts), mixture_regret(counts, counts))
    radii = alg.radii / alg.width
    levels = np.exp(-(2.0 * counts * radii * radii - widest))
    np.testing.assert_allclose(levels, levels[0], rtol=1e-9)
    return alg.n_arms * float(levels[0])


@pytest.mark.parametrize("delta", [0.1, 0.01])
def test_gold_mixture_spends_delta_exactly(delta: float) -> None:
    alg = GOLD(len(GOLD_MEANS), rho=0.75, delta=delta)
    assert alg.interval == "mixture"
    spend = run_and_read(alg, np.array(GOLD_MEANS), 300, lambda: gold_mixture_spend(alg))
    assert len(spend) >= 50
    np.testing.assert_allclose(list(spend.values()), delta, rtol=1e-9)


# ----------------------------------------------------------------------------- GOLD
def gold_spend(alg: GOLD) -> float | None:
    """Both ends of every arm's interval (the neighbour test leans on either end)."""
    counts = alg.stats.count.astype(np.float64)
    if not (counts > 0).all():
        return None
    per_end = hoeffding_miss(alg.radii, counts, alg.width)
    np.testing.assert_allclose(per_end, per_end[0], rtol=1e-9)
    return alg.n_arms * 2 * float(per_end[0])


GOLD_MEANS = [0.05, 0.1, 0.5, 0.52, 0.54, 0.56, 0.58, 0.6]


@pytest.mark.parametrize("delta", [0.1, 0.01])
def test_gold_hoeffding_spends_delta_exactly(delta: float) -> None:
    alg = GOLD(len(GOLD_MEANS), rho=0.75, delta=delta, interval="hoeffding")
    spend = run_and_read(alg, np.array(GOLD_MEANS), 300, lambda: gold_spend(alg))
    assert sum(spend.values()) < delta
    assert total_over_all_t(spend) == pytest.approx(delta, rel=1e-9)


def test_gold_paper_quantile_spends_twice_delta() -> None:
    # quantile="paper" (kept for reproductions, heuristic) puts delta' on each end.
    alg = GOLD(len(GOLD_MEANS), rho=0.75, delta=0.1, interval="hoeffding", quantile="paper")
    spend = run_and_read(alg, np.array(GOLD_MEANS), 300, lambda: gold_spend(alg))
    assert total_over_all_t(spend) == pytest.approx(0.2, rel=1e-9)


# ------------------------------------------------------------------------------ ADE
def ade_spend(alg: ADE) -> tuple[int, float] | None:
    """Round t's spend: 2 ends of each worker's interval and theta's ``8 delta_t`` (2 for
    mu_hat, Lemma 1, read off theta's radius with k = 0; 6 for sigma_hat, Eq. (17))."""
    sampled = alg.arm_count > 0
    if alg.m_theta == 0 or not sampled.all():
        return None
    per_end = hoeffding_miss(alg.radii, alg.arm_count, alg.big_r)
    np.testing.assert_allclose(per_end, per_end[0], rtol=1e-9)
    mu_end = float(hoeffding_miss(alg.theta_radius, alg.m_theta, alg.big_r))
    assert mu_end == pytest.approx(float(per_end[0]), rel=1e-9)  # the same delta_t
    spend = alg.n_arms * 2 * float(per_end[0]) + 2 * mu_end + 6 * mu_end
    return alg.completed + 1, spend


def test_ade_spends_delta_exactly() -> None:
    means = np.array([0.02] * 4 + [0.98] * 2)
    alg = ADE(means.size, k=0.0, delta=0.1, seed=3)
    by_round: dict[int, float] = {}

    def read() -> None:
        value = ade_spend(alg)
        if value is not None:
            by_round[value[0]] = value[1]

    run_and_read(alg, means, 3000, lambda: read())
    assert total_over_all_t(by_round) == pytest.approx(0.1, rel=1e-9)
