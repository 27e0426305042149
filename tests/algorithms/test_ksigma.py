"""Hand-worked k-sigma cases: estimates, intervals, threshold and active set computed in the
test from the formulas (not from screener.stats), and the RR, WRR and NRR schedules."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import pytest
from driver import drive
from numpy.typing import NDArray

from screener.algorithms import (
    AskState,
    Decision,
    NaiveRoundRobin,
    RoundRobin,
    StopReason,
    WeightedRoundRobin,
)
from screener.algorithms.ksigma import IntervalKind, KSigmaAlgorithm
from screener.stats import QuantileRule

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
GUARANTEED = pytest.mark.parametrize("cls", [RoundRobin, WeightedRoundRobin], ids=["rr", "wrr"])


# ------------------------------------------------------------------------ hand formulas
@dataclass
class Hand:
    means: FloatArray
    lows: FloatArray
    highs: FloatArray
    theta: float
    theta_low: float
    theta_high: float
    active: BoolArray


def _kl(p: float, q: float) -> float:
    ones = p * math.log(p / q) if p > 0 else 0.0
    zeros = (1 - p) * math.log((1 - p) / (1 - q)) if p < 1 else 0.0
    return ones + zeros


def _mixture_interval(s: float, t: float, alpha: float) -> tuple[float, float]:
    """Howard et al. 2021's Beta(1/2, 1/2) mixture CS for a sum s of t rewards in [0, 1]:
    ``{q : t kl(s/t, q) <= log(1/alpha) + R}``, R the log ratio of the maximum likelihood to
    the mixture likelihood ``B(1/2 + s, 1/2 + t - s) / B(1/2, 1/2)``; ends by bisection."""
    p = s / t
    best = (s * math.log(p) if s > 0 else 0.0) + ((t - s) * math.log(1 - p) if s < t else 0.0)
    mixed = math.lgamma(0.5 + s) + math.lgamma(0.5 + t - s) - math.lgamma(1 + t) - math.log(math.pi)
    budget = math.log(1 / alpha) + best - mixed
    ends = []
    for far in (0.0, 1.0):
        inside, outside = p, far  # kl(p, far) is infinite unless p = far
        for _ in range(200):
            middle = (inside + outside) / 2
            inside, outside = (
                (middle, outside) if t * _kl(p, middle) <= budget else (inside, middle)
            )
        ends.append(outside)
    return ends[0], ends[1]


def _theta_range(lows: FloatArray, highs: FloatArray, k: float) -> tuple[float, float]:
    """min and max of mean + k std over the box: the max at a vertex (theta is convex), the
    min at ``clip(tau, lows, highs)`` for some tau (KKT), found on a grid and refined."""

    def theta(x: FloatArray) -> FloatArray:
        return np.asarray(x.mean(axis=-1) + k * x.std(axis=-1))

    top = float(theta(np.array(list(itertools.product(*zip(lows, highs, strict=True))))).max())
    grid = np.linspace(lows.min(), highs.max(), 100_001)
    values = theta(np.clip(grid[:, None], lows, highs))
    i = int(np.argmin(values))
    fine = np.linspace(grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)], 100_001)
    bottom = float(theta(np.clip(fine[:, None], lows, highs)).min())
    return min(bottom, float(values.min())), top


def hand_state(
    rewards: list[list[float]],
    *,
    k: float,
    delta: float,
    interval: str,
    quantile: str = "normal",
    lower: float = 0.0,
    upper: float = 1.0,
) -> Hand:
    """Zhuang et al. 2017, Section 4, written out (README "RR and WRR"), with the Hoeffding
    levels of KSigmaAlgorithm's docstring; "mixture": each worker's Beta-mixture confidence
    sequence at delta / n and theta's interval the range of theta over their box."""
    n = len(rewards)
    m = np.array([len(r) for r in rewards], dtype=np.float64)
    sums = np.array([math.fsum(r) for r in rewards])
    width = upper - lower
    total_pulls = float(m.sum())
    y = sums / m
    # Hoeffding: n + 2 one-sided intervals (theta's counted on both ends); Agresti-Coull: the
    # paper's Eq. (1), n + 1 intervals.
    intervals = n + 2 if interval == "hoeffding" else n + 1
    level = 6.0 * delta / (math.pi**2 * intervals * total_pulls**2)
    mu = float(np.mean(y))
    sigma = math.sqrt(float(np.mean((y - mu) ** 2)))
    theta = mu + k * sigma
    if interval == "mixture":
        scaled = (sums - lower * m) / width
        ends = [_mixture_interval(s, t, delta / n) for s, t in zip(scaled, m, strict=True)]
        lows = lower + width * np.array([e[0] for e in ends])
        highs = lower + width * np.array([e[1] for e in ends])
        theta_low, theta_high = _theta_range(lows, highs, k)
        active = np.where(y > theta, lows < theta_high, highs > theta_low)
        return Hand(y, lows, highs, theta, theta_low, theta_high, active)
    if interval == "hoeffding":
        radii = width * np.sqrt(math.log(1.0 / level) / (2.0 * m))
        first = math.sqrt((1.0 + k * math.sqrt(n - 1)) ** 2 / n)
        second = math.sqrt(k * k / (2.0 * math.log(math.pi**2 * n**3 / (6.0 * delta))))
        lk = (first + second) ** 2
        harmonic = n / float(np.sum(1.0 / m))
        theta_radius = width * math.sqrt(lk / (2.0 * harmonic) * math.log(1.0 / level))
    else:
        if quantile == "normal":
            z = NormalDist().inv_cdf(1.0 - level / 2.0)
        else:  # the paper's erf^-1(1 - level / 2) = Phi^-1(1 - level / 4) / sqrt(2)
            z = NormalDist().inv_cdf(1.0 - level / 4.0) / math.sqrt(2.0)
        successes = (sums - lower * m) / width  # rewards rescaled to [0, 1]
        p = (successes + z * z / 2.0) / (m + z * z)
        radii = width * z * np.sqrt(p * (1.0 - p) / m)
        gradient = 1.0 / n + k * (y - mu) / (n * sigma)
        theta_radius = math.sqrt(float(np.sum((gradient * radii) ** 2)))
    active = np.where(y > theta, y - radii < theta + theta_radius, y + radii > theta - theta_radius)
    return Hand(y, y - radii, y + radii, theta, theta - theta_radius, theta + theta_radius, active)


