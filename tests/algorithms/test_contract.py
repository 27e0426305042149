"""The ask/tell contract for the k-sigma algorithms, beyond what the conformance suite
(``screener.testing.algorithm_conformance``, run on every algorithm by
test_algorithm_conformance.py) checks: hand-worked cases, regressions, the error wording,
pending answers, availability and budget endings, parameter validation."""

from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import Any

import numpy as np
import pytest
from driver import drive

from screener.algorithms import (
    Ask,
    AskState,
    Decision,
    IteratedBestArm,
    NaiveRoundRobin,
    RoundRobin,
    StopReason,
    TellOutcome,
    WeightedRoundRobin,
)
from screener.algorithms.ksigma import KSigmaAlgorithm
from screener.errors import ConfigError, InvalidRewardError, ScreenerError, UnknownPullError

ALGORITHMS: list[type[KSigmaAlgorithm]] = [
    RoundRobin,
    WeightedRoundRobin,
    NaiveRoundRobin,
    IteratedBestArm,
]
BY_NAME = pytest.mark.parametrize("cls", ALGORITHMS, ids=lambda c: c.name)
# Algorithms that keep handing out pulls while answers are in flight from the first round on
# (IB waits for its first round: it cannot choose a best/challenger pair without answers).
NEVER_WAITING = pytest.mark.parametrize(
    "cls", [RoundRobin, WeightedRoundRobin, NaiveRoundRobin], ids=lambda c: c.name
)
GUARANTEED = pytest.mark.parametrize("cls", [RoundRobin, WeightedRoundRobin], ids=["rr", "wrr"])

N = 6
MEANS = np.array([0.3, 0.35, 0.4, 0.45, 0.5, 0.95])  # k = 1.5: theta ~ 0.81, arm 5 an outlier
EASY = np.array([0.1, 0.15, 0.2, 0.25, 0.3, 1.0])  # RR and WRR stop after ~1000 answers
BASE: dict[str, Any] = {"k": 1.5, "delta": 0.1}


def make(cls: type[KSigmaAlgorithm], n: int = N, **params: Any) -> KSigmaAlgorithm:
    return cls(n, **(BASE | params))


def _same_ask(left: Ask, right: Ask) -> None:
    assert left.state is right.state
    np.testing.assert_array_equal(left.arms, right.arms)
    np.testing.assert_array_equal(left.seqs, right.seqs)
    np.testing.assert_array_equal(left.ids, right.ids)


# ------------------------------------------------ twins (the suite's batch_asks, by hand)
# Kept for the regressions below and for test_ib.py; the rule itself is the suite's.
def _ask_both(batched: KSigmaAlgorithm, single: KSigmaAlgorithm, limit: int) -> Ask:
    """``batched.ask(limit)`` must equal up to ``limit`` calls of ``single.ask(1)``."""
    big = batched.ask(limit)
    parts: list[Ask] = []
    stopped: Ask | None = None
    while len(parts) < limit:
        one = single.ask(1)
        if len(one) == 0:
            stopped = one
            break
        assert len(one) == 1
        parts.append(one)
    if not parts:
        assert stopped is not None
        _same_ask(big, stopped)
        return big
    assert big.state is AskState.PULL
    if stopped is not None:
        # Answers are needed (or the budget is spent): no tell came in between, so it can only
        # be a wait, never done, once pulls are in flight.
        assert stopped.state is AskState.WAIT
    np.testing.assert_array_equal(big.arms, np.concatenate([p.arms for p in parts]))
    np.testing.assert_array_equal(big.seqs, np.concatenate([p.seqs for p in parts]))
    np.testing.assert_array_equal(big.ids, np.concatenate([p.ids for p in parts]))
    return big


