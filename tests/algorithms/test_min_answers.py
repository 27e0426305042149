"""``min_answers`` for every fixed-confidence algorithm (issue 19, item 3): no worker is decided
before it has that many answers, workers below it keep being asked, the default (1) makes
exactly the pulls the algorithms made before the parameter existed, and the promise holds."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import Executor
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from driver import drive
from numpy.typing import NDArray
from stats_helpers import assert_rate_at_most

from screener.algorithms import (
    ALGORITHMS,
    Algorithm,
    Decision,
    IteratedBestArm,
    Result,
    RoundRobin,
    StopReason,
    WorkerResult,
    accepted_parameters,
    create_algorithm,
)
from screener.algorithms.ksigma import GOLD
from screener.algorithms.topk import CLUCBPAC, AdaptiveTopK
from screener.errors import ConfigError
from screener.simulation import map_seeds

FloatArray = NDArray[np.float64]

INSTANCES: dict[str, list[float]] = {
    "one-outlier": [0.1, 0.15, 0.2, 0.25, 0.3, 1.0],
    "two-outliers": [0.1] * 7 + [0.3, 0.75, 0.95],
    "ade": [0.05, 0.1, 0.1, 0.15, 0.2, 0.95],
    "two-groups": [0.02] * 4 + [0.98] * 2,
    "low-group": [0.05, 0.1, 0.5, 0.52, 0.54, 0.56, 0.58, 0.6],
    "top": [0.9, 0.8, 0.7, 0.6, 0.5],
}
#: Every fixed-confidence algorithm, on an instance it finishes quickly (NRR, the heuristic
#: k-sigma baseline, takes the parameter too).
FIXED_CONFIDENCE: list[tuple[str, str, dict[str, Any]]] = [
    ("rr", "one-outlier", {"k": 1.5, "interval": "agresti-coull"}),
    ("wrr", "one-outlier", {"k": 1.5, "interval": "agresti-coull"}),
    ("nrr", "one-outlier", {"k": 1.5, "interval": "agresti-coull"}),
    ("ib", "two-outliers", {"k": 1.0, "interval": "agresti-coull"}),
    ("ade", "two-groups", {"k": 0.0}),
    ("ade", "two-groups", {"k": 0.0, "share_samples": True}),
    ("gold", "low-group", {"rho": 0.75, "inclusive": True, "interval": "agresti-coull"}),
    ("adaptive-topk", "top", {"k": 2, "eps": 0.05}),
    ("clucb-pac", "top", {"k": 2, "eps": 0.05}),
]
NAMES = sorted({name for name, _, _ in FIXED_CONFIDENCE})
_TOP_K: dict[str, Any] = {"k": 1, "eps": 0.1}
REQUIRED = {"adaptive-topk": _TOP_K, "clucb-pac": _TOP_K}  # parameters without a default


def build(name: str, n: int, **params: Any) -> Algorithm:
    return create_algorithm(name, n, {**REQUIRED.get(name, {}), **params})


# ------------------------------------------------------------------------- parameter
@pytest.mark.parametrize("name", NAMES)
def test_every_fixed_confidence_algorithm_takes_min_answers(name: str) -> None:
    # accepted_parameters is what the CLI's -p KEY=VALUE is checked against.
    assert "min_answers" in accepted_parameters(ALGORITHMS[name])
    alg = build(name, 12, min_answers=4)
    assert alg.min_answers == 4 and alg.params()["min_answers"] == 4
    assert type(alg)(12, **alg.params()).min_answers == 4
    assert build(name, 12).min_answers == 1


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [0, -2, 2.5, True, "3"])
def test_bad_min_answers_is_one_clear_error(name: str, bad: object) -> None:
    with pytest.raises(ConfigError, match=r"min_answers must be a whole number >= 1"):
        build(name, 12, min_answers=bad)


# ----------------------------------------------------------- hand-worked: outliers
def test_rr_waits_for_min_answers_by_hand() -> None:
    # RR, Hoeffding, 2 workers, k = 0, delta = 0.5: worker 0 always right, worker 1 always
    # wrong, asked one round (2 pulls) at a time. After m rounds (T = 2m): y = (1, 0), theta
    # = 0.5, l(0) = 1/2, L = log(1 / l_T) = log(4 pi^2 T^2 / (6 delta)) = log(52.638 m^2),
    # beta_i = sqrt(L / 2m), beta_theta = sqrt(l(k) L / 2m) = sqrt(L / 4m). Both are clear
    # once (1/sqrt2 + 1/2) sqrt(L/m) < 1/2, i.e. L/m < 0.171573:
    #   m = 73: L = log(280508) = 12.5443, L/m = 0.17184 (not yet);
    #   m = 74: L = log(288246) = 12.5716, L/m = 0.16989 (both decided).
    def first_decided_round(alg: RoundRobin) -> tuple[int, RoundRobin]:
        for m in range(1, 200):
            ask = alg.ask(2)
            assert ask.arms.tolist() == [0, 1]
            alg.tell_many(ask.ids, [1.0, 0.0])
            lines = alg.result().workers
            if any(w.decision is not Decision.UNDECIDED for w in lines):
                return m, alg
            if m == 79 and alg.min_answers == 80:  # clear of the threshold, but held back
                assert alg.lows[0] > alg.theta_high
                assert all(w.reason == "fewer than min_answers = 80 answers" for w in lines)
        raise AssertionError("never decided")

    params: dict[str, Any] = {"k": 0.0, "delta": 0.5, "interval": "hoeffding"}
    m, default = first_decided_round(RoundRobin(2, **params))
    assert m == 74
    m, held = first_decided_round(RoundRobin(2, min_answers=80, **params))
    assert m == 80
    for alg, answers in ((default, 74), (held, 80)):
        assert alg.result().outliers == (0,)
        assert alg.ask(1).done and alg.stop_reason is StopReason.CONDITION_MET
        assert alg.result().total_pulls == 2 * answers


# -------------------------------------------------------------- hand-worked: top-K
def test_adaptive_topk_waits_for_min_answers_by_hand() -> None:
    # n = 2, k = 1, delta = 0.9: N_1 = ceil(4 ln(2 * 2 / 0.9)) = ceil(5.967) = 6. Round 1's
    # margin 2 * 2^-1 = 1 cannot be exceeded on [0, 1]; the outer condition before round 2,
    # 2 * 2^-2 * 1 > eps * k = 0.5, fails: the fill decides both workers after round 1.
    for min_answers, answers in ((1, 6), (5, 6), (8, 8)):
        alg = AdaptiveTopK(2, k=1, eps=0.5, delta=0.9, min_answers=min_answers)
        ask = alg.ask(100)
        assert np.bincount(ask.arms).tolist() == [answers, answers]
        alg.tell_many(ask.ids, 1.0 - ask.arms)  # worker 0 always right, worker 1 never
        assert alg.ask(1).done
        result = alg.result()
        assert result.arms_with(Decision.SELECTED) == (0,)
        assert result.arms_with(Decision.REJECTED) == (1,)
        assert [w.pulls for w in result.workers] == [answers, answers]


def test_clucb_waits_for_min_answers_by_hand() -> None:
    # n = 2, k = 1, eps = 0.5, delta = 0.5, worker 0 always right, worker 1 never, two pulls
    # per ask (one each: M xor M~ = {0, 1}). With c answers each (t = 2c) both radii are
    # 0.5 sqrt(2 ln(4 * 2 t^3 / delta) / c) = sqrt(ln(128 c^3) / 2c) = r, and while r > 1/2
    # M~ = {1}: gap = (0 + r) - (1 - r) = 2r - 1 <= eps = 0.5 once r <= 0.75:
    #   c = 10: r = sqrt(11.760 / 20) = 0.767 (gap 0.533); c = 11: r = sqrt(12.046 / 22)
    #   = 0.740 (gap 0.480): the default stops after 11 answers each.
    for min_answers, answers in ((1, 11), (11, 11), (15, 15)):
        alg = CLUCBPAC(2, k=1, eps=0.5, delta=0.5, min_answers=min_answers)
        for _ in range(answers):
            ask = alg.ask(2)
            assert sorted(ask.arms.tolist()) == [0, 1]
            alg.tell_many(ask.ids, 1.0 - ask.arms)
        assert alg.ask(1).done and alg.stop_reason is StopReason.CONDITION_MET
        result = alg.result()
        assert result.arms_with(Decision.SELECTED) == (0,)
        assert [w.pulls for w in result.workers] == [answers, answers]


def test_adaptive_topk_asks_min_answers_before_a_fill_without_rounds() -> None:
    # eps >= 1 on [0, 1]: no round is needed (the paper asks nothing); with min_answers 3
    # every worker answers 3 questions and the fill uses their means.
    assert AdaptiveTopK(3, k=1, eps=1.0).ask(1).done
    alg = AdaptiveTopK(3, k=1, eps=1.0, min_answers=3)
    ask = alg.ask(100)
    assert np.bincount(ask.arms).tolist() == [3, 3, 3]
    alg.tell_many(ask.ids, (ask.arms == 2).astype(float))
    assert alg.ask(1).done
    assert alg.result().arms_with(Decision.SELECTED) == (2,)


def test_adaptive_topk_runs_a_round_when_eps_is_below_the_reward_range() -> None:
    # Rewards in [0, 4] and eps = 1.5: the paper's outer condition before round 1 (1 > eps)
    # fails, but selecting without a question could miss by 4 per place. Round 1 is run.
    alg = AdaptiveTopK(2, k=1, eps=1.5, lower=0.0, upper=4.0, delta=0.1)
    ask = alg.ask(10**6)
    assert len(ask) == 2 * alg.target > 0
    alg.tell_many(ask.ids, 4.0 * ask.arms)  # worker 1 is the best, by 4
    assert alg.ask(1).done
    assert alg.result().arms_with(Decision.SELECTED) == (1,)


# --------------------------------------------------------- every algorithm, any path
Lines = tuple[WorkerResult, ...]


def _first_decision_counts(name: str, means: FloatArray, params: dict[str, Any]) -> list[int]:
    """Each worker's answers when a default run first showed it decided."""
    first: dict[int, int] = {}

    def note(lines: Lines) -> None:
        for w in lines:
            if w.decision is not Decision.UNDECIDED:
                first.setdefault(w.arm, w.pulls)

    _drive_checked(build(name, means.size, seed=3, **params), means, note)
    return list(first.values())


