"""Opt-KG and Uniform (issue 19, item 5): ties decided from the counts, the O(1) update of
Opt-KG's index against exact tails, the same pulls as before wherever no tie is involved, and
Uniform's turn counter against the fewest-pulls rule it replaces.

The implementations before issue 19 are kept here, verbatim, as private references
(``_OptKGBefore``, ``_UniformBefore``): the new ones must make exactly their pulls.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from driver import random_history
from numpy.typing import NDArray

from screener.algorithms import Ask, Decision
from screener.algorithms.thresholding import OptKG, ThresholdingAlgorithm, UniformThresholding
from screener.arrays import FloatArray, IntArray
from screener.stats import beta_tails


# ------------------------------------------------------------ the implementations before
class _OptKGBefore(ThresholdingAlgorithm):
    """Opt-KG as it was before issue 19 (its code verbatim, on the shared scheduler): three
    incomplete beta functions per worker per pull, the classification from a computed tail
    (``<= 0.5``)."""

    name = OptKG.name
    pull_each_first = False
    needs_answers = False
    guarantee = OptKG.guarantee

    def __init__(
        self, n_workers: int, *, prior_a: float = 1.0, prior_b: float = 1.0, **kwargs: Any
    ) -> None:
        super().__init__(n_workers, **kwargs)
        self.prior_a = float(prior_a)
        self.prior_b = float(prior_b)
        self.bar = (self.threshold - self.lower) / self.width

    def params(self) -> dict[str, Any]:
        return {**super().params(), "prior_a": self.prior_a, "prior_b": self.prior_b}

    def posterior(self) -> tuple[FloatArray, FloatArray]:
        count = self.stats.count.astype(np.float64)
        successes = (self.stats.total - self.lower * count) / self.width
        return self.prior_a + successes, self.prior_b + count - successes

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        a_all, b_all = self.posterior()
        keys = np.empty(arms.size, dtype=np.float64)
        count = self.stats.count
        for j, (arm, eff) in enumerate(zip(arms.tolist(), effective.tolist(), strict=True)):
            a, b = float(a_all[arm]), float(b_all[arm])
            lies = eff - float(count[arm])
            a, b = a + lies * a / (a + b), b + lies * b / (a + b)
            keys[j] = -self._gain(a, b)
        return keys

    def _gain(self, a: float, b: float) -> float:
        now = min(beta_tails(self.bar, a, b))
        success = min(beta_tails(self.bar, a + 1.0, b))
        failure = min(beta_tails(self.bar, a, b + 1.0))
        return max(now - success, now - failure)

    def _above(self) -> NDArray[np.bool_]:
        a_all, b_all = self.posterior()
        pairs = zip(a_all.tolist(), b_all.tolist(), strict=True)
        return np.array([beta_tails(self.bar, a, b)[0] <= 0.5 for a, b in pairs], dtype=bool)


class _UniformBefore(ThresholdingAlgorithm):
    """Uniform as it was before issue 19: the shared scheduler over the index "fewest
    effective pulls first", the means refreshed after every answer."""

    name = UniformThresholding.name
    needs_answers = False
    guarantee = UniformThresholding.guarantee

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        return effective.copy()


# ------------------------------------------------------------ exact references
def exact_below(x: float, a: int, b: int) -> Fraction:
    """``I_x(a, b)`` for whole a, b, exactly: P(Binomial(a + b - 1, x) >= a) over integers
    (x is a binary fraction p / q, so every term is an integer over q^n)."""
    p, q = Fraction(x).as_integer_ratio()
    n = a + b - 1
    failure_powers = [1]
    for _ in range(n - a):
        failure_powers.append(failure_powers[-1] * (q - p))
    numerator, success_power = 0, p**a
    for j in range(a, n + 1):  # C(n, j) p^j (q - p)^(n - j)
        numerator += math.comb(n, j) * success_power * failure_powers[n - j]
        success_power *= p
    return Fraction(numerator, q**n)


def exact_gain(x: float, a: int, b: int) -> Fraction:
    """Opt-KG's gain at Beta(a, b), exactly: the larger rise of max(P(mu >= x), P(mu < x))."""

    def value(a: int, b: int) -> Fraction:
        below = exact_below(x, a, b)
        return max(below, 1 - below)

    now = value(a, b)
    return max(value(a + 1, b) - now, value(a, b + 1) - now)


def general_key(alg: OptKG, a: float, b: float) -> float:
    """The key of Beta(a, b) by the general path (the lean from the continued fraction)."""
    log_w = alg._log_density(a, b)
    return -alg._log_gain(a, b, alg._exact_lean(a, b), log_w)


