"""Confidence sequences: the papers' formulas by slow references, properties, and coverage
checked at every time on 20,000 seeded sequences."""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import numpy as np
import pytest
from numpy.typing import NDArray
from stats_helpers import assert_rate_at_most

from screener.stats import (
    JEFFREYS,
    BettingCS,
    bernoulli_kl,
    clearing_count,
    hoeffding_radius,
    kl_bounds,
    log_beta,
    log_gamma,
    max_clearing_count,
    mixture_bounds,
    mixture_log_inverse,
    mixture_log_inverse_max,
    mixture_radius,
)

FloatArray = NDArray[np.float64]
ALPHA = 0.05
SEQUENCES = 20_000
HORIZON = 200
MEANS = [0.02, 0.5, 0.98]


# ------------------------------------------------------------------------ special functions
def test_log_gamma_matches_math_lgamma() -> None:
    x = np.concatenate([np.geomspace(1e-6, 1e12, 3000), [0.5, 1.0, 2.0, 3.0, 10.0, 10.5]])
    expected = np.array([math.lgamma(v) for v in x])
    np.testing.assert_allclose(log_gamma(x), expected, rtol=1e-13, atol=1e-13)
    assert float(log_beta(0.5, 0.5)) == pytest.approx(math.log(math.pi), rel=1e-14)
    assert float(log_beta(3.0, 4.0)) == pytest.approx(math.log(1 / 60), rel=1e-13)


# ---------------------------------------------------------------------- the Beta mixture
def _slow_log_mixture(s: float, t: float, m: float) -> float:
    """``log M_t(m) = log E_{q ~ Beta(1/2, 1/2)} [(q/m)^s ((1-q)/(1-m))^(t-s)]`` by quadrature.

    With ``q = sin^2(phi)`` the Jeffreys density becomes uniform on phi in (0, pi/2): the
    midpoint rule on 200,000 points, summed in log space.
    """
    phi = (np.arange(200_000) + 0.5) * (math.pi / 2) / 200_000
    q = np.sin(phi) ** 2
    logs = s * np.log(q / m) + (t - s) * np.log((1 - q) / (1 - m))
    top = float(logs.max())
    return top + math.log(float(np.mean(np.exp(logs - top))))


@pytest.mark.parametrize(
    ("s", "t", "m"), [(0.0, 5.0, 0.3), (7.0, 10.0, 0.5), (3.3, 12.0, 0.1), (95.0, 100.0, 0.8)]
)
def test_mixture_is_the_beta_mixture_of_likelihood_ratios(s: float, t: float, m: float) -> None:
    # log M_t(m) = t kl(s/t, m) - R(s, t), so M_t(m) >= 1/alpha iff m is outside the CS.
    budget = float(mixture_log_inverse(s, t, ALPHA))
    log_mixture = t * float(bernoulli_kl(s / t, m)) - (budget - math.log(1 / ALPHA))
    assert log_mixture == pytest.approx(_slow_log_mixture(s, t, m), abs=1e-6)


def test_mixture_regret_hand_values() -> None:
    # S = 0: R = log B(1/2, 1/2) - log B(1/2, t + 1/2) = log(pi) - log B(1/2, t + 1/2).
    for t in (1, 10, 1000):
        regret = math.log(math.pi) - (
            math.lgamma(0.5) + math.lgamma(t + 0.5) - math.lgamma(t + 1.0)
        )
        value = float(mixture_log_inverse(0.0, t, ALPHA)) - math.log(1 / ALPHA)
        assert value == pytest.approx(regret, rel=1e-12)
    # t = 2, S = 1: p = 1/2, max likelihood 1/4; B(3/2, 3/2) / B(1/2, 1/2) = (pi / 8) / pi.
    value = float(mixture_log_inverse(1.0, 2.0, ALPHA)) - math.log(1 / ALPHA)
    assert value == pytest.approx(math.log(0.25) - math.log(1 / 8), rel=1e-12)
    # Inside (0, 1) the regret is about 0.5 log t + 0.5 log(pi / 2) (Laplace's method).
    inside = float(mixture_log_inverse(3000.0, 10_000.0, ALPHA)) - math.log(1 / ALPHA)
    assert inside == pytest.approx(0.5 * math.log(10_000) + 0.5 * math.log(math.pi / 2), abs=1e-3)


