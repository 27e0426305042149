"""Thresholding algorithms: LSA (Tao et al. 2019), its baselines and ConfidentThresholding."""

from __future__ import annotations

import math
from concurrent.futures import Executor
from functools import partial
from typing import Any

import numpy as np
import pytest
from driver import drive

from screener.algorithms import (
    Algorithm,
    AskState,
    Decision,
    Result,
    StopReason,
    Threshold,
    create_algorithm,
)
from screener.algorithms.thresholding import (
    APT,
    LSA,
    UCBE,
    ConfidentThresholding,
    OptKG,
    ThresholdingAlgorithm,
    UniformThresholding,
    _scheduler,
    ucbe_exploration,
)
from screener.errors import ConfigError
from screener.simulation import (
    BernoulliRewards,
    BetaRewards,
    RewardModel,
    map_seeds,
    simulate,
    simulate_many,
)

FIXED: list[tuple[type[ThresholdingAlgorithm], dict[str, Any]]] = [
    (LSA, {}),
    (UniformThresholding, {}),
    (APT, {"epsilon": 0.05}),
    (UCBE, {"a": 2.0}),
    (OptKG, {}),
]
ALL: list[tuple[type[ThresholdingAlgorithm], dict[str, Any]]] = [
    *FIXED,
    (ConfidentThresholding, {"delta": 0.1}),
]
ALL_IDS = [cls.name for cls, _ in ALL]
FIXED_IDS = [cls.name for cls, _ in FIXED]
SETUP_1 = np.array([0.2, 0.25, 0.3, 0.35, 0.45, 0.55, 0.65, 0.7, 0.75, 0.8])


def make(cls: type[ThresholdingAlgorithm], n: int, **params: Any) -> ThresholdingAlgorithm:
    params.setdefault("threshold", 0.5)
    if cls.fixed_budget:
        params.setdefault("budget", 400)
    return cls(n, **params)


def plant(alg: ThresholdingAlgorithm, rewards: list[list[float]]) -> None:
    """Give each arm the listed answered rewards (before the first ask) through its stats."""
    arms = np.repeat(np.arange(len(rewards)), [len(r) for r in rewards])
    alg.stats.update_many(arms, [x for r in rewards for x in r])


# Arm 0: 1 answer, mean 1. Arm 1: 4 answers, mean 0.25. Arm 2: 2 answers, mean 0.5.
STATE_A = [[1.0], [1.0, 0.0, 0.0, 0.0], [1.0, 0.0]]
# Arm 0: 1 answer, mean 1. Arm 1: 4 answers, mean 0.25. Arm 2: 8 answers, mean 0.75.
STATE_B = [[1.0], [1.0, 0.0, 0.0, 0.0], [1.0] * 6 + [0.0] * 2]


# ------------------------------------------------------------ hand-worked index choices
def test_lsa_index_by_hand() -> None:
    # alpha T gap^2 + 0.5 ln T: arm 0: 1.35 * 1 * 0.25 + 0 = 0.3375;
    # arm 1: 1.35 * 4 * 0.0625 + 0.5 ln 4 = 1.0306; arm 2: 0 + 0.5 ln 2 = 0.3466.
    alg = make(LSA, 3)
    plant(alg, STATE_A)
    assert alg.ask(1).arms.tolist() == [0]
    # With alpha = 1.5, arm 0 scores 0.375 > 0.3466: arm 2 wins.
    other = make(LSA, 3, alpha=1.5)
    plant(other, STATE_A)
    assert other.ask(1).arms.tolist() == [2]


def test_apt_index_by_hand() -> None:
    # sqrt(T) (gap + eps), state B, eps = 0: arm 0: 0.5, arm 1: 2 * 0.25 = 0.5,
    # arm 2: sqrt(8) * 0.25 = 0.707: tie of arms 0 and 1 goes to the lower index.
    alg = make(APT, 3, epsilon=0.0)
    plant(alg, STATE_B)
    assert alg.ask(1).arms.tolist() == [0]
    # eps = 0.1: arm 0: 0.6, arm 1: 0.7, arm 2: 0.990 -> arm 0; eps = 0 on state A: arm 2
    # (gap 0) scores 0.
    alg = make(APT, 3, epsilon=0.0)
    plant(alg, STATE_A)
    assert alg.ask(1).arms.tolist() == [2]


