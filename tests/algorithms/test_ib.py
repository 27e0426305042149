"""IB (iterated LUCB1 best-arm identification, the baseline of Zhuang et al. 2017): pulls by
hand, pull by pull against a literal reference, direction="low", delta-correctness, batches
with answers in flight, and parameter validation."""

from __future__ import annotations

import math
from collections.abc import Iterator
from concurrent.futures import Executor
from typing import Any

import numpy as np
import pytest
from driver import drive
from numpy.typing import NDArray
from stats_helpers import assert_rate_at_most
from test_contract import BAD_PARAMS
from test_correctness import true_outliers
from test_ksigma import hand_state

from screener.algorithms import AskState, Decision, Result, StopReason
from screener.algorithms.ksigma import IteratedBestArm
from screener.errors import ConfigError, ScreenerError
from screener.simulation import map_seeds

FloatArray = NDArray[np.float64]


# ----------------------------------------------------------------------------- by hand
def test_lucb_pairs_by_hand() -> None:
    # Deterministic rewards 1, 0, 0.5 and Hoeffding radii, equal for equal counts.
    alg = IteratedBestArm(3, k=1.0, delta=0.1, interval="hoeffding")
    rewards = [1.0, 0.0, 0.5]
    first = alg.ask(5)
    assert first.arms.tolist() == [0, 1, 2]  # every arm once, then wait for those answers
    assert alg.ask(1).wait
    alg.tell_many(first.ids, [rewards[a] for a in first.arms.tolist()])
    # LUCB1 round: h = empirical best (0); l = argmax UCB of the others: equal radii, so 2.
    assert alg.ask(1).arms.tolist() == [0]
    assert alg.ask(1).arms.tolist() == [2]
    # Next round with those two in flight: h is still 0; the challenger's radius is shrunk by
    # sqrt(m / (m + pending)): UCB_2 = 0.5 + r / sqrt(2) against UCB_1 = 0 + r, with
    # r = sqrt(log(1 / level) / 2) at T = 3 answers. r > 0.5 / (1 - 1/sqrt(2)) picks arm 1.
    level = 6 * 0.1 / (math.pi**2 * 4 * 3**2)
    r = math.sqrt(math.log(1 / level) / 2)
    assert r > 0.5 / (1 - 1 / math.sqrt(2))
    assert alg.ask(2).arms.tolist() == [0, 1]
    assert alg.best == -1 and alg.removed == []


def _reference_ib(
    n: int, k: float, delta: float, rewards: list[list[float]]
) -> Iterator[int | None]:
    """IB written out on the hand formulas (test_ksigma.hand_state), one pull at a time with
    immediate answers: yields the next arm, or None once it stops. The caller appends each
    answer to ``rewards`` before asking for the next arm. Decisions are checked after every
    answer; a LUCB1 round is "pull h, pull l" with the pair chosen at the round's start."""
    yield from range(n)
    remaining = set(range(n))
    best, owed, best_turn, cursor = -1, -1, True, 0
    while True:
        hand = hand_state(rewards, k=k, delta=delta, interval="agresti-coull")
        y, low, high = hand.means, hand.lows, hand.highs
        lo_theta, hi_theta = hand.theta_low, hand.theta_high
        while True:  # every stage decision the intervals allow now
            if best < 0:
                arms = sorted(remaining)
                h = max(arms, key=lambda a: (y[a], -a))
                others = [a for a in arms if a != h]
                if others:
                    c = max(others, key=lambda a: (high[a], -a))  # LUCB1's l
                    if low[h] <= high[c]:
                        break
                best, owed, best_turn = h, -1, True
            if low[best] > hi_theta:
                remaining.discard(best)
                best = -1
                continue
            if high[best] < lo_theta:
                yield None
                return
            break
        if best >= 0:  # comparison: alternate the best arm and a round robin over all arms
            if best_turn:
                arm = best
            else:
                arm, cursor = cursor, (cursor + 1) % n
            best_turn = not best_turn
        elif owed >= 0:
            arm, owed = owed, -1
        else:
            arms = sorted(remaining)
            arm = max(arms, key=lambda a: (y[a], -a))
            owed = max((a for a in arms if a != arm), key=lambda a: (high[a], -a))
        yield arm