@pytest.mark.parametrize("t", [1.0, 2.0, 7.0, 30.0, 101.0, 5000.0])
def test_largest_budget_is_at_the_ends(t: float) -> None:
    sums = np.linspace(0.0, t, 4001)  # graded sums included
    budgets = mixture_log_inverse(sums, np.full_like(sums, t), ALPHA)
    assert float(mixture_log_inverse_max(t, ALPHA)) >= float(budgets.max()) - 1e-12
    assert np.all(budgets >= math.log(1 / ALPHA))  # the regret is never negative


def test_mixture_bounds_solve_the_kl_equation_and_contain_the_mean() -> None:
    sums = np.array([0.0, 3.0, 5.5, 10.0, 70.0])
    counts = np.array([10.0, 10.0, 11.0, 10.0, 100.0])
    low, high = mixture_bounds(sums, counts, ALPHA)
    means = sums / counts
    budget = mixture_log_inverse(sums, counts, ALPHA)
    assert np.all(low <= means) and np.all(means <= high)
    for q in (low, high):
        on_edge = (q > 0) & (q < 1)
        np.testing.assert_allclose(
            (counts * bernoulli_kl(means, q))[on_edge], budget[on_edge], rtol=1e-9
        )
    zero_low, zero_high = mixture_bounds(0.0, 0, ALPHA)
    assert (float(zero_low), float(zero_high)) == (0.0, 1.0)


@pytest.mark.parametrize("mean", [0.1, 0.5, 0.93])
def test_mixture_narrows_with_data_and_widens_with_smaller_alpha(mean: float) -> None:
    counts = np.array([5.0, 10.0, 30.0, 100.0, 1000.0, 10_000.0])
    low, high = mixture_bounds(mean * counts, counts, ALPHA)
    assert np.all(np.diff(high - low) < 0)
    strict_low, strict_high = mixture_bounds(mean * counts, counts, ALPHA / 100)
    assert np.all(strict_low <= low) and np.all(strict_high >= high)
    assert np.all(strict_high - strict_low > high - low)


def test_mixture_rejects_bad_alpha() -> None:
    with pytest.raises(ValueError, match="alpha"):
        mixture_bounds(1.0, 2, 0.0)


def test_mixture_radius_covers_the_mixture_sequence_for_every_sum() -> None:
    # Pinsker's cover: the mixture CS at count t lies inside S/t -+ radius(t) for every sum.
    for t in (1, 2, 5, 30, 400):
        sums = np.linspace(0.0, t, 801)
        counts = np.full_like(sums, t)
        low, high = mixture_bounds(sums, counts, 0.01)
        radius = mixture_radius(counts, 0.01)
        assert np.all(sums / t - radius <= low + 1e-12)
        assert np.all(high <= sums / t + radius + 1e-12)
    assert math.isinf(float(mixture_radius(0, 0.01)))
    budget = float(mixture_log_inverse_max(30, 0.01))
    assert float(mixture_radius(30, 0.01)) == pytest.approx(math.sqrt(budget / 60), rel=1e-14)


# ------------------------------------------------------------------------------ betting
def _slow_betting(x: list[float], m: float, alpha: float, c: float) -> tuple[float, float]:
    """WSR 2024, Theorem 3 with predictable plug-in bets, one answer at a time (log K+, K-)."""
    log_plus = log_minus = 0.0
    total = squares = 0.0
    variance = 0.25  # sigma2_0
    for t, value in enumerate(x, start=1):
        bet = math.sqrt(2 * math.log(2 / alpha) / (variance * t * math.log(1 + t)))
        plus = min(bet, c / m) if m > 0 else bet
        minus = min(bet, c / (1 - m)) if m < 1 else bet
        log_plus += math.log(1 + plus * (value - m))
        log_minus += math.log(1 - minus * (value - m))
        total += value
        mu_t = (0.5 + total) / (t + 1)
        squares += (value - mu_t) ** 2
        variance = (0.25 + squares) / (t + 1)
    return log_plus, log_minus