def _twin_run(
    cls: type[KSigmaAlgorithm],
    seed: int,
    params: dict[str, Any],
    *,
    peek: bool,
    means: np.ndarray = MEANS,
    limits: tuple[int, int] = (1, 8),
) -> tuple[KSigmaAlgorithm, KSigmaAlgorithm, int]:
    """Drive two identical algorithms through one random history of asks and answers.

    With ``peek`` both get the same asks (same limits) and one of them has ``result()`` taken
    after every step; otherwise one is asked in batches and the other one pull at a time.
    Answers arrive out of order, in batches of random size, some duplicated, some pulls are
    released (and answered late), and one worker may leave. Returns both and the step count.
    """
    rng = np.random.default_rng(seed)
    if cls is NaiveRoundRobin:
        params = {"delta": 0.005} | params  # a 200-answer window: a longer history
    left, right = make(cls, **params), make(cls, **params)
    outstanding: dict[int, float] = {}
    released: list[int] = []
    left_worker = False
    for step in range(20_000):
        roll = rng.random()
        if roll < 0.40 or not outstanding:
            limit = int(rng.integers(limits[0], limits[1] + 1))
            if peek:
                ask = left.ask(limit)
                _same_ask(ask, right.ask(limit))
            else:
                ask = _ask_both(left, right, limit)
            if ask.done:
                return left, right, step
            rewards = rng.random(len(ask)) < means[ask.arms]
            outstanding.update(zip(ask.ids.tolist(), rewards.astype(float).tolist(), strict=True))
        elif roll < 0.85:
            ids = list(outstanding)
            chosen = rng.choice(ids, size=int(rng.integers(1, len(ids) + 1)), replace=False)
            batch = [int(i) for i in chosen]  # random order: out of order on purpose
            if rng.random() < 0.3:
                batch.append(batch[0])  # a duplicate inside the batch
            if rng.random() < 0.2 and released:
                batch.append(released.pop())  # a late answer to a released pull
            values = [outstanding.get(i, 1.0) for i in batch]
            if rng.random() < 0.5:
                np.testing.assert_array_equal(
                    left.tell_many(batch, values), right.tell_many(batch, values)
                )
            else:
                for pull_id, value in zip(batch, values, strict=True):
                    assert left.tell(pull_id, value) == right.tell(pull_id, value)
            for pull_id in batch:
                outstanding.pop(pull_id, None)
        elif roll < 0.95:
            pull_id = int(rng.choice(list(outstanding)))
            assert left.release(pull_id) is True
            assert right.release(pull_id) is True
            del outstanding[pull_id]
            released.append(pull_id)
        elif not left_worker and rng.random() < 0.3:
            arm = int(rng.integers(N - 1))  # never the outlier: keep runs short
            left.set_unavailable(arm, "left")
            right.set_unavailable(arm, "left")
            left_worker = True
        if peek:
            left.result()
    raise AssertionError("the random history did not finish")


def _sequence_reward(p: float, seq: int) -> float:
    """A deterministic 0/1 sequence with long-run mean p (answer ``seq`` of a worker)."""
    return float(math.floor((seq + 1) * p) - math.floor(seq * p))


def test_wrr_batches_longer_than_a_cycle_equal_single_asks() -> None:
    # Batches of 11 pulls span several visit cycles of 4 workers. Regression: the "continue
    # this visit at the next ask" pointer, set by an inactive worker at the end of an earlier
    # cycle of the same batch, was left stale; a later ask continued that worker's visit once
    # it had turned active, where 11 calls of ask(1) did not (first difference at ask 37).
    means = [0.58, 0.66, 0.2, 0.2]
    batched = WeightedRoundRobin(4, rho=3.0, k=1.0)
    single = WeightedRoundRobin(4, rho=3.0, k=1.0)
    for _ in range(80):
        ask = _ask_both(batched, single, 11)
        if ask.done:
            break
        rewards = [_sequence_reward(means[a], q) for a, q in zip(ask.arms, ask.seqs, strict=True)]
        batched.tell_many(ask.ids, rewards)
        single.tell_many(ask.ids, rewards)
    assert batched.n_answered > 37 * 11
    assert batched.result().to_dict() == single.result().to_dict()


