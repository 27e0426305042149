"""Crowd-prior's step-by-step counts and decision log, checked against numpy at every step.

An ask or an answer of one worker must cost the same at any number of workers, so the counts
the schedule reads (undecided, askable, askable in the pilot) are kept per step and the
decisions made since a caller last looked are logged (``verdict_changes``). Both must equal
what reading every worker's arrays gives, under joins, batches, releases, departures, returns
and audits."""

from __future__ import annotations

import numpy as np
import pytest

from screener.algorithms.thresholding import CrowdPrior, ThresholdingAlgorithm


def _random_steps(algorithm: CrowdPrior, seed: int, steps: int) -> list[list[int]]:
    """Random joins, departures, returns, asks (one worker's, audits, batches), releases and
    answers, checking the kept counts and the decision log at every step; the asks made."""
    rng = np.random.default_rng(seed)
    asked: list[list[int]] = []
    rates = list(rng.choice([0.3, 0.55, 0.9], algorithm.n_arms))
    algorithm.verdict_changes()  # start the log
    shown = algorithm.verdicts().copy()
    for _ in range(steps):
        action = rng.random()
        if action < 0.08:
            algorithm.add_workers(int(rng.integers(1, 3)))
            rates += list(rng.choice([0.3, 0.55, 0.9], algorithm.n_arms - len(rates)))
        elif action < 0.14 and algorithm.n_arms:
            arm = int(rng.integers(algorithm.n_arms))
            if algorithm.available[arm]:
                algorithm.set_unavailable(arm, "left")
            else:
                algorithm.set_available(arm)
        elif action < 0.5 and algorithm.n_arms:
            arm = int(rng.integers(algorithm.n_arms))
            ask = algorithm.ask_for(arm, audit=bool(rng.random() < 0.3))
            if len(ask) and rng.random() < 0.1:
                algorithm.release(int(ask.first_id))
            elif len(ask):
                algorithm.tell(int(ask.first_id), float(rng.random() < rates[arm]))
        else:
            ask = algorithm.ask(int(rng.integers(1, 6)))
            asked.append(ask.arms.tolist())
            if len(ask):
                rewards = (rng.random(len(ask)) < np.asarray(rates)[ask.arms]).astype(float)
                algorithm.tell_many(ask.ids, rewards)
        assert algorithm.tallies() == algorithm.recounted_tallies()
        verdicts = algorithm.verdicts()
        before = np.zeros(verdicts.size, dtype=verdicts.dtype)  # a newcomer: undecided
        before[: shown.size] = shown
        moved = np.flatnonzero(verdicts != before)
        logged = algorithm.verdict_changes()
        assert logged is not None
        assert set(moved.tolist()) <= set(logged.tolist())
        assert logged.tolist() == sorted(set(logged.tolist()))
        np.testing.assert_array_equal(algorithm.verdicts_of(logged), verdicts[logged])
        shown = verdicts.copy()
    return asked


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "params",
    [
        {"pilot": 4, "reconsider": True},
        {"robust": 0.0, "max_answers": 6},
        {"false_ban": 20.0, "missed_bad": 10.0, "max_answers": 8},
    ],
    ids=["pilot-reconsider", "posterior", "cost"],
)
def test_kept_counts_and_logged_decisions_match_every_worker(
    params: dict[str, object], seed: int
) -> None:
    algorithm = CrowdPrior(6, threshold=0.6, seed=seed, **params)  # type: ignore[arg-type]
    _random_steps(algorithm, seed, 400)
    assert int((algorithm.verdicts() != 0).sum()) > 0  # the steps decided someone


def test_the_first_look_says_read_everyone() -> None:
    algorithm = CrowdPrior(3, threshold=0.6)
    assert algorithm.verdict_changes() is None
    logged = algorithm.verdict_changes()
    assert logged is not None and logged.size == 0


@pytest.mark.parametrize("seed", range(6))
def test_the_queue_picks_what_every_workers_key_picks(seed: int) -> None:
    """The schedule from the per-answer queue hands out exactly the pulls the index over every
    worker does, through joins, departures, returns, releases and decisions."""
    queued = CrowdPrior(8, threshold=0.6, seed=seed, pilot=3, max_answers=12)
    everyone = CrowdPrior(8, threshold=0.6, seed=seed, pilot=3, max_answers=12)
    generic = ThresholdingAlgorithm._index_schedule.__get__(everyone)
    everyone._index_schedule = generic  # type: ignore[method-assign]
    asks = _random_steps(queued, seed, 600)
    assert _random_steps(everyone, seed, 600) == asks
    assert sum(len(ask) for ask in asks) > 100  # the steps asked
    np.testing.assert_array_equal(queued.verdicts(), everyone.verdicts())
