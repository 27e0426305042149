"""The predictive check of a crowd prior: the chi-square tail against pure-Python references,
the answer lattice and the statistic on cases worked by hand, and the check's false-alarm
rate under optional stopping with the true prior (seeded runs, one-sided binomial test)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from stats_helpers import assert_rate_at_most

from screener.stats.prior import GridPrior
from screener.stats.prior_check import AnswerLattice, chi2_quantile, chi2_sf, predictive_check


def _chi2_sf_by_integration(x: float, df: int) -> float:
    """1 - the integral of the chi-square density from 0 to x (Simpson, substitution u^2 = t
    to smooth the df = 1 singularity), pure Python."""
    k = df / 2.0
    log_norm = -k * math.log(2.0) - math.lgamma(k)
    steps = 20_000
    top = math.sqrt(x)
    h = top / steps

    def f(u: float) -> float:  # density at t = u^2 times dt/du = 2u
        if u == 0.0:
            return 2.0 * math.exp(log_norm) if df == 1 else 0.0
        t = u * u
        return 2.0 * u * math.exp(log_norm + (k - 1.0) * math.log(t) - t / 2.0)

    total = f(0.0) + f(top) + sum((4 if i % 2 else 2) * f(i * h) for i in range(1, steps))
    return 1.0 - total * h / 3.0


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 6, 7, 10])
@pytest.mark.parametrize("x", [0.3, 1.0, 2.5, 6.0, 12.0])
def test_chi2_tail_matches_the_integrated_density(df: int, x: float) -> None:
    assert chi2_sf(x, df) == pytest.approx(_chi2_sf_by_integration(x, df), abs=1e-7)


@pytest.mark.parametrize(
    ("level", "df", "quantile"),
    [(0.95, 1, 3.841459), (0.99, 1, 6.634897), (0.95, 2, 5.991465), (0.95, 3, 7.814728),
     (0.95, 5, 11.070498), (0.99, 5, 15.086272), (0.95, 10, 18.307038)],
)  # fmt: skip
def test_chi2_quantiles_of_the_printed_tables(level: float, df: int, quantile: float) -> None:
    assert chi2_quantile(level, df) == pytest.approx(quantile, abs=1e-5)
    assert chi2_sf(quantile, df) == pytest.approx(1.0 - level, abs=1e-6)


def test_chi2_edges() -> None:
    assert chi2_sf(0.0, 3) == 1.0 and chi2_sf(5.0, 0) == 1.0
    with pytest.raises(ValueError, match="level"):
        chi2_quantile(1.0, 2)


def test_lattice_counts_answers_by_the_state_before_them() -> None:
    lattice = AnswerLattice.empty(3)
    # a worker right, right, wrong; another wrong; a graded answer from 1.4 of 2 (rounds to 1)
    lattice.add([0, 1, 2, 0, 1.4], [0, 1, 2, 0, 2], [1.0, 1.0, 0.0, 0.0, 0.5])
    assert lattice.answers == 5
    assert lattice.answered[0, 0] == 2 and lattice.correct[0, 0] == 1.0
    assert lattice.answered[1, 1] == 1 and lattice.correct[1, 1] == 1.0
    assert lattice.answered[2, 2] == 1 and lattice.correct[2, 2] == 0.0
    assert lattice.answered[1, 2] == 1 and lattice.correct[1, 2] == 0.5


def test_the_statistic_by_hand() -> None:
    # Two-point prior 0.3 / 0.9: a first answer is right with probability 0.6; after one
    # right answer with (0.5 * 0.09 + 0.5 * 0.81) / 0.6 = 0.75.
    prior = GridPrior(np.array([0.3, 0.9]), np.array([0.5, 0.5]))
    lattice = AnswerLattice.empty(2)
    lattice.add(
        [0] * 10 + [1] * 4, [0] * 10 + [1] * 4, [1.0] * 8 + [0.0] * 2 + [1.0] * 2 + [0.0] * 2
    )
    check = predictive_check(prior, lattice, bins=2)
    # group 1: the 10 first answers (8 right, 6 expected, variance 2.4); group 2: the 4 after a
    # right answer (2 right, 3 expected, variance 4 * 0.75 * 0.25)
    expected = (8 - 6) ** 2 / 2.4 + (2 - 3) ** 2 / 0.75
    assert check.statistic == pytest.approx(expected)
    assert check.bins == 2 and check.answers == 14
    assert check.p_value == pytest.approx(math.exp(-expected / 2))  # chi2_2's tail
    assert predictive_check(prior, AnswerLattice.empty(2)).p_value == 1.0


def _stopped_crowd(seed: int, workers: int = 200) -> tuple[GridPrior, AnswerLattice]:
    """Workers with Beta(6, 2) accuracies answering until two wrong answers in a row, a run
    of five right, or twelve answers: a stopping rule that reads every answer."""
    rng = np.random.default_rng(seed)
    prior = GridPrior.uniform()
    density = prior.grid**5 * (1 - prior.grid)
    prior = GridPrior(prior.grid, density / density.sum())
    lattice = AnswerLattice.empty(12)
    accuracy = rng.choice(prior.grid, size=workers, p=prior.weights)
    for p in accuracy:
        right = answered = wrong_run = right_run = 0
        while answered < 12 and wrong_run < 2 and right_run < 5:
            x = float(rng.random() < p)
            lattice.add([right], [answered], [x])
            right, answered = right + int(x), answered + 1
            wrong_run, right_run = (0, right_run + 1) if x else (wrong_run + 1, 0)
    return prior, lattice


@pytest.mark.slow
def test_false_alarms_at_most_the_level_under_optional_stopping() -> None:
    """Against the true prior, the check's answers are martingale differences whatever the
    stopping rule: a check at level 0.05 rejects at most 5% of the crowds (400 crowds)."""
    rejections = sum(predictive_check(*_stopped_crowd(seed)).p_value < 0.05 for seed in range(400))
    assert_rate_at_most(rejections, 400, 0.05)
    assert rejections > 0  # the check is not vacuous: it does reject sometimes