def test_betting_capital_follows_the_paper_step_by_step() -> None:
    rng = np.random.default_rng(3)
    grid = np.array([0.0, 0.1, 0.37, 0.5, 0.8, 1.0])
    cs = BettingCS(2, 0.1, grid=grid)
    x0 = rng.random(40).tolist()
    x1 = (rng.random(25) < 0.7).astype(float).tolist()
    arms = [0] * len(x0) + [1] * len(x1)
    order = rng.permutation(len(arms))  # interleaved: each arm's answers stay in order
    firsts = {0: iter(x0), 1: iter(x1)}
    seq_arms = [arms[i] for i in order]
    seq_values = [next(firsts[a]) for a in seq_arms]
    cs.update_many(seq_arms[:30], seq_values[:30])
    cs.update_many(seq_arms[30:], seq_values[30:])
    for arm, values in ((0, x0), (1, x1)):
        for j, m in enumerate(grid):
            plus, minus = _slow_betting(values, float(m), 0.1, 0.5)
            assert cs.log_plus[arm, j] == pytest.approx(plus, rel=1e-10, abs=1e-12)
            assert cs.log_minus[arm, j] == pytest.approx(minus, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_betting_batches_equal_one_at_a_time_bit_for_bit(seed: int) -> None:
    # However the answers are grouped into tells (and whatever other arms share a tell), each
    # arm's state has the bits of its answers told one at a time: a replay regrouped is exact.
    rng = np.random.default_rng(seed)
    arms = rng.integers(0, 4, 300)
    values = np.where(rng.random(300) < 0.5, rng.random(300), (rng.random(300) < 0.7) * 1.0)
    single, grouped = BettingCS(4, 0.05), BettingCS(4, 0.05)
    for arm, value in zip(arms.tolist(), values.tolist(), strict=True):
        single.update_many([arm], [value])
        single.bounds()  # each answer's capital grown on its own
    cuts = np.sort(rng.choice(np.arange(1, 300), size=rng.integers(0, 12), replace=False))
    for part in np.split(np.arange(300), cuts):
        grouped.update_many(arms[part], values[part])
    for name in ("counts", "sums", "_squares", "_variance", "log_plus", "log_minus"):
        np.testing.assert_array_equal(getattr(grouped, name), getattr(single, name), name)
    np.testing.assert_array_equal(grouped.rejected(), single.rejected())
    np.testing.assert_array_equal(grouped.bounds(), single.bounds())


def test_betting_reads_between_answers_change_nothing() -> None:
    # The grid work waits for a read and runs in chunks: reading after every 7 answers and
    # reading once after 6,000 (three chunks of the default grid) give the same capital,
    # which is the paper's, answer by answer, at the end.
    rng = np.random.default_rng(5)
    arms = rng.integers(0, 2, 6000)
    values = np.where(arms == 0, rng.random(6000), (rng.random(6000) < 0.8).astype(float))
    often, once = BettingCS(2, 0.05), BettingCS(2, 0.05)
    for start in range(0, 6000, 7):
        often.update_many(arms[start : start + 7], values[start : start + 7])
        often.bounds()
    once.update_many(arms, values)
    np.testing.assert_array_equal(once.log_plus, often.log_plus)
    np.testing.assert_array_equal(once.log_minus, often.log_minus)
    np.testing.assert_array_equal(once.bounds()[0], often.bounds()[0])
    np.testing.assert_array_equal(once.bounds()[1], often.bounds()[1])
    for arm in (0, 1):
        plus, minus = _slow_betting(values[arms == arm].tolist(), 0.6, 0.05, 0.5)
        column = int(np.argmin(np.abs(once.grid - 0.6)))
        assert once.grid[column] == 0.6
        assert once.log_plus[arm, column] == pytest.approx(plus, rel=1e-9)
        assert once.log_minus[arm, column] == pytest.approx(minus, rel=1e-9)


def _leading_true(rows: NDArray[np.bool_]) -> NDArray[np.int64]:
    return np.array([next((j for j, v in enumerate(row) if not v), len(row)) for row in rows])


def _betting_by_running_maxima(
    arms: NDArray[np.int64], values: FloatArray, n_arms: int
) -> tuple[BettingCS, FloatArray, FloatArray]:
    """The sequence told one answer at a time, with each grid point's running maximum of
    both capitals kept beside it (the definition of the running intersection)."""
    cs = BettingCS(n_arms, 0.05, grid=np.linspace(0.0, 1.0, 41))
    best_plus, best_minus = np.zeros_like(cs.log_plus), np.zeros_like(cs.log_minus)
    for arm, value in zip(arms.tolist(), values.tolist(), strict=True):
        cs.update_many([arm], [value])
        best_plus = np.maximum(best_plus, cs.log_plus)
        best_minus = np.maximum(best_minus, cs.log_minus)
    return cs, best_plus, best_minus


@pytest.mark.parametrize("seed", range(4))
def test_betting_reach_is_every_grid_point_ever_rejected(seed: int) -> None:
    # The sequence keeps how far each side's rejections reached, not a maximum per grid
    # point: the same rejected points, since each answer's rejections are a prefix (suffix).
    rng = np.random.default_rng(seed)
    arms = rng.integers(0, 5, 800)
    values = np.where(arms < 2, rng.random(800), (rng.random(800) < 0.15 * (arms + 1)) * 1.0)
    cs, best_plus, best_minus = _betting_by_running_maxima(arms, values, 5)
    below, above = cs.reach()
    assert below.tolist() == _leading_true(best_plus >= cs.log_threshold).tolist()
    assert above.tolist() == _leading_true((best_minus >= cs.log_threshold)[:, ::-1]).tolist()
    assert below.max() > 0 and above.max() > 0  # both sides have rejected something
    too_small, too_large = cs.rejected()
    assert too_small.sum(axis=1).tolist() == below.tolist()
    assert too_large.sum(axis=1).tolist() == above.tolist()


def test_betting_pickles_without_its_queue_and_loads_older_pickles() -> None:
    rng = np.random.default_rng(9)
    arms = rng.integers(0, 4, 600)
    values = (rng.random(600) < 0.2 + 0.2 * arms).astype(np.float64)
    cs, best_plus, best_minus = _betting_by_running_maxima(arms[:300], values[:300], 4)
    lazy = BettingCS(4, 0.05, grid=cs.grid)
    lazy.update_many(arms[:300], values[:300])  # nothing read: every answer waits
    stored = pickle.loads(pickle.dumps(lazy))
    assert stored._pending == [] and lazy._pending == []
    # A pickle of before the reach was kept: the running maxima in its place.
    older = {**copy.deepcopy(vars(cs)), "_best_plus": best_plus, "_best_minus": best_minus}
    del older["_below"], older["_above"]
    restored = BettingCS.__new__(BettingCS)
    restored.__setstate__(older)
    for each in (stored, restored, cs):
        each.update_many(arms[300:], values[300:])
    expected = cs.bounds()
    assert (expected[0] > 0.0).all() and (expected[1] < 1.0).all()
    for each in (stored, restored):
        np.testing.assert_array_equal(each.bounds(), expected)
        np.testing.assert_array_equal(each.log_plus, cs.log_plus)


def test_betting_capital_is_monotone_in_the_candidate_and_bounds_nest() -> None:
    rng = np.random.default_rng(4)
    cs = BettingCS(6, 0.05)
    previous = cs.bounds()
    assert np.all(previous[0] == 0.0) and np.all(previous[1] == 1.0)
    for _ in range(60):
        cs.update_many(np.arange(6), rng.beta([0.3, 1, 2, 5, 9, 20], 2.0))
        assert np.all(np.diff(cs.log_plus, axis=1) <= 1e-12)  # K+ falls as m rises
        assert np.all(np.diff(cs.log_minus, axis=1) >= -1e-12)
        low, high = cs.bounds()
        assert np.all(low >= previous[0]) and np.all(high <= previous[1])  # never wider
        assert np.all(low < high)
        previous = (low, high)


def test_betting_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="alpha"):
        BettingCS(2, 1.0)
    with pytest.raises(ValueError, match="truncation"):
        BettingCS(2, 0.1, truncation=1.0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        BettingCS(2, 0.1).update_many([0], [1.5])


# ----------------------------------------------------------------- coverage at every time
def _rewards(
    kind: str, mean: float, rng: np.random.Generator, shape: tuple[int, int]
) -> FloatArray:
    if kind == "bernoulli":
        return (rng.random(shape) < mean).astype(np.float64)
    return rng.beta(2.0 * mean, 2.0 * (1.0 - mean), shape)  # spread of a Beta(2 mu, 2 - 2 mu)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["bernoulli", "beta"])
@pytest.mark.parametrize("mean", MEANS)
def test_mixture_covers_at_every_time(kind: str, mean: float) -> None:
    rng = np.random.default_rng([MEANS.index(mean), kind == "beta"])
    x = _rewards(kind, mean, rng, (SEQUENCES, HORIZON))
    sums = np.cumsum(x, axis=1)
    counts = np.broadcast_to(np.arange(1.0, HORIZON + 1), sums.shape)
    outside = counts * bernoulli_kl(sums / counts, np.full_like(sums, mean)) > (
        mixture_log_inverse(sums, counts, ALPHA)
    )
    misses = int(outside.any(axis=1).sum())
    print(f"mixture, {kind} mean {mean}: {misses} of {SEQUENCES} sequences ever missed")
    assert_rate_at_most(misses, SEQUENCES, ALPHA)


@pytest.mark.slow
def test_mixture_bounds_cover_at_every_time() -> None:
    # The same check through the solved interval (fewer sequences: it bisects).
    rng = np.random.default_rng(11)
    x = rng.random((2000, HORIZON)) < 0.3
    sums = np.cumsum(x, axis=1).astype(np.float64)
    counts = np.broadcast_to(np.arange(1.0, HORIZON + 1), sums.shape)
    low, high = mixture_bounds(sums, counts, 0.2)
    misses = int(((low > 0.3) | (high < 0.3)).any(axis=1).sum())
    assert_rate_at_most(misses, 2000, 0.2)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["bernoulli", "beta"])