def test_apt_epsilon_changes_the_choice_by_hand() -> None:
    # Arm 0: 16 answers, mean 0.5 (gap 0); arm 1: 1 answer, mean 1 (gap 0.5).
    # eps = 0.05: arm 0: 4 * 0.05 = 0.2 < arm 1: 0.55 -> arm 0.
    # eps = 0.3: arm 0: 4 * 0.3 = 1.2 > arm 1: 0.8 -> arm 1.
    state = [[1.0, 0.0] * 8, [1.0]]
    small, large = make(APT, 2, epsilon=0.05), make(APT, 2, epsilon=0.3)
    plant(small, state)
    plant(large, state)
    assert small.ask(1).arms.tolist() == [0]
    assert large.ask(1).arms.tolist() == [1]


def test_ucbe_index_by_hand() -> None:
    # gap - sqrt(a / T), state B, a = 1: arm 0: 0.5 - 1 = -0.5; arm 1: 0.25 - 0.5 = -0.25;
    # arm 2: 0.25 - 0.354 = -0.104 -> arm 0. With a = 0.01: 0.4, 0.2, 0.215 -> arm 1.
    alg = make(UCBE, 3, a=1.0)
    plant(alg, STATE_B)
    assert alg.ask(1).arms.tolist() == [0]
    alg = make(UCBE, 3, a=0.01)
    plant(alg, STATE_B)
    assert alg.ask(1).arms.tolist() == [1]


def test_ucbe_exploration_constant_by_hand() -> None:
    # a = 4^b (T - K) / H, gaps 0.1 and 0.2: H = 100 + 25 = 125; T = 252, K = 2, b = 1.
    assert ucbe_exploration(1.0, 252, [0.1, 0.2]) == pytest.approx(4 * 250 / 125)
    with pytest.raises(ConfigError, match="positive"):
        ucbe_exploration(0.0, 100, [0.0, 0.2])


def test_opt_kg_by_hand() -> None:
    # Beta(1, 1) prior, bar 0.5. Arm 0: one success -> Beta(2, 1), P(mu < .5) = I_.5(2, 1)
    # = 0.25; a success gives Beta(3, 1), 0.125: gain 0.125 (a failure loses). Arm 1: one
    # failure, the mirror image: gain 0.125. Arm 2: no answer, Beta(1, 1): value 0.5, either
    # outcome leaves 0.25: gain 0.25 -> arm 2.
    alg = OptKG(3, threshold=0.5, budget=100)
    plant(alg, [[1.0], [0.0], []])
    assert alg._gain(2.0, 1.0) == pytest.approx(0.125)
    assert alg._gain(1.0, 1.0) == pytest.approx(0.25)
    assert alg.ask(1).arms.tolist() == [2]
    leaning = {w.arm: w.leaning for w in alg.result().workers}
    assert leaning == {0: Decision.ABOVE, 1: Decision.BELOW, 2: Decision.UNDECIDED}


def test_confident_index_by_hand() -> None:
    # r(t) = sqrt(ln(pi^2 n t^2 / (6 delta)) / (2 t)), n = 3, delta = 0.1; key = gap - r.
    def r(t: int) -> float:
        return math.sqrt(math.log(math.pi**2 * 3 * t * t / 0.6) / (2 * t))

    keys = [0.5 - r(1), 0.25 - r(4), 0.0 - r(2)]  # state A: -0.896, -0.663, -1.150
    assert int(np.argmin(keys)) == 2
    alg = make(ConfidentThresholding, 3, delta=0.1, interval="hoeffding", schedule="evidence")
    plant(alg, STATE_A)
    assert alg.ask(1).arms.tolist() == [2]