def tell_rewards_round_robin(alg: KSigmaAlgorithm, rewards: list[list[float]]) -> None:
    """Tell arm i the rewards ``rewards[i]`` in order, asking one round of n at a time.

    The arms' sequences must shrink in length from the first arm to the last, so that the
    round-robin order of RR hands out exactly these pulls.
    """
    n = len(rewards)
    cursor = [0] * n
    while True:
        wanted = sum(cursor[i] < len(rewards[i]) for i in range(n))
        if wanted == 0:
            return
        ask = alg.ask(wanted)
        assert not ask.done, "stopped before the sequences were told"
        values = []
        for arm in ask.arms.tolist():
            values.append(rewards[arm][cursor[arm]])
            cursor[arm] += 1
        alg.tell_many(ask.ids, values)


def _sequences(counts: list[int], ones: list[int], seed: int) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    out = []
    for m, s in zip(counts, ones, strict=True):
        values = np.array([1.0] * s + [0.0] * (m - s))
        rng.shuffle(values)
        out.append(values.tolist())
    return out


def _compare(alg: KSigmaAlgorithm, hand: Hand) -> None:
    alg.result()  # refresh from the answers told so far
    np.testing.assert_allclose(alg.means, hand.means, rtol=1e-12)
    np.testing.assert_allclose(alg.lows, hand.lows, rtol=1e-6)
    np.testing.assert_allclose(alg.highs, hand.highs, rtol=1e-6)
    assert alg.theta == pytest.approx(hand.theta, rel=1e-12)
    assert alg.theta_low == pytest.approx(hand.theta_low, rel=1e-6)
    if alg.interval == "mixture":
        # Bounds on the exact range, never inside it; the upper one relaxes one coordinate.
        assert alg.theta_low <= hand.theta_low
        assert hand.theta_high <= alg.theta_high <= hand.theta_high + 0.01 * alg.width
    else:
        assert alg.theta_high == pytest.approx(hand.theta_high, rel=1e-6)
    np.testing.assert_array_equal(alg.active, hand.active)


# 4 arms, k = 1: arms (0.1, 0.2, 0.3, 1.0) after 41, 41, 40, 40 answers.
AC_COUNTS = [41, 41, 40, 40]
AC_ONES = [4, 8, 12, 40]
# Hoeffding needs many more answers before any arm is clear of the threshold.
HOEFFDING_COUNTS = [151, 151, 150, 150]
HOEFFDING_ONES = [0, 8, 15, 150]