@pytest.mark.parametrize("mean", MEANS)
def test_betting_covers_at_every_time(kind: str, mean: float) -> None:
    # One CS per sequence with the true mean as its only candidate: a miss is a rejection.
    rng = np.random.default_rng([MEANS.index(mean), kind == "beta", 1])
    x = _rewards(kind, mean, rng, (SEQUENCES, HORIZON))
    cs = BettingCS(SEQUENCES, ALPHA, grid=[mean])
    arms = np.arange(SEQUENCES)
    for t in range(HORIZON):
        cs.update_many(arms, x[:, t])
    too_small, too_large = cs.rejected()
    misses = int((too_small | too_large).any(axis=1).sum())
    print(f"betting, {kind} mean {mean}: {misses} of {SEQUENCES} sequences ever missed")
    assert_rate_at_most(misses, SEQUENCES, ALPHA)
    assert_rate_at_most(int(too_small.sum()), SEQUENCES, ALPHA / 2)  # each end at alpha / 2


@pytest.mark.slow
def test_betting_bounds_cover_at_every_time() -> None:
    rng = np.random.default_rng(12)
    mean, sequences = 0.7, 2000
    x = rng.beta(7.0, 3.0, (sequences, HORIZON))
    cs = BettingCS(sequences, 0.2, grid=np.linspace(0.0, 1.0, 101))
    missed = np.zeros(sequences, dtype=bool)
    for t in range(HORIZON):
        cs.update_many(np.arange(sequences), x[:, t])
        low, high = cs.bounds()
        missed |= (low >= mean) | (high <= mean)
    assert_rate_at_most(int(missed.sum()), sequences, 0.2)


