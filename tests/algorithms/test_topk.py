"""AdaptiveTopK (Chen et al. 2017, Algorithm 1): eps-top-k workers by aggregate regret."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from driver import drive
from stats_helpers import assert_rate_at_most

from screener.algorithms import Ask, AskState, Decision, StopReason
from screener.algorithms.topk import AdaptiveTopK, accept_reject, round_target
from screener.errors import ConfigError

WHOLE_ROUND = 10**7  # an ask limit larger than any round: one ask per round


def answer(alg: AdaptiveTopK, ask: Ask, means: list[float]) -> None:
    """Tell deterministic rewards: worker i always answers ``means[i]``."""
    alg.tell_many(ask.ids, [means[arm] for arm in ask.arms.tolist()])


@pytest.mark.parametrize(
    ("n", "kwargs"),
    [
        (1, {"k": 1, "eps": 0.1}),
        (5, {"k": 0, "eps": 0.1}),
        (5, {"k": 5, "eps": 0.1}),
        (5, {"k": 2.0, "eps": 0.1}),
        (5, {"k": True, "eps": 0.1}),
        (5, {"k": 2, "eps": 0.0}),
        (5, {"k": 2, "eps": math.nan}),
        (5, {"k": 2, "eps": math.inf}),
        (5, {"k": 2, "eps": 0.1, "delta": 0.0}),
        (5, {"k": 2, "eps": 0.1, "delta": 1.0}),
        (5, {"k": 2, "eps": 0.1, "fixed_budget": True}),
    ],
)
def test_validation(n: int, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        AdaptiveTopK(n, **kwargs)


def test_params_rebuild_an_identical_algorithm() -> None:
    alg = AdaptiveTopK(6, k=2, eps=0.2, delta=0.1, fixed_budget=True, budget=300, seed=3)
    twin = AdaptiveTopK(6, **alg.params())
    assert twin.params() == alg.params()


def test_round_target_by_hand() -> None:
    # ceil(4^r ln(2 n r^2 / delta)) with n = 10, delta = 0.1
    assert round_target(1, 10, 0.1) == math.ceil(4 * math.log(200))  # 21.19 -> 22
    assert round_target(1, 10, 0.1) == 22
    assert round_target(2, 10, 0.1) == 107  # 16 ln 800 = 106.95
    # reward range [0, 0.5]: R^2 = 0.25
    assert round_target(1, 10, 0.1, width=0.5) == 6  # 5.30


def test_first_round_pulls_every_worker_to_the_target() -> None:
    alg = AdaptiveTopK(10, k=3, eps=0.1, delta=0.1)
    ask = alg.ask(WHOLE_ROUND)
    assert np.array_equal(np.bincount(ask.arms, minlength=10), np.full(10, 22))
    assert alg.ask(1).wait  # the round's pulls are all in flight


def test_graded_rewards_rescale_the_round() -> None:
    alg = AdaptiveTopK(10, k=3, eps=0.1, delta=0.1, lower=0.0, upper=0.5)
    assert len(alg.ask(WHOLE_ROUND)) == 10 * 6


def test_accept_reject_by_hand() -> None:
    means = np.array([0.9, 0.8, 0.5, 0.45, 0.1])
    s = np.arange(5, dtype=np.int64)
    # needed 2: b = 0.8, a = 0.5; gaps 0.4, 0.3, 0.3, 0.35, 0.7 -> reject 4 (0.1 <= a);
    # then gaps 0.4, 0.3, 0.3, 0.35 -> accept 0; needed 1 on {1, 2, 3}: b = 0.8, a = 0.5,
    # gaps 0.3, 0.3, 0.35 -> reject 3; on {1, 2}: gaps 0.3, 0.3 -> tie, accept 1 (lowest
    # index, 0.8 > a); needed 0: nothing left to choose.
    assert accept_reject(means, s, 2, 0.25) == [(4, False), (0, True), (3, False), (1, True)]
    # A wider margin (r = 2: 2 * 2^-2 = 0.5) stops after the first rejection.
    assert accept_reject(means, s, 2, 0.5) == [(4, False)]
    # Only a subset is undecided: the order statistics are over S.
    assert accept_reject(means, np.array([1, 2, 4]), 1, 0.25) == [(4, False), (1, True)]


def test_rounds_by_hand_and_only_undecided_workers_are_pulled() -> None:
    # n = 3, k = 1, delta = 0.1: N_1 = ceil(4 ln 60) = 17, N_2 = ceil(16 ln 240) = 88.
    means = [1.0, 0.0, 0.5]
    alg = AdaptiveTopK(3, k=1, eps=0.1, delta=0.1)
    ask = alg.ask(WHOLE_ROUND)
    assert len(ask) == 3 * 17
    answer(alg, ask, means)
    # Round 1: margin 2 * 2^-1 = 1 cannot be exceeded in [0, 1]; round 2 tops up to 88.
    ask = alg.ask(WHOLE_ROUND)
    assert np.array_equal(np.bincount(ask.arms, minlength=3), [71, 71, 71])
    answer(alg, ask, means)
    # Round 2 (margin 0.5): a = 0.5, b = 1; gaps 0.5, 1, 0.5 -> reject worker 1; then
    # gaps 0.5, 0.5 are not > 0.5. Outer: 2 * 2^-3 * 1 = 0.25 > 0.1 -> round 3 for {0, 2}.
    ask = alg.ask(WHOLE_ROUND)
    target = round_target(3, 3, 0.1)
    assert set(ask.arms.tolist()) == {0, 2}
    assert len(ask) == 2 * (target - 88)
    result = alg.result()
    assert result.extra.items() >= {
        "k": 1, "eps": 0.1, "rounds": 2, "round": 3, "accepted": 0, "fixed_budget": False
    }.items()  # fmt: skip
    by_arm = {w.arm: w for w in result.workers}
    assert all(w.decision is Decision.UNDECIDED for w in result.workers)
    assert by_arm[1].leaning is Decision.REJECTED
    assert by_arm[1].reason.startswith("rejected in round 2")
    assert by_arm[0].leaning is Decision.SELECTED
    answer(alg, ask, means)
    # Round 3 (margin 0.25): accept 0 (gap 0.5); nothing left to choose -> stop.
    assert alg.ask(1).done
    result = alg.result()
    assert result.stop_reason is StopReason.CONDITION_MET
    assert result.extra["rounds"] == 3
    assert [w.arm for w in result.ranking] == [0, 2, 1]
    assert result.arms_with(Decision.SELECTED) == (0,)
    assert set(result.arms_with(Decision.REJECTED)) == {1, 2}
    assert result.ranking[0].reason == "accepted in round 3"
    assert result.guarantee is not None and "within eps*k of the best k" in result.guarantee


def test_outer_condition_fails_then_fill() -> None:
    # Round 1 decides nothing; outer before round 2: 2 * 2^-2 * 1 = 0.5 > eps = 0.6 fails.
    means = [0.2, 0.9, 0.6]
    alg = AdaptiveTopK(3, k=1, eps=0.6, delta=0.1)
    answer(alg, alg.ask(WHOLE_ROUND), means)
    assert alg.ask(1).done
    result = alg.result()
    assert result.condition_met
    assert result.arms_with(Decision.SELECTED) == (1,)
    assert result.ranking[0].reason.startswith("filled at the end")
    assert result.extra["rounds"] == 1


def test_large_eps_selects_without_pulls() -> None:
    alg = AdaptiveTopK(4, k=2, eps=1.0)
    assert alg.ask(1).done
    result = alg.result()
    assert result.condition_met and result.total_pulls == 0
    assert result.arms_with(Decision.SELECTED) == (0, 1)


def test_round_robin_order() -> None:
    alg = AdaptiveTopK(3, k=1, eps=0.1, delta=0.1)
    assert alg.ask(7).arms.tolist() == [0, 1, 2, 0, 1, 2, 0]


def test_rounds_wait_for_answers() -> None:
    alg = AdaptiveTopK(3, k=1, eps=0.1, delta=0.1)
    ask = alg.ask(WHOLE_ROUND)
    assert alg.ask(5).wait
    alg.tell_many(ask.ids[:-1], np.zeros(len(ask) - 1))
    assert alg.ask(5).wait  # one answer of round 1 still in flight
    assert alg.result().extra["rounds"] == 0
    # A released pull is reissued (same worker), then the round waits again.
    assert alg.release(int(ask.ids[-1]))
    again = alg.ask(5)
    assert again.arms.tolist() == [int(ask.arms[-1])]
    assert alg.ask(5).wait
    alg.tell(int(again.ids[0]), 1.0)
    nxt = alg.ask(WHOLE_ROUND)
    assert nxt.state is AskState.PULL and alg.result().extra["rounds"] == 1
    assert len(nxt) == 3 * (round_target(2, 3, 0.1) - round_target(1, 3, 0.1))


def test_unavailable_worker_stalls_the_round() -> None:
    alg = AdaptiveTopK(3, k=1, eps=0.1, delta=0.1)
    alg.set_unavailable(2, "left")
    ask = alg.ask(WHOLE_ROUND)
    assert set(ask.arms.tolist()) == {0, 1}
    answer(alg, ask, [1.0, 0.0, 0.5])
    assert alg.ask(1).done
    result = alg.result()
    assert result.stop_reason is StopReason.WORKERS_EXHAUSTED
    assert all(w.decision is Decision.UNDECIDED for w in result.workers)
    assert "unavailable: left" in {w.arm: w for w in result.workers}[2].reason


@pytest.mark.slow
def test_delta_correctness() -> None:
    """Aggregate regret <= eps * k in all but a delta fraction of runs (one-sided test)."""
    n, k, eps, delta, runs = 10, 3, 0.1, 0.1, 100
    means = np.linspace(0.1, 0.9, n)
    best = float(np.sort(means)[-k:].sum())
    errors = 0
    for seed in range(runs):
        alg = AdaptiveTopK(n, k=k, eps=eps, delta=delta, seed=seed)
        run = drive(alg, means, np.random.default_rng(1000 + seed), batch=WHOLE_ROUND)
        assert run.result.stop_reason is StopReason.CONDITION_MET
        chosen = run.result.arms_with(Decision.SELECTED)
        assert len(chosen) == k
        assert len(run.result.arms_with(Decision.REJECTED)) == n - k
        errors += best - float(means[list(chosen)].sum()) > eps * k + 1e-12
    assert_rate_at_most(errors, runs, delta)


def test_fixed_budget_stops_at_the_budget() -> None:
    means = np.linspace(0.1, 0.9, 10)
    alg = AdaptiveTopK(10, k=3, eps=5.0, delta=0.1, fixed_budget=True, budget=500)
    run = drive(alg, means, np.random.default_rng(7), batch=7)
    result = run.result
    assert result.stop_reason is StopReason.BUDGET_SPENT
    assert result.total_pulls == 500
    assert len(result.arms_with(Decision.SELECTED)) == 3
    assert len(result.arms_with(Decision.REJECTED)) == 7
    assert result.extra["fixed_budget"] is True
    assert result.guarantee is not None and result.guarantee.startswith("fixed budget")
    estimates = [w.estimate for w in result.ranking]
    assert estimates == sorted(estimates, reverse=True)


def test_fixed_confidence_budget_leaves_workers_undecided() -> None:
    means = np.linspace(0.1, 0.9, 10)
    alg = AdaptiveTopK(10, k=3, eps=0.1, delta=0.1, budget=300)
    result = drive(alg, means, np.random.default_rng(7), batch=50).result
    assert result.stop_reason is StopReason.BUDGET_SPENT
    assert all(w.decision is Decision.UNDECIDED for w in result.workers)
    assert sum(w.leaning is Decision.SELECTED for w in result.workers) == 3