def test_wrr_retry_inside_a_cut_visit() -> None:
    # Regression: a pull released during a WRR visit that a batch cut short is retried first;
    # it must count as pending when the rest of the visit is scheduled in the same ask.
    def setup() -> WeightedRoundRobin:
        alg = WeightedRoundRobin(4, rho=4.0, interval="hoeffding")
        first = alg.ask(4)
        alg.tell_many(first.ids, [1.0, 0.0, 1.0, 0.0])
        visit = alg.ask(2)  # arm 0's visit wants 3 pulls (c_0 = 4, m_0 = 1): cut after 2
        np.testing.assert_array_equal(visit.arms, [0, 0])
        assert alg.release(int(visit.ids[1]))
        return alg

    batched, single = setup(), setup()
    big = _ask_both(batched, single, 4)
    np.testing.assert_array_equal(big.arms, [0, 0, 1, 1])  # retry, rest of the visit, arm 1
    np.testing.assert_array_equal(big.seqs, [2, 3, 1, 2])


# ----------------------------------------------------------- result() changes nothing


def test_nrr_result_between_answers_does_not_move_its_window() -> None:
    # Regression: NRR used to track its estimated set in every refresh, and result() refreshes;
    # a result taken mid-batch (here while the set is briefly {0, 1}) restarted its window.
    def run(peek: bool) -> Ask:
        alg = NaiveRoundRobin(4, k=0.1, delta=0.25)  # patience ceil(1 / delta) = 4 answers
        first = alg.ask(4)
        alg.tell_many(first.ids, [1.0, 0.0, 0.0, 0.0])  # estimated set {0}
        second = alg.ask(4)
        alg.tell(int(second.ids[1]), 1.0)  # means (1, .5, 0, 0): set {0, 1}
        if peek:
            alg.result()
        alg.tell_many(second.ids[[0, 2, 3]], [1.0, 1.0, 1.0])  # means (1, .5, .5, .5): {0}
        return alg.ask(4)

    assert run(peek=False).done
    assert run(peek=True).done


@BY_NAME
def test_result_is_immutable(cls: type[KSigmaAlgorithm]) -> None:
    alg = make(cls)
    ask = alg.ask(2 * N)
    alg.tell_many(ask.ids, (np.arange(len(ask)) % 3 == 0).astype(float))
    result = alg.result()
    assert result.threshold is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.total_pulls = 0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.workers[0].decision = Decision.OUTLIER  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.threshold.estimate = 0.0  # type: ignore[misc]
    assert isinstance(result.workers, tuple)
    before = result.to_dict()
    # Mutating the returned mappings (if they are mutable at all) does not reach the algorithm.
    with contextlib.suppress(TypeError):
        result.params["k"] = 99.0  # type: ignore[index]
    assert alg.params()["k"] == BASE["k"]
    assert alg.result().to_dict() == before


# ----------------------------------------------------------------------------- telling
@BY_NAME
def test_contract_errors_name_the_problem(cls: type[KSigmaAlgorithm]) -> None:
    # The suite checks which error each misuse raises; these are the words they carry.
    alg = make(cls)
    ask = alg.ask(2)
    with pytest.raises(UnknownPullError, match="never handed out") as unknown:
        alg.tell(10**6, 1.0)
    with pytest.raises(InvalidRewardError, match="outside") as invalid:
        alg.tell(int(ask.ids[0]), 1.5)
    assert isinstance(unknown.value, ScreenerError) and isinstance(invalid.value, ScreenerError)
    for arm in (-1, N):
        with pytest.raises(ConfigError, match="no worker"):
            alg.set_unavailable(arm, "left")
    with pytest.raises(ConfigError, match="at least 1"):
        alg.ask(0)