def _drive_checked(alg: Algorithm, means: FloatArray, on_step: Callable[[Lines], None]) -> None:
    """Run to the end, four pulls per ask, showing ``on_step`` the result after each ask."""
    rng = np.random.default_rng(11)
    for _ in range(100_000):
        ask = alg.ask(4)
        on_step(alg.result().workers)
        if ask.done:
            return
        alg.tell_many(ask.ids, (rng.random(len(ask)) < means[ask.arms]).astype(float))
    raise AssertionError(f"{alg.name} did not stop")


@pytest.mark.parametrize(
    ("name", "instance", "params"),
    FIXED_CONFIDENCE,
    ids=[f"{n}-{'shared' if p.get('share_samples') else i}" for n, i, p in FIXED_CONFIDENCE],
)
def test_no_worker_is_decided_below_min_answers(
    name: str, instance: str, params: dict[str, Any]
) -> None:
    means = np.array(INSTANCES[instance])
    # Above the answers the default decided some worker on: the rule must bite.
    min_answers = min(_first_decision_counts(name, means, params)) + 20
    alg = build(name, means.size, seed=3, min_answers=min_answers, **params)

    def check(lines: Lines) -> None:
        for w in lines:
            assert w.decision is Decision.UNDECIDED or w.pulls >= min_answers, w

    _drive_checked(alg, means, check)
    assert alg.stop_reason is StopReason.CONDITION_MET
    result = alg.result()
    assert all(w.decision is not Decision.UNDECIDED for w in result.workers) or name == "gold"
    assert min(w.pulls for w in result.workers) >= min_answers  # the short ones were asked


