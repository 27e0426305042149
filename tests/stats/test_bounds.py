"""Confidence radii: definitions, hand values, monotonicity and simulated coverage."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from stats_helpers import assert_rate_at_most, binomial_sf

from screener.stats import (
    agresti_coull_radius,
    bernoulli_kl,
    delta_method_threshold_radius,
    hoeffding_radius,
    kl_bounds,
    ksigma_bounded_threshold_radius,
    ksigma_lk,
    ksigma_threshold_bounds,
    ksigma_threshold_enclosure,
    ksigma_threshold_end,
    normal_quantile,
    threshold_end_bracket,
)

FloatArray = NDArray[np.float64]
DETERMINISTIC = settings(derandomize=True, database=None, deadline=None, max_examples=200)
LEVELS = st.floats(1e-12, 0.5)


# ----------------------------------------------------------------------- test helper itself
@pytest.mark.parametrize(("n", "p"), [(1, 0.3), (7, 0.1), (20, 0.5), (30, 0.93)])
def test_binomial_sf_matches_exact_sum(n: int, p: float) -> None:
    for k in range(-1, n + 2):
        exact = sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(max(k, 0), n + 1))
        assert binomial_sf(k, n, p) == pytest.approx(exact, rel=1e-10, abs=1e-300)


def test_binomial_sf_far_tail_and_edges() -> None:
    # P(X >= 300 | 20000, 0.01): the mean is 200; a normal approximation gives ~1e-12.
    tail = binomial_sf(300, 20_000, 0.01)
    assert 0.0 < tail < 1e-9
    assert binomial_sf(200, 20_000, 0.01) == pytest.approx(0.5, abs=0.03)
    assert binomial_sf(1, 10, 0.0) == 0.0
    assert binomial_sf(10, 10, 1.0) == 1.0


# ------------------------------------------------------------------------ normal_quantile
@pytest.mark.parametrize(
    ("level", "z"), [(0.05, 1.959964), (0.01, 2.575829), (0.1, 1.644854), (0.5, 0.674490)]
)
def test_normal_quantile_known_values(level: float, z: float) -> None:
    assert normal_quantile(level) == pytest.approx(z, abs=1e-6)
    assert normal_quantile(level, "normal") == normal_quantile(level)


@pytest.mark.parametrize("level", [0.2, 0.05, 0.01, 1e-4, 1e-9, 1e-30])
def test_normal_quantile_two_sided_tail_is_the_level(level: float) -> None:
    z = normal_quantile(level)
    assert math.isfinite(z)
    # P(|Z| > z) = erfc(z / sqrt 2): computed independently of NormalDist.
    assert math.erfc(z / math.sqrt(2.0)) == pytest.approx(level, rel=1e-6)


@pytest.mark.parametrize("level", [0.2, 0.05, 0.01, 1e-4, 1e-9, 1e-30])
def test_paper_rule_is_erfinv_of_one_minus_half_level(level: float) -> None:
    z_paper = normal_quantile(level, "paper")
    assert math.isfinite(z_paper)
    # z_paper = erf^-1(1 - level / 2) = Phi^-1(1 - level / 4) / sqrt(2) ...
    if level >= 1e-6:  # 1 - level / 4 is still exact enough in floating point
        expected = NormalDist().inv_cdf(1.0 - level / 4.0) / math.sqrt(2.0)
        assert z_paper == pytest.approx(expected, rel=1e-9)
    # ... i.e. erfc(z_paper) = level / 2 (erfc keeps the tiny levels accurate) ...
    assert math.erfc(z_paper) == pytest.approx(level / 2.0, rel=1e-6)
    # ... and the normal rule at half the level, divided by sqrt 2.
    assert z_paper == pytest.approx(normal_quantile(level / 2.0) / math.sqrt(2.0), rel=1e-12)


def test_paper_rule_known_value() -> None:
    assert normal_quantile(0.05, "paper") == pytest.approx(1.584911, abs=1e-6)  # erfinv(0.975)


def test_normal_quantile_finite_far_below_epsilon() -> None:
    assert normal_quantile(1e-30) == pytest.approx(11.523884, abs=1e-5)
    assert math.isfinite(normal_quantile(1e-300))


@pytest.mark.parametrize("level", [0.0, 1.0, -0.1, 1.5, math.nan])
def test_normal_quantile_rejects_bad_levels(level: float) -> None:
    with pytest.raises(ValueError, match="level"):
        normal_quantile(level)


def test_normal_quantile_rejects_unknown_rule() -> None:
    with pytest.raises(ValueError, match="rule"):
        normal_quantile(0.05, "exact")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- arm radii
def test_hoeffding_hand_values() -> None:
    # sqrt(log(1 / 0.05) / (2 * 10)) = sqrt(2.995732 / 20)
    assert float(hoeffding_radius(10, 0.05)) == pytest.approx(0.38702275602, rel=1e-10)
    assert float(hoeffding_radius(10, 0.05, width=4.0)) == pytest.approx(4 * 0.38702275602)
    radii = hoeffding_radius(np.array([1, 4, 0]), 0.01)
    expected = [math.sqrt(math.log(100) / 2), math.sqrt(math.log(100) / 8), math.inf]
    np.testing.assert_allclose(radii, expected, rtol=1e-12)


def test_agresti_coull_hand_values() -> None:
    z = 1.959963984540054
    # 3 successes out of 10: p~ = (3 + z^2/2) / (10 + z^2)
    p = (3 + z * z / 2) / (10 + z * z)
    assert p == pytest.approx(0.355507, abs=1e-6)
    expected = z * math.sqrt(p * (1 - p) / 10)
    assert float(agresti_coull_radius(3, 10, z)) == pytest.approx(expected, rel=1e-12)
    assert float(agresti_coull_radius(3, 10, z)) == pytest.approx(0.2966751367, rel=1e-9)
    # 0 of 5 and 5 of 5 are mirror images; graded "successes" are allowed.
    assert float(agresti_coull_radius(0, 5, 2.0)) == pytest.approx(
        float(agresti_coull_radius(5, 5, 2.0)), rel=1e-12
    )
    p_graded = (2.5 + 2.0) / (7 + 4.0)
    assert float(agresti_coull_radius(2.5, 7, 2.0)) == pytest.approx(
        2.0 * math.sqrt(p_graded * (1 - p_graded) / 7), rel=1e-12
    )
    assert math.isinf(float(agresti_coull_radius(0, 0, z)))


def test_radii_do_not_mutate_inputs() -> None:
    counts = np.array([3.0, 5.0])
    successes = np.array([1.0, 2.0])
    means = np.array([0.2, 0.9])
    radii = np.array([0.1, 0.2])
    hoeffding_radius(counts, 0.1)
    agresti_coull_radius(successes, counts, 2.0)
    ksigma_bounded_threshold_radius(counts, 0.1, 3.0)
    delta_method_threshold_radius(means, radii, 2.0)
    np.testing.assert_array_equal(counts, [3.0, 5.0])
    np.testing.assert_array_equal(successes, [1.0, 2.0])
    np.testing.assert_array_equal(means, [0.2, 0.9])
    np.testing.assert_array_equal(radii, [0.1, 0.2])


# ------------------------------------------------------------------------ threshold radii
def test_ksigma_lk_hand_value() -> None:
    # k = 2, n = 10, delta = 0.1: first = sqrt((1 + 2 * 3)^2 / 10) = 7 / sqrt(10),
    # second = sqrt(4 / (2 log(pi^2 * 1000 / 0.6))).
    first = 7.0 / math.sqrt(10.0)
    second = math.sqrt(4.0 / (2.0 * math.log(math.pi**2 * 1000.0 / 0.6)))
    assert ksigma_lk(2.0, 10, 0.1) == pytest.approx((first + second) ** 2, rel=1e-12)
    assert ksigma_lk(2.0, 10, 0.1) == pytest.approx(7.115464958, rel=1e-9)
    # k = 0: only the mean matters, l(0) = 1 / n.
    assert ksigma_lk(0.0, 4, 0.1) == pytest.approx(0.25, rel=1e-12)


def test_bounded_threshold_radius_hand_value() -> None:
    # harmonic mean of (10, 20, 40) = 3 / (1/10 + 1/20 + 1/40) = 17.142857...
    harmonic = 3 / (0.1 + 0.05 + 0.025)
    expected = math.sqrt(3.0 / (2 * harmonic) * math.log(100))
    assert ksigma_bounded_threshold_radius([10, 20, 40], 0.01, 3.0) == pytest.approx(
        expected, rel=1e-12
    )
    assert ksigma_bounded_threshold_radius([10, 20, 40], 0.01, 3.0, width=2.5) == pytest.approx(
        2.5 * expected, rel=1e-12
    )
    assert math.isinf(ksigma_bounded_threshold_radius([10, 0, 40], 0.01, 3.0))


def _theta(y: FloatArray, k: float) -> float:
    return float(np.mean(y) + k * np.std(y))


def _finite_difference_radius(y: FloatArray, beta: FloatArray, k: float) -> float:
    eps = 1e-6
    gradient = np.empty(y.size)
    for i in range(y.size):
        up, down = y.copy(), y.copy()
        up[i] += eps
        down[i] -= eps
        gradient[i] = (_theta(up, k) - _theta(down, k)) / (2 * eps)
    return float(np.sqrt(np.sum((gradient * beta) ** 2)))


@pytest.mark.parametrize("seed", range(8))
def test_delta_method_matches_finite_difference_gradient(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 13))
    y = rng.random(n)
    beta = rng.random(n) * 0.3
    k = float(rng.choice([0.0, 1.0, 2.0, 3.0]))
    expected = _finite_difference_radius(y, beta, k)
    assert delta_method_threshold_radius(y, beta, k) == pytest.approx(expected, rel=1e-5)


def test_delta_method_hand_value() -> None:
    # y = (0, 1): mean 1/2, std 1/2; gradient = 1/2 + 2 * (-1/2, 1/2) / (2 * 1/2) = (-1/2, 3/2)
    value = delta_method_threshold_radius([0.0, 1.0], [0.2, 0.1], 2.0)
    assert value == pytest.approx(math.sqrt((0.5 * 0.2) ** 2 + (1.5 * 0.1) ** 2), rel=1e-12)


def test_delta_method_std_zero_fallback() -> None:
    beta = np.array([0.1, 0.2, 0.3, 0.4])
    n, k = 4, 2.0
    total = float(np.sum(beta**2))
    value = delta_method_threshold_radius(np.full(n, 0.3), beta, k)
    assert value == pytest.approx(math.sqrt(total) / n + k * math.sqrt(total / n), rel=1e-12)
    # Never below the mean's own term sqrt(sum (1/n)^2 beta_i^2).
    assert value >= math.sqrt(float(np.sum((beta / n) ** 2)))
    # With k = 0 the fallback is exactly that term.
    assert delta_method_threshold_radius(np.full(n, 0.3), beta, 0.0) == pytest.approx(
        math.sqrt(float(np.sum((beta / n) ** 2))), rel=1e-12
    )


@DETERMINISTIC
@given(
    data=st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0)), min_size=2, max_size=12),
    k=st.floats(0.0, 4.0),
)
def test_delta_method_never_exceeds_the_std_zero_bound(
    data: list[tuple[float, float]], k: float
) -> None:
    # ||gradient * beta|| <= ||beta|| / n + k ||beta|| / sqrt(n) (|y_i - mean| <= sqrt(n) std),
    # which is the fallback used when std = 0: the fallback is "never smaller".
    y = np.array([a for a, _ in data])
    beta = np.array([b for _, b in data])
    n, total = y.size, float(np.sum(beta**2))
    bound = math.sqrt(total) / n + k * math.sqrt(total / n)
    assert delta_method_threshold_radius(y, beta, k) <= bound * (1 + 1e-9) + 1e-15


# -------------------------------------------------------- monotonicity (hypothesis properties)
@DETERMINISTIC
@given(m1=st.integers(1, 10**6), extra=st.integers(0, 10**6), level=LEVELS)
def test_hoeffding_shrinks_with_samples(m1: int, extra: int, level: float) -> None:
    assert float(hoeffding_radius(m1 + extra, level)) <= float(hoeffding_radius(m1, level))


@DETERMINISTIC
@given(m=st.integers(1, 10**6), level1=LEVELS, level2=LEVELS)
def test_hoeffding_grows_as_level_shrinks(m: int, level1: float, level2: float) -> None:
    low, high = sorted((level1, level2))
    assert float(hoeffding_radius(m, low)) >= float(hoeffding_radius(m, high))


@DETERMINISTIC
@given(
    m1=st.integers(1, 10**5), extra=st.integers(0, 10**5), fraction=st.floats(0, 1), level=LEVELS
)
def test_agresti_coull_shrinks_with_samples(
    m1: int, extra: int, fraction: float, level: float
) -> None:
    # Same empirical mean, more samples: p~ moves from 1/2 towards it and 1/m shrinks.
    m2 = m1 + extra
    z = normal_quantile(level)
    small = float(agresti_coull_radius(fraction * m2, m2, z))
    large = float(agresti_coull_radius(fraction * m1, m1, z))
    assert small <= large * (1 + 1e-12)


@DETERMINISTIC
@given(m=st.integers(1, 10**5), data=st.data(), level1=LEVELS, level2=LEVELS)
def test_agresti_coull_grows_as_level_shrinks(
    m: int, data: st.DataObject, level1: float, level2: float
) -> None:
    successes = data.draw(st.integers(0, m))
    low, high = sorted((level1, level2))
    wide = float(agresti_coull_radius(successes, m, normal_quantile(low)))
    narrow = float(agresti_coull_radius(successes, m, normal_quantile(high)))
    assert wide >= narrow * (1 - 1e-12)


@DETERMINISTIC
@given(
    pairs=st.lists(st.tuples(st.integers(1, 1000), st.integers(0, 1000)), min_size=2, max_size=10),
    level=LEVELS,
    lk=st.floats(0.01, 20.0),
)
def test_bounded_threshold_radius_shrinks_with_samples(
    pairs: list[tuple[int, int]], level: float, lk: float
) -> None:
    before = [m for m, _ in pairs]
    after = [m + extra for m, extra in pairs]
    assert ksigma_bounded_threshold_radius(after, level, lk) <= (
        ksigma_bounded_threshold_radius(before, level, lk) * (1 + 1e-12)
    )


@DETERMINISTIC
@given(
    counts=st.lists(st.integers(1, 1000), min_size=2, max_size=10),
    level1=LEVELS,
    level2=LEVELS,
    lk=st.floats(0.01, 20.0),
)
def test_bounded_threshold_radius_grows_as_level_shrinks(
    counts: list[int], level1: float, level2: float, lk: float
) -> None:
    low, high = sorted((level1, level2))
    assert ksigma_bounded_threshold_radius(counts, low, lk) >= (
        ksigma_bounded_threshold_radius(counts, high, lk)
    )


@DETERMINISTIC
@given(
    rows=st.lists(
        st.tuples(st.integers(1, 500), st.integers(0, 500), st.floats(0, 1)),
        min_size=2,
        max_size=10,
    ),
    level=LEVELS,
    k=st.floats(0.0, 4.0),
)
def test_delta_method_shrinks_with_samples(
    rows: list[tuple[int, int, float]], level: float, k: float
) -> None:
    # Means held fixed, every arm gets more samples: each Agresti-Coull radius shrinks, and so
    # does the threshold radius (a weighted norm of them).
    means = np.array([f for _, _, f in rows])
    before = np.array([m for m, _, _ in rows], dtype=np.float64)
    after = before + np.array([e for _, e, _ in rows])
    z = normal_quantile(level)
    beta_before = agresti_coull_radius(means * before, before, z)
    beta_after = agresti_coull_radius(means * after, after, z)
    assert delta_method_threshold_radius(means, beta_after, k) <= (
        delta_method_threshold_radius(means, beta_before, k) * (1 + 1e-9) + 1e-15
    )


@DETERMINISTIC
@given(
    rows=st.lists(st.tuples(st.integers(1, 500), st.floats(0, 1)), min_size=2, max_size=10),
    level1=LEVELS,
    level2=LEVELS,
    k=st.floats(0.0, 4.0),
)
def test_delta_method_grows_as_level_shrinks(
    rows: list[tuple[int, float]], level1: float, level2: float, k: float
) -> None:
    low, high = sorted((level1, level2))
    counts = np.array([m for m, _ in rows], dtype=np.float64)
    means = np.array([f for _, f in rows])
    wide = agresti_coull_radius(means * counts, counts, normal_quantile(low))
    narrow = agresti_coull_radius(means * counts, counts, normal_quantile(high))
    assert delta_method_threshold_radius(means, wide, k) >= (
        delta_method_threshold_radius(means, narrow, k) * (1 - 1e-9) - 1e-15
    )


@DETERMINISTIC
@given(level1=st.floats(1e-300, 0.999), level2=st.floats(1e-300, 0.999))
def test_normal_quantile_decreases_with_level(level1: float, level2: float) -> None:
    low, high = sorted((level1, level2))
    assert normal_quantile(low) >= normal_quantile(high)
    assert normal_quantile(low, "paper") >= normal_quantile(high, "paper")
    if high > 2 * low:
        assert normal_quantile(low) > normal_quantile(high)


# --------------------------------------------------------------------- coverage simulation
DRAWS = 20_000
AC_UNDERCOVERS = (
    "known bug (left in place, reported): the Agresti-Coull radius is centred on the empirical "
    "mean, not on p~; for p near 0 or 1 the interval then misses on the far side more often "
    "than the level: exactly P(Bin(100, 0.1) <= 5) = 0.058 > 0.05"
)


def _cell(p: float, m: int, level: float, *, xfail: bool = False) -> object:
    marks = [pytest.mark.xfail(reason=AC_UNDERCOVERS, strict=True)] if xfail else []
    return pytest.param(p, m, level, marks=marks, id=f"p={p}-m={m}-level={level}")


GRID = [(p, m, 0.05) for p in (0.1, 0.5, 0.9) for m in (20, 100)] + [
    (p, m, 0.01) for p in (0.1, 0.5, 0.9) for m in (20, 100)
]


def _miss_counts(means: FloatArray, truth: float, radius: FloatArray | float) -> tuple[int, int]:
    above = int(np.count_nonzero(means - truth > radius))
    below = int(np.count_nonzero(truth - means > radius))
    return above, below


@pytest.mark.slow
@pytest.mark.parametrize(("p", "m", "level"), [_cell(*cell) for cell in GRID])
def test_hoeffding_coverage(p: float, m: int, level: float) -> None:
    rng = np.random.default_rng([1, m, round(p * 100), round(level * 1000)])
    means = rng.binomial(m, p, size=DRAWS) / m
    above, below = _miss_counts(means, p, hoeffding_radius(m, level))
    assert_rate_at_most(above, DRAWS, level)
    assert_rate_at_most(below, DRAWS, level)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("p", "m", "level"),
    [_cell(p, m, level, xfail=(m == 100 and p != 0.5 and level == 0.05)) for p, m, level in GRID],
)
def test_agresti_coull_coverage(p: float, m: int, level: float) -> None:
    rng = np.random.default_rng([2, m, round(p * 100), round(level * 1000)])
    successes = rng.binomial(m, p, size=DRAWS)
    radii = agresti_coull_radius(successes, m, normal_quantile(level, "normal"))
    above, below = _miss_counts(successes / m, p, radii)
    assert_rate_at_most(above, DRAWS, level)
    assert_rate_at_most(below, DRAWS, level)


THRESHOLD_ARMS = np.array([0.1, 0.125, 0.15, 0.175, 0.2, 0.225, 0.25, 0.275, 0.3, 0.9])


@pytest.mark.slow
@pytest.mark.parametrize("m", [20, 100])
@pytest.mark.parametrize("level", [0.05, 0.01])
def test_bounded_threshold_radius_coverage(m: int, level: float) -> None:
    k, n = 2.0, THRESHOLD_ARMS.size
    theta = _theta(THRESHOLD_ARMS, k)
    rng = np.random.default_rng([3, m, round(level * 1000)])
    y = rng.binomial(m, THRESHOLD_ARMS, size=(DRAWS, n)) / m
    theta_hat = y.mean(axis=1) + k * y.std(axis=1)
    # McDiarmid with l(k) computed at this level: conservative, misses should be rare.
    radius = ksigma_bounded_threshold_radius(np.full(n, m), level, ksigma_lk(k, n, level))
    above, below = _miss_counts(theta_hat, theta, radius)
    assert_rate_at_most(above, DRAWS, level)
    assert_rate_at_most(below, DRAWS, level)


@pytest.mark.slow
@pytest.mark.parametrize("m", [20, 100])
def test_delta_method_threshold_radius_coverage(m: int) -> None:
    # The delta method is a first-order approximation (the paper uses it heuristically) and it
    # ignores the upward bias of std(y_hat) (E std(y_hat) > std(y)), so theta_hat overshoots
    # more often than it undershoots. Checked at level 0.05 with a tolerance on the upper side
    # (miss rate <= 1.5 x level; measured ~0.055-0.06 on this instance) and strictly on the lower
    # side. Nearly equal means are much worse (std(y) ~ 0 while std(y_hat) > 0): not checked.
    k, level, draws = 2.0, 0.05, 10_000
    n = THRESHOLD_ARMS.size
    theta = _theta(THRESHOLD_ARMS, k)
    rng = np.random.default_rng([4, m])
    successes = rng.binomial(m, THRESHOLD_ARMS, size=(draws, n))
    y = successes / m
    theta_hat = y.mean(axis=1) + k * y.std(axis=1)
    betas = agresti_coull_radius(successes, m, normal_quantile(level))
    radii = np.array([delta_method_threshold_radius(y[i], betas[i], k) for i in range(draws)])
    above, below = _miss_counts(theta_hat, theta, radii)
    assert_rate_at_most(above, draws, 1.5 * level)
    assert_rate_at_most(below, draws, level)


# ------------------------------------------------------------------- KL (Chernoff) bounds
def test_bernoulli_kl_hand_values_and_edges() -> None:
    # kl(.25, .5) = .25 ln(.5) + .75 ln(1.5); kl(1, q) = -ln q; kl(0, q) = -ln(1 - q).
    expected = 0.25 * math.log(0.5) + 0.75 * math.log(1.5)
    assert float(bernoulli_kl(0.25, 0.5)) == pytest.approx(expected, rel=1e-12)
    assert float(bernoulli_kl(1.0, 0.2)) == pytest.approx(-math.log(0.2), rel=1e-12)
    assert float(bernoulli_kl(0.0, 0.2)) == pytest.approx(-math.log(0.8), rel=1e-12)
    assert float(bernoulli_kl(0.3, 0.3)) == 0.0
    assert math.isinf(float(bernoulli_kl(0.5, 0.0))) and math.isinf(float(bernoulli_kl(0.5, 1.0)))


@pytest.mark.parametrize(
    ("mean", "m", "log_inverse"), [(0.9, 50, 5.0), (0.3, 7, 2.0), (0.02, 400, 9.0), (0.5, 1, 1.0)]
)
def test_kl_bounds_solve_their_definition(mean: float, m: int, log_inverse: float) -> None:
    # The ends are where m kl(mean, q) reaches log(1 / level), one on each side of the mean
    # (or 0 / 1 when the whole side stays inside).
    lower, upper = (float(v[0]) for v in kl_bounds([mean], [m], [log_inverse]))
    assert lower <= mean <= upper
    for end, edge in ((lower, 0.0), (upper, 1.0)):
        if end == edge:
            assert m * float(bernoulli_kl(mean, edge)) <= log_inverse
        else:
            assert m * float(bernoulli_kl(mean, end)) == pytest.approx(log_inverse, rel=1e-9)


def test_kl_bounds_without_samples_and_at_the_edges() -> None:
    lower, upper = kl_bounds([0.0, 1.0, 0.4], [10, 10, 0], [3.0, 3.0, 3.0])
    assert lower[0] == 0.0 and upper[0] == pytest.approx(1 - math.exp(-0.3), rel=1e-9)
    assert upper[1] == 1.0 and lower[1] == pytest.approx(math.exp(-0.3), rel=1e-9)
    assert (lower[2], upper[2]) == (0.0, 1.0)


@DETERMINISTIC
@given(mean=st.floats(0, 1), m=st.integers(1, 10**6), level=LEVELS)
def test_kl_bounds_never_wider_than_hoeffding(mean: float, m: int, level: float) -> None:
    # Pinsker: kl(p, q) >= 2 (p - q)^2, so the KL set lies inside mean +- Hoeffding's radius.
    lower, upper = kl_bounds([mean], [m], [math.log(1 / level)])
    radius = float(hoeffding_radius(m, level))
    assert float(lower[0]) >= mean - radius - 1e-12
    assert float(upper[0]) <= mean + radius + 1e-12


@DETERMINISTIC
@given(mean=st.floats(0, 1), m=st.integers(1, 10**5), extra=st.integers(0, 10**5), level=LEVELS)
def test_kl_bounds_shrink_with_samples(mean: float, m: int, extra: int, level: float) -> None:
    budget = math.log(1 / level)
    (low1,), (high1,) = kl_bounds([mean], [m], [budget])
    (low2,), (high2,) = kl_bounds([mean], [m + extra], [budget])
    assert low2 >= low1 - 1e-12 and high2 <= high1 + 1e-12


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "mu", "m"), [("bernoulli", 0.9, 30), ("bernoulli", 0.1, 200), ("beta", 0.75, 20)]
)
def test_kl_bounds_cover_at_their_level(kind: str, mu: float, m: int) -> None:
    # Each end misses the true mean with probability at most the level, for 0/1 answers and
    # for graded rewards in [0, 1] (Beta(3 mu, 3 (1 - mu))): 20,000 seeded samples per case.
    level, trials = 0.05, 20_000
    rng = np.random.default_rng(17)
    draws: np.ndarray
    if kind == "bernoulli":
        draws = rng.random((trials, m)) < mu
    else:
        draws = rng.beta(3 * mu, 3 * (1 - mu), size=(trials, m))
    means = draws.mean(axis=1)
    lower, upper = kl_bounds(means, np.full(trials, m), np.full(trials, math.log(1 / level)))
    assert_rate_at_most(int((lower > mu).sum()), trials, level)
    assert_rate_at_most(int((upper < mu).sum()), trials, level)
    if kind == "bernoulli":  # the worst case for the bound: it does miss, just rarely
        assert (lower > mu).sum() + (upper < mu).sum() > 0


def _bisect_kl_end(p: float, allowed: float, far: float) -> float:
    """The outer end of {q : kl(p, q) <= allowed} by 200 halvings (slow reference)."""
    inside, outside = p, far
    for _ in range(200):
        middle = (inside + outside) / 2
        if float(bernoulli_kl(p, middle)) <= allowed:
            inside = middle
        else:
            outside = middle
    return outside


def test_kl_bounds_newton_matches_bisection_and_errs_outwards() -> None:
    # Newton from outside the interval, then checked to lie outside by bernoulli_kl itself:
    # the same ends as a slow bisection, never inside the set.
    rng = np.random.default_rng(8)
    means = np.concatenate([rng.random(300), [0.0, 1.0, 1e-9, 1 - 1e-9, 0.5]])
    allowed = np.exp(rng.uniform(math.log(1e-6), math.log(40.0), means.size))
    lower, upper = kl_bounds(means, np.ones_like(means), allowed)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        assert np.all((bernoulli_kl(means, lower) >= allowed) | (lower == 0.0))
        assert np.all((bernoulli_kl(means, upper) >= allowed) | (upper == 1.0))
    for i in range(means.size):
        p, a = float(means[i]), float(allowed[i])
        assert float(lower[i]) == pytest.approx(_bisect_kl_end(p, a, 0.0), abs=1e-10)
        assert float(upper[i]) == pytest.approx(_bisect_kl_end(p, a, 1.0), abs=1e-10)
    zero = kl_bounds(0.3, 10, 0.0)  # a zero budget holds the mean only
    assert (float(zero[0]), float(zero[1])) == (0.3, 0.3)


# ------------------------------------------------------------ theta over a box of intervals
def _theta_of(x: FloatArray, k: float) -> FloatArray:
    return np.asarray(x.mean(axis=-1) + k * x.std(axis=-1))


def _exact_theta_range(low: FloatArray, high: FloatArray, k: float) -> tuple[float, float]:
    """Brute force: the max of the convex theta at one of the 2^n vertices; the min at
    clip(tau, low, high) for some tau (KKT), searched on a grid with every interval end,
    then on a fine grid between the best point's neighbours."""
    vertices = np.array(np.meshgrid(*zip(low, high, strict=True))).reshape(low.size, -1).T
    values = _theta_of(vertices, k)
    grid = np.unique(np.concatenate([np.linspace(low.min(), high.max(), 2001), low, high]))
    coarse = _theta_of(np.clip(grid[:, None], low, high), k)
    i = int(np.argmin(coarse))
    fine = np.linspace(grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)], 20_001)
    clipped = _theta_of(np.clip(fine[:, None], low, high), k)
    smallest = min(float(values.min()), float(coarse.min()), float(clipped.min()))
    return smallest, float(values.max())


