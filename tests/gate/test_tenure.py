"""The tenure prior (a heuristic, ``ValueOfGold(tenure=True)``) against numpy, and the gate's
own bans under it over seeded streams: where spammers are the prolific workers it catches
them (the default gate does not), and there its bans keep crowd-prior's promise (where staying
long says nothing of a worker they do not: BENCHMARKS.md)."""

from __future__ import annotations

import numpy as np
import pytest
from crowd_streams import Crowd, drive
from stats_helpers import assert_rate_at_most

from screener.algorithms import CrowdPrior
from screener.gate import Gate, GateSettings, ValueOfGold
from screener.gate.tenure import TenurePriors
from screener.stats.prior import GridPrior


def _answered_crowd(seed: int) -> tuple[CrowdPrior, np.ndarray]:
    """A crowd-prior with 30 workers of random accuracy and answers, and their ages."""
    rng = np.random.default_rng(seed)
    method = CrowdPrior(0, threshold=0.6, seed=0)
    method.add_workers(30)
    for arm in range(30):
        rate = rng.uniform(0.3, 0.95)
        for _ in range(int(rng.integers(0, 15))):
            ask = method.ask_for(arm, audit=True)
            if len(ask) == 0:
                break
            method.tell(int(ask.first_id), float(rng.random() < rate))
    ages = rng.integers(1, 300, 30).astype(float)
    return method, ages


def _flat_posteriors(method: CrowdPrior) -> np.ndarray:
    grid = method.prior.grid
    right = method.scaled_successes()[:, None]
    wrong = method.stats.count[:, None] - right
    log = right * np.log(grid) + wrong * np.log1p(-grid)
    rows = np.exp(log - log.max(axis=1, keepdims=True))
    return np.asarray(rows / rows.sum(axis=1, keepdims=True))


def _members(ages: np.ndarray, age: int) -> np.ndarray:
    floor = 2 ** int(np.log2(age))
    members = np.flatnonzero(ages > floor)
    if members.size < TenurePriors.MIN_WORKERS:
        members = np.argsort(-ages, kind="stable")[: TenurePriors.MIN_WORKERS]
    return members


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_prior_of_an_age_is_the_mean_flat_posterior_of_the_longer_workers(seed: int) -> None:
    method, ages = _answered_crowd(seed)
    tenure = TenurePriors()
    tenure.refresh(method, ages)
    posteriors = _flat_posteriors(method)
    for age in (TenurePriors.MIN_AGE, 20, 100, 290):
        expected = posteriors[_members(ages, age)].mean(axis=0)
        got = tenure.prior(method, age).weights
        np.testing.assert_allclose(got, expected / expected.sum(), rtol=1e-9, atol=1e-15)
    assert tenure.prior(method, TenurePriors.MIN_AGE - 1) is method.prior  # young: as anyone


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_workers_own_answers_are_left_out_of_its_prior(seed: int) -> None:
    method, ages = _answered_crowd(seed)
    tenure = TenurePriors()
    tenure.refresh(method, ages)
    posteriors = _flat_posteriors(method)
    grid = method.prior.grid
    for arm in range(30):
        age = int(ages[arm])
        if age < TenurePriors.MIN_AGE:
            continue
        others = [m for m in _members(ages, age).tolist() if m != arm]
        prior = GridPrior(
            grid, posteriors[others].mean(axis=0) / posteriors[others].mean(axis=0).sum()
        )
        count = method.stats.count[arm : arm + 1]
        expected = prior.prob_below(method.scaled_successes()[arm : arm + 1], count, method.bar)
        assert tenure.prob_below(method, arm, age) == pytest.approx(float(expected[0]), rel=1e-9)


def _prolific_spam(seed: int) -> Crowd:
    """80 workers, 15% under the bar; the spammers ask for work ten times as often."""
    rng = np.random.default_rng(seed)
    accuracy, activity = {}, {}
    for i in range(80):
        name = f"w{i:03d}"
        spammer = rng.random() < 0.15
        accuracy[name] = 0.45 if spammer else float(rng.uniform(0.75, 0.95))
        activity[name] = 10.0 if spammer else 1.0
    return Crowd(accuracy, activity=activity)


def _bad_tasks(gate: Gate, people: Crowd, seen: dict[str, list[str]]) -> int:
    """Real tasks done by workers under the bar."""
    return sum(
        kinds.count("task") + kinds.count("qualified")
        for worker, kinds in seen.items()
        if people.accuracy[worker] < 0.6
    )


@pytest.mark.slow
def test_prolific_spammers_are_caught_where_the_crowd_prior_alone_misses_them() -> None:
    """Pooled over seeded streams, the gate with the tenure prior leaves under half the real
    tasks to prolific spammers that the default gate leaves them."""
    kept = {"tenure": 0, "default": 0}
    for seed in range(6):
        people = _prolific_spam(seed)
        for name, settings in (
            ("tenure", GateSettings(policy=ValueOfGold(tenure=True), seed=seed)),
            ("default", GateSettings(seed=seed)),
        ):
            gate = Gate(settings)
            seen = drive(gate, people, 4000, seed)
            kept[name] += _bad_tasks(gate, people, seen)
    assert kept["tenure"] < 0.5 * kept["default"], kept


@pytest.mark.slow
def test_the_gates_own_bans_keep_the_promise_where_spammers_are_prolific() -> None:
    """Pooled over seeded streams of Beta crowds whose workers under the bar ask for work six
    times as often: the share of wrong bans among the gate's own (made at P(below) >= 1 - q
    under the tenure prior) is not significantly above q = 0.1."""
    wrong = bans = 0
    for seed in range(12):
        rng = np.random.default_rng(500 + seed)
        accuracy = {f"w{i:03d}": float(rng.beta(5, 2.5)) for i in range(80)}
        activity = {w: 6.0 if a < 0.6 else 1.0 for w, a in accuracy.items()}
        gate = Gate(GateSettings(policy=ValueOfGold(tenure=True), seed=seed))
        drive(gate, Crowd(accuracy, activity=activity), 4000, seed)
        for state in gate.workers.values():
            if state.ban_posterior is None:
                continue
            assert state.ban_posterior >= 0.9
            bans += 1
            wrong += accuracy[state.worker] >= 0.6
    assert bans >= 40
    assert_rate_at_most(wrong, bans, 0.1)
