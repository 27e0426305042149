"""FDRThresholding: hand-worked e-BH decisions, the ask/tell contract, and false-discovery
control over many seeded runs, synchronously and through the asyncio orchestrator."""

from __future__ import annotations

import math
import pickle
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from plan_helpers import make_plan

from screener.algorithms import (
    Algorithm,
    Ask,
    Decision,
    FDRThresholding,
    Result,
    StopReason,
    TellOutcome,
    create_algorithm,
)
from screener.crowd import WorkerPool
from screener.errors import ConfigError
from screener.orchestrator import RunOptions
from screener.runs.session import start_run
from screener.simulation import BernoulliRewards, RewardModel, simulate, simulate_many
from screener.stats import BET_FRACTIONS, bernoulli_kl, e_bh

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def e_mean(step: float, answers: int) -> float:
    """The e-value after ``answers`` answers that each multiply bet f by ``1 + step f``."""
    return float(np.mean((1.0 + step * BET_FRACTIONS) ** answers))


def run_scripted(
    alg: FDRThresholding, answers: Mapping[int, Sequence[float]], batch: int = 1
) -> list[Ask]:
    """Ask ``batch`` at a time and answer at once: the seq-th answer of arm i is answers[i][seq]."""
    asks: list[Ask] = []
    while True:
        ask = alg.ask(batch)
        if ask.done:
            return asks
        assert not ask.wait
        asks.append(ask)
        rewards = [answers[arm][seq] for arm, seq in zip(ask.arms, ask.seqs, strict=True)]
        alg.tell_many(ask.ids, rewards)


def by_arm(result: Result) -> dict[int, Any]:
    return {w.arm: w for w in result.workers}


# ------------------------------------------------------------------ hand-worked decisions
# Bar 0.5: a bet f = lam (1 - 0.5) multiplies by 1 + f on a wrong answer when testing
# "below", by 1 + f on a right answer when testing "above". Three workers, q = 0.5: the e-BH
# cuts n / (q k) are 6 (one rejection), 3 (two), 2 (three).
E1, E2, E3, E4 = (e_mean(1.0, t) for t in (1, 2, 3, 4))


def test_hand_worked_values_of_the_default_grid() -> None:
    # E(1 + f)^t with E f = 1/2, E f^2 = 0.333125, E f^3 = 0.2496875, E f^4 = 0.1995835...
    assert pytest.approx((1.5, 2.333125, 3.7490625), rel=1e-12) == (E1, E2, E3)
    assert pytest.approx(6.197083515625, rel=1e-12) == E4


def test_two_workers_are_banned_together_before_either_could_be_alone() -> None:
    # Workers 0 and 1 answer wrong every time, worker 2 right every time. Round robin.
    alg = FDRThresholding(3, threshold=0.5, q=0.5)
    answers = {0: [0.0] * 9, 1: [0.0] * 9, 2: [1.0] * 9}
    asks = run_scripted(alg, answers)
    pulled = [int(a.arms[0]) for a in asks]
    # After two rounds: e_below = 2.33 for 0 and 1, short of 3 (k = 2) and 6 (k = 1).
    # After three: 3.749 >= 3, so k = 2 and both are banned at once, although neither
    # reaches 6 alone; worker 2's e_above = 3.749 < 6 is not enough for one acceptance.
    # Only worker 2 is asked again; its fourth answer gives 6.197 >= 6: accepted.
    assert pulled == [0, 1, 2] * 3 + [2]
    result = alg.result()
    assert result.stop_reason is StopReason.CONDITION_MET
    lines = by_arm(result)
    assert [lines[i].decision for i in range(3)] == [Decision.BELOW, Decision.BELOW, Decision.ABOVE]
    assert lines[0].reason == (
        "banned by e-BH at q = 0.5 (e = 3.75 >= 3 = n / (q k), k = 2); interval informational"
    )
    assert "accepted by e-BH at q = 0.5 (e = 6.2 >= 6 = n / (q k), k = 1)" in lines[2].reason
    extra = result.extra
    assert extra["ban_cut"] == pytest.approx(3.0) and extra["accept_cut"] == pytest.approx(6.0)
    assert extra["log_e_below"][:2] == pytest.approx([math.log(E3)] * 2, rel=1e-12)
    assert extra["log_e_above"][2] == pytest.approx(math.log(E4), rel=1e-12)