def _random_box(rng: np.random.Generator, n: int) -> tuple[FloatArray, FloatArray]:
    centre = rng.random(n)
    half = rng.random(n) * rng.choice([0.005, 0.05, 0.3])
    low, high = np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)
    if rng.random() < 0.2:  # some intervals shrunk to a point, or all sharing one end
        low[1:] = np.where(rng.random(n - 1) < 0.5, high[1:], low[1:])
    if rng.random() < 0.2:
        low[:] = low[0]
        high = np.maximum(high, low)
    return low, high


@pytest.mark.parametrize("k", [0.0, 0.5, 1.0, 2.0, 3.0])
def test_threshold_bounds_hold_the_whole_box_and_are_tight(k: float) -> None:
    # Valid on every box (the exact range inside), the lower end exact, the upper end at
    # most one relaxed coordinate wider: within 1e-3 of the box's span on 99% of these boxes
    # (some have intervals shrunk to points beside wide ones, the relaxation's worst case).
    rng = np.random.default_rng(int(k * 10))
    slack_high, slack_low = [], []
    for _ in range(150):
        n = int(rng.integers(1, 9))
        low, high = _random_box(rng, n)
        lower, upper = ksigma_threshold_bounds(low, high, k)
        exact_low, exact_high = _exact_theta_range(low, high, k)
        points = low + (high - low) * rng.random((500, n))
        inside = _theta_of(points, k)
        assert float(lower) <= min(exact_low, float(inside.min())) + 1e-15
        assert float(upper) >= max(exact_high, float(inside.max())) - 1e-15
        span = float(high.max() - low.min()) + 1e-12
        slack_low.append((exact_low - float(lower)) / span)
        slack_high.append((float(upper) - exact_high) / span)
    assert max(slack_low) < 1e-8  # the fine grid's resolution
    assert np.quantile(slack_high, 0.99) < 1e-3 and max(slack_high) < 0.02
    if k == 0.0:
        assert max(slack_high) < 1e-8  # the mean alone: exact


