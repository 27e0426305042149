"""Issue 19, item 4: algorithms keep the window full while answers are in flight.

CLUCB-PAC used to keep at most two pulls in flight for top-1 (the two workers of M xor M~,
one each) whatever the window; it now fills the window with the constant liar's next steps
(see ``CLUCBPAC``'s docstring, "Under concurrency"). These tests pin the in-flight count, the
rule's stop; ``ask(k)`` = k x ``ask(1)`` with the fill in play is in test_topk_baselines.py.

toloka-rule, quiz, crowd-prior and confident-thresholding fill the window with the pulls
that are needed whatever the answers in flight say (their docstrings, "Under concurrency"):
the in-flight counts are worked out by hand, and runs under random delays waste no pull.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np
import pytest
from numpy.typing import NDArray

from screener.algorithms import (
    CLUCBPAC,
    Algorithm,
    Ask,
    AskState,
    ConfidentThresholding,
    CrowdPrior,
    Decision,
    Quiz,
    StopReason,
    TolokaRule,
)
from screener.stats import clucb_radius


def _first_answers(alg: CLUCBPAC, rewards: list[float]) -> None:
    ask = alg.ask(alg.n_arms)
    assert ask.arms.tolist() == list(range(alg.n_arms))
    alg.tell_many(ask.ids, rewards)


def test_clucb_top1_fills_a_window_of_64() -> None:
    # 20 workers, one answer each, worker 0 the only correct one: M = {0}, M~ = {1} (every
    # other worker has the same upper end; ties go to the lowest index), so the old rule
    # handed out 0 and 1 and waited. With equal counts every worker is as ambiguous as the
    # next, so the liar's steps go round all 20 in index order. Its gap stays far above
    # eps: with 4 answers at t = 84 each radius is 0.5 sqrt(2 ln(4 * 20 * 84^3 / 0.05) / 4)
    # ~ 1.6, and the gap is r_0 + r_j - 1 ~ 2.2 > 0.1. So all 64 slots are filled.
    alg = CLUCBPAC(20, k=1, eps=0.1, delta=0.05)
    _first_answers(alg, [1.0] + [0.0] * 19)
    ask = alg.ask(64)
    assert len(ask) == 64 and alg.n_pending == 64
    assert ask.arms[:2].tolist() == [0, 1]  # the pair first, as before
    assert ask.arms.tolist() == [arm % 20 for arm in range(64)]
    assert np.bincount(ask.arms).tolist() == [4] * 4 + [3] * 16


def _liar_gap(alg: CLUCBPAC, counts: NDArray[np.int64], t: int) -> float:
    """w~(M~) - w~(M) with ``counts`` and ``t`` in place of the answered ones (means fixed)."""
    radius = clucb_radius(counts, t, alg.n_arms, alg.delta, alg.width)
    chosen = alg.chosen
    adjusted = np.where(chosen, alg.means - radius, alg.means + radius)
    order = np.argsort(-adjusted, kind="stable")
    rival = np.zeros(alg.n_arms, dtype=bool)
    rival[order[: alg.k]] = True
    return float(adjusted[rival & ~chosen].sum() - adjusted[chosen & ~rival].sum())


def test_clucb_fill_stops_where_the_liar_would_stop() -> None:
    # Two workers far apart, few answers: the real gap is above eps * k, so the pair goes
    # out; the liar's gap falls as pulls are added, and the fill ends at the first pull
    # count at which it is <= eps * k. Checked against the gap computed here directly.
    alg = CLUCBPAC(2, k=1, eps=0.2, delta=0.1)
    _first_answers(alg, [1.0, 0.0])
    for _ in range(3):  # four answers each: the gap is 2 r - 1 ~ 1.6 with r ~ 1.3
        ask = alg.ask(2)
        alg.tell_many(ask.ids, [1.0 if arm == 0 else 0.0 for arm in ask.arms.tolist()])
    assert not alg.finished and alg.gap > alg.eps
    ask = alg.ask(1000)
    assert ask.state is AskState.PULL and 2 < len(ask) < 1000  # 36 here
    assert alg.ask(1).wait  # the liar's stopping rule holds: wait for the answers
    counts = alg.stats.count.copy()
    t = alg.n_answered
    gaps = []
    for arm in ask.arms.tolist():
        gaps.append(_liar_gap(alg, counts, t))
        counts[arm] += 1
        t += 1
    assert min(gaps) > alg.eps  # every pull handed out was still needed by the liar
    assert _liar_gap(alg, counts, t) <= alg.eps  # and not one more


# ------------------------------------------- surely-needed pulls: the rules and crowd-prior
# toloka-rule, quiz, crowd-prior and confident-thresholding keep the pulls of their schedule
# and fill the rest of the window with pulls no answer in flight can make useless (their
# docstrings, "Under concurrency"): the in-flight count is pinned by hand below, and a run
# under random delays must end with no pull asked after its worker's decision.
def _tell_by_arm(alg: Algorithm, ask: Ask, answers: dict[int, list[float]]) -> None:
    """Tell the answers of ``ask`` for the workers in ``answers``, each in its list's order."""
    queue = {arm: list(values) for arm, values in answers.items()}
    for pull_id, arm in zip(ask.ids.tolist(), ask.arms.tolist(), strict=True):
        if queue.get(arm):
            alg.tell(pull_id, queue[arm].pop(0))
    assert not any(queue.values()), "answers left over: the ask had fewer pulls"


