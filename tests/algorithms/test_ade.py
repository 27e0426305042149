"""ADE (Zhang et al. 2020): validation, hand-computed radii, pairing, schedule, correctness."""

from __future__ import annotations

import math
from concurrent.futures import Executor
from functools import partial
from typing import Any

import numpy as np
import pytest
from driver import drive
from stats_helpers import assert_rate_at_most

from screener.algorithms.ask_tell import AskState
from screener.algorithms.ksigma import ADE
from screener.algorithms.result import Result, StopReason
from screener.errors import ConfigError
from screener.simulation import BernoulliRewards, BetaRewards, map_seeds, simulate
from screener.simulation.recorded import RecordedRewards
from screener.simulation.rewards import RewardModel
from screener.stats import ade_level


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "kwargs",
    [
        {"lower": -0.5, "upper": 1.0},
        {"k": -1.0},
        {"delta": 0.0},
        {"delta": 1.0},
        {"direction": "sideways"},
    ],
)
def test_invalid_parameters_raise(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        ADE(5, **kwargs)  # type: ignore[arg-type]


def test_one_worker_is_rejected() -> None:
    with pytest.raises(ConfigError):
        ADE(1)


def test_params_rebuild_the_algorithm() -> None:
    alg = ADE(4, k=1.5, delta=0.05, direction="low", lower=0.0, upper=2.0, seed=3)
    assert ADE(4, **alg.params()).params() == alg.params()
    shared = ADE(4, share_samples=True)
    assert shared.params()["share_samples"] is True
    assert ADE(4, **shared.params()).share_samples


# ----------------------------------------------------------------------- hand formulas
def test_level_radii_and_threshold_by_hand() -> None:
    n, k, delta = 3, 2.0, 0.1
    alg = ADE(n, k=k, delta=delta, seed=1)
    first = alg.ask(5)
    assert len(first) == 5
    pair, arm_round = first.arms[:2], first.arms[2:]
    assert pair[0] == pair[1]
    np.testing.assert_array_equal(arm_round, [0, 1, 2])
    alg.tell_many(first.ids, [1.0, 0.0, 1.0, 0.0, 1.0])
    # Two rounds done: round index t = 3.
    level = 3 * delta / ((n + 4) * math.pi**2 * 9)
    assert alg.level == pytest.approx(level)
    assert ade_level(delta, n, 3) == pytest.approx(level)
    log1, log6 = math.log(1 / level), math.log(6 / level)
    r_i = math.sqrt(log1 / 2)  # R = 1, m_i = 1
    np.testing.assert_allclose(alg.radii, [r_i] * 3)
    np.testing.assert_allclose(alg.means, [1.0, 0.0, 1.0])
    # m_theta = 1, x1 = 1, x2 = 0: mu = 1, sigma^2 = |0 - 1 * 0| = 0, theta = 1.
    eps = 3.0 * math.sqrt(log6 / 2)  # R' + 2bR = 1 + 2 = 3
    # U_sigma is the minimum over the two completed rounds (t = 2 then t = 3).
    eps_t2 = 3.0 * math.sqrt(math.log(6 / ade_level(delta, n, 2)) / 2)
    u_sigma = min(eps_t2, eps)
    assert alg.u_sigma == pytest.approx(u_sigma)
    r_theta = math.sqrt(log1 / 2) + k * math.sqrt(2 / u_sigma) * 3.0 * math.sqrt(log6 / 2)
    assert alg.theta == pytest.approx(1.0)
    assert alg.theta_radius == pytest.approx(r_theta)
    assert alg.result().threshold is not None


# ------------------------------------------------------------------------------ pairing
def test_threshold_pair_is_matched_by_id_when_answers_arrive_out_of_order() -> None:
    alg = ADE(20, seed=4)
    ask = alg.ask(2)
    assert ask.arms[0] == ask.arms[1]
    first_id, second_id = ask.ids.tolist()
    alg.tell(second_id, 0.0)
    assert math.isnan(alg.theta)  # half a pair is not a round
    alg.tell(first_id, 1.0)
    assert alg.theta == pytest.approx(1.0)  # mu_hat comes from the FIRST pull


def test_released_pull_keeps_the_pair() -> None:
    alg = ADE(20, seed=5)
    ask = alg.ask(2)
    first_id, second_id = ask.ids.tolist()
    assert alg.release(first_id)
    again = alg.ask(1)
    assert again.arms[0] == ask.arms[0]
    alg.tell(second_id, 0.0)
    alg.tell(int(again.ids[0]), 1.0)
    assert alg.theta == pytest.approx(1.0)  # the re-asked pull took the first slot


def test_waits_for_the_initial_rounds() -> None:
    alg = ADE(6, seed=2)
    first = alg.ask(100)
    assert len(first) == 2 + 6
    assert alg.ask(1).state is AskState.WAIT


# ----------------------------------------------------------------------------- schedule
@pytest.mark.slow
def test_decided_workers_leave_arm_rounds() -> None:
    means = np.array([0.05, 0.1, 0.1, 0.15, 0.2, 0.95])
    alg = ADE(means.size, k=0.0, delta=0.1, seed=7)
    rng = np.random.default_rng(7)
    frozen: dict[int, int] = {}
    for _ in range(200_000):
        ask = alg.ask(1)
        if ask.done:
            break
        for arm in np.flatnonzero(alg.decision != 0).tolist():
            frozen.setdefault(arm, int(alg.arm_count[arm]))
        alg.tell_many(ask.ids, (rng.random(1) < means[ask.arms]).astype(float))
    assert alg.stop_reason is StopReason.CONDITION_MET
    assert len(set(alg.arm_count.tolist())) > 1  # some workers left early
    for arm, count in frozen.items():
        assert alg.arm_count[arm] == count


# -------------------------------------------------------------------------- correctness
def _instance(rng: np.random.Generator, n: int, k: float, gap: float) -> np.ndarray:
    while True:
        means = rng.uniform(0.0, 1.0, n)
        theta = means.mean() + k * means.std()
        if np.min(np.abs(means - theta)) >= gap:
            return means


def _truth(means: np.ndarray, k: float) -> tuple[int, ...]:
    theta = means.mean() + k * means.std()
    return tuple(np.flatnonzero(means > theta).tolist())


def _delta_run(n: int, k: float, delta: float, share: bool, seed: int) -> tuple[Result, np.ndarray]:
    rng = np.random.default_rng(1000 + seed)
    means = _instance(rng, n, k, 0.15)
    alg = ADE(n, k=k, delta=delta, seed=seed, share_samples=share)
    return drive(alg, means, rng, batch=200).result, means


@pytest.mark.slow
@pytest.mark.parametrize("share", [False, True])
def test_delta_correctness(share: bool, run_pool: Executor) -> None:
    # k = 0 (threshold = mean reward): with k = 2 the sigma term of r_theta needs millions
    # of threshold rounds for a 0.15 gap, far beyond a unit test.
    runs, n, k, delta = 100, 20, 0.0, 0.1
    errors = 0
    one_run = partial(_delta_run, n, k, delta, share)
    for result, means in map_seeds(one_run, range(runs), executor=run_pool):
        assert result.stop_reason is StopReason.CONDITION_MET
        errors += result.outliers != _truth(means, k)
    assert_rate_at_most(errors, runs, delta)


@pytest.mark.slow
@pytest.mark.parametrize("share", [False, True])
def test_shuffled_delayed_answers_give_the_right_outliers(share: bool) -> None:
    n, k = 20, 0.0
    for seed in range(3):
        rng = np.random.default_rng(50 + seed)
        means = _instance(rng, n, k, 0.2)
        alg = ADE(n, k=k, delta=0.1, seed=seed, share_samples=share)
        held: list[tuple[int, float]] = []
        for _ in range(100_000):
            ask = alg.ask(64)
            if ask.done:
                break
            draws = rng.random(len(ask)) < means[ask.arms]
            held.extend(zip(ask.ids.tolist(), draws.astype(float).tolist(), strict=True))
            if ask.wait or rng.random() < 0.5:
                order = rng.permutation(len(held))
                cut = max(1, len(held) // 2)
                for index in order[:cut].tolist():
                    alg.tell(*held[index])
                held = [held[i] for i in order[cut:].tolist()]
        assert alg.stop_reason is StopReason.CONDITION_MET
        assert alg.result().outliers == _truth(means, k)


# ---------------------------------------------------------------- shortcuts are exact
class _EveryRoundAFullPass(ADE):
    """ADE deciding by a pass over every worker after each round: what the shortcuts of
    ``_quiet_round`` must reproduce to the bit."""

    def _quiet_round(self) -> bool:
        return False


def _trace(alg: ADE, rewards: RewardModel, batch: int) -> tuple[object, ...]:
    result = simulate(alg, rewards, batch=batch)
    lines = [(w.arm, w.decision, w.pulls, w.estimate, w.lower, w.upper) for w in result.workers]
    return result.total_pulls, result.stop_reason, result.threshold, lines


def _rewards(kind: str, means: np.ndarray, seed: int) -> RewardModel:
    if kind == "bernoulli":
        return BernoulliRewards(means, seed=seed)
    if kind == "graded":
        return BetaRewards(means, seed=seed)
    # Recorded answers that run out (fewer for the odd workers): workers leave mid-run.
    rng = np.random.default_rng(seed)
    records = [rng.random(300 if i % 2 == 0 else 40 + 10 * i) < m for i, m in enumerate(means)]
    workers = [str(i) for i in range(means.size)]
    return RecordedRewards(workers, records, seed=seed, replacement=False)


@pytest.mark.slow
@pytest.mark.parametrize("share", [False, True])
@pytest.mark.parametrize(("n", "k"), [(5, 1.0), (30, 0.0)])  # few decisions, then many
def test_rounds_decided_without_a_full_pass_decide_as_one(share: bool, n: int, k: float) -> None:
    rng = np.random.default_rng(n)
    cases = [("bernoulli", 1, "high", n), ("graded", 3, "low", 7), ("recorded", 1, "low", 1)]
    for seed in range(3):
        means = _instance(rng, n, k, 0.05)
        for kind, min_answers, direction, batch in cases:
            params: dict[str, Any] = dict(
                k=k, delta=0.2, seed=seed, share_samples=share, min_answers=min_answers,
                direction=direction, budget=10_000,
            )  # fmt: skip
            fast = _trace(ADE(n, **params), _rewards(kind, means, seed), batch)
            full = _trace(_EveryRoundAFullPass(n, **params), _rewards(kind, means, seed), batch)
            assert fast == full, (seed, kind)


# ------------------------------------------------------------------------ shared samples
def test_shared_threshold_answers_feed_the_worker_mean_by_hand() -> None:
    n, delta = 3, 0.1
    alg = ADE(n, k=2.0, delta=delta, seed=1, share_samples=True)
    first = alg.ask(5)
    pair_arm = int(first.arms[0])
    alg.tell_many(first.ids, [1.0, 0.0, 1.0, 0.0, 1.0])
    counts = np.ones(n)
    counts[pair_arm] += 2
    sums = np.array([1.0, 0.0, 1.0])
    sums[pair_arm] += 1.0
    np.testing.assert_allclose(alg.arm_count, counts)
    np.testing.assert_allclose(alg.means, sums / counts)
    # t = 3 and m <= 3: the paper's level; theta is as in the unshared hand case.
    level = ade_level(delta, n, 3)
    np.testing.assert_allclose(alg.radii, np.sqrt(math.log(1 / level) / (2 * counts)))
    assert alg.theta == pytest.approx(1.0)


def test_shared_pairs_come_from_arm_answers_without_pulls() -> None:
    n = 30
    alg = ADE(n, k=0.0, delta=0.1, seed=3, share_samples=True)
    rng = np.random.default_rng(3)
    means = np.linspace(0.05, 0.95, n)
    answers = 0
    for _ in range(300):
        ask = alg.ask(n)
        if ask.done:
            break
        answers += len(ask)
        alg.tell_many(ask.ids, (rng.random(len(ask)) < means[ask.arms]).astype(float))
        # Answers enter the worker means when their round completes (at most one arm round
        # is open), and each entered answer sits in at most one pair.
        entered = int(alg.arm_count.sum())
        assert answers - n <= entered <= answers
        assert 2 * alg.m_theta <= entered
    # Arm rounds of 30 workers hand ~15 free pairs each: far more pairs than two-pull rounds.
    rounds_paid = sum(1 for r in alg._rounds if r.kind == "threshold")
    assert alg.m_theta > 2 * rounds_paid


def test_shared_radii_use_the_level_at_max_t_m() -> None:
    n, delta = 12, 0.1
    means = np.linspace(0.1, 0.9, n)
    alg = ADE(n, k=0.5, delta=delta, seed=5, share_samples=True)
    rng = np.random.default_rng(5)
    for _ in range(40):
        ask = alg.ask(16)
        if ask.done:
            break
        alg.tell_many(ask.ids, (rng.random(len(ask)) < means[ask.arms]).astype(float))
    t = alg.completed + 1
    counts = alg.arm_count
    assert alg.m_theta > t  # free pairs outran the round index
    levels = np.array([ade_level(delta, n, max(t, int(c))) for c in counts])
    expected = np.sqrt(np.log(1 / levels) / (2 * counts))
    np.testing.assert_allclose(alg.radii, expected)
    level = ade_level(delta, n, max(t, alg.m_theta))
    r_mu = math.sqrt(math.log(1 / level) / (2 * alg.m_theta))
    r_sigma = math.sqrt(2 / alg.u_sigma) * 3.0 * math.sqrt(math.log(6 / level) / (2 * alg.m_theta))
    assert alg.theta_radius == pytest.approx(r_mu + 0.5 * r_sigma)


def test_shared_mode_stops_when_free_pairs_decide_everything() -> None:
    # Two far-apart groups and k = 0: free pairs alone settle theta; the run must end as
    # CONDITION_MET (not as exhausted workers) even when the last step took no pull.
    means = np.array([0.02] * 10 + [0.98] * 10)
    alg = ADE(means.size, k=0.0, delta=0.1, seed=9, share_samples=True)
    run = drive(alg, means, np.random.default_rng(9), batch=7)
    assert run.result.stop_reason is StopReason.CONDITION_MET
    assert run.result.outliers == tuple(range(10, 20))


def test_result_shows_ades_own_threshold_interval_and_no_heuristic_label() -> None:
    # The result used to show theta's interval as (-inf, inf) (the k-sigma base's, never
    # computed for ADE) and to call a run "heuristic" when interval="agresti-coull" was
    # passed, though ADE's radii are its paper's bounds whatever that option says: such an
    # option is now refused rather than ignored.
    means = [0.9, 0.85, 0.8, 0.88, 0.3, 0.86]
    alg = ADE(6, k=1.5, budget=4000, seed=0)
    result = simulate(alg, BernoulliRewards(means, seed=1))
    assert result.threshold is not None
    assert result.threshold.lower == pytest.approx(alg.theta - alg.theta_radius)
    assert result.threshold.upper == pytest.approx(alg.theta + alg.theta_radius)
    assert math.isfinite(result.threshold.lower) and math.isfinite(result.threshold.upper)
    assert result.guarantee is not None and "heuristic" not in result.guarantee
    assert "heuristic" not in result.extra
    with pytest.raises(ConfigError, match="interval='agresti-coull' would be ignored"):
        ADE(6, k=1.5, interval="agresti-coull", budget=4000, seed=0)