@pytest.mark.parametrize("k", [0.0, 1.0, 2.0, 3.0])
def test_threshold_enclosure_holds_the_whole_box(k: float) -> None:
    # The cheap O(n) bounds, from a random point of the box: never inside the exact range,
    # and never tighter than the box range's bounds (which are exact on the low side).
    rng = np.random.default_rng(40 + int(k))
    for _ in range(150):
        n = int(rng.integers(1, 9))
        low, high = _random_box(rng, n)
        point = low + (high - low) * rng.random(n)
        cheap_low, cheap_high = ksigma_threshold_enclosure(point, low, high, k)
        exact_low, exact_high = _exact_theta_range(low, high, k)
        box_low, _ = ksigma_threshold_bounds(low, high, k)
        assert cheap_low <= exact_low + 1e-15 and cheap_low <= float(box_low) + 1e-12
        assert cheap_high >= exact_high - 1e-15
        assert cheap_low <= float(_theta_of(point, k)) <= cheap_high


def test_threshold_bounds_hand_values() -> None:
    # n = 2, k = 1: theta(x) = mean + |x1 - x2| / 2 = max(x1, x2), so over the box
    # [0, 0.2] x [0.6, 1] it ranges over [max of the lows, max of the highs] = [0.6, 1].
    lower, upper = ksigma_threshold_bounds([0.0, 0.6], [0.2, 1.0], 1.0)
    assert float(lower) == pytest.approx(0.6, abs=1e-11)
    assert float(upper) >= 1.0 and float(upper) == pytest.approx(1.0, abs=0.01)
    # A box of points is theta itself; k = 0 gives the mean of the ends.
    x = np.array([0.1, 0.4, 0.45, 0.9])
    point = ksigma_threshold_bounds(x, x, 2.0)
    assert float(point[0]) == pytest.approx(float(_theta_of(x, 2.0)), abs=1e-11)
    assert float(point[1]) == pytest.approx(float(_theta_of(x, 2.0)), abs=1e-11)
    mean = ksigma_threshold_bounds([0.1, 0.3], [0.2, 0.7], 0.0)
    assert (float(mean[0]), float(mean[1])) == pytest.approx((0.2, 0.45), abs=1e-11)