def test_toloka_fills_the_window_with_the_answers_before_any_ban() -> None:
    # min_answers 3, threshold 0.6, window 10: no ban before answer 3, and all-wrong answers
    # ban at answer 3 (0 of 3 < 60%). So each of 5 fresh workers surely needs 3: 15 pulls,
    # one round at a time (fewest in flight first), however wide the window.
    alg = TolokaRule(5, min_answers=3)
    first = alg.ask(64)
    assert first.arms.tolist() == [0, 1, 2, 3, 4] * 3
    assert alg.ask(1).wait
    # Worker 0: right, right, wrong (2 of 3 = 67%, kept); all wrong next: 2 of 4 = 50% < 60%
    # bans at answer 4, so one more. Worker 1: three right; 3 of 4 = 75%, 3 of 5 = 60% (not
    # under the bar), 3 of 6 = 50% bans at answer 6: three more. Both have nothing in flight:
    # the round robin gives one each (0 then 1), the fill worker 1's other two.
    _tell_by_arm(alg, first, {0: [1.0, 1.0, 0.0], 1: [1.0, 1.0, 1.0]})
    assert alg.ask(64).arms.tolist() == [0, 1, 1, 1]
    assert alg.ask(64).wait


def test_toloka_horizon_counts_inside_the_window() -> None:
    # window 5, min_answers 3, threshold 0.6, five right: all wrong next, the last five hold
    # 4, 3, 2 right (80%, 60%, 40%): the ban comes at answer 8, three more. And a worker
    # 4 right of 5 in the window needs two (3 of 5 = 60% is not under the bar; 2 of 5 is).
    alg = TolokaRule(2, window=5, min_answers=3, accept_after=12)
    first = alg.ask(64)
    assert first.arms.tolist() == [0, 1] * 3
    _tell_by_arm(alg, first, {0: [1.0] * 3, 1: [1.0, 0.0, 1.0]})
    second = alg.ask(64)  # worker 0: 3 of 4, 3 of 5, 3 of 5 (window) ... first ban at 6
    assert second.arms.tolist() == [0, 1, 0, 0]  # worker 1: 2 of 4 = 50% at answer 4: one
    _tell_by_arm(alg, second, {0: [1.0, 1.0, 0.0], 1: [1.0]})
    # Worker 0: 1,1,1,1,1,0 -> window 1,1,1,1,0; wrong next: 1,1,1,0,0 (60%), 1,1,0,0,0
    # (40%): ban at answer 8, two more. Worker 1: 1,0,1,1 -> 3 of 5, then 2 of 5 at answer 6:
    # two more. Round robin first (worker 1 has fewer answers), then the fill, fewest in
    # flight first, then fewest answers and pulls (worker 1: 5, worker 0: 7).
    assert alg.ask(64).arms.tolist() == [1, 0, 1, 0]


