"""ArmStats against a plain numpy batch computation on the same data, after every step."""

from __future__ import annotations

import itertools
import pickle
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from screener.stats import ArmRuns, ArmStats

FloatArray = NDArray[np.float64]
RewardDraw = Callable[[np.random.Generator, int], FloatArray]

DETERMINISTIC = settings(derandomize=True, database=None, deadline=None, max_examples=150)


def _binary(rng: np.random.Generator, size: int) -> FloatArray:
    return (rng.random(size) < 0.4).astype(np.float64)


def _graded(rng: np.random.Generator, size: int) -> FloatArray:
    # Graded rewards in [0, 1], with the endpoints (in particular exactly 1.0) common.
    values = rng.random(size)
    ends = rng.random(size)
    values[ends < 0.15] = 0.0
    values[ends > 0.85] = 1.0
    return values


REWARDS: dict[str, RewardDraw] = {"binary": _binary, "graded": _graded}


def _assert_matches_numpy(stats: ArmStats, arms: list[int], rewards: list[float]) -> None:
    """Compare every accessor with a per-arm numpy computation from the raw data."""
    a = np.asarray(arms, dtype=np.int64)
    r = np.asarray(rewards, dtype=np.float64)
    n = stats.n_arms
    count = np.zeros(n)
    total = np.zeros(n)
    total_sq = np.zeros(n)
    successes = np.zeros(n)
    means = np.full(n, np.nan)
    variances = np.full(n, np.nan)
    for arm in range(n):
        mine = r[a == arm]
        count[arm] = mine.size
        total[arm] = mine.sum()
        total_sq[arm] = np.sum(mine**2)
        successes[arm] = np.count_nonzero(mine == 1.0)
        if mine.size:
            means[arm] = np.mean(mine)
            variances[arm] = np.var(mine)  # population variance (ddof=0)
    np.testing.assert_array_equal(stats.count, count)
    np.testing.assert_allclose(stats.total, total, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stats.total_sq, total_sq, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(stats.successes, successes)
    np.testing.assert_allclose(stats.means(), means, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stats.variances(), variances, rtol=1e-9, atol=1e-12)
    assert stats.n_samples == len(arms)


@pytest.mark.parametrize("kind", sorted(REWARDS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_update_one_at_a_time_matches_numpy(kind: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_arms = 5
    stats = ArmStats(n_arms)
    arms: list[int] = []
    rewards: list[float] = []
    _assert_matches_numpy(stats, arms, rewards)  # all NaN before any sample
    draws = REWARDS[kind](rng, 250)
    # Skewed arm choice so that some arms stay empty for a while.
    choice = rng.choice(n_arms, size=250, p=[0.4, 0.3, 0.2, 0.08, 0.02])
    for arm, reward in zip(choice.tolist(), draws.tolist(), strict=True):
        stats.update(arm, reward)
        arms.append(arm)
        rewards.append(reward)
        _assert_matches_numpy(stats, arms, rewards)


@pytest.mark.parametrize("kind", sorted(REWARDS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_update_many_random_batches_match_numpy(kind: str, seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n_arms = 6
    stats = ArmStats(n_arms)
    arms: list[int] = []
    rewards: list[float] = []
    for _ in range(80):
        size = int(rng.integers(0, 25))  # empty batches included
        # Few distinct arms per batch: repeated arms within a batch are the common case.
        batch_arms = rng.choice(rng.choice(n_arms, size=3, replace=False), size=size)
        batch_rewards = REWARDS[kind](rng, size)
        stats.update_many(batch_arms, batch_rewards)
        arms.extend(batch_arms.tolist())
        rewards.extend(batch_rewards.tolist())
        _assert_matches_numpy(stats, arms, rewards)


@pytest.mark.parametrize("seed", [0, 1])
def test_update_and_update_many_mixed(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    stats = ArmStats(4)
    arms: list[int] = []
    rewards: list[float] = []
    for step in range(120):
        kind = "binary" if step % 3 else "graded"
        if rng.random() < 0.5:
            arm = int(rng.integers(4))
            reward = float(REWARDS[kind](rng, 1)[0])
            stats.update(arm, reward)
            arms.append(arm)
            rewards.append(reward)
        else:
            size = int(rng.integers(1, 10))
            batch_arms = rng.integers(0, 4, size=size)
            batch_rewards = REWARDS[kind](rng, size)
            stats.update_many(batch_arms.tolist(), batch_rewards.tolist())  # plain lists too
            arms.extend(batch_arms.tolist())
            rewards.extend(batch_rewards.tolist())
        _assert_matches_numpy(stats, arms, rewards)


_REWARD = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1.0))
_PAIRS = st.lists(st.tuples(st.integers(0, 3), _REWARD), max_size=60)


@DETERMINISTIC
@given(pairs=_PAIRS, cuts=st.lists(st.integers(0, 60), max_size=8), single=st.booleans())
def test_hypothesis_batches_match_numpy(
    pairs: list[tuple[int, float]], cuts: list[int], single: bool
) -> None:
    stats = ArmStats(4)
    bounds = sorted({0, len(pairs), *(c for c in cuts if c <= len(pairs))})
    arms: list[int] = []
    rewards: list[float] = []
    for start, end in itertools.pairwise(bounds):
        chunk = pairs[start:end]
        if single:
            for arm, reward in chunk:
                stats.update(arm, reward)
        else:
            stats.update_many([a for a, _ in chunk], [r for _, r in chunk])
        arms.extend(a for a, _ in chunk)
        rewards.extend(r for _, r in chunk)
        _assert_matches_numpy(stats, arms, rewards)


def test_successes_count_only_exact_ones() -> None:
    stats = ArmStats(2)
    stats.update_many([0, 0, 0, 1], [1.0, 0.999999, 0.5, 1.0])
    stats.update(1, 0.0)
    np.testing.assert_array_equal(stats.successes, [1, 1])
    np.testing.assert_array_equal(stats.count, [3, 2])


def test_accessors_are_read_only_views() -> None:
    stats = ArmStats(3)
    stats.update_many([0, 1], [1.0, 0.0])
    for array in (stats.count, stats.total, stats.total_sq, stats.successes):
        with pytest.raises(ValueError):
            array[0] = 5
    # The views follow later updates (they are views, not copies).
    count = stats.count
    stats.update(0, 1.0)
    assert int(count[0]) == 2
    # means() and variances() return fresh arrays: writing to them changes nothing.
    means = stats.means()
    means[0] = 42.0
    assert float(stats.means()[0]) == 1.0


def test_variance_is_never_negative_after_cancellation() -> None:
    stats = ArmStats(1)
    stats.update_many(np.zeros(1000, dtype=np.int64), np.full(1000, 0.1))
    assert float(stats.variances()[0]) >= 0.0
    np.testing.assert_allclose(stats.variances(), [0.0], atol=1e-12)


def test_means_kept_between_batches_equal_the_division_bit_for_bit() -> None:
    """The means kept one answer at a time (and recomputed after a batch or a join) are
    exactly ``total / count``, and a caller's copy is its own."""
    rng = np.random.default_rng(7)
    stats = ArmStats(3)
    for step in range(300):
        if step % 50 == 49:
            stats.grow(1)
        if rng.random() < 0.7:
            stats.update(int(rng.integers(stats.n_arms)), float(_graded(rng, 1)[0]))
        else:
            size = int(rng.integers(0, 6))
            stats.update_many(rng.integers(0, stats.n_arms, size), _graded(rng, size))
        with np.errstate(invalid="ignore"):
            expected = stats.total / stats.count
        means = stats.means()
        np.testing.assert_array_equal(means, expected)  # NaN where no answers, as numpy's
        means[:] = -1.0
        assert not (stats.means() == -1.0).any()
    assert stats.n_samples == int(stats.count.sum())


def test_a_pickled_arm_stats_stores_its_sums_and_goes_on_the_same() -> None:
    """A snapshot holds the sums only (the kept means and answer count are derived), and the
    restored statistics go on bit for bit as the original, as would a state pickled before
    the means were kept."""
    rng = np.random.default_rng(8)
    stats = ArmStats(4)
    stats.update_many(np.array([0, 1, 1, 3]), _graded(rng, 4))
    stats.update(2, 1.0)
    stats.means()  # kept, not stale
    state = stats.__getstate__()
    assert not {"_means", "_means_stale", "_answers"} & set(state)
    back = pickle.loads(pickle.dumps(stats))
    for step in range(40):
        arm, reward = int(rng.integers(4)), float(_graded(rng, 1)[0])
        for copy in (stats, back):
            if step % 10 == 9:
                copy.update_many(np.array([arm, 0]), np.array([reward, 0.5]))
            else:
                copy.update(arm, reward)
        np.testing.assert_array_equal(back.means(), stats.means())
        assert back.n_samples == stats.n_samples


def test_rejects_a_negative_pool() -> None:
    with pytest.raises(ValueError, match="n_arms"):
        ArmStats(-1)


def test_an_empty_pool_grows_as_workers_join() -> None:
    """An open pool starts empty; joiners get arms with no answers, and the statistics
    match numpy on every arm after answers in any order."""
    stats = ArmStats(0)
    rng = np.random.default_rng(3)
    arms, rewards = [], []
    for joined in range(1, 6):
        stats.grow(1)
        batch = rng.integers(0, joined, 20)
        values = rng.random(20)
        stats.update_many(batch, values)
        arms += batch.tolist()
        rewards += values.tolist()
    a, r = np.array(arms), np.array(rewards)
    assert stats.n_arms == 5
    np.testing.assert_array_equal(stats.count, np.bincount(a, minlength=5))
    np.testing.assert_allclose(stats.total, np.bincount(a, weights=r, minlength=5))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.floats(0.0, 1.0)), min_size=1, max_size=60))
def test_arm_runs_follow_each_arm_in_order(answers: list[tuple[int, float]]) -> None:
    arms = np.array([a for a, _ in answers], dtype=np.int64)
    values = np.array([v for _, v in answers])
    runs = ArmRuns(arms)
    np.testing.assert_array_equal(runs.arms_of_rows, arms[runs.order])
    sums = runs.cumsum(values[runs.order])
    for arm in np.unique(arms):
        mine = np.flatnonzero(runs.arms_of_rows == arm)
        np.testing.assert_array_equal(runs.order[mine], np.flatnonzero(arms == arm))  # in order
        np.testing.assert_array_equal(runs.rank[mine], np.arange(mine.size))
        np.testing.assert_allclose(sums[mine], np.cumsum(values[arms == arm]), atol=1e-12)
    np.testing.assert_array_equal(runs.arms, np.unique(arms))
    np.testing.assert_array_equal(runs.arms_of_rows[runs.ends], runs.arms)
    assert runs.lengths.sum() == arms.size


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 9), st.floats(-1e3, 1e3)), min_size=1, max_size=80),
    st.integers(1, 3),
)
def test_running_sums_add_one_value_at_a_time(answers: list[tuple[int, float]], width: int) -> None:
    arms = np.array([a for a, _ in answers], dtype=np.int64)
    values = np.array([[v / (1 + j) for j in range(width)] for _, v in answers])
    runs = ArmRuns(arms)
    start = np.arange(runs.arms.size * width, dtype=np.float64).reshape(-1, width) / 3.0
    longest = int(runs.lengths.max())
    for sums in (
        runs.running(start, values[runs.order]),
        runs._running_padded(start, values[runs.order], longest),
        runs._running_by_rank(start, values[runs.order], longest),
    ):
        for index, arm in enumerate(runs.arms.tolist()):
            current = start[index].copy()
            for row in np.flatnonzero(runs.arms_of_rows == arm).tolist():
                current = current + values[runs.order[row]]  # one addition, as one at a time
                np.testing.assert_array_equal(sums[row], current)
