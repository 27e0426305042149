"""CrowdPrior: decisions recomputed independently round by round, the ask/tell contract, the
per-worker bound, cost mode, and the Bayesian promise on crowds drawn from a Beta prior."""

from __future__ import annotations

from concurrent.futures import Executor
from functools import partial
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from stats_helpers import assert_rate_at_most, binomial_sf

from screener.algorithms import Algorithm, Decision, StopReason, create_algorithm
from screener.algorithms.thresholding import CrowdPrior
from screener.errors import ConfigError
from screener.simulation import BernoulliRewards, RewardModel, simulate, simulate_many
from screener.stats.confseq import mixture_bounds
from screener.stats.prior import (
    GridPrior,
    PriorSet,
    StoppingCosts,
    StoppingTable,
    beta_prior_region,
    fit_beta_prior,
    stopping_table,
)


def _crowd(n: int, seed: int) -> NDArray[np.float64]:
    return np.random.default_rng(seed).beta(6.0, 2.0, n)


def _round(
    algorithm: CrowdPrior,
    means: NDArray[np.float64],
    rng: np.random.Generator,
    log: list[tuple[int, float]],
) -> bool:
    ask = algorithm.ask(algorithm.n_arms)
    if ask.done:
        return False
    rewards = (rng.random(len(ask)) < means[ask.arms]).astype(np.float64)
    algorithm.tell_many(ask.ids, rewards)
    log += zip(ask.arms.tolist(), rewards.tolist(), strict=True)
    return True


def _run_out(
    algorithm: CrowdPrior, means: NDArray[np.float64], rng: np.random.Generator
) -> list[tuple[int, float]]:
    """Drive the run to its end, one round per ask; the answers in the order told."""
    answers: list[tuple[int, float]] = []
    for _ in range(10_000):
        if not _round(algorithm, means, rng, answers):
            return answers
    raise AssertionError("crowd-prior did not stop")


