"""The change detector: its statistic against a brute-force numpy computation, its false-alarm
promises (alarm within H answers with probability <= H alpha; average run length >= 1 / alpha)
and its stated detection delay, over many seeded workers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from stats_helpers import assert_rate_at_most

from screener.stats.change import ChangeDetector, kelly_bet


def _brute_force_log_m(lam: float, bar: float, rewards: np.ndarray) -> np.ndarray:
    """log M_t = max over change points s <= t of sum_{i=s..t} log(1 + lam (bar - x_i))."""
    logs = np.log1p(lam * (bar - rewards))
    out = np.empty(rewards.size)
    for t in range(rewards.size):
        tails = np.cumsum(logs[: t + 1][::-1])  # sums from s = t down to s = 0
        out[t] = tails.max()
    return out


@pytest.mark.parametrize("seed", range(5))
def test_statistic_matches_the_brute_force_cusum(seed: int) -> None:
    rng = np.random.default_rng(seed)
    bar = 0.6
    detector = ChangeDetector(bar, alpha=1e-9)
    row = detector.add()
    rewards = np.concatenate([rng.random(60) < 0.9, rng.random(60) < 0.3]).astype(float)
    rewards[::7] = rng.random(rewards[::7].size)  # graded answers too
    expected = [_brute_force_log_m(lam, bar, rewards) for lam in detector.lams]
    for t, reward in enumerate(rewards.tolist()):
        detector.update(row, reward)
        terms = np.array([e[t] for e in expected]) + detector.log_weights
        mixture = float(np.log(np.exp(terms - terms.max()).sum()) + terms.max())
        assert math.isclose(detector.log_statistic(row), mixture, rel_tol=1e-9, abs_tol=1e-9)


def test_rows_are_independent_and_restart_forgets() -> None:
    detector = ChangeDetector(0.6, alpha=0.01)
    bad, good = detector.add(), detector.add()
    for _ in range(10):
        detector.update(bad, 0.0)
        detector.update(good, 1.0)
    assert detector.log_statistic(bad) > detector.log_statistic(good)
    detector.restart(bad)
    assert detector.log_statistic(bad) == pytest.approx(0.0)


def test_kelly_bet_maximises_growth() -> None:
    bar, p1 = 0.6, 0.3
    best = kelly_bet(bar, p1)
    grid = np.linspace(0.01, 1 / (1 - bar) - 0.01, 2000)
    growth = p1 * np.log1p(grid * (bar - 1)) + (1 - p1) * np.log1p(grid * bar)
    assert abs(grid[int(np.argmax(growth))] - best) < 0.01


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        ChangeDetector(1.0)
    with pytest.raises(ValueError):
        ChangeDetector(0.6, alpha=0.0)
    with pytest.raises(ValueError):
        ChangeDetector(0.6, bets=[3.0])  # past 1 / (1 - bar): a factor could go negative
    detector = ChangeDetector(0.6)
    with pytest.raises(ValueError):
        detector.update(detector.add(), 1.5)


@pytest.mark.slow
def test_false_alarms_within_h_answers_at_most_h_alpha() -> None:
    """Workers exactly at the bar (the null's hardest case): an alarm within H answers has
    probability at most H alpha."""
    alpha, horizon, workers = 0.002, 100, 2000
    rng = np.random.default_rng(11)
    detector = ChangeDetector(0.6, alpha=alpha)
    alarms = 0
    for _ in range(workers):
        row = detector.add()
        answers = (rng.random(horizon) < 0.6).astype(float)
        alarms += any(detector.update(row, x) for x in answers.tolist())
    assert_rate_at_most(alarms, workers, horizon * alpha)


@pytest.mark.slow
def test_average_run_length_at_least_one_over_alpha() -> None:
    """Average answers to a false alarm at the bar: at least 1 / alpha (lower 99% bound of
    the mean of capped run lengths, which only lowers it)."""
    alpha, cap, workers = 0.02, 5000, 300
    rng = np.random.default_rng(12)
    detector = ChangeDetector(0.6, alpha=alpha)
    lengths = []
    for _ in range(workers):
        row = detector.add()
        length = cap
        for t in range(1, cap + 1):
            if detector.update(row, float(rng.random() < 0.6)):
                length = t
                break
        lengths.append(length)
    values = np.array(lengths, dtype=float)
    lower = values.mean() - 2.33 * values.std(ddof=1) / math.sqrt(values.size)
    assert lower >= 0.5 / alpha, f"mean run length {values.mean():.1f}"
    assert values.mean() >= 1 / alpha


@pytest.mark.slow
@pytest.mark.parametrize("after", [0.5, 0.3, 0.0])
def test_delay_after_a_fall_within_the_stated_bound(after: float) -> None:
    """Workers right 90% of the time for 200 answers, then ``after``: the mean delay to the
    alarm is not significantly above ``expected_delay(after)``."""
    rng = np.random.default_rng(13)
    detector = ChangeDetector(0.6, alpha=0.001)
    bound = detector.expected_delay(after)
    delays, early = [], 0
    for _ in range(300):
        row = detector.add()
        if any(detector.update(row, float(rng.random() < 0.9)) for _ in range(200)):
            early += 1
            continue
        for t in range(1, 100_000):
            if detector.update(row, float(rng.random() < after)):
                delays.append(t)
                break
    values = np.array(delays, dtype=float)
    spread = values.std(ddof=1) / math.sqrt(values.size) if values.size > 1 else 0.0
    assert early <= 3
    assert (values.mean() - bound) / max(spread, 1e-9) < 2.33, (values.mean(), bound)
