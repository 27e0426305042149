"""OptMAI (Zhou et al. 2014) and CLUCB-PAC (Chen et al. 2014): the baselines of Chen et al. 2017."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from driver import drive
from stats_helpers import assert_rate_at_most

from screener.algorithms import Algorithm, Ask, AskState, Decision, StopReason
from screener.algorithms.topk import (
    CLUCBPAC,
    OptMAI,
    optmai_round_pulls,
    quantile_step,
    top_by_mean,
)
from screener.errors import ConfigError
from screener.stats import clucb_radius

WHOLE_ROUND = 10**7  # an ask limit larger than any round
BETA = math.exp(0.2)


def answer(alg: Algorithm, ask: Ask, means: list[float]) -> None:
    """Tell deterministic rewards: worker i always answers ``means[i]``."""
    alg.tell_many(ask.ids, [means[arm] for arm in ask.arms.tolist()])


def regret(means: np.ndarray, chosen: tuple[int, ...], k: int) -> float:
    return float(np.sort(means)[-k:].sum() - means[list(chosen)].sum())


# ------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("cls", "n", "kwargs"),
    [
        (CLUCBPAC, 1, {"k": 1, "eps": 0.1}),
        (CLUCBPAC, 5, {"k": 0, "eps": 0.1}),
        (CLUCBPAC, 5, {"k": 5, "eps": 0.1}),
        (CLUCBPAC, 5, {"k": 2.0, "eps": 0.1}),
        (CLUCBPAC, 5, {"k": True, "eps": 0.1}),
        (CLUCBPAC, 5, {"k": 2, "eps": 0.0}),
        (CLUCBPAC, 5, {"k": 2, "eps": math.nan}),
        (CLUCBPAC, 5, {"k": 2, "eps": 0.1, "delta": 0.0}),
        (CLUCBPAC, 5, {"k": 2, "eps": 0.1, "delta": 1.0}),
        (CLUCBPAC, 5, {"k": 2, "eps": 0.1, "fixed_budget": True}),
        (OptMAI, 5, {"k": 2}),  # OptMAI needs its budget Q
        (OptMAI, 5, {"k": 5, "budget": 100}),
        (OptMAI, 5, {"k": 0, "budget": 100}),
        (OptMAI, 5, {"k": 2, "eps": -0.1, "budget": 100}),
        (OptMAI, 5, {"k": 2, "beta": 1.0, "budget": 100}),
        (OptMAI, 5, {"k": 2, "beta": math.inf, "budget": 100}),
    ],
)
def test_validation(cls: type[Algorithm], n: int, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        cls(n, **kwargs)


@pytest.mark.parametrize(
    "alg",
    [
        OptMAI(6, k=2, eps=0.1, beta=1.2, budget=300, seed=3),
        CLUCBPAC(6, k=2, eps=0.2, delta=0.1, fixed_budget=True, budget=300, seed=3),
    ],
    ids=["optmai", "clucb-pac"],
)
def test_params_rebuild_an_identical_algorithm(alg: Algorithm) -> None:
    twin = type(alg)(alg.n_arms, **alg.params())
    assert twin.params() == alg.params()


def test_top_by_mean_ties_and_nan() -> None:
    values = np.array([0.5, np.nan, 0.7, 0.5, 0.7])
    every = np.arange(5, dtype=np.int64)
    assert top_by_mean(values, every, 5).tolist() == [2, 4, 0, 3, 1]
    assert top_by_mean(values, np.array([0, 1, 3]), 2).tolist() == [0, 3]


# ------------------------------------------------------------------------ OptMAI
def test_optmai_round_pulls_by_hand() -> None:
    # (beta - 1) beta^-r Q / |S| with Q = 1000, beta = e^0.2: 181.27 / 8 = 22.66 -> 22, ...
    sizes = [(1, 8), (2, 6), (3, 5), (4, 4), (5, 3), (6, 2)]
    assert [optmai_round_pulls(r, 1000, BETA, s) for r, s in sizes] == [22, 24, 24, 24, 27, 33]
    assert optmai_round_pulls(1, 10, BETA, 8) == 1  # share 1.8 < 8: still one pull each
    # The shares add up to the budget.
    assert math.isclose(sum((BETA - 1) * BETA**-r for r in range(1, 400)), 1.0)


def test_quantile_step_by_hand() -> None:
    means = np.array([0.9, 0.1, 0.5, 0.3, 0.7, 0.2, 0.8, 0.4])
    s = np.arange(8, dtype=np.int64)
    # needed 2 <= 4: eliminate the bottom quarter (2 workers): 0.1 and 0.2.
    decided, accepted = quantile_step(means, s, 2)
    assert (sorted(decided.tolist()), accepted) == ([1, 5], False)
    # needed 5 > 4: the complement problem; accept the top quarter: 0.9 and 0.8.
    decided, accepted = quantile_step(means, s, 5)
    assert (sorted(decided.tolist()), accepted) == ([0, 6], True)
    # |S| = 3 < 4: still one worker per round.
    assert quantile_step(means, np.array([0, 2, 4]), 1)[0].tolist() == [2]


def test_optmai_rounds_by_hand() -> None:
    means = [0.9, 0.1, 0.5, 0.3, 0.7, 0.2, 0.8, 0.4]
    alg = OptMAI(8, k=2, budget=1000)
    # Round r: (|S|, pulls each, decided) from the by-hand table above.
    expected = [
        (8, 22, {1, 5}, False),  # 2 <= 8/2: eliminate 0.1, 0.2
        (6, 24, {3}, False),  # eliminate 0.3
        (5, 24, {7}, False),  # eliminate 0.4
        (4, 24, {2}, False),  # 2 <= 4/2: eliminate 0.5
        (3, 27, {0}, True),  # 2 > 3/2: accept 0.9
        (2, 33, {4}, False),  # needed 1 <= 1: eliminate 0.7, then |S| = 1 = needed
    ]
    for r, (size, pulls, decided, accepted) in enumerate(expected, start=1):
        ask = alg.ask(WHOLE_ROUND)
        counts = np.bincount(ask.arms, minlength=8)
        assert np.count_nonzero(counts) == size and set(counts[counts > 0].tolist()) == {pulls}
        assert alg.ask(1).wait  # the round's pulls are all in flight
        answer(alg, ask, means)
        result = alg.result()
        assert result.extra["rounds"] == r
        marks = alg.accepted_round if accepted else alg.rejected_round
        assert set(np.flatnonzero(marks == r).tolist()) == decided
    assert alg.ask(1).done
    result = alg.result()
    assert result.stop_reason is StopReason.CONDITION_MET
    assert set(result.arms_with(Decision.SELECTED)) == {0, 6}
    assert result.total_pulls == 8 * 22 + 6 * 24 + 5 * 24 + 4 * 24 + 3 * 27 + 2 * 33 <= 1000
    by_arm = {w.arm: w for w in result.workers}
    assert by_arm[0].reason.startswith("accepted in round 5")
    assert by_arm[6].reason.startswith("filled at the end")
    assert by_arm[4].reason.startswith("eliminated in round 6")
    assert result.extra["fixed_budget"] is True and result.extra["eps"] is None


def test_optmai_rounds_use_fresh_answers_only() -> None:
    # Worker 0 answers 1 in round 1 and 0 in round 2; its round-2 mean (0) is the lowest,
    # though its mean over both rounds (0.5, above worker 2's 0.4) is not.
    alg = OptMAI(4, k=1, budget=200)
    answer(alg, alg.ask(WHOLE_ROUND), [1.0, 0.5, 0.4, 0.3])  # 9 each; eliminates worker 3
    assert alg.result().extra["rounds"] == 1 and alg.rejected_round[3] == 1
    answer(alg, alg.ask(WHOLE_ROUND), [0.0, 0.5, 0.4, 0.3])  # 9 each (29.68 / 3)
    assert alg.result().extra["rounds"] == 2 and alg.rejected_round[0] == 2
    assert alg.means[0] > alg.means[2]


def test_optmai_tiny_budget_is_spent_and_filled() -> None:
    means = np.linspace(0.1, 0.9, 8)
    alg = OptMAI(8, k=3, budget=20)  # rounds of one pull each: the budget runs out
    result = drive(alg, means, np.random.default_rng(3), batch=3).result
    assert result.stop_reason is StopReason.BUDGET_SPENT
    assert result.total_pulls == 20
    assert len(result.arms_with(Decision.SELECTED)) == 3
    assert len(result.arms_with(Decision.REJECTED)) == 5


@pytest.mark.slow
def test_optmai_selects_the_top_k_on_an_easy_instance() -> None:
    means = np.linspace(0.1, 0.9, 8)
    runs, errors = 60, 0
    for seed in range(runs):
        alg = OptMAI(8, k=3, eps=0.05, budget=1000, seed=seed)
        run = drive(alg, means, np.random.default_rng(500 + seed), batch=WHOLE_ROUND)
        assert run.result.total_pulls <= 1000
        # eps * k = 0.15 tolerates one swap across the boundary (gap 0.114), not two.
        errors += regret(means, run.result.arms_with(Decision.SELECTED), 3) > 0.15
    assert_rate_at_most(errors, runs, 0.05)


def test_optmai_round_waits_for_delayed_answers() -> None:
    alg = OptMAI(3, k=1, budget=100)  # round 1: floor(18.13 / 3) = 6 each
    ask = alg.ask(WHOLE_ROUND)
    assert len(ask) == 18 and alg.ask(4).wait
    alg.tell_many(ask.ids[:-1], np.zeros(17))
    assert alg.ask(4).wait and alg.result().extra["rounds"] == 0
    assert alg.release(int(ask.ids[-1]))
    again = alg.ask(4)
    assert again.arms.tolist() == [int(ask.arms[-1])] and alg.ask(4).wait
    alg.tell(int(again.ids[0]), 1.0)
    assert alg.ask(WHOLE_ROUND).state is AskState.PULL
    assert alg.result().extra["rounds"] == 1


# --------------------------------------------------------------------- CLUCB-PAC
def _hand_gap(means: list[float], counts: list[int], delta: float) -> float:
    """k = 1, M = {0} (the best mean): w~(M~) - w~(M), worked out directly."""
    t = sum(counts)
    rad = [0.5 * math.sqrt(2 * math.log(4 * 3 * t**3 / delta) / c) for c in counts]
    best_rival = max(means[j] + rad[j] for j in (1, 2))
    return max(0.0, best_rival - (means[0] - rad[0]))


def test_clucb_steps_by_hand() -> None:
    means = [1.0, 0.0, 0.5]
    alg = CLUCBPAC(3, k=1, eps=0.5, delta=0.1)
    picks: list[int] = []
    while not (ask := alg.ask(1)).done:
        picks.append(int(ask.arms[0]))
        answer(alg, ask, means)
    # Each worker once; t = 3: equal radii 2.01, M = {0}, M~ = {2}: tie on the radius ->
    # worker 0. t = 4: rad = (1.50, 2.11, 2.11), w~ = (-0.50, 2.11, 2.61): M~ = {2}, pull 2.
    # t = 5: rad = (1.55, 2.19, 1.55), w~ = (-0.55, 2.19, 2.05): M~ = {1}, pull 1.
    assert picks[:6] == [0, 1, 2, 0, 2, 1]
    result = alg.result()
    counts = tuple(int(c) for c in alg.stats.count)
    # The rule held first after 81 answers (36, 9, 36): gap 0.4992 <= eps * k = 0.5.
    assert counts == (36, 9, 36)
    assert math.isclose(result.extra["gap"], _hand_gap(means, [36, 9, 36], 0.1), rel_tol=1e-9)
    assert result.extra["gap"] <= 0.5 < _hand_gap(means, [36, 9, 35], 0.1)
    assert result.stop_reason is StopReason.CONDITION_MET
    assert result.arms_with(Decision.SELECTED) == (0,)
    assert set(result.arms_with(Decision.REJECTED)) == {1, 2}
    assert result.guarantee is not None and "within eps*k of the best k" in result.guarantee


def test_clucb_eps_is_per_selected_worker() -> None:
    # k = 2 with eps = 0.25 stops where k = 1 with eps = 0.5 would: eps * k = 0.5 either way.
    alg = CLUCBPAC(4, k=2, eps=0.25, delta=0.1)
    while not (ask := alg.ask(1)).done:
        answer(alg, ask, [1.0, 1.0, 0.0, 0.0])
    result = alg.result()
    assert result.extra["gap"] <= 0.5 and set(result.arms_with(Decision.SELECTED)) == {0, 1}


def test_clucb_batches_hand_out_the_pair_first_then_fill_the_window() -> None:
    alg = CLUCBPAC(4, k=1, eps=0.1, delta=0.1)
    first = alg.ask(10)
    assert first.arms.tolist() == [0, 1, 2, 3]  # first answers, then the steps need them back
    assert alg.ask(1).wait
    alg.tell_many(first.ids[:3], [1.0, 0.0, 0.5])
    assert alg.ask(1).wait  # worker 3's first answer is still in flight
    alg.tell(int(first.ids[3]), 0.4)
    # Equal radii r: M = {0}, w~ = (1 - r, r, 0.5 + r, 0.4 + r), M~ = {2}; M xor M~ = {0, 2}:
    # both (equal radii: by index), then the constant liar's next steps fill the window
    # (test_concurrency.py pins that rule) instead of waiting for their answers.
    ask = alg.ask(10)
    assert ask.arms[:2].tolist() == [0, 2]
    assert ask.arms.size == 10
    alg.tell_many(ask.ids, [1.0, 0.5, *[0.5] * 8])
    assert alg.ask(1).state is AskState.PULL


def test_clucb_without_the_liar_a_batch_is_the_step_then_wait() -> None:
    alg = CLUCBPAC(4, k=1, eps=0.1, delta=0.1, liar=False)
    first = alg.ask(10)
    alg.tell_many(first.ids, [1.0, 0.0, 0.5, 0.4])
    ask = alg.ask(10)  # M xor M~ = {0, 2} as in the test above; nothing beyond it
    assert ask.arms.tolist() == [0, 2]
    assert alg.ask(1).wait
    alg.tell_many(ask.ids, [1.0, 0.5])
    assert alg.ask(1).state is AskState.PULL


@pytest.mark.parametrize("size", [1, 2, 5])
def test_clucb_without_the_liar_a_batch_equals_single_asks(size: int) -> None:
    def run(one_at_a_time: bool) -> list[list[int]]:
        alg = CLUCBPAC(8, k=3, eps=0.02, delta=0.1, liar=False, budget=600)
        rewards = np.random.default_rng(9)
        batches: list[list[int]] = []
        while not alg.finished:
            asks = [alg.ask(1) for _ in range(size)] if one_at_a_time else [alg.ask(size)]
            pulls = [pull for ask in asks if ask.state is AskState.PULL for pull in ask]
            batches.append([pull.arm for pull in pulls])
            for pull in pulls:
                alg.tell(pull.id, float(rewards.random() < 0.2 + 0.08 * pull.arm))
        return batches

    together, single = run(False), run(True)
    assert together == single
    assert max(len(b) for b in together) <= size and sum(map(len, together)) > 100


@pytest.mark.parametrize("size", [1, 2, 3, 17, 64])
def test_clucb_batches_fill_with_the_constant_liar(size: int) -> None:
    # Past 2 (|M xor M~| here) the constant liar's fill is in play (test_concurrency.py);
    # that a batch equals single asks is the conformance suite's batch_asks check.
    alg = CLUCBPAC(6, k=2, eps=0.05, delta=0.1)
    rng = np.random.default_rng(4)
    for _ in range(30):  # past the first answers, uneven counts
        ask = alg.ask(1)
        alg.tell_many(ask.ids, rng.random(1))
    big = alg.ask(size)
    assert len(big) >= min(size, 17)
    if size <= 2:  # the step's own pulls: distinct workers of M xor M~
        assert len(set(big.arms.tolist())) == len(big)


@pytest.mark.slow
def test_clucb_delta_correctness() -> None:
    """Aggregate regret <= eps * k in all but a delta fraction of runs (one-sided test)."""
    n, k, eps, delta, runs = 8, 3, 0.1, 0.2, 40
    means = np.linspace(0.1, 0.9, n)
    errors = 0
    for seed in range(runs):
        alg = CLUCBPAC(n, k=k, eps=eps, delta=delta, seed=seed)
        run = drive(alg, means, np.random.default_rng(2000 + seed), batch=4)
        assert run.result.stop_reason is StopReason.CONDITION_MET
        chosen = run.result.arms_with(Decision.SELECTED)
        assert len(chosen) == k and len(run.result.arms_with(Decision.REJECTED)) == n - k
        errors += regret(means, chosen, k) > eps * k + 1e-12
    assert_rate_at_most(errors, runs, delta)


def test_clucb_fixed_budget_is_final_at_the_budget() -> None:
    means = np.linspace(0.1, 0.9, 8)
    alg = CLUCBPAC(8, k=3, eps=0.01, delta=0.1, fixed_budget=True, budget=300)
    result = drive(alg, means, np.random.default_rng(7), batch=3).result
    assert result.stop_reason is StopReason.BUDGET_SPENT and result.total_pulls == 300
    assert len(result.arms_with(Decision.SELECTED)) == 3
    assert len(result.arms_with(Decision.REJECTED)) == 5
    assert result.guarantee is not None and result.guarantee.startswith("fixed budget")
    estimates = [w.estimate for w in result.ranking]
    assert estimates == sorted(estimates, reverse=True)
    # The selection is M: the three largest means at the end.
    top = sorted(result.workers, key=lambda w: -w.estimate)[:3]
    assert {w.arm for w in top} == set(result.arms_with(Decision.SELECTED))


def test_clucb_fixed_confidence_budget_leaves_workers_undecided() -> None:
    means = np.linspace(0.1, 0.9, 8)
    alg = CLUCBPAC(8, k=3, eps=0.01, delta=0.1, budget=300)
    result = drive(alg, means, np.random.default_rng(7), batch=2).result
    assert result.stop_reason is StopReason.BUDGET_SPENT and result.total_pulls == 300
    assert all(w.decision is Decision.UNDECIDED for w in result.workers)
    assert sum(w.leaning is Decision.SELECTED for w in result.workers) == 3


def test_clucb_worker_without_answers_blocks_the_rule() -> None:
    alg = CLUCBPAC(3, k=1, eps=0.5, delta=0.1)
    alg.set_unavailable(2, "left")
    # Worker 2's radius stays infinite, so the rule can never hold: no pull is useful.
    assert alg.ask(5).done
    result = alg.result()
    assert result.stop_reason is StopReason.WORKERS_EXHAUSTED and result.total_pulls == 0
    assert all(w.decision is Decision.UNDECIDED for w in result.workers)
    assert "unavailable: left" in {w.arm: w for w in result.workers}[2].reason


def _liar_by_definition(alg: CLUCBPAC, room: int) -> list[int]:
    """The constant liar's fill step by step, as the docstring says: radii at the counts in
    flight, M~ by a stable sort of w~, the widest available worker of M xor M~."""
    counts = alg.stats.count + alg.pending
    t = alg.n_answered + int(alg.pending.sum())
    filled: list[int] = []
    for _ in range(room):
        radius = clucb_radius(counts, t, alg.n_arms, alg.delta, alg.width)
        adjusted = np.where(alg.chosen, alg.means - radius, alg.means + radius)
        rival = np.zeros(alg.n_arms, dtype=bool)
        rival[np.argsort(-adjusted, kind="stable")[: alg.k]] = True
        gap = adjusted[rival & ~alg.chosen].sum() - adjusted[alg.chosen & ~rival].sum()
        order = top_by_mean(radius, np.flatnonzero(rival ^ alg.chosen), alg.n_arms)
        order = order[alg.available[order]]
        if gap <= alg.eps * alg.k or order.size == 0:
            break
        filled.append(int(order[0]))
        counts[order[0]] += 1
        t += 1
    return filled


@pytest.mark.parametrize("seed", range(6))
def test_clucb_liar_fill_is_the_step_by_step_rule(seed: int) -> None:
    # The fill finds each step with a partition instead of two sorts: the same pulls, on
    # crowds with ties (two groups, Bernoulli answers) and without, with a worker gone and
    # answers left in flight.
    rng = np.random.default_rng(seed)
    n, k = (60, 15) if seed % 2 else (25, 5)
    means = np.repeat([0.3, 0.7], [n - k, k]) if seed % 3 == 0 else rng.random(n)
    alg = CLUCBPAC(n, k=k, eps=0.01, delta=0.1)
    compared = 0
    ids, arms = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)  # in flight
    for step in range(30):
        if step == 12:
            alg.set_unavailable(int(rng.integers(n)), "gone")
        ask = alg.ask(n)  # the state is fresh here, and pulls are in flight
        if ask.done:
            break
        if not alg._too_few_answers().any():
            filled = alg._liar_fill(2 * n, np.zeros(0, dtype=np.int64)).tolist()
            assert filled == _liar_by_definition(alg, 2 * n)
            compared += len(filled)
        ids, arms = np.r_[ids, ask.ids], np.r_[arms, ask.arms]
        back = rng.random(ids.size) < 0.7  # the rest stays in flight a while longer
        answers = rng.random(int(back.sum())) < means[arms[back]]
        alg.tell_many(ids[back], answers.astype(np.float64))
        ids, arms = ids[~back], arms[~back]
    assert compared > 300