@pytest.mark.parametrize(
    ("means", "k", "seed", "removed"),
    [
        # k = 0.5: theta = 0.655, outliers 0.95 then 0.85; three stages.
        pytest.param([0.1, 0.3, 0.85, 0.95, 0.2], 0.5, 0, [3, 2], id="two-outliers"),
        # k = 0.8: theta = 0.663, one outlier; the best normal worker 0.55 is 0.11 below.
        pytest.param([0.1, 0.3, 0.55, 0.95, 0.2], 0.8, 1, [3], id="one-outlier"),
    ],
)
def test_one_pull_at_a_time_is_the_reference(
    means: list[float], k: float, seed: int, removed: list[int]
) -> None:
    delta = 0.1
    rng = np.random.default_rng(seed)
    rewards: list[list[float]] = [[] for _ in means]
    alg = IteratedBestArm(len(means), k=k, delta=delta, interval="agresti-coull")
    reference = _reference_ib(len(means), k, delta, rewards)
    for step in range(20_000):
        expected = next(reference)
        ask = alg.ask(1)
        if expected is None:
            assert ask.done and alg.stop_reason is StopReason.CONDITION_MET
            break
        assert ask.arms.tolist() == [expected], f"pull {step}"
        reward = float(rng.random() < means[expected])
        rewards[expected].append(reward)
        alg.tell(int(ask.ids[0]), reward)
    else:
        raise AssertionError("IB did not stop")
    result = alg.result()
    assert result.outliers == tuple(sorted(removed)) == true_outliers(np.array(means), k)
    assert result.extra["removed"] == removed and result.extra["stages"] == len(removed) + 1
    assert step > 1000  # a real run
    for line in result.workers:
        assert line.decision is line.leaning is not Decision.UNDECIDED


# --------------------------------------------------------------------------- direction
def _keyed_reward(means: FloatArray, arm: int, seq: int, seed: int) -> float:
    """A Bernoulli draw fixed by (seed, arm, seq): twin runs see the same draws."""
    return float(np.random.default_rng([seed, arm, seq]).random() < means[arm])


def test_direction_low_mirrors_high_on_flipped_rewards() -> None:
    means = np.array([0.1, 0.3, 0.85, 0.95, 0.2])  # k = 0.5: outliers 2 and 3
    high = IteratedBestArm(5, k=0.5, delta=0.1)
    low = IteratedBestArm(5, k=0.5, delta=0.1, direction="low")
    for _ in range(100_000):
        ask_high, ask_low = high.ask(3), low.ask(3)
        assert ask_high.state is ask_low.state
        np.testing.assert_array_equal(ask_high.arms, ask_low.arms)
        if ask_high.done:
            break
        drawn = [
            _keyed_reward(means, a, s, 7) for a, s in zip(ask_high.arms, ask_high.seqs, strict=True)
        ]
        high.tell_many(ask_high.ids, drawn)
        low.tell_many(ask_low.ids, [1.0 - r for r in drawn])
    else:
        raise AssertionError("IB did not stop")
    up, down = high.result(), low.result()
    assert up.outliers == down.outliers == (2, 3)
    assert up.extra["removed"] == down.extra["removed"]
    assert up.threshold is not None and down.threshold is not None
    assert down.threshold.estimate == pytest.approx(1.0 - up.threshold.estimate, abs=1e-12)
    assert down.threshold.lower == pytest.approx(1.0 - up.threshold.upper, abs=1e-12)
    for a, b in zip(up.ranking, down.ranking, strict=True):
        assert a.arm == b.arm and a.decision is b.decision
        assert b.estimate == pytest.approx(1.0 - a.estimate, abs=1e-12)


# -------------------------------------------------------------------- delta-correctness
K = 1.0
DELTA = 0.1
# Ten Bernoulli workers, k = 1: theta = 0.569; outliers 0.75 and 0.95 (0.18 and 0.38 above),
# the best normal worker 0.3 (0.27 below). Distinct top means: LUCB1 separates them.
MEANS = np.array([0.1] * 7 + [0.3, 0.75, 0.95])


def test_the_instance_has_two_outliers() -> None:
    assert true_outliers(MEANS, K) == (8, 9)