@BY_NAME
def test_reward_bounds_follow_lower_and_upper(cls: type[KSigmaAlgorithm]) -> None:
    alg = make(cls, lower=1.0, upper=5.0)
    ask = alg.ask(3)
    with pytest.raises(InvalidRewardError):
        alg.tell(int(ask.ids[0]), 0.5)
    assert alg.tell_many(ask.ids, [1.0, 5.0, 3.0]).tolist() == [TellOutcome.ACCEPTED] * 3
    assert alg.accepts_reward(5.0) and not alg.accepts_reward(5.5)


@BY_NAME
def test_duplicate_id_inside_one_batch_counts_once(cls: type[KSigmaAlgorithm]) -> None:
    alg = make(cls)
    ask = alg.ask(4)
    i0, i1, i2 = (int(i) for i in ask.ids[:3])
    outcomes = alg.tell_many([i2, i0, i2, i0, i1], [0.0, 1.0, 1.0, 0.0, 1.0])
    assert outcomes.tolist() == [
        TellOutcome.ACCEPTED,
        TellOutcome.ACCEPTED,
        TellOutcome.DUPLICATE,
        TellOutcome.DUPLICATE,
        TellOutcome.ACCEPTED,
    ]
    workers = {w.arm: w for w in alg.result().workers}
    assert [workers[a].pulls for a in range(4)] == [1, 1, 1, 0]
    assert workers[0].estimate == 1.0  # the first copy's reward counts
    assert workers[2].estimate == 0.0
    assert alg.n_answered == 3 and alg.n_pending == 1


# ----------------------------------------------------------------------------- pending
@NEVER_WAITING
def test_pending_answers_do_not_enter_estimates(cls: type[KSigmaAlgorithm]) -> None:
    alg = make(cls)
    ask = alg.ask(N)
    np.testing.assert_array_equal(np.sort(ask.arms), np.arange(N))  # one pull per worker
    answered = ask.ids[[0, 2, 4]]
    alg.tell_many(answered, [1.0, 1.0, 0.0])
    result = alg.result()
    assert result.total_pulls == 3 and result.pending_pulls == 3
    by_arm = {w.arm: w for w in result.workers}
    done_arms = set(ask.arms[[0, 2, 4]].tolist())
    for arm, line in by_arm.items():
        if arm in done_arms:
            assert (line.pulls, line.pending) == (1, 0)
        else:
            assert (line.pulls, line.pending) == (0, 1)
            assert line.decision is Decision.UNDECIDED and math.isnan(line.estimate)
    np.testing.assert_array_equal(alg.stats.count, np.isin(np.arange(N), list(done_arms)))
    # It keeps working with answers in flight.
    more = alg.ask(4)
    assert more.state is AskState.PULL and len(more) == 4
    np.testing.assert_array_equal(more.ids, np.arange(N, N + 4))
    assert alg.n_pending == 3 + 4


@NEVER_WAITING
def test_waits_when_the_budget_is_fully_pending(cls: type[KSigmaAlgorithm]) -> None:
    alg = make(cls, budget=8)
    ask = alg.ask(20)
    assert len(ask) == 8
    assert alg.ask(1).wait
    alg.tell_many(ask.ids[:3], [1.0, 0.0, 1.0])
    assert alg.ask(5).wait  # 3 answered + 5 pending = 8: no room
    assert alg.release(int(ask.ids[5]))
    retry = alg.ask(5)  # one slot freed: the released question again, nothing else
    assert len(retry) == 1
    assert (int(retry.arms[0]), int(retry.seqs[0])) == (int(ask.arms[5]), int(ask.seqs[5]))
    assert alg.ask(1).wait
    alg.tell_many([*ask.ids[3:5].tolist(), *ask.ids[6:].tolist(), int(retry.ids[0])], [0.0] * 5)
    final = alg.ask(1)
    assert final.done
    assert alg.stop_reason is StopReason.BUDGET_SPENT
    assert alg.result().total_pulls == 8