@pytest.mark.parametrize("quantile", ["normal", "paper"])
def test_agresti_coull_state_by_hand(quantile: QuantileRule) -> None:
    rewards = _sequences(AC_COUNTS, AC_ONES, seed=1)
    alg = RoundRobin(4, k=1.0, delta=0.1, interval="agresti-coull", quantile=quantile)
    tell_rewards_round_robin(alg, rewards)
    hand = hand_state(rewards, k=1.0, delta=0.1, interval="agresti-coull", quantile=quantile)
    assert hand.active.any() and not hand.active.all()  # the instance is worth checking
    _compare(alg, hand)


def test_hoeffding_state_by_hand() -> None:
    rewards = _sequences(HOEFFDING_COUNTS, HOEFFDING_ONES, seed=2)
    alg = RoundRobin(4, k=1.0, delta=0.1, interval="hoeffding")
    tell_rewards_round_robin(alg, rewards)
    hand = hand_state(rewards, k=1.0, delta=0.1, interval="hoeffding")
    assert hand.active.any() and not hand.active.all()
    _compare(alg, hand)


def test_mixture_state_by_hand() -> None:
    # The default: 4 workers after 41/41/40/40 answers; arms 0 and 1 are decided, 2 and 3 not.
    rewards = _sequences([41, 41, 40, 40], [3, 12, 18, 40], seed=5)
    alg = RoundRobin(4, k=1.0, delta=0.1)
    assert alg.interval == "mixture"
    tell_rewards_round_robin(alg, rewards)
    hand = hand_state(rewards, k=1.0, delta=0.1, interval="mixture")
    assert hand.active.any() and not hand.active.all()
    _compare(alg, hand)


@pytest.mark.parametrize("interval", ["mixture", "agresti-coull", "hoeffding"])
def test_graded_rewards_on_a_wider_scale_by_hand(interval: IntervalKind) -> None:
    # Rewards in [1, 5]: radii scale with the width, Agresti-Coull sees rewards rescaled to [0, 1].
    rng = np.random.default_rng(3)
    counts = [9, 9, 9, 8, 8]
    rewards = [
        (1.0 + 4.0 * rng.random(m) ** (i + 1)).round(2).tolist() for i, m in enumerate(counts)
    ]
    alg = RoundRobin(5, k=1.5, delta=0.2, lower=1.0, upper=5.0, interval=interval)
    tell_rewards_round_robin(alg, rewards)
    _compare(alg, hand_state(rewards, k=1.5, delta=0.2, interval=interval, lower=1.0, upper=5.0))


@pytest.mark.parametrize("interval", ["mixture", "agresti-coull"])
def test_result_reports_the_hand_state(interval: IntervalKind) -> None:
    rewards = _sequences(AC_COUNTS, AC_ONES, seed=1)
    alg = RoundRobin(4, k=1.0, delta=0.1, interval=interval)
    tell_rewards_round_robin(alg, rewards)
    hand = hand_state(rewards, k=1.0, delta=0.1, interval=interval)
    result = alg.result()
    assert result.threshold is not None
    assert result.threshold.estimate == pytest.approx(hand.theta, rel=1e-12)
    assert result.threshold.lower == pytest.approx(hand.theta_low, rel=1e-6)
    assert result.threshold.upper == pytest.approx(hand.theta_high, rel=1e-3)
    for line in result.workers:
        arm = line.arm
        assert line.pulls == AC_COUNTS[arm]
        assert line.estimate == pytest.approx(hand.means[arm], rel=1e-12)
        assert line.lower == pytest.approx(max(0.0, hand.lows[arm]), rel=1e-6)
        assert line.upper == pytest.approx(min(1.0, hand.highs[arm]), rel=1e-6)
        side = Decision.OUTLIER if hand.means[arm] > hand.theta else Decision.NORMAL
        assert line.leaning is side
        assert line.decision is (Decision.UNDECIDED if hand.active[arm] else side)
    assert not result.condition_met and result.stop_reason is None