def test_gold_keeps_asking_a_terminal_worker_below_min_answers() -> None:
    # The terminal rounds (the ranking) are GOLD's own: min_answers only delays the stop.
    means = np.array(INSTANCES["low-group"])
    rounds = {}
    for min_answers in (1, 2000):
        alg = GOLD(means.size, rho=0.75, inclusive=True, min_answers=min_answers)
        run = drive(alg, means, np.random.default_rng(5), batch=4)
        assert run.result.stop_reason is StopReason.CONDITION_MET
        assert min(w.pulls for w in run.result.workers) >= min_answers
        rounds[min_answers] = alg.rounds.copy()
        assert run.result.arms_with(Decision.OUTLIER) == (0, 1)
    # The same answers up to the first separation, so the same first terminal round.
    first = rounds[1][rounds[1] >= 0].min()
    assert set(np.flatnonzero(rounds[1] == first)) == set(np.flatnonzero(rounds[2000] == first))


def test_gold_worker_that_left_below_min_answers_stays_undecided() -> None:
    means = np.array(INSTANCES["low-group"])
    alg = GOLD(means.size, rho=0.75, inclusive=True, min_answers=1000)
    rng = np.random.default_rng(2)
    for _ in range(100_000):
        ask = alg.ask(4)
        if ask.done:
            break
        alg.tell_many(ask.ids, (rng.random(len(ask)) < means[ask.arms]).astype(float))
        if alg.stats.count[7] == 600:  # (late enough not to hold the outliers' community)
            alg.set_unavailable(7, "left")
    assert alg.stop_reason is StopReason.CONDITION_MET
    line = {w.arm: w for w in alg.result().workers}[7]
    assert line.decision is Decision.UNDECIDED and line.pulls == 600
    assert "fewer than min_answers = 1000 answers" in line.reason
    assert alg.result().arms_with(Decision.OUTLIER) == (0, 1)