# ----------------------------------------------------------------------------- release


@BY_NAME
def test_release_frees_the_seq_for_the_next_pull_of_that_worker(
    cls: type[KSigmaAlgorithm],
) -> None:
    # (NRR with delta = 0.01 waits for 100 unchanged answers: it does not stop here.)
    alg = make(cls, rho=3.0) if cls is WeightedRoundRobin else make(cls, delta=0.01)
    first = alg.ask(N)
    alg.tell_many(first.ids, (MEANS > 0.6).astype(float))
    second = alg.ask(2 * N)
    alg.tell_many(second.ids[1:], np.zeros(2 * N - 1))
    arm = int(second.arms[0])
    assert int(second.seqs[0]) == 1
    assert alg.release(int(second.ids[0]))
    seqs: list[int] = []
    for _ in range(6 * N):
        ask = alg.ask(1)
        if ask.done:
            break
        alg.tell(int(ask.ids[0]), 0.0)
        if int(ask.arms[0]) == arm:
            seqs.append(int(ask.seqs[0]))
        if len(seqs) == 2:
            break
    # The freed seq is reused first; then the arm's numbering continues where it was.
    highest = int(max(second.seqs[second.arms == arm]))
    assert seqs == [1, highest + 1]


# -------------------------------------------------------------------------- availability
@BY_NAME
def test_unavailable_worker_is_never_asked_again(cls: type[KSigmaAlgorithm]) -> None:
    alg = make(cls, budget=5000, delta=0.01)  # NRR: a 100-answer window, not done yet
    rng = np.random.default_rng(7)
    for _ in range(5):
        ask = alg.ask(N)
        alg.tell_many(ask.ids, (rng.random(len(ask)) < MEANS[ask.arms]).astype(float))
    pulls_before = int(alg.stats.count[2])
    alg.set_unavailable(2, "left")
    alg.set_unavailable(2, "second reason is ignored")
    run = drive(alg, MEANS, rng, batch=4, keep_asks=True)
    assert run.pulled.size > 0
    assert 2 not in run.pulled.tolist()
    assert alg.unavailable_reason == {2: "left"}
    assert run.result.finished
    line = next(w for w in run.result.workers if w.arm == 2)
    assert line.pulls == pulls_before > 0
    if line.decision is Decision.UNDECIDED:
        assert "left" in line.reason


@GUARANTEED
@pytest.mark.parametrize("seed", [1, 2])
def test_active_worker_leaving_exhausts_the_run(cls: type[KSigmaAlgorithm], seed: int) -> None:
    # Run one pull at a time until exactly one worker is undecided (still active), then that
    # worker leaves: nothing can decide it any more, so the run stops, exhausted.
    alg = make(cls)
    rng = np.random.default_rng(seed)
    leaver = -1
    for _ in range(100_000):
        ask = alg.ask(1)
        assert ask.state is AskState.PULL, "the run finished before one worker was left"
        alg.tell(int(ask.ids[0]), float(rng.random() < MEANS[int(ask.arms[0])]))
        undecided = alg.result().arms_with(Decision.UNDECIDED)
        if len(undecided) == 1:
            leaver = undecided[0]
            break
    assert leaver >= 0
    alg.set_unavailable(leaver, "left")
    final = alg.ask(N)
    assert final.done
    result = alg.result()
    assert result.stop_reason is StopReason.WORKERS_EXHAUSTED
    assert not result.condition_met
    line = next(w for w in result.workers if w.arm == leaver)
    assert line.decision is Decision.UNDECIDED
    assert "left" in line.reason
    assert line.leaning in (Decision.OUTLIER, Decision.NORMAL)
    assert all(w.decision is not Decision.UNDECIDED for w in result.workers if w.arm != leaver)