@pytest.mark.parametrize(
    ("costs", "robust", "pilot"),
    [
        (None, 0.0, None),
        (None, 0.95, None),
        ((30.0, 20.0), 0.0, None),
        ((30.0, 20.0), 0.0, 15),
        ((10.0, 10.0), 0.0, 15),
        (None, 0.95, 15),
    ],
    ids=str,
)
def test_decisions_match_an_answer_by_answer_reference(
    costs: tuple[float, float] | None, robust: float, pilot: int | None
) -> None:
    """A plain reference: refit after every n answers (every pilot-size answers during a
    pilot, and at its end), judge each worker on its own answer (robust: under every prior of
    the region; its own anytime interval first, whatever the prior), and the workers outside a
    pilot at its end, before any question."""
    means = _crowd(60, 1)
    params: dict[str, Any] = {"threshold": 0.6, "q": 0.1, "max_answers": 12, "robust": robust}
    if costs is not None:
        params |= {"false_ban": costs[0], "missed_bad": costs[1]}
    algorithm = CrowdPrior(means.size, pilot=pilot, **params)
    in_pilot = algorithm.in_pilot.copy()
    assert in_pilot.sum() == (pilot or means.size)
    rng = np.random.default_rng(2)
    answers = _run_out(algorithm, means, rng)
    successes = np.zeros(means.size)
    counts = np.zeros(means.size)
    state = np.zeros(means.size, dtype=np.int8)
    fewest = np.where(in_pilot, 3, 0)
    cost = None if costs is None else StoppingCosts(1.0, *costs)
    piloting, period, since = pilot is not None, int(in_pilot.sum()), 0

    def refit() -> tuple[GridPrior, PriorSet, StoppingTable | None]:
        prior = fit_beta_prior(successes, counts)
        region = beta_prior_region(successes, counts, level=robust or 0.5)
        table = (
            None if cost is None else stopping_table(prior, 0.6, cost, horizon=12, min_answers=0)
        )
        return prior, region, table

    def judge(arm: int) -> None:
        if state[arm] or counts[arm] < fewest[arm]:
            return
        s, n = [successes[arm]], [counts[arm]]
        own_low, own_high = mixture_bounds(s, n, 0.1)  # its own answers, whatever the prior
        own_ban, own_accept = bool(own_high[0] < 0.6), bool(own_low[0] >= 0.6)
        if not identified:
            state[arm] = 1 if own_ban else 2 if own_accept else 0
            return
        if robust:
            low, high = region.prob_below_range(s, n, 0.6)
            ban, accept = low[0] >= 0.9, high[0] <= 0.1
        elif table is None:
            p_bad = prior.prob_below(s, n, 0.6)[0]
            ban, accept = p_bad >= 0.9, p_bad <= 0.1
        else:
            action = table.lookup(s, n)[0][0]
            ban, accept = action == StoppingTable.BAN, action == StoppingTable.ACCEPT
        ban, accept = own_ban or (ban and not own_accept), own_accept or (accept and not own_ban)
        state[arm] = 1 if ban else 2 if accept else 0

    prior = GridPrior.uniform()
    region = PriorSet(prior.grid, prior.weights[:, None])
    table = None if cost is None else stopping_table(prior, 0.6, cost, horizon=12, min_answers=3)
    identified = False

    def identify() -> None:  # at a refit: judge the workers held back for want of a fit
        nonlocal identified
        if not identified and (counts >= 2).sum() >= 2:
            identified = True
            for held in np.flatnonzero(counts >= np.maximum(fewest, 1)):
                judge(int(held))

    for arm, reward in answers:
        assert in_pilot[arm] or not piloting, "a worker outside the pilot asked during it"
        successes[arm] += reward
        counts[arm] += 1
        since += 1
        if since == period:
            prior, region, table = refit()
            identify()
            since = 0
        judge(arm)
        if piloting and not (in_pilot & (state == 0) & (counts < 12)).any():
            piloting, period, since = False, means.size, 0
            prior, region, table = refit()
            identify()
            if cost is not None:  # decisions unasked only when the whole region agrees
                wide = beta_prior_region(successes, counts, level=0.95)
                first = {
                    int(stopping_table(GridPrior(wide.grid, w), 0.6, cost, horizon=12,
                                       min_answers=0).action[0, 0])
                    for w in wide.weights.T
                }  # fmt: skip
                if len(first) > 1 or first == {StoppingTable.CONTINUE}:
                    continue
            for other in np.flatnonzero(~in_pilot):
                judge(int(other))
    np.testing.assert_array_equal(algorithm.state, state)
    assert (state > 0).sum() > 10
    unasked = (state > 0) & (counts == 0)
    assert algorithm.result().extra["decided_unasked"] == unasked.sum()
    assert unasked.sum() in (0, means.size - (pilot or means.size))  # one state: all or none


def _answer(algorithm: CrowdPrior, arm: int, reward: float) -> None:
    ask = algorithm.ask(algorithm.n_arms)
    picked = np.flatnonzero(ask.arms == arm)
    for pull_id in ask.ids:  # only arm's question is answered; the others go back
        if pull_id != ask.ids[picked[0]]:
            algorithm.release(int(pull_id))
    algorithm.tell(int(ask.ids[picked[0]]), reward)


def test_no_decision_before_the_answers_identify_a_prior() -> None:
    """Workers who leave after one answer (most of a real crowd's tail) delay the fit: a worker
    wrong on its first three answers was banned under the uniform placeholder (P(below 0.6) =
    0.974), a prior no answer had ruled in. It waits for a fit, and is judged when one comes."""
    algorithm = CrowdPrior(4, threshold=0.6, robust=0.0)
    for arm in range(4):
        _answer(algorithm, arm, 1.0 if arm else 0.0)  # the first refit: one answer each
    for arm in (2, 3):
        algorithm.set_unavailable(arm, "left")
    _answer(algorithm, 0, 0.0)
    _answer(algorithm, 0, 0.0)
    assert not algorithm.identified and algorithm.state[0] == 0  # 0 of 3, not yet judged
    _answer(algorithm, 1, 1.0)
    _answer(algorithm, 1, 1.0)  # the second refit: workers 0 and 1 have two answers or more
    assert algorithm.identified
    p_bad = algorithm.prior.prob_below([0.0], [3], 0.6)[0]
    assert p_bad >= 0.9  # so the refit that identifies the prior bans worker 0, under the fit
    assert algorithm.state[0] == 1 and algorithm.decided_at[0] == pytest.approx(p_bad)