def test_theta_and_its_interval_may_leave_the_reward_range() -> None:
    # Not a bug (issue 19 review): theta = mean + k std is no reward, so it can exceed the
    # range, and so can a valid bound on it. One answer each, 5 of 8 right, k = 2: theta =
    # 0.625 + 2 sqrt(0.625 * 0.375) = 1.593; its interval holds theta over the box of the
    # workers' intervals, whose maximum is at the vertex with 6 workers at (about) 1 and 2
    # at 0: 0.75 + 2 sqrt(0.75 * 0.25) = 1.616.
    alg = RoundRobin(8, k=2.0, delta=0.1)
    ask = alg.ask(8)
    alg.tell_many(ask.ids, np.array([1.0] * 5 + [0.0] * 3))
    threshold = alg.result().threshold
    assert threshold is not None
    assert threshold.estimate == pytest.approx(0.625 + 2 * math.sqrt(0.625 * 0.375), rel=1e-12)
    assert threshold.lower <= threshold.estimate <= threshold.upper
    top = max(
        float(np.mean(x) + 2.0 * np.std(x))
        for x in itertools.product(*zip(alg.lows, alg.highs, strict=True))
    )
    assert top <= threshold.upper <= top + 0.01  # one relaxed coordinate
    assert threshold.upper == pytest.approx(0.75 + 2 * math.sqrt(0.75 * 0.25), abs=0.01)


def test_direction_low_by_hand() -> None:
    # Screening for LOW rewards flips every reward r -> 1 - r and runs the high-side rule.
    rewards = _sequences(AC_COUNTS, [36, 32, 28, 0], seed=4)
    alg = RoundRobin(4, k=1.0, delta=0.1, direction="low")
    tell_rewards_round_robin(alg, rewards)
    flipped = [[1.0 - r for r in arm] for arm in rewards]
    hand = hand_state(flipped, k=1.0, delta=0.1, interval="mixture")
    _compare(alg, hand)
    result = alg.result()
    raw = np.array([np.mean(arm) for arm in rewards])
    assert result.threshold is not None
    assert result.threshold.estimate == pytest.approx(raw.mean() - 1.0 * raw.std(), rel=1e-12)
    for line in result.workers:
        assert line.estimate == pytest.approx(raw[line.arm], rel=1e-12)


# ---------------------------------------------------------------------------- RR schedule
@pytest.mark.parametrize("limit", [1, 3, 5, 7])
def test_rr_cycles_over_every_worker(limit: int) -> None:
    n = 5
    alg = RoundRobin(n)
    rng = np.random.default_rng(0)
    arms: list[int] = []
    while len(arms) < 6 * n:
        ask = alg.ask(limit)
        arms.extend(ask.arms.tolist())
        alg.tell_many(ask.ids, (rng.random(len(ask)) < 0.5).astype(float))
    assert arms[: 6 * n] == list(range(n)) * 6


def test_rr_keeps_pulling_decided_workers_and_skips_departed_ones() -> None:
    rewards = _sequences(AC_COUNTS, AC_ONES, seed=1)
    alg = RoundRobin(4, k=1.0, delta=0.1, interval="agresti-coull")
    tell_rewards_round_robin(alg, rewards)  # arm 0 is inactive now; the cursor is at arm 2
    alg.result()
    assert not alg.active[0]
    assert alg.ask(6).arms.tolist() == [2, 3, 0, 1, 2, 3]  # every mean feeds the threshold
    alg.set_unavailable(0, "left")
    assert alg.ask(6).arms.tolist() == [1, 2, 3, 1, 2, 3]


# --------------------------------------------------------------------------- WRR schedule
def _expected_wrr_start(n: int, rho: float, visits_per_arm: int) -> list[int]:
    """All workers active: one pull each, then visit j of arm i pulls until m_i >= j rho."""
    arms = list(range(n))
    m_before = 1
    for j in range(1, visits_per_arm + 1):
        m_after = max(m_before + 1, math.ceil(j * rho - 1e-12))
        for arm in range(n):
            arms.extend([arm] * (m_after - m_before))
        m_before = m_after
    return arms


@pytest.mark.parametrize("rho", [1.0, 2.5, 3.0, 1.7])
@pytest.mark.parametrize("limit", [1, 4])
def test_wrr_extra_pulls_while_everyone_is_active(rho: float, limit: int) -> None:
    n = 5
    alg = WeightedRoundRobin(n, rho=rho)
    expected = _expected_wrr_start(n, rho, visits_per_arm=3)
    arms: list[int] = []
    while len(arms) < len(expected):
        ask = alg.ask(limit)
        arms.extend(ask.arms.tolist())
        alg.tell_many(ask.ids, np.full(len(ask), 0.5))  # graded: every worker stays active
        alg.result()
        assert alg.active.all()
    assert arms[: len(expected)] == expected
    if rho == 3.0:  # spelled out: one pull each, then visits of 2 pulls, then of 3
        first_round = [0, 1, 2, 3, 4]
        visits_of_two = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
        visits_of_three = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3]
        assert expected[:25] == [*first_round, *visits_of_two, *visits_of_three]