# --------------------------------------------------------------- narrower than the old ones
def _union_level(t: int, delta: float) -> float:
    return 6 * delta / (math.pi**2 * t * t)  # the per-count union bound of the old intervals


@pytest.mark.slow
@pytest.mark.parametrize("t", [10, 30, 100])
def test_new_sequences_are_narrower_than_the_union_bound_intervals(t: int) -> None:
    # Same delta, one worker; the old anytime KL and Hoeffding intervals use the level
    # 6 delta / (pi^2 t^2) per end. Ratios printed (pytest -s) are the report's figures.
    rng = np.random.default_rng(t)
    for mean in (0.5, 0.9):
        union = math.log(1 / _union_level(t, ALPHA))
        kl_low, kl_high = kl_bounds(mean, t, union)
        kl_width = float(kl_high - kl_low)
        hoeffding_width = 2 * float(hoeffding_radius(t, _union_level(t, ALPHA)))
        mix_low, mix_high = mixture_bounds(mean * t, t, ALPHA)
        cs = BettingCS(500, ALPHA)
        for _ in range(t):
            cs.update_many(np.arange(500), (rng.random(500) < mean).astype(float))
        bet_low, bet_high = cs.bounds()
        mixture_width = float(mix_high - mix_low)
        betting_width = float(np.median(bet_high - bet_low))
        print(
            f"t={t} mean={mean}: width KL {kl_width:.3f}, Hoeffding {hoeffding_width:.3f}, "
            f"mixture {mixture_width:.3f} ({mixture_width / kl_width:.2f}x KL), "
            f"betting median {betting_width:.3f} ({betting_width / kl_width:.2f}x KL)"
        )
        assert mixture_width < kl_width < hoeffding_width + 1e-12
        assert betting_width < kl_width