def keys_of(alg: OptKG) -> FloatArray:
    """The workers' keys (``-log gain``) after the answers so far."""
    alg.posterior_below()  # brings the tracked state up to date
    return alg._keys.copy()


def posterior_of(alg: OptKG, arm: int) -> tuple[float, float]:
    a, b = alg.posterior()
    return float(a[arm]), float(b[arm])


def run(alg: ThresholdingAlgorithm, means: NDArray[np.float64], seed: int, batch: int) -> list[int]:
    """Ask ``batch`` at a time, answer at once (Bernoulli), to the end; every arm handed out."""
    rng = np.random.default_rng(seed)
    pulls: list[int] = []
    while not (ask := alg.ask(batch)).done:
        pulls += ask.arms.tolist()
        alg.tell_many(ask.ids, (rng.random(len(ask)) < means[ask.arms]).astype(float))
    return pulls


def leanings(alg: ThresholdingAlgorithm) -> list[Decision]:
    return [w.leaning for w in sorted(alg.result().workers, key=lambda w: w.arm)]


# ------------------------------------------------------------ ties (the case)
@pytest.mark.parametrize("first", [1.0, 0.0])
def test_opt_kg_ties_are_above_at_every_budget(first: float) -> None:
    # 1 worker, bar 0.5, Beta(1, 1), answers alternating: after an even number of answers
    # the posterior is symmetric about the bar (P(above) = 1/2 exactly) and the documented
    # rule says ABOVE; after an odd number the first answer's side leads.
    alg, before = OptKG(1, threshold=0.5, budget=600), _OptKGBefore(1, threshold=0.5, budget=600)
    ties_below_before = 0
    for budget in range(1, 601):
        reward = first if budget % 2 else 1.0 - first
        for model in (alg, before):
            ask = model.ask(1)
            model.tell(int(ask.first_id), reward)
        if budget % 2 == 0:
            assert leanings(alg) == [Decision.ABOVE], budget
            ties_below_before += leanings(before) == [Decision.BELOW]
        else:
            side = Decision.ABOVE if first == 1.0 else Decision.BELOW
            assert leanings(alg) == leanings(before) == [side], budget
    assert alg.ask(1).done and alg.result().workers[0].decision is Decision.ABOVE
    assert ties_below_before > 50  # the rounding the rule replaces (149 of 300 in the issue)


@pytest.mark.parametrize("budget", [2, 3, 64, 599, 600])
def test_opt_kg_tie_decision_at_the_end_of_the_budget(budget: int) -> None:
    alg = OptKG(1, threshold=0.5, budget=budget)
    rewards = iter([1.0, 0.0] * budget)
    while not (ask := alg.ask(1)).done:
        alg.tell(int(ask.first_id), next(rewards))
    line = alg.result().workers[0]
    assert line.decision is Decision.ABOVE  # a tie (even budget) or one success ahead
    assert "end of the budget" in line.reason


@pytest.mark.parametrize(
    ("params", "rewards"),
    [
        ({"threshold": 3.0, "lower": 1.0, "upper": 5.0}, [5.0, 1.0] * 40),  # bar 1/2, rescaled
        ({"threshold": 0.5, "prior_a": 0.5, "prior_b": 0.5}, [0.0, 1.0] * 40),  # Jeffreys
        ({"threshold": 0.5}, [0.5] * 41),  # graded: a = b at every count
        ({"threshold": 0.5, "prior_a": 2.0, "prior_b": 2.0}, [0.25, 0.75] * 40),
    ],
)
def test_opt_kg_symmetric_posteriors_are_ties_from_the_counts(
    params: dict[str, Any], rewards: list[float]
) -> None:
    alg = OptKG(1, budget=len(rewards), **params)
    ties = 0
    for count, reward in enumerate(rewards, start=1):
        alg.tell(int(alg.ask(1).first_id), reward)
        a, b = posterior_of(alg, 0)
        if a == b:
            assert leanings(alg) == [Decision.ABOVE], count
            assert alg.posterior_below()[0] == 0.5
            ties += 1
    assert ties >= 40


def test_opt_kg_mirror_states_tie_to_the_lowest_index() -> None:
    # At bar 1/2, Beta(a, b) and Beta(b, a) have the same gain exactly; the documented rule
    # sends the tie to the lowest index, whichever of the two it is.
    for states in ([[0.0], [1.0]], [[1.0], [0.0]], [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]):
        alg = OptKG(3, threshold=0.5, budget=100)
        answers = [*states, [1.0] * 30]  # worker 2: far above the bar, a small gain
        arms = np.repeat(np.arange(3), [len(r) for r in answers])
        alg.stats.update_many(arms, [x for r in answers for x in r])
        keys = keys_of(alg)
        assert keys[0] == keys[1] < keys[2]
        assert alg.ask(1).arms.tolist() == [0]