def test_a_pilot_is_a_seeded_choice_and_says_what_it_decided_unasked() -> None:
    means = np.full(60, 0.95)
    first, again, other = (
        CrowdPrior(60, threshold=0.6, pilot=20, false_ban=10, missed_bad=10, seed=seed)
        for seed in (5, 5, 6)
    )
    np.testing.assert_array_equal(first.in_pilot, again.in_pilot)
    assert not np.array_equal(first.in_pilot, other.in_pilot)
    result = simulate(first, BernoulliRewards(means, seed=1))
    lines = {w.arm: w for w in result.workers}
    outside = [lines[int(a)] for a in np.flatnonzero(~first.in_pilot)]
    assert all(w.pulls == 0 and w.decision is Decision.ABOVE for w in outside)
    assert all("prior alone (no question asked)" in w.reason for w in outside)
    assert all(lines[int(a)].pulls >= 3 for a in np.flatnonzero(first.in_pilot))
    assert result.extra["pilot_workers"] == 20 and result.extra["decided_unasked"] == 40
    assert "pilot of 20 workers" in (result.guarantee or "")


def test_cost_mode_decides_unasked_only_when_every_prior_of_the_region_agrees() -> None:
    """Ten pilot workers right on their three answers each: the fitted Beta alone would accept
    everyone else unasked, but Betas with a tail under the bar fit those answers too."""
    algorithm = CrowdPrior(40, threshold=0.6, pilot=10, false_ban=10, missed_bad=10, seed=5)
    result = simulate(algorithm, BernoulliRewards(np.full(40, 0.95), seed=1))
    assert algorithm.table is not None and algorithm.table.action[0, 0] == StoppingTable.ACCEPT
    assert result.extra["decided_unasked"] == 0
    assert all(w.pulls >= 1 for w in result.workers)


def test_a_pilot_ends_when_its_last_worker_leaves() -> None:
    # Missed bad workers cost little: under the uniform prior (nothing fitted) the table
    # accepts before any answer, but without two workers with two answers there is no fitted
    # prior to decide on, so everyone else is asked.
    algorithm = CrowdPrior(8, threshold=0.6, pilot=2, false_ban=100, missed_bad=1)
    pilot = np.flatnonzero(algorithm.in_pilot)
    assert set(algorithm.ask(8).arms.tolist()) <= set(pilot.tolist())
    for arm in pilot:
        algorithm.set_unavailable(int(arm), "left")
    assert not algorithm.piloting
    assert algorithm.table is not None and algorithm.table.action[0, 0] == StoppingTable.ACCEPT
    ask = algorithm.ask(8)
    assert set(ask.arms.tolist()) == set(np.flatnonzero(~algorithm.in_pilot).tolist())


@pytest.mark.parametrize(("robust", "bound"), [(0.0, 9), (None, 20)])
def test_min_and_max_answers_bound_every_worker(robust: float | None, bound: int) -> None:
    # (Robust decisions need more answers: at 9 they decide none of these 40 workers.)
    means = _crowd(40, 3)
    algorithm = CrowdPrior(
        means.size, threshold=0.75, min_answers=4, max_answers=bound, q=0.1, robust=robust
    )
    result = simulate(algorithm, BernoulliRewards(means, seed=4))
    pulls = np.array([w.pulls for w in result.workers])
    assert pulls.max() <= bound
    decided = [w for w in result.workers if w.decision is not Decision.UNDECIDED]
    assert decided and all(w.pulls >= 4 for w in decided)
    assert result.extra["max_questions_per_worker"] == bound
    undecided = [w for w in result.workers if w.decision is Decision.UNDECIDED]
    assert all(w.pulls == bound and f"cap of {bound} questions" in w.reason for w in undecided)
    assert result.stop_reason is StopReason.WORKERS_EXHAUSTED or not undecided