def test_toloka_accepts_after_accept_after_whatever_the_answers() -> None:
    # accept_after 4 below the first possible ban (min_answers 3 and three right: 3 of 4 is
    # over the bar): the horizon is the acceptance at answer 4, one more.
    alg = TolokaRule(1, min_answers=3, accept_after=4)
    first = alg.ask(10)
    assert len(first) == 3
    alg.tell_many(first.ids, [1.0, 1.0, 1.0])
    last = alg.ask(10)
    assert len(last) == 1
    alg.tell_many(last.ids, [0.0])
    assert alg.ask(10).done and alg.result().workers[0].decision is Decision.ABOVE


def test_quiz_asks_the_whole_quiz_then_the_hidden_questions_no_answer_can_skip() -> None:
    # quiz_size 10, hidden 5, bar 0.7: the quiz is graded at answer 10 whatever the answers,
    # so 10 each up front.
    alg = Quiz(3, quiz_size=10, hidden=5)
    first = alg.ask(64)
    assert first.arms.tolist() == [0, 1, 2] * 10
    # Worker 0: 10 of 10; all wrong next, 10/11 ... 10/14 = 71% >= 70%, 10/15 = 67% would
    # remove at 15 = Q + H, where it is decided anyway: all five hidden questions. Worker 1:
    # 7 of 10 (70%, passes); 7/11 = 64% < 70% may remove at 11: one. Worker 2: 6 of 10 fails.
    _tell_by_arm(alg, first, {0: [1.0] * 10, 1: [1.0] * 7 + [0.0] * 3, 2: [0.0] * 4 + [1.0] * 6})
    assert alg.ask(64).arms.tolist() == [0, 1, 0, 0, 0, 0]
    assert alg.result().workers[-1].decision is Decision.BELOW  # worker 2 (ranked last)


def test_crowd_prior_fills_up_to_min_answers_then_one_at_a_time() -> None:
    # min_answers 3: no decision before the third answer, so 3 each up front; after that any
    # answer may decide (the prior moves), so one question in flight per worker.
    alg = CrowdPrior(4, threshold=0.7)
    first = alg.ask(64)
    assert first.arms.tolist() == [0, 1, 2, 3] * 3
    _tell_by_arm(alg, first, {0: [1.0, 1.0, 0.0], 1: [1.0]})
    # Worker 0 (3 answers, undecided, nothing in flight): one. Worker 1 (1 answer, 2 in
    # flight) is already at min_answers with the pulls in flight: none.
    assert alg.ask(64).arms.tolist() == [0]


def test_confident_thresholding_fills_up_to_min_answers() -> None:
    # Its schedule holds a worker whose first answer is in flight; min_answers 4: the other
    # three of each are needed before any decision.
    alg = ConfidentThresholding(3, threshold=0.5, eps=0.1, min_answers=4)
    assert alg.ask(64).arms.tolist() == [0, 1, 2] * 4
    assert alg.ask(1).wait
    default = ConfidentThresholding(3, threshold=0.5, eps=0.1)  # min_answers 1: as before
    assert default.ask(64).arms.tolist() == [0, 1, 2]


FILLERS: dict[str, Callable[[int], Algorithm]] = {
    "toloka-rule": lambda n: TolokaRule(n, threshold=0.7),
    "toloka-rule window 5": lambda n: TolokaRule(n, threshold=0.6, window=5, accept_after=15),
    "quiz": lambda n: Quiz(n, threshold=0.7),
    "quiz hidden": lambda n: Quiz(n, threshold=0.7, quiz_size=5, hidden=8),
    "crowd-prior": lambda n: CrowdPrior(n, threshold=0.7, min_answers=4),
}
#: Not zero-waste as a whole: its schedule keeps a share of the projected answers in flight.
BATCHERS: dict[str, Callable[[int], Algorithm]] = {
    **FILLERS,
    "confident-thresholding": lambda n: ConfidentThresholding(
        n, threshold=0.7, eps=0.1, delta=0.1, min_answers=5
    ),
}


