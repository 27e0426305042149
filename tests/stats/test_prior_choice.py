"""PriorChoice: when it looks, at which level, when it raises the misfit flag and when it moves
to the two-Beta prior."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from screener.stats.prior import fit_beta_prior
from screener.stats.prior_choice import PriorChoice

FloatArray = NDArray[np.float64]


def _rounds(choice: PriorChoice, accuracy: FloatArray, rounds: int, seed: int) -> list[int]:
    """Every worker answers once per round; a refit after each round. The looks' count after
    each refit."""
    rng = np.random.default_rng(seed)
    successes = np.zeros(accuracy.size)
    counts = np.zeros(accuracy.size)
    looks = []
    for _ in range(rounds):
        rewards = (rng.random(accuracy.size) < accuracy).astype(np.float64)
        choice.record(successes, counts, rewards)
        successes += rewards
        counts += 1
        choice.refit(successes, counts)
        looks.append(choice.looks)
    choice.refit(successes, counts, final=True)
    return looks


def test_looks_at_three_six_twelve_answers_per_worker_and_at_the_end() -> None:
    choice = PriorChoice("beta", horizon=40, level=0.05, contamination=0.0)
    assert choice.interim_looks == 4  # 3, 6, 12 and 24 answers per worker fit under 40
    accuracy = np.random.default_rng(0).beta(6.0, 2.0, 100)
    looks = _rounds(choice, accuracy, 13, seed=1)
    assert looks == [0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3]
    assert choice.summary()["prior_check_level"] == pytest.approx(0.025)  # the final look's
    assert choice.looks == 4 and choice.over
    assert choice.misfit is None and choice.in_force == "beta"
    successes, counts = np.full(100, 10.0), np.full(100, 13.0)
    choice.refit(successes, counts, final=True)
    assert choice.looks == 4  # the final look comes once while the run stays over
    choice.reopen()  # workers joined: the run goes on, to another final look at half the level
    choice.refit(successes, counts, final=True)
    assert choice.looks == 5 and choice.last_level == pytest.approx(0.0125)


def test_no_look_when_the_check_is_off() -> None:
    choice = PriorChoice("auto", horizon=40, level=0.0, contamination=0.0)
    _rounds(choice, np.where(np.arange(200) < 50, 0.3, 0.9), 12, seed=2)
    assert choice.looks == 0 and choice.last_check is None and choice.in_force == "beta"


@pytest.mark.parametrize("family", ["auto", "beta"])
def test_two_spikes_fail_the_beta_and_auto_moves_to_two_betas(family: str) -> None:
    """A quarter of the crowd at 0.3, the rest at 0.9: the Beta passes the looks at three and
    six answers per worker (p = 0.40 and 0.07 on this seed: too few answers to tell) and
    fails the one at twelve (raising the flag); ``auto`` then decides under the two-Beta
    prior, which passes its own check, at that look and at the final one."""
    choice = PriorChoice(family, horizon=40, level=0.05, contamination=0.0)
    accuracy = np.where(np.arange(400) < 100, 0.3, 0.9)
    looks = _rounds(choice, accuracy, 12, seed=3)
    assert looks[-1] == 3 and choice.looks == 4
    assert choice.misfit is not None and choice.misfit.family == "beta"
    assert choice.misfit.check.answers == 12 * 400
    summary = choice.summary()
    assert summary["prior_misfit"] is True
    if family == "beta":
        assert choice.in_force == "beta" and summary["prior_mixture"] is None
        return
    assert choice.in_force == "two-beta" and choice.mixture is not None
    assert choice.last_check is not None and choice.last_check.p_value >= choice.last_level
    mixture = summary["prior_mixture"]
    assert isinstance(mixture, dict) and mixture["share"] == pytest.approx(0.25, abs=0.06)
    successes, counts = np.full(400, 9.0), np.full(400, 12.0)
    refit = choice.refit(successes, counts)  # between looks: the mixture, refit from the last
    assert refit is choice.mixture.prior
    region = choice.region(successes, counts, level=0.95)
    np.testing.assert_allclose(region.weights[:, 0], refit.weights)


def test_a_beta_crowd_keeps_the_beta_and_raises_no_flag() -> None:
    choice = PriorChoice("auto", horizon=40, level=0.05, contamination=0.0)
    _rounds(choice, np.random.default_rng(4).beta(6.0, 2.0, 400), 12, seed=5)
    assert choice.misfit is None and choice.in_force == "beta" and choice.looks == 4
    fitted = choice.refit(np.full(400, 9.0), np.full(400, 12.0))
    np.testing.assert_allclose(
        fitted.weights, fit_beta_prior(np.full(400, 9.0), np.full(400, 12.0)).weights
    )


def test_an_unknown_family_is_refused() -> None:
    with pytest.raises(ValueError, match="family"):
        PriorChoice("gauss", horizon=40, level=0.05, contamination=0.0)