@pytest.mark.parametrize("cls", [IteratedBestArm, CLUCBPAC], ids=["ib", "clucb-pac"])
@pytest.mark.parametrize("size", [1, 5, 13])
def test_warm_up_ask_k_equals_k_asks_of_one(cls: type[Algorithm], size: int) -> None:
    def fresh() -> Algorithm:
        alg = build(cls.name, 5, min_answers=4)
        first = alg.ask(7)  # uneven effective counts, some answered, one released
        alg.tell_many(first.ids[:3], np.ones(3))
        alg.release(int(first.ids[5]))
        return alg

    batched, single = fresh(), fresh()
    info = batched.pull_info(6)
    assert info is not None and info.arm == 1  # round robin: 0, 1, 2, 3, 4, 0, 1
    big = batched.ask(size)
    ones = [single.ask(1) for _ in range(size)]
    assert np.array_equal(big.arms, np.concatenate([a.arms for a in ones]))
    assert np.array_equal(big.ids, np.concatenate([a.ids for a in ones]))
    # The warm-up gives nobody more than min_answers (answered + pending) before the rest.
    assert (batched.stats.count + batched.pending).max() <= 4


# --------------------------------------------------------------- the promise holds
def _rr_run(seed: int) -> Result:
    means = np.array(INSTANCES["one-outlier"])
    alg = RoundRobin(means.size, k=1.5, delta=0.1, interval="hoeffding", min_answers=3)
    return drive(alg, means, np.random.default_rng([seed, 1903]), batch=60).result


def _outlier_errors(runs: int, pool: Executor) -> tuple[int, int]:
    errors = 0
    for result in map_seeds(_rr_run, range(runs), executor=pool):
        assert result.stop_reason is StopReason.CONDITION_MET
        errors += result.outliers != (5,)
    return errors, runs


@pytest.mark.slow
def test_rr_with_min_answers_3_keeps_its_promise(run_pool: Executor) -> None:
    errors, runs = _outlier_errors(300, run_pool)
    assert_rate_at_most(errors, runs, 0.1)


def _clucb_run(means: NDArray[np.float64], k: int, eps: float, delta: float, seed: int) -> Result:
    alg = CLUCBPAC(means.size, k=k, eps=eps, delta=delta, seed=seed, min_answers=3)
    return drive(alg, means, np.random.default_rng([seed, 1903]), batch=4).result


@pytest.mark.slow
def test_clucb_with_min_answers_3_keeps_its_promise(run_pool: Executor) -> None:
    n, k, eps, delta, runs = 8, 3, 0.1, 0.1, 300
    means = np.linspace(0.1, 0.9, n)
    best = float(np.sort(means)[-k:].sum())
    errors = 0
    one_run = partial(_clucb_run, means, k, eps, delta)
    for result in map_seeds(one_run, range(runs), executor=run_pool):
        assert result.stop_reason is StopReason.CONDITION_MET
        chosen = result.arms_with(Decision.SELECTED)
        assert len(chosen) == k and min(w.pulls for w in result.workers) >= 3
        errors += best - float(means[list(chosen)].sum()) > eps * k + 1e-12
    assert_rate_at_most(errors, runs, delta)


# --------------------------------------------------------------------------- the CLI
@pytest.mark.subprocess
def test_min_answers_from_the_command_line(tmp_path: Path) -> None:
    def run(*extra: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-m", "screener", "run", "--workers", "4", "--outliers", "1",
             "-a", "clucb-pac", "--top", "1", "-p", "eps=0.2", *extra, "--seed", "1",
             "--json", "--quiet", "--db", str(tmp_path / "runs.db")],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        report: dict[str, Any] = json.loads(done.stdout)
        assert report["condition_met"]
        return report

    default = run()
    assert default["params"]["min_answers"] == 1
    assert min(w["pulls"] for w in default["workers"]) < 100  # so 100 has to bite
    held = run("-p", "min_answers=100")
    assert held["params"]["min_answers"] == 100
    assert min(w["pulls"] for w in held["workers"]) >= 100
    assert all(w["decision"] in ("selected", "rejected") for w in held["workers"])