def test_a_settled_worker_is_not_asked_again_and_its_evidence_freezes() -> None:
    alg = FDRThresholding(3, threshold=0.5, q=0.5)
    for _ in range(2):  # two rounds, answered at once
        ask = alg.ask(3)
        alg.tell_many(ask.ids, [0.0, 0.0, 1.0])
    rounds = alg.ask(15)  # rounds 3 to 7 in flight together
    assert rounds.arms.tolist() == [0, 1, 2] * 5
    alg.tell_many(rounds.ids[:3], [0.0, 0.0, 1.0])
    assert alg.result().arms_with(Decision.BELOW) == (0, 1)  # on the list (3.749 >= 3) ...
    assert not alg.settled.any()  # ... but looking settles nothing
    eighth = alg.ask(1)  # this ask settles 0 and 1: only worker 2 is asked
    assert eighth.arms.tolist() == [2] and eighth.seqs.tolist() == [7]
    assert alg.settled.tolist() == [True, True, False]
    # Rounds 4 to 7 arrive late, worker 0 right every time: its estimate sees them (4 of 7,
    # above the bar), its evidence does not, and it stays banned, leaning the way it went.
    alg.tell_many(rounds.ids[3:], [1.0, 0.0, 1.0] * 4)
    lines = by_arm(alg.result())
    assert lines[0].estimate == pytest.approx(4 / 7) and lines[0].pulls == 7
    assert lines[0].decision is Decision.BELOW and lines[0].leaning is Decision.BELOW
    assert alg.result().extra["log_e_below"][0] == pytest.approx(math.log(E3), rel=1e-12)
    assert lines[2].decision is Decision.ABOVE  # right every time: e_above >= 6
    assert alg.ask(1).done and alg.stop_reason is StopReason.CONDITION_MET


def test_a_wait_settles_nothing_so_a_replay_agrees() -> None:
    # n = 3, q = 0.5, budget 12, all of it in flight at once. Answers A (three rounds):
    # workers 0 and 1 wrong every time (e_below 3.749 >= 3 = n / (q k), k = 2: both on the ban
    # list), worker 2 right, wrong, right. The next ask says WAIT (the whole budget is asked
    # and worker 2 is undecided). Answers B (round four): 0 and 1 right, 2 wrong. Then
    # (1 + f)^3 (1 - f) = 1 + 2f - 2f^3 - f^4 averages 1 + 1 - 0.4994 - 0.1996 = 1.301 < 3:
    # nobody is banned in the end. A journal does not record the WAIT, so its replay tells A
    # and B together: both must agree.
    def run(wait_between: bool) -> Result:
        alg = FDRThresholding(3, threshold=0.5, q=0.5, budget=12)
        ask = alg.ask(12)
        assert ask.arms.tolist() == [0, 1, 2] * 4
        rewards = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0])
        if wait_between:
            alg.tell_many(ask.ids[:9], rewards[:9])
            assert alg.result().arms_with(Decision.BELOW) == (0, 1)
            assert alg.ask(1).wait and not alg.settled.any()
            alg.tell_many(ask.ids[9:], rewards[9:])
        else:
            alg.tell_many(ask.ids, rewards)
        assert alg.ask(1).done
        return alg.result()

    live, replayed = run(True), run(False)
    assert live.to_dict() == replayed.to_dict()
    assert live.stop_reason is StopReason.BUDGET_SPENT
    assert all(w.decision is Decision.UNDECIDED for w in live.workers)
    assert live.extra["log_e_below"][:2] == pytest.approx([math.log(1.301041484375)] * 2)


