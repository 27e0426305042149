"""Confidence levels, the radii built at them, and the regularized incomplete beta.

Every level and every count-based radius of screener.stats is put under the same properties,
parametrised from one list each (LEVELS, RADII): a level lies in (0, delta), falls in the
number of arms and in time, and, charged to the intervals its paper's union bound names,
sums to delta over t >= 1; a radius is non-negative (infinite with no answers), falls in the
count, grows as delta shrinks and scales linearly with the reward range. The incomplete beta
is checked against the binomial tail, summed exactly with math.comb, its symmetry and its
monotonicity in x. Hand values come first.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from screener.stats import (
    ade_level,
    agresti_coull_radius,
    anytime_log_inverse,
    anytime_radius,
    beta_tails,
    clucb_radius,
    gold_level,
    hoeffding_radius,
    ksigma_bounded_threshold_radius,
    ksigma_lk,
    mixture_radius,
    normal_quantile,
    regularized_incomplete_beta,
    round_level,
    scaled_agresti_coull_radius,
)

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
DETERMINISTIC = settings(derandomize=True, database=None, deadline=None, max_examples=200)
# At most 1/2: with 2 arms and delta near 1 the anytime radius grows from 1 answer to 2 (its
# union bound's 2 log t outpaces 1/t there), so "falls in the count" is a claim for delta <= 1/2.
DELTAS = st.floats(1e-12, 0.5)


# ---------------------------------------------------------------------------- hand values
def test_round_level_hand_value() -> None:
    # 6 * 0.1 / (pi^2 * (4 + 1) * 10^2)
    assert round_level(0.1, 4, 10) == pytest.approx(1.2158542037080535e-4, rel=1e-12)
    assert round_level(0.1, 4, 10) == pytest.approx(0.6 / (math.pi**2 * 5 * 100), rel=1e-12)
    assert round_level(0.1, 4, 0) == round_level(0.1, 4, 1)  # T = 0 is treated as T = 1


def test_gold_level_by_hand() -> None:
    assert gold_level(0.1, 20, 10) == pytest.approx(0.6 / (math.pi**2 * 20 * 100), rel=1e-12)
    assert gold_level(0.1, 20, 0) == gold_level(0.1, 20, 1)


def test_ade_level_by_hand() -> None:
    # 3 * 0.1 / ((3 + 4) pi^2 3^2), the level of tests/algorithms/test_ade.py's hand run.
    assert ade_level(0.1, 3, 3) == pytest.approx(0.3 / (7 * math.pi**2 * 9), rel=1e-12)


@pytest.mark.parametrize("t", [1, 2, 7, 100])
def test_anytime_radius_is_hoeffding_at_the_per_count_level(t: int) -> None:
    level = 6 * 0.05 / (math.pi**2 * 4 * t * t)
    expected = float(hoeffding_radius(t, level, 2.0))
    assert float(anytime_radius(np.array([t]), 0.05, 4, 2.0)[0]) == pytest.approx(expected)
    assert math.isinf(float(anytime_radius(np.array([0]), 0.05, 4, 2.0)[0]))


def test_clucb_radius_by_hand() -> None:
    # sigma sqrt(2 ln(4 n t^3 / delta) / T), sigma = 1/2: n = 3, t = 3, delta = 0.1, T = 1.
    assert math.isclose(
        float(clucb_radius(np.array([1]), 3, 3, 0.1, 1.0)[0]), 2.010389, rel_tol=1e-6
    )
    # Rewards in [0, 2]: sigma = 1, twice the radius.
    assert math.isclose(
        float(clucb_radius(np.array([4]), 3, 3, 0.1, 2.0)[0]),
        2.0 * float(clucb_radius(np.array([4]), 3, 3, 0.1, 1.0)[0]),
    )


def test_scaled_agresti_coull_is_agresti_coull_on_rescaled_rewards() -> None:
    # Rewards in [1, 5]: three answers of 5 and two of 1 (sum 17) are 3 successes of 5.
    radius = float(scaled_agresti_coull_radius(17.0, 5, 2.0, lower=1.0, width=4.0))
    assert radius == pytest.approx(4.0 * float(agresti_coull_radius(3.0, 5, 2.0)), rel=1e-12)
    # p~ = (3 + 2) / (5 + 4) = 5/9: 2 sqrt(p~ (1 - p~) / 5) = 2 sqrt(4 / 81) = 4/9 on [0, 1].
    assert radius == pytest.approx(4.0 * 4.0 / 9.0, rel=1e-12)


# --------------------------------------------------------------------------------- levels
@dataclass(frozen=True)
class LevelCase:
    """A level ``(delta, n_arms, t) -> level`` and the intervals charged it at each t."""

    name: str
    level: Callable[[float, int, int], float]
    charges: Callable[[int], int]


def _anytime_level(delta: float, n_arms: int, t: int) -> float:
    return math.exp(-float(anytime_log_inverse(np.array(t), delta, n_arms)))


LEVELS = [
    LevelCase("round_level", round_level, lambda n: n + 1),  # the arms and the threshold
    LevelCase("gold_level", gold_level, lambda n: n),  # one interval per arm
    LevelCase("ade_level", ade_level, lambda n: 2 * (n + 4)),  # 2 ends per worker, 8 for theta
    LevelCase("anytime_log_inverse", _anytime_level, lambda n: n),  # one end per arm
]
LEVEL_IDS = [case.name for case in LEVELS]
LEVEL_ARGS = {
    "delta": st.floats(1e-6, 0.999),
    "n": st.integers(2, 1000),
    "t": st.integers(1, 10**7),
}


@pytest.mark.parametrize("case", LEVELS, ids=LEVEL_IDS)
@DETERMINISTIC
@given(**LEVEL_ARGS)
def test_level_lies_below_delta(case: LevelCase, delta: float, n: int, t: int) -> None:
    assert 0.0 < case.level(delta, n, t) < delta


@pytest.mark.parametrize("case", LEVELS, ids=LEVEL_IDS)
@DETERMINISTIC
@given(**LEVEL_ARGS)
def test_level_decreases_with_arms_and_time(case: LevelCase, delta: float, n: int, t: int) -> None:
    assert case.level(delta, n + 1, t) < case.level(delta, n, t)
    assert case.level(delta, n, t + 1) < case.level(delta, n, t)


@pytest.mark.parametrize("case", LEVELS, ids=LEVEL_IDS)
@pytest.mark.parametrize(("delta", "n_arms"), [(0.1, 10), (0.05, 2), (0.5, 200)])
def test_level_sums_to_delta(case: LevelCase, delta: float, n_arms: int) -> None:
    horizon = 200_000
    levels = np.array([case.level(delta, n_arms, t) for t in range(1, horizon + 1)])
    partial = case.charges(n_arms) * math.fsum(levels.tolist())
    assert partial <= delta
    # The missing tail sum_{T > N} 1/T^2 is below 1/N, so the series does reach delta.
    assert partial >= delta * (1.0 - 6.0 / (math.pi**2 * horizon))
    assert np.all(np.diff(levels) < 0)


# ---------------------------------------------------------------------------------- radii
N_ARMS = 10
CLUCB_T = 10**7  # CLUCB's answers so far (the level's clock), held while the count moves
MEAN = 0.3  # the fraction of the range the Agresti-Coull radii see as the mean
LOWER = 1.0
LK = ksigma_lk(1.0, 4, 0.05)  # theta's constant l(k) for k = 1 and 4 workers, held fixed


@dataclass(frozen=True)
class RadiusCase:
    """A radius ``(counts, delta, width) -> radii``; ``width``: whether the function itself
    takes the reward range (the others are built for rewards in [0, 1])."""

    name: str
    radius: Callable[[IntArray, float, float], FloatArray]
    width: bool


def _scaled_agresti_coull(counts: IntArray, delta: float, width: float) -> FloatArray:
    totals = LOWER * counts + width * MEAN * counts
    return scaled_agresti_coull_radius(totals, counts, normal_quantile(delta), LOWER, width)


def _ksigma_threshold(counts: IntArray, delta: float, width: float) -> FloatArray:
    # Theta's radius over 4 workers with the same count each.
    radii = [ksigma_bounded_threshold_radius(np.full(4, m), delta, LK, width) for m in counts]
    return np.array(radii, dtype=np.float64)


RADII = [
    RadiusCase("hoeffding_radius", lambda m, d, w: hoeffding_radius(m, d, w), True),
    RadiusCase("anytime_radius", lambda m, d, w: anytime_radius(m, d, N_ARMS, w), True),
    RadiusCase("clucb_radius", lambda m, d, w: clucb_radius(m, CLUCB_T, N_ARMS, d, w), True),
    RadiusCase("scaled_agresti_coull_radius", _scaled_agresti_coull, True),
    RadiusCase("ksigma_bounded_threshold_radius", _ksigma_threshold, True),
    RadiusCase(
        "agresti_coull_radius",
        lambda m, d, w: agresti_coull_radius(MEAN * m, m, normal_quantile(d)),
        False,
    ),
    RadiusCase("mixture_radius", lambda m, d, w: mixture_radius(m, d), False),
]
RADIUS_IDS = [case.name for case in RADII]
COUNTS = np.array([1, 2, 3, 7, 40, 1000, 10**6], dtype=np.int64)


@pytest.mark.parametrize("case", RADII, ids=RADIUS_IDS)
@DETERMINISTIC
@given(delta=DELTAS, width=st.floats(1e-3, 1e3))
def test_radius_is_non_negative_and_infinite_with_no_answers(
    case: RadiusCase, delta: float, width: float
) -> None:
    radii = case.radius(COUNTS, delta, width)
    assert np.all(np.isfinite(radii)) and np.all(radii >= 0.0)
    assert math.isinf(float(case.radius(np.array([0], dtype=np.int64), delta, width)[0]))


@pytest.mark.parametrize("case", RADII, ids=RADIUS_IDS)
@DETERMINISTIC
@given(delta=DELTAS, count=st.integers(1, 10**6), more=st.integers(1, 10**6))
def test_radius_decreases_with_the_count(
    case: RadiusCase, delta: float, count: int, more: int
) -> None:
    few, many = case.radius(np.array([count, count + more], dtype=np.int64), delta, 1.0)
    assert many < few


@pytest.mark.parametrize("case", RADII, ids=RADIUS_IDS)
@DETERMINISTIC
@given(delta=st.floats(1e-12, 0.25), factor=st.floats(1.001, 2.0))
def test_radius_grows_as_delta_shrinks(case: RadiusCase, delta: float, factor: float) -> None:
    wide = case.radius(COUNTS, delta, 1.0)
    narrow = case.radius(COUNTS, delta * factor, 1.0)
    assert np.all(wide > narrow)


@pytest.mark.parametrize("case", [c for c in RADII if c.width], ids=lambda c: c.name)
@DETERMINISTIC
@given(delta=DELTAS, width=st.floats(1e-3, 1e3))
def test_radius_scales_linearly_with_width(case: RadiusCase, delta: float, width: float) -> None:
    unit = case.radius(COUNTS, delta, 1.0)
    np.testing.assert_allclose(case.radius(COUNTS, delta, width), width * unit, rtol=1e-9)


# --------------------------------------------------------------- regularized incomplete beta
@pytest.mark.parametrize("a", [0.5, 1.0, 2.5, 7.0, 40.0, 900.0])
def test_incomplete_beta_is_one_half_at_the_centre_of_a_symmetric_beta(a: float) -> None:
    # Tolerance: lgamma(2a) - 2 lgamma(a) cancels about 1e-12 of absolute accuracy at a = 900.
    assert regularized_incomplete_beta(0.5, a, a) == pytest.approx(0.5, abs=1e-11)


@pytest.mark.parametrize("x", [1e-9, 0.01, 0.3, 0.5, 0.77, 0.999])
@pytest.mark.parametrize("p", [0.5, 1.0, 3.0, 25.0])
def test_incomplete_beta_closed_forms(x: float, p: float) -> None:
    assert regularized_incomplete_beta(x, 1.0, 1.0) == pytest.approx(x, rel=1e-12)
    assert regularized_incomplete_beta(x, 1.0, p) == pytest.approx(1 - (1 - x) ** p, rel=1e-11)
    assert regularized_incomplete_beta(x, p, 1.0) == pytest.approx(x**p, rel=1e-11)
    below, above = beta_tails(x, p, 1.0)
    assert below + above == pytest.approx(1.0, abs=1e-15)
    assert regularized_incomplete_beta(1 - x, 1.0, p) == pytest.approx(above, rel=1e-10)


@pytest.mark.parametrize(("n", "k", "p"), [(10, 3, 0.2), (30, 21, 0.6), (200, 120, 0.5)])
def test_incomplete_beta_is_a_binomial_tail(n: int, k: int, p: float) -> None:
    # I_p(k, n - k + 1) = P(Binomial(n, p) >= k), summed exactly with integers.
    tail = sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))
    assert regularized_incomplete_beta(p, k, n - k + 1) == pytest.approx(tail, rel=1e-10)


def _binomial_terms(n: int, x: float) -> list[float]:
    """``P(Binomial(n, x) = j)`` for j = 0..n."""
    return [math.comb(n, j) * x**j * (1.0 - x) ** (n - j) for j in range(n + 1)]


@pytest.mark.parametrize("n", [1, 2, 5, 13, 40, 120])
def test_both_tails_are_binomial_tails_on_a_grid(n: int) -> None:
    # I_x(a, n - a + 1) = P(Binomial(n, x) >= a) and 1 - I_x = P(Binomial(n, x) < a), each
    # tail summed directly so that a tiny one keeps its relative precision.
    rng = np.random.default_rng(n)
    grid = [0.01, 0.5, 0.99, *rng.uniform(0.0, 1.0, size=12).tolist()]
    for x in grid:
        terms = _binomial_terms(n, x)
        for a in range(1, n + 1):
            below, above = beta_tails(x, a, n - a + 1)
            assert below == pytest.approx(math.fsum(terms[a:]), rel=1e-9, abs=1e-300)
            assert above == pytest.approx(math.fsum(terms[:a]), rel=1e-9, abs=1e-300)


# x and 1 - x both exact: dyadic fractions.
DYADIC = st.integers(1, 2**20 - 1).map(lambda i: i / 2**20)
SHAPES = st.floats(0.05, 500.0)


@DETERMINISTIC
@given(x=DYADIC, a=SHAPES, b=SHAPES)
def test_incomplete_beta_symmetry(x: float, a: float, b: float) -> None:
    # I_x(a, b) = 1 - I_{1-x}(b, a), tail for tail (each to relative precision).
    below, above = beta_tails(x, a, b)
    mirror_below, mirror_above = beta_tails(1.0 - x, b, a)
    assert below == pytest.approx(mirror_above, rel=1e-9, abs=1e-300)
    assert above == pytest.approx(mirror_below, rel=1e-9, abs=1e-300)
    assert 0.0 <= below <= 1.0 and 0.0 <= above <= 1.0
    assert below + above == pytest.approx(1.0, abs=1e-15)


@DETERMINISTIC
@given(x=st.floats(0.0, 1.0), y=st.floats(0.0, 1.0), a=SHAPES, b=SHAPES)
def test_incomplete_beta_increases_in_x(x: float, y: float, a: float, b: float) -> None:
    # Up to rounding where the continued fraction switches to the other tail.
    low, high = sorted((x, y))
    assert regularized_incomplete_beta(low, a, b) <= regularized_incomplete_beta(high, a, b) + 1e-13
    assert beta_tails(low, a, b)[1] >= beta_tails(high, a, b)[1] - 1e-13


def test_incomplete_beta_keeps_tiny_tails_and_edges() -> None:
    # I_0.1(50, 1) = 1e-50: the small tail keeps its relative precision.
    assert beta_tails(0.1, 50.0, 1.0)[0] == pytest.approx(1e-50, rel=1e-10)
    assert beta_tails(0.9, 1.0, 50.0)[1] == pytest.approx(1e-50, rel=1e-10)
    assert beta_tails(0.0, 2.0, 3.0) == (0.0, 1.0)
    assert beta_tails(1.0, 2.0, 3.0) == (1.0, 0.0)
    with pytest.raises(ValueError, match="positive"):
        beta_tails(0.5, 0.0, 1.0)