@pytest.mark.parametrize("name", sorted(BATCHERS))
@pytest.mark.parametrize("size", [3, 16])
def test_fill_is_k_asks_of_one(name: str, size: int) -> None:
    def fresh() -> Algorithm:
        alg = BATCHERS[name](8)
        rng = np.random.default_rng(3)
        for _ in range(13):  # uneven counts, a few pulls in flight
            ask = alg.ask(1)
            alg.tell_many(ask.ids, (rng.random(len(ask)) < 0.8).astype(float))
        alg.ask(5)
        return alg

    batched, single = fresh(), fresh()
    big = batched.ask(size)
    ones: list[Ask] = []
    while len(ones) < size and (one := single.ask(1)).state is AskState.PULL:
        ones.append(one)
    assert len(big) == len(ones)
    if ones:
        np.testing.assert_array_equal(big.arms, np.concatenate([a.arms for a in ones]))
        np.testing.assert_array_equal(big.ids, np.concatenate([a.ids for a in ones]))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FILLERS))
def test_no_pull_is_wasted_under_random_delays(name: str) -> None:
    # A window of 64 on 12 workers, answers after exponential(1) delays told as they arrive
    # (out of order): every pull asked is answered before its worker's decision, so the run
    # ends with nothing in flight, and the window really held more than one per worker.
    means = np.linspace(0.3, 0.95, 12)
    for seed in range(5):
        alg = FILLERS[name](12)
        rng = np.random.default_rng([seed, 4])
        flight: list[tuple[float, int, int, float]] = []
        decided_at: dict[int, int] = {}  # worker -> its answers when first seen decided
        answers = np.zeros(12, dtype=np.int64)
        most_in_flight, now = 0, 0.0
        while True:
            room = 64 - alg.n_pending
            ask = alg.ask(room)
            if ask.done:
                break
            for pull_id, arm in zip(ask.ids.tolist(), ask.arms.tolist(), strict=True):
                assert arm not in decided_at, f"seed {seed}: worker {arm} asked after deciding"
                reward = float(rng.random() < means[arm])
                heapq.heappush(flight, (now + rng.exponential(1.0), pull_id, arm, reward))
            most_in_flight = max(most_in_flight, alg.n_pending)
            now, pull_id, arm, reward = heapq.heappop(flight)
            assert arm not in decided_at, f"seed {seed}: an answer of decided worker {arm}"
            alg.tell(pull_id, reward)
            answers[arm] += 1
            line = next(w for w in alg.result().workers if w.arm == arm)
            if line.decision is not Decision.UNDECIDED:
                decided_at[arm] = int(answers[arm])
        assert not flight and alg.n_pending == 0, f"seed {seed}: pulls wasted at the end"
        # crowd-prior may leave a worker unsure at max_answers (workers exhausted).
        assert alg.stop_reason in (StopReason.CONDITION_MET, StopReason.WORKERS_EXHAUSTED)
        assert most_in_flight > 12


@pytest.mark.parametrize("name", ["toloka-rule", "toloka-rule window 5", "quiz", "quiz hidden"])
def test_rules_judge_answers_in_arrival_order_under_delays(name: str) -> None:
    # Answers arriving out of order are judged in the order they arrive, as before: each
    # worker's decision is the rule's on its answers in that order, asked one at a time.
    means = np.linspace(0.3, 0.95, 10)
    rng = np.random.default_rng(11)
    alg = FILLERS[name](10)
    flight: list[tuple[float, int, int, float]] = []
    arrived: list[list[float]] = [[] for _ in range(10)]
    now = 0.0
    while not (ask := alg.ask(64 - alg.n_pending)).done:
        for pull_id, arm in zip(ask.ids.tolist(), ask.arms.tolist(), strict=True):
            reward = float(rng.random() < means[arm])
            heapq.heappush(flight, (now + rng.exponential(1.0), pull_id, arm, reward))
        now, pull_id, arm, reward = heapq.heappop(flight)
        alg.tell(pull_id, reward)
        arrived[arm].append(reward)
    for arm, sequence in enumerate(arrived):
        alone = FILLERS[name](1)
        for reward in sequence:
            one = alone.ask(1)
            assert one.state is AskState.PULL, f"worker {arm} asked past its decision"
            alone.tell(int(one.ids[0]), reward)
        assert alone.ask(1).done
        mine = next(w for w in alg.result().workers if w.arm == arm)
        theirs = alone.result().workers[0]
        assert (mine.decision, mine.pulls, mine.reason) == (
            theirs.decision,
            theirs.pulls,
            theirs.reason,
        )