def test_min_answers_holds_decisions_back() -> None:
    alg = FDRThresholding(3, threshold=0.5, q=0.5, min_answers=4)
    answers = {0: [0.0] * 9, 1: [0.0] * 9, 2: [1.0] * 9}
    asks = run_scripted(alg, answers)
    # Without the rule 0 and 1 are banned after three answers each (10 questions in all, see
    # above). With it nobody qualifies before four answers; after round four, 0 and 1 have
    # 6.197 >= 3 (two bans) and worker 2 has 6.197 >= 6 (one acceptance): 12 questions.
    assert sum(len(a) for a in asks) == 12
    lines = by_arm(alg.result())
    assert [lines[i].decision for i in range(3)] == [Decision.BELOW, Decision.BELOW, Decision.ABOVE]
    early = FDRThresholding(3, threshold=0.5, q=0.5, min_answers=4)
    for _ in range(3):
        ask = early.ask(3)
        early.tell_many(ask.ids, [0.0, 0.0, 1.0])
    assert "fewer than min_answers = 4" in by_arm(early.result())[0].reason


def test_indifference_zone_conflicts_go_to_the_stronger_side() -> None:
    # Bar 0.5, eps = 0.125: bans test "accuracy >= 0.625", accepts "accuracy <= 0.375".
    # Worker 0 answers 0.5 (graded) every time: each answer multiplies bet f by 1 + f/3 on
    # both sides (0.125 / 0.375). Worker 1 answers 0.4375: 1 + f/2 below, 1 + f/6 above.
    # n = 2, q = 0.5: cuts 4 (one) and 2 (two). After 8 answers each, told at once:
    # below 4.10 (w0) and 8.31 (w1), above 4.10 (w0) and 2.003 (w1): both workers are in both
    # e-BH sets. Worker 0 ties and goes ABOVE, worker 1 BELOW (8.31 > 2.003); recomputed,
    # each set has one member with e >= 4.
    assert (e_mean(1 / 3, 8), e_mean(0.5, 8), e_mean(1 / 6, 8)) == pytest.approx(
        (4.104, 8.314, 2.003), abs=1e-3
    )
    alg = FDRThresholding(2, threshold=0.5, q=0.5, eps=0.125)
    ask = alg.ask(16)
    alg.tell_many(ask.ids, [0.5 if arm == 0 else 0.4375 for arm in ask.arms])
    lines = by_arm(alg.result())
    assert lines[0].decision is Decision.ABOVE and lines[1].decision is Decision.BELOW
    assert "k = 1" in lines[0].reason and "k = 1" in lines[1].reason
    assert alg.ask(1).done and alg.stop_reason is StopReason.CONDITION_MET


def test_answers_at_the_bar_are_no_evidence_either_way() -> None:
    # Every answer exactly at the bar: each bet's factor is 1 on both sides, e-values stay 1,
    # below every cut (here q = 0.9, n = 2: 2.2 and 1.1), and the run ends undecided.
    alg = FDRThresholding(2, threshold=0.5, q=0.9, budget=40)
    ask = alg.ask(40)
    alg.tell_many(ask.ids, [0.5] * 40)
    assert alg.ask(1).done and alg.stop_reason is StopReason.BUDGET_SPENT
    result = alg.result()
    assert result.extra["log_e_below"] == pytest.approx([0.0, 0.0], abs=1e-12)
    assert result.extra["log_e_above"] == pytest.approx([0.0, 0.0], abs=1e-12)
    assert all(w.decision is Decision.UNDECIDED for w in result.workers)
    assert result.extra["ban_cut"] is None and result.extra["accept_cut"] is None


# ------------------------------------------------------------------ the contract
def test_round_robin_counts_pending_pulls() -> None:
    alg = FDRThresholding(3, threshold=0.6)
    assert alg.ask(7).arms.tolist() == [0, 1, 2, 0, 1, 2, 0]
    assert alg.ask(2).arms.tolist() == [1, 2]


MEANS = np.array([0.2, 0.4, 0.55, 0.6, 0.7, 0.95])