def _paper_wrr_schedule_matches(
    means: FloatArray, rho: float | None, seed: int, **params: Any
) -> int:
    """Algorithm 2 of the paper, literally, beside WeightedRoundRobin with ask(1) and immediate
    answers: after the regular pull of arm i (c_i += rho first), keep pulling i while it is
    active (on every answer so far) and m_i < c_i. Returns the number of pulls compared."""
    n = means.size
    alg = WeightedRoundRobin(n, rho=rho, **params)
    rate = alg.rho
    rng = np.random.default_rng(seed)
    counts = [0] * n
    counters = [0.0] * n

    def is_active(arm: int) -> bool:
        alg.result()  # refresh on the answers told so far (does not change the algorithm)
        return bool(alg.active[arm])

    def paper() -> Any:
        yield from range(n)
        arm = n - 1
        while True:
            arm = (arm + 1) % n
            counters[arm] += rate
            yield arm
            while is_active(arm) and counts[arm] < counters[arm]:
                yield arm

    schedule = paper()
    for step in range(200_000):
        expected = next(schedule)
        ask = alg.ask(1)
        if ask.done:
            assert alg.stop_reason is StopReason.CONDITION_MET
            return step
        assert int(ask.arms[0]) == expected, f"pull {step}: paper {expected}, wrr {ask.arms[0]}"
        counts[expected] += 1
        alg.tell(int(ask.ids[0]), float(rng.random() < means[expected]))
    raise AssertionError("WRR did not stop")


@pytest.mark.slow
@pytest.mark.parametrize(("rho", "seed"), [(2.5, 1), (2.5, 4), (None, 2), (1.3, 3)])
def test_wrr_one_pull_at_a_time_is_algorithm_2(rho: float | None, seed: int) -> None:
    # Arms drift in and out of the active set here (seed 4 made the pre-fix code diverge when
    # an arm became active through its own regular pull).
    means = np.array([0.3, 0.35, 0.4, 0.45, 0.5, 0.9])
    assert _paper_wrr_schedule_matches(means, rho, seed, k=1.5) > 500


def test_wrr_batch_visits_follow_the_counters() -> None:
    # Hoeffding radii and deterministic rewards: after a few hundred answers arms 0-2 are
    # clear below the threshold while arm 3 (always 1) is still active. One batch, decided on
    # that state: inactive arms get exactly one pull per visit, the active arm
    # max(1, ceil(c_3 + rho - m_3 - pending_3)) pulls; every visit adds rho to the counter.
    n, rho = 4, 2.5
    alg = WeightedRoundRobin(n, k=1.0, interval="hoeffding", rho=rho)
    last_arm = -1
    for _ in range(20_000):
        alg.result()
        if not alg.active[:3].any() and alg.active[3]:
            break
        ask = alg.ask(1)
        assert ask.state is AskState.PULL
        last_arm = int(ask.arms[0])
        alg.tell(int(ask.ids[0]), 1.0 if last_arm == 3 else 0.0)
    else:
        raise AssertionError("never reached the mixed state")
    active = alg.active.copy()
    effective = alg.stats.count.astype(np.float64) + alg.pending
    # Some pulls in flight, so that m_i + pending_i is what the counters compare against.
    pending = alg.ask(2)
    effective += np.bincount(pending.arms, minlength=n)
    counters = alg.counters.copy()
    last_arm = int(pending.arms[-1])
    batch = alg.ask(30).arms.tolist()
    runs: list[tuple[int, int]] = []
    for arm in batch:
        if runs and runs[-1][0] == arm:
            runs[-1] = (arm, runs[-1][1] + 1)
        else:
            runs.append((arm, 1))
    if runs[0][0] == last_arm:  # the rest of a visit the previous ask cut short
        arm, length = runs.pop(0)
        assert active[arm]
        assert length == math.ceil(counters[arm] - effective[arm])
        effective[arm] += length
    previous = last_arm
    for position, (arm, length) in enumerate(runs):
        assert arm == (previous + 1) % n  # regular visits go round
        counters[arm] += rho
        wanted = max(1, math.ceil(counters[arm] - effective[arm])) if active[arm] else 1
        if position < len(runs) - 1:
            assert length == wanted, (arm, length, wanted)
        else:
            assert length <= wanted  # the batch may end inside the last visit
        effective[arm] += length
        previous = arm
    np.testing.assert_allclose(alg.counters, counters)
    assert any(length > 1 for arm, length in runs if arm == 3)
    assert all(length == 1 for arm, length in runs[:-1] if arm != 3)