@BY_NAME
def test_everyone_leaving_exhausts_the_run(cls: type[KSigmaAlgorithm]) -> None:
    alg = make(cls)
    ask = alg.ask(N)
    for arm in range(N):
        alg.set_unavailable(arm, "left")
    assert alg.ask(1).wait  # answers are still in flight
    alg.tell_many(ask.ids, np.ones(N))
    assert alg.ask(1).done
    result = alg.result()
    assert result.stop_reason is StopReason.WORKERS_EXHAUSTED
    assert not result.condition_met
    for line in result.workers:
        assert line.decision is Decision.UNDECIDED
        assert "left" in line.reason


# ------------------------------------------------------------------------------- budget
@BY_NAME
def test_small_budget_stops_with_best_guesses(cls: type[KSigmaAlgorithm]) -> None:
    # NRR with delta = 0.01 waits 100 unchanged answers, more than the budget.
    alg = make(cls, budget=30, delta=0.01)
    run = drive(alg, MEANS, np.random.default_rng(3), batch=4)
    result = run.result
    assert result.stop_reason is StopReason.BUDGET_SPENT
    assert not result.condition_met
    assert result.total_pulls == 30 == alg.n_asked
    assert result.outliers == ()  # nothing is decided an outlier after 5 answers each
    undecided = [w for w in result.workers if w.decision is Decision.UNDECIDED]
    assert undecided
    assert result.threshold is not None
    for line in undecided:
        expected = (
            Decision.OUTLIER if line.estimate > result.threshold.estimate else Decision.NORMAL
        )
        assert line.leaning is expected
    assert alg.ask(5).done  # stays done


# ------------------------------------------------------------------- parameter validation
BAD_PARAMS = [
    pytest.param(N, {"delta": 0.0}, "delta", id="delta=0"),
    pytest.param(N, {"delta": 1.0}, "delta", id="delta=1"),
    pytest.param(N, {"delta": -0.2}, "delta", id="delta<0"),
    pytest.param(N, {"delta": 1.5}, "delta", id="delta>1"),
    pytest.param(N, {"k": -1.0}, "k must", id="k<0"),
    pytest.param(N, {"k": math.nan}, "k must", id="k=nan"),
    pytest.param(N, {"lower": 1.0, "upper": 1.0}, "lower < upper", id="lower=upper"),
    pytest.param(N, {"lower": 2.0, "upper": 1.0}, "lower < upper", id="lower>upper"),
    pytest.param(N, {"upper": math.inf}, "finite", id="upper=inf"),
    pytest.param(N, {"budget": 0}, "budget", id="budget=0"),
    pytest.param(N, {"budget": -5}, "budget", id="budget<0"),
    pytest.param(1, {}, "at least 2 workers", id="one-worker"),
    pytest.param(0, {}, "at least 2 workers", id="no-workers"),
    pytest.param(N, {"interval": "wilson"}, "interval", id="interval"),
    pytest.param(N, {"direction": "up"}, "direction", id="direction"),
    pytest.param(N, {"quantile": "exact"}, "quantile", id="quantile"),
]


@BY_NAME
@pytest.mark.parametrize(("n", "params", "words"), BAD_PARAMS)
def test_bad_parameters_raise_config_error(
    cls: type[KSigmaAlgorithm], n: int, params: dict[str, Any], words: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        cls(n, **params)
    message = str(caught.value)
    assert words in message
    assert isinstance(caught.value, ScreenerError) and isinstance(caught.value, ValueError)
    # The message quotes the offending value.
    value = next(iter(params.values())) if params else n
    if "upper" in params and "lower" in params:
        value = params["upper"]
    assert str(value) in message or repr(value) in message


@pytest.mark.parametrize("rho", [0.5, 0.0, -2.0, math.nan, math.inf])
def test_wrr_rejects_bad_rho(rho: float) -> None:
    with pytest.raises(ConfigError, match="rho") as caught:
        WeightedRoundRobin(N, rho=rho)
    assert caught.value.hint is not None