def test_cost_mode_decides_everyone_by_the_horizon() -> None:
    means = _crowd(50, 5)
    algorithm = CrowdPrior(means.size, threshold=0.6, false_ban=100, missed_bad=100, max_answers=15)
    result = simulate(algorithm, BernoulliRewards(means, seed=6))
    assert result.condition_met
    assert all(w.decision in (Decision.ABOVE, Decision.BELOW) for w in result.workers)
    assert max(w.pulls for w in result.workers) <= 15
    assert "Bayes-optimal" in (result.guarantee or "")


def test_one_question_in_flight_per_worker() -> None:
    # (That a batch equals single asks is the conformance suite's batch_asks check.)
    # min_answers=1: every answer may decide, so one question in flight per worker (before
    # min_answers the window is filled further: test_concurrency).
    batched = CrowdPrior(5, threshold=0.6, min_answers=1)
    big = batched.ask(8)
    assert len(big) == 5  # one per worker, however many are asked for
    assert batched.ask(1).wait  # every worker has its question: wait for answers
    batched.tell(int(big.ids[2]), 1.0)
    again = batched.ask(3)
    np.testing.assert_array_equal(again.arms, [2])
    assert batched.tell(int(big.ids[2]), 1.0).name == "DUPLICATE"


def test_release_reasks_and_unavailable_is_undecided() -> None:
    algorithm = CrowdPrior(3, threshold=0.6)
    first = algorithm.ask(3)
    assert algorithm.release(int(first.ids[0]))
    retry = algorithm.ask(1)
    assert int(retry.arms[0]) == 0 and int(retry.seqs[0]) == 0
    algorithm.set_unavailable(1, "left the task")
    lines = {w.arm: w for w in algorithm.result().workers}
    assert lines[1].decision is Decision.UNDECIDED
    assert "left the task" in lines[1].reason or lines[1].pulls == 0