def test_confident_kl_index_by_hand() -> None:
    # key = kl(mean, 1/2) - ln(pi^2 n t^2 / (6 delta)) / t, n = 3, delta = 0.1. State A:
    # arm 0: kl(1, .5) = ln 2, t = 1: 0.693 - 3.899 = -3.206;
    # arm 1: kl(.25, .5) = .25 ln .5 + .75 ln 1.5 = 0.131, t = 4: 0.131 - 6.671 / 4 = -1.537;
    # arm 2: kl(.5, .5) = 0, t = 2: -5.285 / 2 = -2.643.  Least evidence: arm 0.
    def allowed(t: int) -> float:
        return math.log(math.pi**2 * 3 * t * t / 0.6) / t

    kl_quarter = 0.25 * math.log(0.5) + 0.75 * math.log(1.5)
    keys = [math.log(2) - allowed(1), kl_quarter - allowed(4), -allowed(2)]
    assert keys == pytest.approx([-3.206, -1.537, -2.643], abs=1e-3)
    alg = make(ConfidentThresholding, 3, delta=0.1, interval="kl", schedule="evidence")
    plant(alg, STATE_A)
    assert alg.ask(1).arms.tolist() == [int(np.argmin(keys))] == [0]


def test_uniform_is_round_robin() -> None:
    alg = make(UniformThresholding, 4, budget=10)
    first = alg.ask(3)
    assert first.arms.tolist() == [0, 1, 2]
    assert alg.ask(5).arms.tolist() == [3, 0, 1, 2, 3]  # pending pulls count as made


# ------------------------------------------------------------ pending-aware batches
def reference_batch(
    alg: ThresholdingAlgorithm, index: Any, limit: int
) -> list[int]:  # O(limit * n) argmin over the whole pool, one pull at a time
    means = alg.stats.means()
    effective = (alg.stats.count + alg.pending).astype(float)
    picks: list[int] = []
    for _ in range(limit):
        keys = [index(float(means[i]), effective[i]) for i in range(alg.n_arms)]
        arm = int(np.argmin(keys))
        picks.append(arm)
        effective[arm] += 1
    return picks


GAP = 0.5


def lsa_key(mean: float, t: float) -> float:
    return 1.35 * t * (mean - GAP) ** 2 + 0.5 * math.log(t)


def apt_key(mean: float, t: float) -> float:
    return math.sqrt(t) * (abs(mean - GAP) + 0.05)


def ucbe_key(mean: float, t: float) -> float:
    return abs(mean - GAP) - math.sqrt(2.0 / t)


@pytest.mark.parametrize(
    ("cls", "params", "key"),
    [(LSA, {}, lsa_key), (APT, {"epsilon": 0.05}, apt_key), (UCBE, {"a": 2.0}, ucbe_key)],
    ids=["lsa", "apt", "ucbe"],
)
def test_a_batch_of_2n_spreads_as_the_index_says(
    cls: type[ThresholdingAlgorithm], params: dict[str, Any], key: Any
) -> None:
    rng = np.random.default_rng(5)
    n = 8
    alg = make(cls, n, **params)
    plant(alg, [list(rng.random(int(c))) for c in rng.integers(3, 12, n)])  # graded
    first = alg.ask(3)  # three pulls in flight before the batch
    expected = reference_batch(alg, key, 2 * n)
    batch = alg.ask(2 * n)
    assert batch.arms.tolist() == expected
    assert len(set(expected)) > 2  # the pending counts really spread the batch
    assert first.arms.size == 3


def test_first_answers_in_flight_hold_an_arm_back() -> None:
    alg = make(LSA, 3)
    assert alg.ask(10).arms.tolist() == [0, 1, 2]  # one each, then nothing is known
    assert alg.ask(1).state is AskState.WAIT


@pytest.mark.parametrize(
    ("cls", "params"), [(OptKG, {}), (ConfidentThresholding, {"schedule": "evidence"})]
)
def test_batches_spread_for_opt_kg_and_confident(
    cls: type[ThresholdingAlgorithm], params: dict[str, Any]
) -> None:
    n = 5
    alg = make(cls, n, **params)
    plant(alg, [[1.0, 0.0, 1.0]] * n)  # identical arms: the batch must cycle over them
    arms = alg.ask(2 * n).arms
    assert np.bincount(arms, minlength=n).tolist() == [2] * n


ONE_PASS: list[tuple[str, dict[str, Any]]] = [
    ("lsa", {"budget": 3_000}),
    ("apt", {"budget": 3_000, "epsilon": 0.05}),
    ("ucbe", {"budget": 3_000, "a": 2.0}),
    ("opt-kg", {"budget": 3_000}),
    ("confident-thresholding", {"budget": 3_000, "eps": 0.05}),
    ("confident-thresholding", {"budget": 3_000, "schedule": "evidence"}),
    ("crowd-prior", {"max_answers": 30}),
    ("toloka-rule", {}),
    ("quiz", {"hidden": 3}),
]


