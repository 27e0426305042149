"""e-BH on hand-worked e-values; the betting e-process against a per-answer reference, under
its null (Ville's inequality, many seeded sequences) and against a clearly bad worker."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from numpy.typing import NDArray
from stats_helpers import assert_rate_at_most

from screener.stats import BET_FRACTIONS, BettingEProcess, e_bh

FloatArray = NDArray[np.float64]


# ------------------------------------------------------------------ e-BH by hand
@pytest.mark.parametrize(
    ("e_values", "q", "expected"),
    [
        # n = 4, q = 0.5: cuts n / (q k) = 8, 4, 2.67, 2. Only 10 >= 8 (k = 1).
        ([10.0, 3.0, 2.5, 0.5], 0.5, [True, False, False, False]),
        # Step-up: k = 2 fails (2.7 < 4) but k = 3 passes (2.7 >= 2.67): three rejected.
        ([9.0, 2.7, 2.7, 0.1], 0.5, [True, True, True, False]),
        # Order does not matter.
        ([0.1, 2.7, 9.0, 2.7], 0.5, [False, True, True, True]),
        # Ties are never split: all four at 5 >= 2 (k = 4).
        ([5.0, 5.0, 5.0, 5.0], 0.5, [True, True, True, True]),
        # Tied pair short of both cuts (3 < 4, 3 < 8): none.
        ([3.0, 3.0, 0.0, 0.0], 0.5, [False, False, False, False]),
        # n = 3, q = 0.25: cuts 12, 6, 4. Exactly at the cut counts (4 >= 4): all rejected.
        ([4.0, 4.0, 4.0], 0.25, [True, True, True]),
        # One of the three a hair short: k = 3 fails, and 4 < 6, 4 < 12: none at all.
        ([4.0, 4.0, 3.999], 0.25, [False, False, False]),
        # Nothing above 1 never rejects.
        ([1.0, 1.0, 1.0], 0.5, [False, False, False]),
        # An infinite e-value (a wealth past the float range) is rejected alone: inf >= 6.
        ([math.inf, 0.0, 0.0], 0.5, [True, False, False]),
        # n = 1: reject iff e >= 1 / q.
        ([10.0], 0.1, [True]),
        ([9.99], 0.1, [False]),
    ],
)
def test_e_bh_by_hand(e_values: list[float], q: float, expected: list[bool]) -> None:
    assert e_bh(e_values, q).tolist() == expected


def test_e_bh_of_nothing_is_nothing() -> None:
    assert e_bh([], 0.1).tolist() == []


@pytest.mark.parametrize("bad", [[1.0, math.nan], [1.0, -0.5]])
def test_e_bh_refuses_values_that_are_not_e_values(bad: list[float]) -> None:
    with pytest.raises(ValueError, match="nonnegative"):
        e_bh(bad, 0.1)


@pytest.mark.parametrize("q", [0.0, -0.1, 1.5, math.nan])
def test_e_bh_refuses_levels_outside_0_1(q: float) -> None:
    with pytest.raises(ValueError, match="q must lie"):
        e_bh([1.0], q)


def _e_bh_by_definition(e: FloatArray, q: float) -> list[bool]:
    """Straight from the definition: the largest k with at least k e-values >= n / (q k)."""
    n = e.size
    for k in range(n, 0, -1):
        if int(np.sum(e >= n / (q * k))) >= k:
            return [bool(v >= n / (q * k)) for v in e]
    return [False] * n


@pytest.mark.parametrize("seed", range(40))
def test_e_bh_matches_its_definition_and_is_self_consistent(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    q = float(rng.choice([0.05, 0.1, 0.2, 0.5]))
    e = np.exp(rng.normal(1.0, 2.5, n))
    e[rng.random(n) < 0.2] = float(rng.choice(e))  # ties
    rejected = e_bh(e, q)
    assert rejected.tolist() == _e_bh_by_definition(e, q)
    if rejected.any():
        assert np.all(e[rejected] >= n / (q * rejected.sum()))
    raised = e * np.where(rng.random(n) < 0.5, 1.0, 3.0)  # more evidence never rejects less
    assert np.all(e_bh(raised, q)[rejected])


# ------------------------------------------------------------------ the e-process
def _reference(
    answers: list[list[float]], bar: float, above_bar: float, fractions: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Per-answer products of each constant bet, averaged over the bets: the definition."""
    below, above = [], []
    for xs in answers:
        wealth_below = [1.0] * fractions.size
        wealth_above = [1.0] * fractions.size
        for x in xs:
            for g, f in enumerate(fractions.tolist()):
                wealth_below[g] *= 1.0 + f / (1.0 - bar) * (bar - x)
                wealth_above[g] *= 1.0 + f / above_bar * (x - above_bar)
        below.append(sum(wealth_below) / fractions.size)
        above.append(sum(wealth_above) / fractions.size)
    return np.array(below), np.array(above)