@pytest.mark.parametrize("shape", [(40, 6), (3, 9, 200)])  # the second one in chunks
def test_threshold_bounds_batch_equals_one_box_at_a_time(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(5)
    low = rng.random(shape)
    high = low + rng.random(shape) * 0.3
    lower, upper = ksigma_threshold_bounds(low, high, 2.0)
    assert lower.shape == upper.shape == shape[:-1]
    for i in np.ndindex(shape[:-1]):
        one = ksigma_threshold_bounds(low[i], high[i], 2.0)
        assert (float(one[0]), float(one[1])) == (float(lower[i]), float(upper[i]))


@pytest.mark.parametrize("shape", [(7,), (40, 6), (3, 9, 200)])  # the last one in chunks
def test_one_threshold_end_brackets_the_rounded_bounds(shape: tuple[int, ...]) -> None:
    # Each end alone, box by box or many at once, is the bound before its outward rounding:
    # the bracket from it and a bound on the other end's size holds the rounded end, also
    # narrowed to an enclosure's end, and shrinks to it when the other end is the smaller.
    rng = np.random.default_rng(8)
    low = rng.random(shape) * 2.0 - 1.0
    high = low + rng.random(shape) * 0.3
    k = 2.0
    lower, upper = ksigma_threshold_bounds(low, high, k)
    bound = 2.3 * (3.0 + 3.0 * k)  # rewards in [-1, 1.3] (KSigmaAlgorithm.threshold_end_bound)
    covered = np.zeros(shape[:-1], dtype=bool)
    for end, rounded, upper_end in ((0, lower, False), (1, upper, True)):
        raw = ksigma_threshold_end(low, high, k, upper=upper_end)
        assert raw.shape == shape[:-1]
        for i in np.ndindex(shape[:-1]):
            assert float(ksigma_threshold_end(low[i], high[i], k, upper=upper_end)) == raw[i]
        band = rounded + 0.5 * (rng.random(rounded.shape) - 0.5)  # narrows about half
        narrowed = np.maximum(rounded, band) if end == 0 else np.minimum(rounded, band)
        near, far = threshold_end_bracket(raw, band, upper=upper_end, other=bound)
        assert np.all((far <= narrowed) & (narrowed <= near) if end == 0 else
                      (near <= narrowed) & (narrowed <= far))  # fmt: skip
        other = np.abs(ksigma_threshold_end(low, high, k, upper=not upper_end))
        tight = threshold_end_bracket(raw, rounded, upper=upper_end, other=0.0)[0]
        larger = np.abs(raw) >= other  # the margin is this end's: the least rounding
        np.testing.assert_array_equal(tight[larger], rounded[larger])
        covered |= larger
    assert np.all(covered)  # every box's larger end was checked


def test_threshold_bounds_beat_the_lipschitz_bound() -> None:
    # mean(r) + k rms(r) (mean and std are 1-Lipschitz) is valid too, but wider: on the
    # k-sigma instances' shape (normal arms spread, one outlier, equal half-widths r).
    rng = np.random.default_rng(6)
    centre = np.concatenate([rng.uniform(0.1, 0.4, 19), [0.9]])
    for r in (0.01, 0.05):
        lower, upper = ksigma_threshold_bounds(centre - r, centre + r, 2.0)
        theta = float(_theta_of(centre, 2.0))
        lipschitz = r + 2.0 * r
        assert float(upper) - theta < 0.75 * lipschitz
        assert theta - float(lower) < 0.75 * lipschitz


def test_threshold_bounds_reject_bad_input() -> None:
    with pytest.raises(ValueError, match="lows <= highs"):
        ksigma_threshold_bounds([0.5], [0.4], 1.0)
    with pytest.raises(ValueError, match="k must be"):
        ksigma_threshold_bounds([0.5], [0.6], -1.0)