# ------------------------------------------------------------ the O(1) update
@pytest.mark.parametrize("bar", [0.5, 0.3, 0.8125, 0.61])
@pytest.mark.parametrize(("prior_a", "prior_b"), [(1, 1), (2, 3)])
def test_opt_kg_tracked_tail_equals_the_exact_tail(bar: float, prior_a: int, prior_b: int) -> None:
    # One worker per sequence, answered one at a time: every (successes, failures) pair on the
    # path is checked against the exact binomial sum, and the gain against the exact gain
    # (at every pair of the first 40 answers, where the side can still flip, then every 8th).
    rng = np.random.default_rng(int(bar * 1e4) + prior_a)
    checked = 0
    for p in (bar, rng.random(), 0.05, 0.95):
        alg = OptKG(1, threshold=bar, budget=150, prior_a=prior_a, prior_b=prior_b)
        wins = losses = 0
        while not (ask := alg.ask(1)).done:
            success = bool(rng.random() < p)
            alg.tell(int(ask.first_id), float(success))
            wins, losses = wins + success, losses + (not success)
            a, b = prior_a + wins, prior_b + losses
            assert abs(alg.posterior_below()[0] - float(exact_below(bar, a, b))) <= 1e-12, (a, b)
            if wins + losses <= 40 or (wins + losses) % 8 == 0:
                gain = float(exact_gain(bar, a, b))
                assert math.exp(-keys_of(alg)[0]) == pytest.approx(gain, rel=1e-9, abs=1e-300)
            checked += 1
    assert checked == 4 * 150


@pytest.mark.parametrize("bar", [0.5, 0.42])
def test_opt_kg_keys_equal_the_general_path_exactly(bar: float) -> None:
    # Bernoulli and graded answers, batches with pulls in flight, non-integer priors: every
    # worker's key (and the key with lies) is bit for bit what the general path computes.
    rng = np.random.default_rng(7)
    alg = OptKG(6, threshold=bar, budget=3000, prior_a=0.5, prior_b=1.5)
    means = np.array([0.1, 0.4, 0.45, 0.5, 0.55, 0.9])
    outstanding: dict[int, float] = {}
    checks = 0
    while not (ask := alg.ask(int(rng.integers(1, 5)))).done:
        if ask.wait:
            break
        graded = rng.random() < 0.2
        draws = rng.random(len(ask)) if graded else rng.random(len(ask)) < means[ask.arms]
        outstanding.update(zip(ask.ids.tolist(), np.asarray(draws, float).tolist(), strict=True))
        ids = [i for i in outstanding if rng.random() < 0.7]
        alg.tell_many(ids, [outstanding.pop(i) for i in ids])
        alg.posterior_below()  # brings the tracked state up to date
        for arm in range(alg.n_arms):
            a, b = posterior_of(alg, arm)
            assert alg._keys[arm] == general_key(alg, a, b), (arm, a, b)
            lies = float(rng.integers(1, 6))
            lied = (a + lies * a / (a + b), b + lies * b / (a + b))
            assert -alg._lied_log_gain(arm, lies) == general_key(alg, *lied)
            checks += 1
    assert checks > 2000


def test_opt_kg_gain_underflow_keeps_far_workers_ordered() -> None:
    # Two workers far above the bar: their gains (about 1e-400) underflow as numbers, not as
    # logarithms, so the less certain one (fewer answers) is still pulled first.
    alg = OptKG(2, threshold=0.1, budget=5000)
    alg.stats.update_many([0] * 1300 + [1] * 1200, [1.0] * 2500)
    keys = keys_of(alg)
    assert alg._gain(1301.0, 1.0) == alg._gain(1201.0, 1.0) == 0.0
    assert math.isfinite(keys[0]) and keys[1] < keys[0]
    assert alg.ask(1).arms.tolist() == [1]