def test_one_bet_by_hand() -> None:
    # Bar 0.5, f = 0.5: lam = 1. Below: a wrong answer multiplies by 1.5, a right one by 0.5;
    # answers 0, 0, 1: 1.5 * 1.5 * 0.5 = 1.125. Above: 0.5 * 0.5 * 1.5 = 0.375.
    process = BettingEProcess(1, 0.5, fractions=[0.5])
    process.update_many([0, 0, 0], [0.0, 0.0, 1.0])
    assert process.e_below()[0] == pytest.approx(1.125)
    assert process.e_above()[0] == pytest.approx(0.375)
    # Adding the bet f = 0 (wealth stays 1) averages: (1.125 + 1) / 2.
    mixed = BettingEProcess(1, 0.5, fractions=[0.5, 0.0])
    mixed.update_many([0, 0, 0], [0.0, 0.0, 1.0])
    assert mixed.e_below()[0] == pytest.approx(1.0625)


def test_default_grid_by_hand() -> None:
    # Bar 0.5, grid f_g = (2g - 1) / 40: a wrong answer multiplies bet g by (1 + f_g), so
    # three wrong answers give mean (1 + f)^3 = 1 + 3 E f + 3 E f^2 + E f^3 with E f = 1/2,
    # E f^2 = sum (2g-1)^2 / 32000 = 10660 / 32000, E f^3 = 319600 / 1280000:
    # 1 + 1.5 + 0.999375 + 0.2496875 = 3.7490625.
    assert BET_FRACTIONS.tolist() == [(2 * g - 1) / 40 for g in range(1, 21)]
    process = BettingEProcess(2, 0.5)
    process.update_many([0, 0, 0, 1, 1, 1], [0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    assert process.e_below()[0] == pytest.approx(3.7490625, rel=1e-12)
    assert process.e_above()[1] == pytest.approx(3.7490625, rel=1e-12)  # the mirror image
    assert process.e_below()[1] == pytest.approx(np.mean((1 - BET_FRACTIONS) ** 3), rel=1e-12)


def test_a_bet_on_zero_one_answers_is_a_likelihood_ratio() -> None:
    # Bar 0.6, f = 0.25: the bet is the likelihood ratio of mean 0.6 * 0.75 = 0.45 against 0.6.
    process = BettingEProcess(1, 0.6, fractions=[0.25])
    process.update_many([0] * 7, [1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0])  # 3 right, 4 wrong
    ratio = (0.45 / 0.6) ** 3 * (0.55 / 0.4) ** 4
    assert process.e_below()[0] == pytest.approx(ratio, rel=1e-12)
    # Above, f = 0.25 is mean 0.6 + 0.25 * 0.4 = 0.7 against 0.6.
    up = BettingEProcess(1, 0.6, fractions=[0.25])
    up.update_many([0] * 7, [1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    assert up.e_above()[0] == pytest.approx((0.7 / 0.6) ** 3 * (0.3 / 0.4) ** 4, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(("bar", "above_bar"), [(0.6, 0.6), (0.7, 0.5), (0.0, 1.0)])
def test_matches_the_per_answer_reference_after_every_batch(
    seed: int, bar: float, above_bar: float
) -> None:
    rng = np.random.default_rng(seed)
    n = 5
    fractions = BET_FRACTIONS if seed % 2 else np.array([0.0, 0.3, 0.9])
    process = BettingEProcess(n, bar, above_bar=above_bar, fractions=fractions)
    answers: list[list[float]] = [[] for _ in range(n)]
    for _ in range(12):
        size = int(rng.integers(0, 9))
        arms = rng.integers(0, n, size)
        rewards = np.where(rng.random(size) < 0.3, rng.integers(0, 2, size), rng.random(size))
        process.update_many(arms, rewards)
        for arm, x in zip(arms.tolist(), rewards.tolist(), strict=True):
            answers[arm].append(x)
        below, above = _reference(answers, bar, above_bar, fractions)
        np.testing.assert_allclose(process.e_below(), below, rtol=1e-10)
        np.testing.assert_allclose(process.e_above(), above, rtol=1e-10)
        np.testing.assert_allclose(process.log_e_below(), np.log(below), rtol=1e-10, atol=1e-12)
        assert process.count.tolist() == [len(a) for a in answers]


def test_batches_and_single_answers_give_the_same_bits() -> None:
    rng = np.random.default_rng(3)
    arms, rewards = rng.integers(0, 4, 200), rng.random(200)
    batched, single = BettingEProcess(4, 0.7), BettingEProcess(4, 0.7)
    batched.update_many(arms, rewards)
    for arm, x in zip(arms.tolist(), rewards.tolist(), strict=True):
        single.update_many([arm], [x])
    assert np.array_equal(batched.log_e_below(), single.log_e_below())
    assert np.array_equal(batched.log_e_above(), single.log_e_above())


def test_kept_e_values_are_the_bits_of_one_pass_through_growth_and_pickles() -> None:
    """Each arm's e-values are kept and recomputed only when its answers move (issue 50):
    after arms join and batches arrive, they equal a process given every answer at once,
    and a process pickled before they were kept (no cache) computes them on loading."""
    rng = np.random.default_rng(11)
    grown_process, arms_seen, rewards_seen = BettingEProcess(3, 0.65, above_bar=0.55), [], []
    for _ in range(40):
        if rng.random() < 0.2:
            grown_process.grow(int(rng.integers(1, 4)))
        size = int(rng.integers(1, 6))
        arms = rng.integers(0, grown_process.n_arms, size)
        rewards = np.where(rng.random(size) < 0.5, rng.integers(0, 2, size), rng.random(size))
        grown_process.update_many(arms, rewards)
        arms_seen += arms.tolist()
        rewards_seen += rewards.tolist()
    at_once = BettingEProcess(grown_process.n_arms, 0.65, above_bar=0.55)
    at_once.update_many(arms_seen, rewards_seen)
    assert np.array_equal(grown_process.log_e_below(), at_once.log_e_below())
    assert np.array_equal(grown_process.log_e_above(), at_once.log_e_above())
    state = {k: v for k, v in vars(at_once).items() if not k.startswith("_log_e_")}
    older = BettingEProcess.__new__(BettingEProcess)
    older.__setstate__(state)  # as pickle loads a process saved before the cache
    assert np.array_equal(older.log_e_below(), at_once.log_e_below())
    reloaded = pickle.loads(pickle.dumps(grown_process))
    assert np.array_equal(reloaded.log_e_above(), at_once.log_e_above())


def test_long_runs_stay_finite_in_logs() -> None:
    process = BettingEProcess(1, 0.6)
    process.update_many(np.zeros(5000, dtype=np.int64), np.zeros(5000))
    assert 1000 < process.log_e_below()[0] < math.inf
    assert process.e_below()[0] == math.inf  # past the float range, still an e-value for e-BH
    assert np.isfinite(process.log_e_above()[0])


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"n_arms": -1, "bar": 0.5}, "n_arms"),
        ({"n_arms": 2, "bar": 1.0}, "'below'"),
        ({"n_arms": 2, "bar": -0.1}, "'below'"),
        ({"n_arms": 2, "bar": 0.5, "above_bar": 0.0}, "'above'"),
        ({"n_arms": 2, "bar": 0.5, "fractions": [1.0]}, "fractions"),
        ({"n_arms": 2, "bar": 0.5, "fractions": []}, "fractions"),
    ],
)
def test_bad_settings_raise(kwargs: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        BettingEProcess(**kwargs)  # type: ignore[arg-type]


def test_rewards_outside_0_1_raise() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        BettingEProcess(2, 0.5).update_many([0], [1.5])
    with pytest.raises(ValueError, match="same length"):
        BettingEProcess(2, 0.5).update_many([0, 1], [0.5])


# ------------------------------------------------------------------ validity and power
def _running_max_log_e(
    draw: np.random.Generator, sequences: int, steps: int, sampler: str, mean: float, bar: float
) -> tuple[FloatArray, FloatArray]:
    """sup over the first ``steps`` answers of log e_below and log e_above, per sequence."""
    process = BettingEProcess(sequences, bar)
    arms = np.arange(sequences)
    top_below = np.zeros(sequences)
    top_above = np.zeros(sequences)
    for _ in range(steps):
        if sampler == "bernoulli":
            x = (draw.random(sequences) < mean).astype(np.float64)
        else:
            x = draw.beta(mean * 4.0, (1.0 - mean) * 4.0, sequences)
        process.update_many(arms, x)
        top_below = np.maximum(top_below, process.log_e_below())
        top_above = np.maximum(top_above, process.log_e_above())
    return top_below, top_above


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["bernoulli", "beta"])
@pytest.mark.parametrize("bar", [0.3, 0.6])
def test_ville_under_the_null_at_the_boundary(sampler: str, bar: float) -> None:
    # Mean exactly at the bar is in both nulls (mean >= bar and mean <= bar): the chance that
    # either e-process ever reaches 1 / alpha is at most alpha (Ville's inequality).
    alpha, sequences, steps = 0.1, 2000, 300
    draw = np.random.default_rng(int(bar * 100) + (sampler == "beta"))
    top_below, top_above = _running_max_log_e(draw, sequences, steps, sampler, bar, bar)
    for top in (top_below, top_above):
        crossed = int(np.sum(top >= math.log(1.0 / alpha)))
        print(f"{sampler} at bar {bar}: {crossed} of {sequences} crossed 1/alpha = 10")
        assert_rate_at_most(crossed, sequences, alpha)


def test_a_clearly_bad_worker_crosses_quickly() -> None:
    # Accuracy 0.3 against a 0.6 bar: KL(0.3, 0.6) = 0.18 nats per answer, so e = 20 (log 3.0)
    # plus the mixture's cost of about 1 nat needs some 16 to 25 answers.
    draw = np.random.default_rng(11)
    sequences, steps = 400, 60
    process = BettingEProcess(sequences, 0.6)
    first = np.full(sequences, steps + 1)
    for t in range(1, steps + 1):
        process.update_many(np.arange(sequences), (draw.random(sequences) < 0.3).astype(float))
        crossed = (process.e_below() >= 20.0) & (first > steps)
        first[crossed] = t
    assert np.median(first) <= 25
    assert np.mean(first <= 60) >= 0.95
    assert np.all(process.e_above() < 1.0)  # and no evidence at all the other way