def _run(seed: int) -> Result:
    alg = IteratedBestArm(MEANS.size, k=K, delta=DELTA)
    return drive(alg, MEANS, np.random.default_rng([seed, 2017]), batch=10).result


@pytest.mark.slow
def test_error_rate_is_at_most_delta(run_pool: Executor) -> None:
    truth = true_outliers(MEANS, K)
    runs, errors = 60, 0
    for seed, result in enumerate(map_seeds(_run, range(runs), executor=run_pool)):
        assert result.stop_reason is StopReason.CONDITION_MET, f"seed {seed}"
        errors += result.outliers != truth
        assert result.total_pulls > 3 * MEANS.size
    assert_rate_at_most(errors, runs, DELTA)


def _drive_delayed(alg: IteratedBestArm, means: FloatArray, seed: int, batch: int) -> int:
    """Ask a batch, then tell the PREVIOUS batch's answers: one batch always in flight.
    Returns how many asks had to wait."""
    rng = np.random.default_rng(seed)
    in_flight: list[tuple[NDArray[np.int64], list[float]]] = []
    waits = 0
    for _ in range(1_000_000):
        ask = alg.ask(batch)
        if ask.done:
            return waits
        if ask.state is AskState.PULL:
            in_flight.append((ask.ids, (rng.random(len(ask)) < means[ask.arms]).tolist()))
        else:
            waits += 1
        if len(in_flight) > 1 or ask.wait:
            ids, values = in_flight.pop(0)
            alg.tell_many(ids, values)
    raise AssertionError("IB did not stop")


def _delayed_run(seed: int) -> Result:
    alg = IteratedBestArm(MEANS.size, k=K, delta=DELTA)
    _drive_delayed(alg, MEANS, seed, batch=10)
    return alg.result()


@pytest.mark.slow
def test_batches_with_delayed_answers_are_correct(run_pool: Executor) -> None:
    truth = true_outliers(MEANS, K)
    runs, errors = 12, 0
    for seed, result in enumerate(map_seeds(_delayed_run, range(runs), executor=run_pool)):
        assert result.stop_reason is StopReason.CONDITION_MET, f"seed {seed}"
        errors += result.outliers != truth
    assert_rate_at_most(errors, runs, DELTA)


# ----------------------------------------------------------------------- ties, epsilon
TIED = np.array([0.1] * 8 + [0.9, 0.9])  # k = 1: theta = 0.58; two tied outliers


def test_tied_outliers_need_epsilon() -> None:
    # Exact best-arm identification never separates two equal means: budget spent, and only
    # leanings to report.
    exact = IteratedBestArm(10, k=1.0, delta=0.1, budget=3000)
    result = drive(exact, TIED, np.random.default_rng(5), batch=10).result
    assert result.stop_reason is StopReason.BUDGET_SPENT
    assert result.outliers == () and result.extra["stages"] == 1
    leaning = sorted(w.arm for w in result.workers if w.leaning is Decision.OUTLIER)
    assert leaning == [8, 9]
    # epsilon-PAC identification separates them (either may go first) and stops soundly.
    loose = IteratedBestArm(10, k=1.0, delta=0.1, epsilon=0.1)
    result = drive(loose, TIED, np.random.default_rng(5), batch=10).result
    assert result.stop_reason is StopReason.CONDITION_MET
    assert result.outliers == (8, 9) and sorted(result.extra["removed"]) == [8, 9]
    assert result.params["epsilon"] == 0.1


# ------------------------------------------------------------------ parameter validation
@pytest.mark.parametrize(("n", "params", "words"), BAD_PARAMS)
def test_bad_parameters_raise_config_error(n: int, params: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        IteratedBestArm(n, **params)


@pytest.mark.parametrize("epsilon", [-0.1, 1.0, 2.0, math.nan, math.inf])
def test_bad_epsilon_raises_config_error(epsilon: float) -> None:
    with pytest.raises(ConfigError, match="epsilon") as caught:
        IteratedBestArm(5, epsilon=epsilon)
    assert isinstance(caught.value, ScreenerError) and caught.value.hint is not None
    assert str(epsilon) in str(caught.value)