# ------------------------------------------------------------------ counts to clear a bar
def test_clearing_count_hand_values() -> None:
    # A constant budget b: t* = b / D(p, bar), the fixed point after one step.
    def budget(sums: FloatArray, counts: FloatArray) -> FloatArray:
        return np.full_like(counts, 6.0)

    t = clearing_count([0.9, 0.2, 0.5], 0.5, 0.5, budget, "quadratic")
    np.testing.assert_allclose(t, [6.0 / (2 * 0.16), 6.0 / (2 * 0.09), math.inf])
    t = clearing_count([0.9, 0.45], 0.4, 0.6, budget, "kl")
    # 0.9 can only clear the low bar; 0.45 clears whichever bar it diverges from more
    # (0.6: kl 0.046 against 0.005 for 0.4).
    low = float(bernoulli_kl(0.9, 0.4))
    far = max(float(bernoulli_kl(0.45, 0.4)), float(bernoulli_kl(0.45, 0.6)))
    np.testing.assert_allclose(t, [6.0 / low, 6.0 / far])
    assert far == float(bernoulli_kl(0.45, 0.6))


def test_clearing_count_solves_a_growing_budget() -> None:
    def budget(sums: FloatArray, counts: FloatArray) -> FloatArray:
        return mixture_log_inverse(sums, counts, 0.001)

    p = np.array([0.95, 0.6, 0.3])
    t = clearing_count(p, 0.8, 0.8, budget, "kl")
    rate = bernoulli_kl(p, np.full(3, 0.8))
    np.testing.assert_allclose(t * rate, budget(p * t, t), rtol=1e-6)


def test_a_mean_a_hair_from_its_bar_gives_a_count_never_nan() -> None:
    """The count can grow past where the mixture budget is computed (log-gamma overflows
    near 1e30): such a worker's t is inf (it never clears), never NaN, and no warning
    escapes. These means gave NaN before."""

    def budget(sums: FloatArray, counts: FloatArray) -> FloatArray:
        return mixture_log_inverse(sums, counts, 0.001)

    for bar in (0.8, 0.6, 0.5, 0.3):
        p = bar + np.array([1e-15, 1e-14, 1e-13, 1e-12, 1e-10, -1e-12, -1e-9])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            t = clearing_count(p, bar, bar, budget, "kl")
        assert not np.isnan(t).any() and (t > 1e15).all()


@pytest.mark.parametrize("b", [3.0, 7.7, 12.345])
@pytest.mark.parametrize(("low", "high"), [(0.4, 0.6), (0.45, 0.55), (0.7, 0.72)])
def test_max_clearing_count_hoeffding_closed_form(b: float, low: float, high: float) -> None:
    # Radius sqrt(b / 2t) <= (high - low) / 2 from t = 2 b / (high - low)^2 on.
    exact = 2 * b / (high - low) ** 2
    count = max_clearing_count(low, high, lambda t: np.full_like(t, b), "quadratic")
    assert count is not None and math.ceil(exact) <= count <= math.ceil(exact) + 1


def test_max_clearing_count_without_a_zone_is_none() -> None:
    assert max_clearing_count(0.5, 0.5, lambda t: np.full_like(t, 3.0)) is None


@pytest.mark.parametrize("eps", [0.02, 0.05, 0.1])
def test_max_clearing_count_decides_every_sum(eps: float) -> None:
    # At count N every sum (graded ones included) clears one bar; somewhat earlier some not.
    alpha, theta = 0.001, 0.8

    def widest(t: FloatArray) -> FloatArray:
        return mixture_log_inverse_max(t, alpha)

    count = max_clearing_count(theta - eps, theta + eps, widest)
    assert count is not None

    def undecided(t: float) -> int:
        sums = np.linspace(0.0, t, 200_001)
        counts = np.full_like(sums, t)
        low, high = mixture_bounds(sums, counts, alpha)
        return int(np.sum((low < theta - eps) & (high >= theta + eps)))

    assert undecided(count) == 0
    assert undecided(math.floor(0.8 * count)) > 0


def test_jeffreys_is_the_default_prior() -> None:
    assert JEFFREYS == (0.5, 0.5)
    np.testing.assert_array_equal(
        mixture_log_inverse(3.0, 9.0, ALPHA), mixture_log_inverse(3.0, 9.0, ALPHA, (0.5, 0.5))
    )


def test_betting_bounds_of_some_arms_are_their_rows_of_all() -> None:
    rng = np.random.default_rng(3)
    cs = BettingCS(7, 0.05)
    cs.update_many(rng.integers(0, 7, size=300), rng.random(300))
    lows, highs = cs.bounds()
    rows = np.array([5, 0, 5, 2])
    some_lows, some_highs = cs.bounds(rows)
    assert some_lows.tolist() == lows[rows].tolist() and some_highs.tolist() == highs[rows].tolist()
    assert (lows > 0.0).any() and (highs < 1.0).any()  # the bounds have moved off [0, 1]