@pytest.mark.parametrize(("name", "params"), ONE_PASS)
def test_one_pass_batches_make_the_heaps_picks(
    name: str, params: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch filled in one pass equals the heap's, pull for pull, with answers in flight."""
    rng = np.random.default_rng(len(name))
    means = rng.uniform(0.3, 0.95, size=30)
    alg = create_algorithm(name, 30, {"threshold": 0.6, **params})
    assert isinstance(alg, ThresholdingAlgorithm)
    outstanding: dict[int, float] = {}
    compared = 0
    while not alg.finished and compared < 60:
        if rng.random() < 0.6 or not outstanding:
            limit = int(rng.choice([2, 3, 17, 30, 90, 300]))
            alg._ensure_fresh()
            fast = alg._schedule(limit)
            with monkeypatch.context() as patch:
                patch.setattr(_scheduler, "_FILL_GRID", 0)  # forces the heap
                np.testing.assert_array_equal(fast, alg._schedule(limit))
            compared += int(fast.size > 1)
            ask = alg.ask(limit)
            draws = (rng.random(len(ask)) < means[ask.arms]).astype(float)
            outstanding.update(zip(ask.ids.tolist(), draws.tolist(), strict=True))
        else:
            ids = list(outstanding)[: int(rng.integers(1, len(outstanding) + 1))]
            alg.tell_many(ids, [outstanding.pop(i) for i in ids])
    assert compared >= 5


# ------------------------------------------------------------ graded rewards and budget
@pytest.mark.parametrize(("cls", "params"), ALL, ids=ALL_IDS)
def test_graded_rewards_classify_well_separated_workers(
    cls: type[ThresholdingAlgorithm], params: dict[str, Any]
) -> None:
    means = np.array([0.1, 0.25, 0.75, 0.9])
    alg = make(cls, 4, budget=600, **params)
    result = simulate(alg, BetaRewards(means, seed=3))
    rewards = BetaRewards(means, seed=3).sample([0] * 5, range(5))
    assert not set(rewards.tolist()) <= {0.0, 1.0}  # really graded
    decisions = {w.arm: w.decision for w in result.workers}
    expected = {i: Decision.ABOVE if m >= 0.5 else Decision.BELOW for i, m in enumerate(means)}
    assert decisions == expected
    if cls is ConfidentThresholding:
        assert result.stop_reason is StopReason.CONDITION_MET
        assert result.total_pulls < 600
    else:
        assert result.stop_reason is StopReason.BUDGET_SPENT
        assert result.total_pulls == 600


@pytest.mark.parametrize(("cls", "params"), FIXED, ids=FIXED_IDS)
def test_fixed_budget_spends_it_and_classifies_every_answered_worker(
    cls: type[ThresholdingAlgorithm], params: dict[str, Any]
) -> None:
    result = drive(make(cls, 10, budget=137, **params), SETUP_1, np.random.default_rng(1)).result
    assert result.stop_reason is StopReason.BUDGET_SPENT
    assert result.total_pulls == 137
    for line in result.workers:
        assert line.decision is line.leaning
        if cls is not OptKG:  # Opt-KG classifies by its posterior (tested by hand above)
            assert line.decision is (Decision.ABOVE if line.estimate >= 0.5 else Decision.BELOW)
        assert "end of the budget" in line.reason and "informational" in line.reason
    assert result.guarantee is not None and "no per-worker confidence" in result.guarantee


@pytest.mark.parametrize(("cls", "params"), FIXED, ids=FIXED_IDS)
def test_budget_below_the_pool_leaves_workers_without_answers_undecided(
    cls: type[ThresholdingAlgorithm], params: dict[str, Any]
) -> None:
    result = drive(make(cls, 10, budget=4, **params), SETUP_1, np.random.default_rng(1)).result
    undecided = [w for w in result.workers if w.decision is Decision.UNDECIDED]
    assert len(undecided) == 6
    assert all(w.reason == "no answers yet" and w.pulls == 0 for w in undecided)


def test_anytime_result_of_lsa_classifies_before_the_budget_is_spent() -> None:
    alg = make(LSA, 4, budget=100)
    ask = alg.ask(4)
    alg.tell_many(ask.ids, [1.0, 0.0, 1.0, 0.0])
    result = alg.result()
    assert not result.finished
    assert [w.decision for w in result.ranking] == [Decision.ABOVE] * 2 + [Decision.BELOW] * 2
    assert "anytime" in result.workers[0].reason


def test_waits_when_the_budget_is_fully_pending() -> None:
    alg = make(LSA, 3, budget=3)
    ask = alg.ask(5)
    assert len(ask) == 3
    assert alg.ask(1).state is AskState.WAIT
    alg.tell_many(ask.ids, [1.0, 1.0, 0.0])
    assert alg.ask(1).done and alg.stop_reason is StopReason.BUDGET_SPENT


def test_confident_budget_end_and_departures_leave_workers_undecided() -> None:
    means = [0.1, 0.49, 0.9]
    spent = drive(make(ConfidentThresholding, 3, budget=90), means, np.random.default_rng(2))
    line = {w.arm: w for w in spent.result.workers}[1]
    assert spent.result.stop_reason is StopReason.BUDGET_SPENT
    assert line.decision is Decision.UNDECIDED and "budget spent" in line.reason
    alg = make(ConfidentThresholding, 3)
    alg.set_unavailable(1, "left the platform")
    left = drive(alg, means, np.random.default_rng(2)).result
    assert left.stop_reason is StopReason.WORKERS_EXHAUSTED
    gone = {w.arm: w for w in left.workers}[1]
    assert gone.decision is Decision.UNDECIDED and "left the platform" in gone.reason
    assert left.arms_with(Decision.ABOVE) == (2,) and left.arms_with(Decision.BELOW) == (0,)


def test_result_shape_ranks_by_estimate_and_carries_the_threshold() -> None:
    result = drive(
        make(ConfidentThresholding, 4, threshold=0.6),
        [0.9, 0.2, 0.95, 0.35],
        np.random.default_rng(0),
    ).result
    assert result.threshold == Threshold(0.6, 0.6, 0.6)
    extra = dict(result.extra)
    intervals = extra.pop("intervals")  # what the intervals are, with their levels
    assert extra == {
        "threshold": 0.6, "fixed_budget": False, "eps": 0.0, "max_questions_per_worker": None
    }  # fmt: skip
    assert intervals.startswith("anytime, two-sided") and ">= 1 - 2 delta / n = 0.975" in intervals
    assert result.params["threshold"] == 0.6 and result.params["delta"] == 0.05
    estimates = [w.estimate for w in result.ranking]
    assert estimates == sorted(estimates, reverse=True)
    assert [w.rank for w in result.ranking] == [1, 2, 3, 4]
    for w in result.workers:
        assert (w.lower >= 0.6) if w.decision is Decision.ABOVE else (w.upper < 0.6)


# ------------------------------------------------------------ parameter validation
BAD: list[tuple[type[ThresholdingAlgorithm], dict[str, Any], str]] = [
    (LSA, {"threshold": 1.5, "budget": 10}, "threshold must lie"),
    (LSA, {"threshold": -0.1, "budget": 10}, "threshold must lie"),
    (LSA, {"threshold": 3.0, "lower": 1.0, "upper": 2.0, "budget": 10}, "threshold must lie"),
    (LSA, {"threshold": math.nan, "budget": 10}, "threshold must lie"),
    (LSA, {"threshold": 0.5, "budget": 10, "alpha": 0.0}, "alpha"),
    (LSA, {"threshold": 0.5, "budget": 10, "alpha": -1.0}, "alpha"),
    (LSA, {"threshold": 0.5}, "needs a budget"),
    (UniformThresholding, {"threshold": 0.5}, "needs a budget"),
    (APT, {"threshold": 0.5}, "needs a budget"),
    (UCBE, {"threshold": 0.5}, "needs a budget"),
    (OptKG, {"threshold": 0.5}, "needs a budget"),
    (APT, {"threshold": 0.5, "budget": 10, "epsilon": -0.1}, "epsilon"),
    (UCBE, {"threshold": 0.5, "budget": 10, "a": 0.0}, "a must be"),
    (OptKG, {"threshold": 0.5, "budget": 10, "prior_a": 0.0}, "prior_a"),
    (OptKG, {"threshold": 0.5, "budget": 10, "prior_b": math.inf}, "prior_b"),
    (OptKG, {"threshold": 1.0, "budget": 10}, "strictly inside"),
    (ConfidentThresholding, {"threshold": 0.5, "delta": 1.0}, "delta"),
    (ConfidentThresholding, {"threshold": 0.5, "delta": 0.0}, "delta"),
    (ConfidentThresholding, {"threshold": 0.5, "budget": 0}, "budget"),
]


@pytest.mark.parametrize(("cls", "params", "words"), BAD)
def test_bad_parameters_raise_config_error(
    cls: type[ThresholdingAlgorithm], params: dict[str, Any], words: str
) -> None:
    with pytest.raises(ConfigError, match=words):
        cls(5, **params)


# ------------------------------------------------------------ statistical behaviour
def _setup_1_run(cls: type[ThresholdingAlgorithm], batch: int, seed: int) -> Result:
    alg = make(cls, SETUP_1.size, budget=1000)
    return drive(alg, SETUP_1, np.random.default_rng(seed), batch=batch).result


def _aggregate_regret(
    cls: type[ThresholdingAlgorithm], runs: int, batch: int, pool: Executor
) -> float:
    truth = SETUP_1 >= 0.5
    wrong = 0
    for result in map_seeds(partial(_setup_1_run, cls, batch), range(runs), executor=pool):
        above = np.zeros(SETUP_1.size, dtype=bool)
        above[list(result.arms_with(Decision.ABOVE))] = True
        wrong += int(np.sum(above != truth))
    return wrong / runs


@pytest.mark.slow
def test_lsa_aggregate_regret_on_setup_1_is_not_worse_than_uniform(run_pool: Executor) -> None:
    lsa = _aggregate_regret(LSA, 200, batch=1, pool=run_pool)
    # Uniform's schedule ignores the answers, so batches of 10 are the same as one at a time.
    uniform = _aggregate_regret(UniformThresholding, 200, batch=10, pool=run_pool)
    print(f"Setup 1, T = 1000, 200 runs: LSA regret {lsa:.3f}, Uniform regret {uniform:.3f}")
    assert lsa <= uniform + 0.05


def binomial_upper_tail(errors: int, runs: int, p: float) -> float:
    """P(X >= errors) for X ~ Binomial(runs, p), summed in log space."""
    total = 0.0
    for k in range(errors, runs + 1):
        log_term = (
            math.lgamma(runs + 1) - math.lgamma(k + 1) - math.lgamma(runs - k + 1)
            + k * math.log(p) + (runs - k) * math.log1p(-p)
        )  # fmt: skip
        total += math.exp(log_term)
    return min(total, 1.0)


def test_binomial_upper_tail_helper() -> None:
    assert binomial_upper_tail(0, 10, 0.3) == pytest.approx(1.0)
    assert binomial_upper_tail(10, 10, 0.5) == pytest.approx(0.5**10)
    assert binomial_upper_tail(2, 4, 0.5) == pytest.approx(11 / 16)


def _confident_run(
    means: tuple[float, ...], delta: float, interval: str, seed: int
) -> tuple[Algorithm, RewardModel]:
    alg = make(ConfidentThresholding, len(means), delta=delta, interval=interval)
    return alg, BernoulliRewards(means, seed=seed)


@pytest.mark.slow
@pytest.mark.parametrize("interval", ["kl", "hoeffding"])
def test_confident_thresholding_is_delta_correct(interval: str, run_pool: Executor) -> None:
    means = np.array([0.15, 0.3, 0.7, 0.85])  # every mean 0.2 or more from the bar
    delta, runs = 0.1, 200
    truth = means >= 0.5
    failures = 0
    build = partial(_confident_run, tuple(means.tolist()), delta, interval)
    for result in simulate_many(build, range(runs), batch=means.size, executor=run_pool):
        assert result.stop_reason is StopReason.CONDITION_MET
        above = np.array(
            [w.decision is Decision.ABOVE for w in sorted(result.workers, key=lambda w: w.arm)]
        )
        failures += int(np.any(above != truth))
    print(f"ConfidentThresholding ({interval}), delta = {delta}: {failures} wrong of {runs}")
    assert binomial_upper_tail(failures, runs, delta) >= 0.01, failures