def _make(**params: Any) -> FDRThresholding:
    return FDRThresholding(MEANS.size, **({"threshold": 0.6, "q": 0.2, "budget": 400} | params))


def test_a_duplicate_answer_is_a_no_op() -> None:
    alg = _make()
    ask = alg.ask(6)
    alg.tell_many(ask.ids, [0.0] * 6)
    before = alg.result().to_dict()
    assert alg.tell(int(ask.ids[0]), 1.0) is TellOutcome.DUPLICATE
    assert alg.result().to_dict() == before


def test_a_released_pull_is_asked_again() -> None:
    alg = _make()
    ask = alg.ask(3)
    assert alg.release(int(ask.ids[1]))
    again = alg.ask(1)
    assert (int(again.arms[0]), int(again.seqs[0])) == (int(ask.arms[1]), int(ask.seqs[1]))


def test_an_unavailable_worker_ends_undecided_with_the_reason() -> None:
    alg = FDRThresholding(3, threshold=0.6, q=0.2)
    alg.set_unavailable(1, "left the platform")
    result = simulate(alg, BernoulliRewards([0.05, 0.6, 0.98], seed=1))
    assert result.stop_reason is StopReason.WORKERS_EXHAUSTED
    lines = by_arm(result)
    assert lines[1].decision is Decision.UNDECIDED and "left the platform" in lines[1].reason
    assert lines[0].decision is Decision.BELOW and lines[2].decision is Decision.ABOVE


def test_a_spent_budget_leaves_workers_undecided_and_says_so() -> None:
    result = simulate(_make(budget=60), BernoulliRewards(MEANS, seed=2))
    assert result.stop_reason is StopReason.BUDGET_SPENT
    undecided = [w for w in result.workers if w.decision is Decision.UNDECIDED]
    assert undecided and all("budget spent" in w.reason for w in undecided)
    assert all(w.leaning is not Decision.UNDECIDED for w in undecided)