def test_rebuilt_from_params_makes_the_same_run() -> None:
    means = _crowd(30, 7)
    original = CrowdPrior(means.size, threshold=0.7, false_ban=30, missed_bad=10, seed=3)
    first = simulate(original, BernoulliRewards(means, seed=8))
    rebuilt = create_algorithm("crowd-prior", means.size, original.params())
    second = simulate(rebuilt, BernoulliRewards(means, seed=8))
    assert first.to_dict() == second.to_dict()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"q": 0.7}, "q must lie"),
        ({"false_ban": 10}, "both false_ban and missed_bad"),
        ({"min_answers": 0}, "min_answers"),
        ({"min_answers": 5, "max_answers": 3}, "max_answers"),
        ({"prior": "gauss"}, "prior"),
        ({"threshold": 1.0}, "strictly inside"),
        ({"robust": 1.0}, "robust must lie"),
        ({"robust": 0.9, "prior": "npmle"}, "need the Beta prior"),
        ({"robust": 0.9, "false_ban": 1, "missed_bad": 1}, "posterior mode"),
        ({"pilot": 1}, "pilot"),
        ({"pilot": 5, "min_answers": 1}, "a pilot needs min_answers >= 2"),
        ({"fit_check": 1.0}, "fit_check must lie"),
        ({"robust": 0.9, "prior": "npmle"}, "need the Beta prior"),
    ],
)
def test_bad_parameters_are_one_clear_error(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        CrowdPrior(4, **({"threshold": 0.6} | params))


def _fitting_crowd(q: float, robust: float | None, seed: int) -> tuple[Algorithm, RewardModel]:
    means = _crowd(150, 100 + seed)
    algorithm = CrowdPrior(means.size, threshold=0.7, q=q, seed=seed, robust=robust)
    return algorithm, BernoulliRewards(means, seed=seed)


@pytest.mark.slow
@pytest.mark.parametrize("robust", [None, 0.0])
def test_bayesian_promise_when_the_prior_fits(robust: float | None, run_pool: Executor) -> None:
    """Accuracies drawn from a Beta, so the fitted family is right: over many crowds, the
    share of wrong bans (and of wrong acceptances) must stay at most q. One-sided test on the
    pooled share: each decision is wrong with posterior probability <= q given the data."""
    q = 0.1
    wrong_bans = bans = wrong_accepts = accepts = 0
    seeds = range(25)
    results = simulate_many(partial(_fitting_crowd, q, robust), seeds, executor=run_pool)
    for seed, result in zip(seeds, results, strict=True):
        means = _crowd(150, 100 + seed)
        for line in result.workers:
            bad = means[line.arm] < 0.7
            if line.decision is Decision.BELOW:
                bans += 1
                wrong_bans += int(not bad)
            elif line.decision is Decision.ABOVE:
                accepts += 1
                wrong_accepts += int(bad)
    for wrong, total in ((wrong_bans, bans), (wrong_accepts, accepts)):
        assert total > 200
        share = wrong / total
        # A one-sided 99% normal bound on the pooled share against q.
        assert share - 2.33 * np.sqrt(q * (1 - q) / total) <= q, (wrong, total)


def _good_crowd_with_a_pilot(seed: int) -> tuple[Algorithm, RewardModel]:
    means = np.random.default_rng(200 + seed).beta(8.0, 2.0, 150)
    algorithm = CrowdPrior(means.size, threshold=0.6, q=0.1, pilot=40, seed=seed, robust=0.0)
    return algorithm, BernoulliRewards(means, seed=seed)


@pytest.mark.slow
def test_bayesian_promise_holds_for_decisions_on_the_prior_alone(run_pool: Executor) -> None:
    """A good crowd (Beta(8, 2), 7% under the bar of 0.6), a pilot of 40 and decisions under
    the fitted prior alone (robust=0; the robust region is too wide after such a pilot to
    decide anyone unasked): in about half the crowds the other 110 workers are accepted
    unasked. The pooled share of wrong acceptances, unasked ones included, must stay at most q
    (one-sided 99% normal bound), and the path must be exercised."""
    q, seeds = 0.1, range(25)
    results = simulate_many(_good_crowd_with_a_pilot, seeds, executor=run_pool)
    wrong = accepts = unasked = 0
    for seed, result in zip(seeds, results, strict=True):
        means = np.random.default_rng(200 + seed).beta(8.0, 2.0, 150)
        unasked += result.extra["decided_unasked"]
        for line in result.workers:
            if line.decision is Decision.ABOVE:
                accepts += 1
                wrong += int(means[line.arm] < 0.6)
    assert unasked > 500, unasked
    share = wrong / accepts
    assert share - 2.33 * np.sqrt(q * (1 - q) / accepts) <= q, (wrong, accepts)


# ------------------------------------------------------------------ the prior's fit, checked
def _two_betas(size: int, seed: int) -> NDArray[np.float64]:
    """Mostly good workers (Beta(40, 6), mean 0.87) and a fifth of spammers (Beta(5, 15))."""
    rng = np.random.default_rng(seed)
    return np.where(rng.random(size) < 0.2, rng.beta(5.0, 15.0, size), rng.beta(40.0, 6.0, size))


def test_a_crowd_of_two_blocks_is_flagged_above_the_decisions() -> None:
    means = _two_betas(400, 1)
    algorithm = CrowdPrior(means.size, threshold=0.6, seed=1)
    result = simulate(algorithm, BernoulliRewards(means, seed=1))
    extra = result.extra
    assert extra["prior_misfit"] is True and extra["prior_misfit_family"] == "beta"
    assert 0 < extra["prior_misfit_at_answers"] <= result.total_pulls
    bans = sum(w.decision is Decision.BELOW for w in result.workers)
    assert 0 <= extra["bans_before_misfit"] <= bans
    (warning,) = extra["warnings"]
    assert warning.startswith("THE CROWD DOES NOT FIT THE PRIOR: the Beta prior failed")
    assert f"after {extra['bans_before_misfit']} bans" in warning
    assert extra["prior_looks"] >= 2 and extra["prior_check_level"] == pytest.approx(0.025)


def test_a_beta_crowd_says_nothing_and_the_check_can_be_turned_off() -> None:
    means = _crowd(150, 2)
    checked = simulate(CrowdPrior(150, threshold=0.6), BernoulliRewards(means, seed=3))
    assert checked.extra["prior_misfit"] is False and checked.extra["prior_family"] == "beta"
    assert checked.extra["prior_looks"] >= 2 and 0.0 < checked.extra["prior_check_p"] <= 1.0
    assert (checked.guarantee or "").startswith("Bayesian, robust")
    assert checked.extra["warnings"] == []
    unchecked = simulate(
        CrowdPrior(150, threshold=0.6, fit_check=0), BernoulliRewards(means, seed=3)
    )
    assert unchecked.extra["prior_looks"] == 0 and unchecked.extra["prior_check_p"] is None
    # the looks do not move the decisions while the Beta stays in force
    assert [w.decision for w in checked.workers] == [w.decision for w in unchecked.workers]


def _beta_crowd_run(seed: int) -> tuple[Algorithm, RewardModel]:
    a, b, bar = ((6.0, 2.0, 0.6), (8.0, 3.0, 0.7), (2.0, 2.0, 0.5))[seed % 3]
    means = np.random.default_rng(300 + seed).beta(a, b, 150)
    return CrowdPrior(150, threshold=bar, seed=seed), BernoulliRewards(means, seed=seed)


@pytest.mark.slow
def test_false_alarms_on_crowds_the_beta_fits(run_pool: Executor) -> None:
    """120 crowds drawn from three Betas, screened at a bar each: the misfit flag is raised on
    at most fit_check = 5% of them (one-sided binomial test at 1%)."""
    results = simulate_many(_beta_crowd_run, range(120), executor=run_pool)
    flags = sum(bool(r.extra["prior_misfit"]) for r in results)
    assert_rate_at_most(flags, 120, 0.05)


def _two_block_run(min_answers: int, seed: int) -> tuple[Algorithm, RewardModel]:
    means = _two_betas(400 if min_answers == 3 else 300, 400 + seed)
    algorithm = CrowdPrior(means.size, threshold=0.6, seed=seed, min_answers=min_answers)
    return algorithm, BernoulliRewards(means, seed=seed)


@pytest.mark.slow
def test_the_check_finds_a_block_of_spammers(run_pool: Executor) -> None:
    """Power: 30 crowds of 400 workers, a fifth of them spammers (Beta(5, 15)) beside good
    workers (Beta(40, 6)): the flag is raised on at least 80% of them (the test fails when
    the flags are significantly fewer: P(X <= flags | 0.8) < 1%)."""
    results = simulate_many(partial(_two_block_run, 3), range(30), executor=run_pool)
    flags = sum(bool(r.extra["prior_misfit"]) for r in results)
    assert 1.0 - binomial_sf(flags + 1, 30, 0.8) >= 0.01, flags


@pytest.mark.slow
def test_decisions_under_the_two_beta_prior_keep_the_promise(run_pool: Executor) -> None:
    """The same crowds, 300 workers, no decision before 8 answers: the look at 6 answers per
    worker finds the Beta failing and moves to the two-Beta prior before the first decision in
    most runs; the pooled shares of wrong bans and of wrong acceptances stay at most q = 0.1
    (one-sided binomial tests at 1%)."""
    seeds = range(30)
    results = simulate_many(partial(_two_block_run, 8), seeds, executor=run_pool)
    before = sum(
        r.extra["prior_two_beta_from_answers"] is not None
        and r.extra["prior_two_beta_from_answers"] <= 7 * 300
        for r in results
    )
    assert before >= 15, before
    counts = {"bans": 0, "wrong_bans": 0, "accepts": 0, "wrong_accepts": 0}
    for seed, result in zip(seeds, results, strict=True):
        means = _two_betas(300, 400 + seed)
        for line in result.workers:
            bad = means[line.arm] < 0.6
            if line.decision is Decision.BELOW:
                counts["bans"] += 1
                counts["wrong_bans"] += int(not bad)
            elif line.decision is Decision.ABOVE:
                counts["accepts"] += 1
                counts["wrong_accepts"] += int(bad)
    assert counts["bans"] > 500 and counts["accepts"] > 2000, counts
    assert_rate_at_most(counts["wrong_bans"], counts["bans"], 0.1)
    assert_rate_at_most(counts["wrong_accepts"], counts["accepts"], 0.1)


def test_workers_who_join_after_the_final_look_lead_to_another_at_half_the_level() -> None:
    means = _crowd(60, 8)
    algorithm = CrowdPrior(means.size, threshold=0.6, seed=8)
    first = simulate(algorithm, BernoulliRewards(means, seed=9))
    looks = first.extra["prior_looks"]
    assert algorithm.fit.over and first.extra["prior_check_level"] == pytest.approx(0.025)
    algorithm.add_workers(30)
    assert not algorithm.fit.over
    more = np.concatenate([means, _crowd(30, 10)])
    second = simulate(algorithm, BernoulliRewards(more, seed=11))
    assert second.extra["prior_looks"] > looks
    assert second.extra["prior_check_level"] == pytest.approx(0.0125)


def _alone(rate: float, seed: int, answers: int = 40) -> CrowdPrior:
    """One worker screened alone (no crowd to fit a prior on) through ``answers`` answers."""
    algorithm = CrowdPrior(1, threshold=0.6, max_answers=answers, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(answers):
        ask = algorithm.ask_for(0)
        if len(ask) == 0:
            break
        algorithm.tell(int(ask.first_id), float(rng.random() < rate))
    return algorithm


def test_a_lone_worker_wrong_on_every_answer_is_banned_on_its_own_answers() -> None:
    algorithm = _alone(0.0, seed=0)
    assert not algorithm.identified  # no crowd prior: one worker
    assert algorithm.state[0] == 1 and 3 <= algorithm.stats.count[0] <= 10
    assert "its own" in algorithm.explain(0) and "whatever the crowd prior" in algorithm.explain(0)


def test_a_prior_of_good_workers_never_outvotes_a_workers_own_answers() -> None:
    """Twenty workers right on every answer fit a prior with no mass under the bar; a worker
    wrong on every answer is banned all the same, on its own answers."""
    algorithm = CrowdPrior(21, threshold=0.6, max_answers=40, robust=0.0, seed=0)
    for _ in range(40):
        ask = algorithm.ask(21)
        if len(ask) == 0:
            break
        algorithm.tell_many(ask.ids, (ask.arms != 20).astype(float))
    assert algorithm.state[20] == 1 and (algorithm.state[:20] == 2).all()


def test_own_answer_bans_of_a_worker_at_the_bar_keep_the_level() -> None:
    """The own-answers route alone (one worker, no prior): a worker exactly at the bar is
    banned with probability at most q = 0.1, tested over 300 seeded runs of 40 answers."""
    bans = sum(int(_alone(0.6, seed=seed).state[0] == 1) for seed in range(300))
    assert_rate_at_most(bans, 300, 0.1)
    assert bans < 300  # the test could fail: some runs do not ban
