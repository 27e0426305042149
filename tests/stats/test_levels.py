"""Confidence levels, the radii built at them, and the regularized incomplete beta: hand
values and closed forms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from screener.stats import (
    ade_level,
    agresti_coull_radius,
    anytime_radius,
    beta_tails,
    clucb_radius,
    gold_level,
    hoeffding_radius,
    regularized_incomplete_beta,
    round_level,
    scaled_agresti_coull_radius,
)


# ---------------------------------------------------------------------------- hand values
def test_round_level_hand_value() -> None:
    # 6 * 0.1 / (pi^2 * (4 + 1) * 10^2)
    assert round_level(0.1, 4, 10) == pytest.approx(1.2158542037080535e-4, rel=1e-12)
    assert round_level(0.1, 4, 10) == pytest.approx(0.6 / (math.pi**2 * 5 * 100), rel=1e-12)
    assert round_level(0.1, 4, 0) == round_level(0.1, 4, 1)  # T = 0 is treated as T = 1


@pytest.mark.parametrize(("delta", "n_arms"), [(0.1, 10), (0.05, 2), (0.5, 200)])
def test_round_level_sums_to_at_most_delta(delta: float, n_arms: int) -> None:
    horizon = 200_000
    levels = np.array([round_level(delta, n_arms, t) for t in range(1, horizon + 1)])
    partial = (n_arms + 1) * math.fsum(levels.tolist())  # n + 1 intervals per round
    assert partial <= delta
    # The missing tail sum_{T > N} 1/T^2 is below 1/N, so the series does reach delta.
    assert partial >= delta * (1.0 - 6.0 / (math.pi**2 * horizon))
    assert np.all(np.diff(levels) < 0)


@settings(derandomize=True, database=None, deadline=None, max_examples=200)
@given(delta=st.floats(1e-6, 0.999), n=st.integers(2, 1000), t=st.integers(1, 10**7))
def test_round_level_decreases_with_pulls(delta: float, n: int, t: int) -> None:
    assert round_level(delta, n, t + 1) < round_level(delta, n, t)
    assert round_level(delta, n, t) < delta


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


def test_incomplete_beta_keeps_tiny_tails_and_edges() -> None:
    # I_0.1(50, 1) = 1e-50: the small tail keeps its relative precision.
    assert beta_tails(0.1, 50.0, 1.0)[0] == pytest.approx(1e-50, rel=1e-10)
    assert beta_tails(0.9, 1.0, 50.0)[1] == pytest.approx(1e-50, rel=1e-10)
    assert beta_tails(0.0, 2.0, 3.0) == (0.0, 1.0)
    assert beta_tails(1.0, 2.0, 3.0) == (1.0, 0.0)
    with pytest.raises(ValueError, match="positive"):
        beta_tails(0.5, 0.0, 1.0)