def test_params_rebuild_the_same_pulls() -> None:
    alg = _make(eps=0.05, min_answers=3, seed=4)
    twin = create_algorithm("fdr-thresholding", MEANS.size, alg.params())
    assert isinstance(twin, FDRThresholding) and twin.params() == alg.params()
    first = simulate(alg, BernoulliRewards(MEANS, seed=6), batch=4)
    second = simulate(twin, BernoulliRewards(MEANS, seed=6), batch=4)
    assert first.to_dict() == second.to_dict()
    assert first.params["q"] == 0.2 and first.params["min_answers"] == 3


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"q": 0.0}, "q must lie"),
        ({"q": 1.0}, "q must lie"),
        ({"q": math.nan}, "q must lie"),
        ({"eps": -0.1}, "eps must be"),
        ({"eps": math.inf}, "eps must be"),
        ({"eps": 0.4}, "strictly inside"),
        ({"threshold": 1.0}, "strictly inside"),
        ({"threshold": 0.0}, "strictly inside"),
        ({"min_answers": 0}, "min_answers"),
        ({"min_answers": 1.5}, "min_answers"),
        ({"budget": 0}, "budget"),
    ],
)
def test_bad_parameters_raise_config_error(params: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        FDRThresholding(4, **({"threshold": 0.6} | params))


def test_graded_rewards_in_another_range() -> None:
    # Rewards in [0, 10], bar 6, rescaled to [0, 1]: answers of 1 multiply bet f by
    # 1 + 1.25 f ("below", (0.6 - 0.1) / 0.4), answers of 9.5 by 1 + 0.583 f ("above",
    # (0.95 - 0.6) / 0.6). n = 2, q = 0.5: one rejection needs e >= 4. After four answers
    # each: 9.06 and 3.07, so worker 0 is banned and worker 1 not yet; after five, 4.21.
    alg = FDRThresholding(2, threshold=6.0, lower=0.0, upper=10.0, q=0.5)
    for answers, accepted in ((8, Decision.UNDECIDED), (1, Decision.ABOVE)):
        ask = alg.ask(answers)
        alg.tell_many(ask.ids, [1.0 if arm == 0 else 9.5 for arm in ask.arms])
        lines = by_arm(alg.result())
        assert lines[0].decision is Decision.BELOW and lines[1].decision is accepted
    assert "e = 4.21 >= 4" in lines[1].reason


# ------------------------------------------------------------------ false-discovery control
BAR = 0.6
# Twenty workers spread over the bar +- 0.15, seven exactly at it: most hypotheses are null
# on each side, the hard case for FDR (an uncorrected test of each worker at level q reaches
# an FDR near 0.2 on this pool).
POOL_MEANS = np.concatenate([np.linspace(BAR - 0.15, BAR + 0.15, 13), np.full(7, BAR)])


def false_discovery_proportions(
    result: Result, means: FloatArray, eps: float
) -> tuple[float, float]:
    """Share of banned workers at or above bar + eps, and of accepted ones at or below bar - eps
    (0 for an empty list): the two promises of FDRThresholding."""
    decision = np.array([w.decision for w in sorted(result.workers, key=lambda w: w.arm)])
    banned, accepted = decision == Decision.BELOW, decision == Decision.ABOVE
    wrong_bans = int(np.sum(banned & (means >= BAR + eps)))
    wrong_accepts = int(np.sum(accepted & (means <= BAR - eps)))
    return wrong_bans / max(int(banned.sum()), 1), wrong_accepts / max(int(accepted.sum()), 1)


def assert_mean_at_most(values: Sequence[float], bound: float, alpha: float = 0.01) -> None:
    """One-sided test of "E[value] <= bound" for independent values in [0, 1].

    Hoeffding (1963, Theorem 1): for R independent variables in [0, 1] with mean at most p,
    P(average >= x) <= exp(-R kl(x, p)) for x > p, the same Chernoff bound a binomial count
    has. The FDR is the expectation of the false-discovery proportion, not a probability, so
    this bound on the average replaces the binomial test. Fails with probability <= alpha
    when the promise holds; deterministic under fixed seeds.
    """
    runs, average = len(values), float(np.mean(values))
    p_value = 1.0 if average <= bound else math.exp(-runs * float(bernoulli_kl(average, bound)))
    assert p_value >= alpha, (
        f"average {average:.4f} over {runs} runs is significantly above {bound}: p = {p_value:.3g}"
    )


def test_the_mean_test_can_fail() -> None:
    assert_mean_at_most([0.1] * 1000, 0.1)
    with pytest.raises(AssertionError, match="significantly above"):
        assert_mean_at_most([0.14] * 1000, 0.1)


def _pool_run(q: float, eps: float, seed: int) -> tuple[Algorithm, RewardModel]:
    alg = FDRThresholding(POOL_MEANS.size, threshold=BAR, q=q, eps=eps, budget=1000)
    return alg, BernoulliRewards(POOL_MEANS, seed=seed)


@pytest.mark.slow
@pytest.mark.parametrize(("eps", "runs"), [(0.0, 1000), (0.05, 200)])
def test_both_lists_keep_their_false_discovery_rate(
    eps: float, runs: int, run_pool: Executor
) -> None:
    q = 0.1
    bans, accepts, sizes = [], [], []
    # 50 questions per worker on average, asked 50 at a time
    build = partial(_pool_run, q, eps)
    for result in simulate_many(build, range(runs), batch=50, executor=run_pool):
        banned, accepted = false_discovery_proportions(result, POOL_MEANS, eps)
        bans.append(banned)
        accepts.append(accepted)
        sizes.append(len(result.arms_with(Decision.BELOW)) + len(result.arms_with(Decision.ABOVE)))
    print(
        f"eps {eps}: FDR of bans {np.mean(bans):.4f}, of accepts {np.mean(accepts):.4f}, "
        f"{np.mean(sizes):.2f} workers decided per run ({runs} runs)"
    )
    assert np.mean(sizes) > 0.5  # there are discoveries to get wrong
    assert_mean_at_most(bans, q)
    assert_mean_at_most(accepts, q)


@pytest.mark.slow
async def test_false_discovery_rate_under_delays_and_batches(tmp_path: Path) -> None:
    """Answers out of order (exponential latency), released in groups of 7, up to 40 in
    flight, through the orchestrator and a real journal. The pool mixes clear workers (decided
    early, so the e-BH cut drops) with twelve near or at the bar; 30 questions per worker."""
    q, runs = 0.1, 100
    means = np.concatenate([np.full(3, 0.25), np.full(3, 0.95), np.linspace(0.5, 0.7, 9)])
    means = np.concatenate([means, np.full(5, BAR)])
    pool = WorkerPool(tuple(f"w{i}" for i in range(means.size)), tuple(means))
    db = str(tmp_path / "runs.db")
    bans, accepts, decided = [], [], 0
    for seed in range(runs):
        plan = make_plan(
            pool, "fdr-thresholding", {"threshold": BAR, "q": q, "budget": 600}, seed=seed,
            options=RunOptions(concurrency=40, timeout=5.0),
            oracle_options={"latency": "exponential:0.0005", "batch_release": 7},
        )  # fmt: skip
        _, result = await start_run(plan, db)
        assert result.stop_reason is StopReason.BUDGET_SPENT
        banned, accepted = false_discovery_proportions(result, means, 0.0)
        bans.append(banned)
        accepts.append(accepted)
        decided += sum(w.decision is not Decision.UNDECIDED for w in result.workers)
    print(
        f"orchestrated: FDR of bans {np.mean(bans):.4f}, of accepts {np.mean(accepts):.4f}, "
        f"{decided / runs:.2f} workers decided per run"
    )
    assert decided > runs  # more than one decision per run on average
    assert_mean_at_most(bans, q)
    assert_mean_at_most(accepts, q)


# ------------------------------------------------------------------ kept lists, by definition
def lists_by_definition(alg: FDRThresholding) -> tuple[BoolArray, BoolArray]:
    """The class docstring's lists from every worker's values, as a full pass computes them:
    e-BH over the roster (absent workers at e-value 0) of the candidates' e-values (at least
    min_answers answers, not settled on the other side), a worker in both sets sent to the
    side with the larger e-value (a tie to ABOVE) until the sets are disjoint, each joined
    with its settled workers."""
    below, above = alg.log_e_below, alg.log_e_above
    eligible = alg.stats.count >= alg.min_answers
    may_ban, may_accept = eligible & ~alg.settled_above, eligible & ~alg.settled_below
    absent = np.zeros(alg.max_workers - alg.n_arms if alg.max_workers else 0)

    def e_bh_over_roster(log_e: FloatArray, candidates: BoolArray) -> BoolArray:
        with np.errstate(over="ignore"):
            values = np.where(candidates, np.exp(log_e), 0.0)
        return e_bh(np.concatenate([values, absent]), alg.q)[: alg.n_arms]

    while True:
        banned, accepted = e_bh_over_roster(below, may_ban), e_bh_over_roster(above, may_accept)
        both = banned & accepted
        if not both.any():
            return banned | alg.settled_below, accepted | alg.settled_above
        goes_above = both & (above >= below)
        may_ban &= ~goes_above
        may_accept &= ~(both & ~goes_above)


def round_robin_by_definition(alg: FDRThresholding, limit: int) -> list[int]:
    """``limit`` asks of one: released pulls first, again, then the open worker with the
    fewest answered + pending, ties to the lowest index, its count raised by each pick."""
    picks = list(alg._retry)[:limit]
    effective = (alg.stats.count + alg.pending).astype(np.int64)
    np.add.at(effective, picks, 1)
    open_ = alg.available & ~(alg.banned | alg.accepted)
    for _ in range(limit - len(picks)):
        arms = np.flatnonzero(open_)
        if arms.size == 0:
            break
        arm = int(arms[np.argmin(effective[arms])])
        picks.append(arm)
        effective[arm] += 1
    return picks


@pytest.mark.parametrize("seed", range(60))
def test_kept_lists_and_schedule_follow_their_definitions(seed: int) -> None:
    """After every call of a random script (batches, answers late and out of order, released
    pulls, workers leaving, coming back and joining, questions for one worker, pickles), the
    lists kept from the changes are those of a full pass, each batch is round robin, and
    ``verdict_changes`` names each settled worker once."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    eps = float(rng.choice([0.0, 0.05, 0.1]))
    alg = FDRThresholding(
        n, threshold=0.6, q=float(rng.choice([0.1, 0.3])), eps=eps, max_workers=n + 10,
        min_answers=int(rng.integers(1, 4)), seed=seed,
    )  # fmt: skip
    means = list(rng.random(n))
    pending: list[tuple[int, int]] = []
    seen: list[int] = []
    assert alg.verdict_changes() is None  # starts the log
    for _ in range(400):
        step = rng.random()
        if step < 0.4:
            limit = int(rng.integers(1, 10))
            alg._ensure_fresh()
            expected = round_robin_by_definition(alg, limit)
            ask = alg.ask(limit)
            if ask.done:
                break
            if not ask.wait:
                assert ask.arms.tolist() == expected
            pending += list(zip(ask.ids.tolist(), ask.arms.tolist(), strict=True))
        elif step < 0.8 and pending:
            order = rng.permutation(len(pending))
            told, pending = [pending[i] for i in order[:3]], [pending[i] for i in order[3:]]
            rewards = [float(rng.random() < means[arm]) for _, arm in told]
            alg.tell_many([pull for pull, _ in told], rewards)
        elif step < 0.85 and pending:
            alg.release(pending.pop(int(rng.integers(len(pending))))[0])
        elif step < 0.9:
            arm = int(rng.integers(alg.n_arms))
            if alg.available[arm]:
                alg.set_unavailable(arm, "left")
            else:
                alg.set_available(arm)
        elif step < 0.95:
            ask = alg.ask_for(int(rng.integers(alg.n_arms)))
            pending += list(zip(ask.ids.tolist(), ask.arms.tolist(), strict=True))
        elif alg.n_arms < n + 10 and rng.random() < 0.5:
            alg.add_workers(1)
            means.append(float(rng.random()))
        else:
            alg = pickle.loads(pickle.dumps(alg))
        alg._ensure_fresh()
        banned, accepted = lists_by_definition(alg)
        assert alg.banned.tolist() == banned.tolist()
        assert alg.accepted.tolist() == accepted.tolist()
        changes = alg.verdict_changes()
        assert changes is not None
        seen += changes.tolist()
    last = alg.verdict_changes()  # a run that ended settled the lists at its last ask
    assert last is not None
    assert sorted(seen + last.tolist()) == np.flatnonzero(alg.settled).tolist()  # each, once


def test_a_snapshot_from_before_the_kept_lists_goes_on_alike() -> None:
    """State pickled when each refresh recomputed the lists (no kept sets, the lists' log
    e-values stored beside them) is rebuilt on load and goes on as a fresh run does."""
    alg = _make(eps=0.05, min_answers=2, seed=3)
    model = BernoulliRewards(MEANS, seed=5)
    for _ in range(6):
        ask = alg.ask(5)
        alg.tell_many(ask.ids, model.sample(ask.arms, ask.seqs))
    state = dict(alg.__dict__)
    for kept in ("_ebh", "_touched", "_dual", "_fresh", "_listed", "_n_decided", "_n_open",
                 "_queue", "_changes"):  # fmt: skip
        del state[kept]
    state["log_e_below"], state["log_e_above"] = alg.log_e_below, alg.log_e_above
    old = FDRThresholding.__new__(FDRThresholding)
    old.__setstate__(state)
    twin = pickle.loads(pickle.dumps(alg))
    assert (
        simulate(old, model).to_dict() == simulate(twin, BernoulliRewards(MEANS, seed=5)).to_dict()
    )