# ------------------------------------------------------------ the same pulls as before
@pytest.mark.parametrize("bar", [0.6, 0.37, 0.7])
@pytest.mark.parametrize("batch", [1, 3, 0], ids=["batch-1", "batch-3", "batch-n"])
def test_opt_kg_makes_the_same_pulls_as_before_off_the_tie_bar(bar: float, batch: int) -> None:
    # Off bar 1/2 no posterior is symmetric about the bar and no two states tie by symmetry:
    # no tie is involved, and every pull and every classification must be the same.
    for seed in range(20):
        rng = np.random.default_rng([seed, int(bar * 100)])
        n = int(rng.integers(2, 12))
        means = rng.random(n)
        prior = float(rng.choice([1.0, 0.5, 2.0]))
        params: dict[str, Any] = {"threshold": bar, "budget": int(rng.integers(20, 250))}
        params |= {"prior_a": prior, "prior_b": prior}
        new, before = OptKG(n, **params), _OptKGBefore(n, **params)
        assert run(new, means, seed, batch or n) == run(before, means, seed, batch or n), seed
        assert leanings(new) == leanings(before), seed


def _ask_both(left: ThresholdingAlgorithm, right: ThresholdingAlgorithm, limit: int) -> Ask:
    ask = left.ask(limit)
    other = right.ask(limit)
    assert ask.state is other.state
    np.testing.assert_array_equal(ask.arms, other.arms)
    np.testing.assert_array_equal(ask.ids, other.ids)
    return ask


def same_history(left: ThresholdingAlgorithm, right: ThresholdingAlgorithm, seed: int) -> None:
    """Drive both with the same random asks, out-of-order answers (Bernoulli), releases and
    departures, checking that every ask agrees, then that the results agree."""
    rng = np.random.default_rng(seed)
    means = rng.random(left.n_arms)
    random_history(left, right, _ask_both, means, rng, steps=4000)
    assert left.result().to_dict() == right.result().to_dict()


@pytest.mark.parametrize("seed", range(8))
def test_opt_kg_same_pulls_as_before_with_pulls_in_flight(seed: int) -> None:
    n = 3 + seed % 5
    params: dict[str, Any] = {"threshold": 0.64, "budget": 250, "prior_a": 1.0, "prior_b": 1.0}
    same_history(OptKG(n, **params), _OptKGBefore(n, **params), seed)


def test_opt_kg_pulls_at_the_tie_bar_differ_from_before_only_at_exact_ties() -> None:
    # At bar 1/2 distinct states can have equal gains (mirror images, and coincidences such
    # as Beta(2, 1) and Beta(2, 3), both 1/8), which the implementation before ordered by
    # rounding. Run both in step: where they first part, the two workers' exact gains tie.
    identical = parted = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(2, 9))
        means = rng.random(n)
        params: dict[str, Any] = {"threshold": 0.5, "budget": int(rng.integers(20, 200))}
        new, before = OptKG(n, **params), _OptKGBefore(n, **params)
        draws = np.random.default_rng(seed + 1000)
        while True:
            mine, theirs = new.ask(1), before.ask(1)
            if mine.done:
                assert theirs.done
                identical += 1
                break
            if mine.arms[0] != theirs.arms[0]:
                a, b = before.posterior()
                gains = {int(arm): exact_gain(0.5, int(a[arm]), int(b[arm])) for arm in
                         (mine.arms[0], theirs.arms[0])}  # fmt: skip
                assert len(set(gains.values())) == 1, (seed, gains)
                parted += 1
                break
            reward = float(draws.random() < means[mine.arms[0]])
            new.tell(int(mine.first_id), reward)
            before.tell(int(theirs.first_id), reward)
    assert identical + parted == 60 and identical >= 5


# ------------------------------------------------------------ Uniform
def test_uniform_pulls_are_round_robin() -> None:
    n = 7
    alg = UniformThresholding(n, threshold=0.5, budget=100)
    pulls = run(alg, np.full(n, 0.5), 0, 1)
    assert pulls == [i % n for i in range(100)]
    batched = run(UniformThresholding(n, threshold=0.5, budget=100), np.full(n, 0.5), 0, 9)
    assert batched == pulls


def test_uniform_after_a_departure_keeps_the_turn_order() -> None:
    alg = UniformThresholding(5, threshold=0.5, budget=100)
    assert alg.ask(3).arms.tolist() == [0, 1, 2]
    alg.set_unavailable(3, "left")
    assert alg.ask(4).arms.tolist() == [4, 0, 1, 2]
    alg.set_unavailable(0, "left")
    assert alg.ask(4).arms.tolist() == [4, 1, 2, 4]


@pytest.mark.parametrize("seed", range(12))
def test_uniform_matches_the_fewest_pulls_rule(seed: int) -> None:
    # Random asks, out-of-order answers, releases and departures: the turn counter makes the
    # pulls of the index it replaced (fewest effective pulls, ties to the lowest index).
    n = 2 + seed % 6
    params: dict[str, Any] = {"threshold": 0.5, "budget": 300}
    same_history(UniformThresholding(n, **params), _UniformBefore(n, **params), seed)