def test_wrr_optimal_rho() -> None:
    # rho* = (n - 1)^(2/3) / l(k)^(1/3) with l(2) = 7.115464958 for n = 10, delta = 0.1.
    alg = WeightedRoundRobin(10, k=2.0, delta=0.1)
    assert alg.rho == pytest.approx(9 ** (2 / 3) / 7.115464958 ** (1 / 3), rel=1e-9)
    assert alg.rho == pytest.approx(2.24954, abs=1e-5)
    assert alg.params()["rho"] is None
    # Floored at 1: for n = 2, 1 / l(k)^(1/3) < 1.
    assert WeightedRoundRobin(2, k=2.0).rho == 1.0
    given = WeightedRoundRobin(10, rho=3.5)
    assert given.rho == 3.5 and given.params()["rho"] == 3.5


# --------------------------------------------------------------------------------- NRR
def _estimated_set(sums: FloatArray, counts: FloatArray, k: float) -> tuple[int, ...] | None:
    sampled = counts > 0
    if sampled.sum() < 2:
        return None
    y = sums[sampled] / counts[sampled]
    theta = float(np.mean(y) + k * np.std(y))
    arms = np.flatnonzero(sampled)
    return tuple(int(a) for a, value in zip(arms, y, strict=True) if value > theta)


@pytest.mark.parametrize("seed", range(4))
def test_nrr_stops_after_an_unchanged_window(seed: int) -> None:
    n, k, delta = 5, 1.0, 0.05
    patience = math.ceil(1 / delta)  # 20 answers
    means = np.array([0.2, 0.3, 0.4, 0.5, 0.9])
    alg = NaiveRoundRobin(n, k=k, delta=delta)
    rng = np.random.default_rng(seed)
    sums, counts = np.zeros(n), np.zeros(n)
    history: list[tuple[int, ...] | None] = []  # estimated set after T answers, T = 0, 1, ...
    last: tuple[int, ...] | None = None
    since = 0
    for answers in range(100_000):
        current = _estimated_set(sums, counts, k)
        history.append(current)
        if current != last:
            last, since = current, answers
        expect_stop = answers >= n and last is not None and answers - since >= patience
        ask = alg.ask(1)
        assert ask.done is expect_stop, f"after {answers} answers"
        if ask.done:
            break
        arm = int(ask.arms[0])
        assert arm == answers % n  # round robin
        reward = float(rng.random() < means[arm])
        alg.tell(int(ask.ids[0]), reward)
        sums[arm] += reward
        counts[arm] += 1
    result = alg.result()
    total = result.total_pulls
    assert result.stop_reason is StopReason.CONDITION_MET and result.guarantee is None
    assert len(set(history[total - patience :])) == 1  # unchanged for the last 1/delta answers
    assert result.outliers == history[total]
    assert all(line.decision is not Decision.UNDECIDED for line in result.workers)


# ------------------------------------------------------------------- direction = "low"
@GUARANTEED
@pytest.mark.parametrize("seed", [0, 1])
def test_direction_low_finds_a_low_outlier(cls: type[KSigmaAlgorithm], seed: int) -> None:
    means = np.array([0.9] * 9 + [0.3])
    k = 2.0
    alg = cls(10, k=k, delta=0.1, direction="low")
    run = drive(alg, means, np.random.default_rng(seed), batch=10)
    result = run.result
    assert result.stop_reason is StopReason.CONDITION_MET
    assert result.outliers == (9,)
    raw = run.totals / run.counts  # estimates on the original scale
    threshold = result.threshold
    assert threshold is not None
    assert threshold.estimate == pytest.approx(raw.mean() - k * raw.std(), rel=1e-12)
    assert threshold.lower < threshold.estimate < threshold.upper
    for line in result.workers:
        assert line.estimate == pytest.approx(raw[line.arm], rel=1e-12)
        assert line.lower <= line.estimate <= line.upper
        if line.arm == 9:  # clear below the threshold's interval
            assert line.decision is Decision.OUTLIER and line.upper <= threshold.lower
        else:
            assert line.decision is Decision.NORMAL and line.lower >= threshold.upper
    assert result.extra["direction"] == "low"
