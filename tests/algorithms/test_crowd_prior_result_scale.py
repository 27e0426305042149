"""Crowd-prior's result at scale: each worker's posterior computed once, a chunk of rows at a
time, and an undecided worker's reason from its own answers alone, with the same floats as
computing every worker's posterior whole for each number shown (the result at 100,000
workers went from 60 to 360 MB, and was quadratic in the undecided workers)."""

from __future__ import annotations

import pickle
import tracemalloc
from typing import Any

import numpy as np
import pytest

from screener import BernoulliRewards
from screener.algorithms import CrowdPrior, Decision
from screener.algorithms.snapshot import dump_state, load_state
from screener.algorithms.thresholding.crowd_prior import _posterior
from screener.algorithms.thresholding.crowd_prior._posterior import summarise_posterior
from screener.simulation.loop import drive
from screener.simulation.rewards import BetaRewards
from screener.stats.prior import GridPrior, PriorSet

_POSTERIOR_MODULE = "screener.algorithms.thresholding.crowd_prior._posterior"


def _driven(n: int, seed: int = 0, *, graded: bool = False, **params: Any) -> CrowdPrior:
    """A finished run of ``n`` workers around the bar of 0.6 (many stay undecided; graded
    answers are drawn one by one, so keep ``n`` small)."""
    means = np.random.default_rng(seed).uniform(0.4, 0.9, n)
    algorithm = CrowdPrior(n, threshold=0.6, **{"max_answers": 6, **params})
    rewards = BetaRewards(means, seed=seed) if graded else BernoulliRewards(means, seed)
    drive(algorithm, rewards)
    return algorithm


def _whole(prior: GridPrior, successes: Any, counts: Any, bar: float, q: float) -> list[Any]:
    """The numbers as computed before: every worker's posterior whole, for each of them."""
    posterior = prior.posterior(successes, counts)
    cumulative = np.cumsum(posterior, axis=1)
    last = prior.grid.size - 1
    return [
        prior.prob_below(successes, counts, bar),
        posterior @ prior.grid,
        prior.grid[np.minimum((cumulative < q).sum(axis=1), last)],
        prior.grid[np.minimum((cumulative < 1.0 - q).sum(axis=1), last)],
    ]


@pytest.fixture(scope="module", params=["auto", "npmle"])
def run_of_prior(request: pytest.FixtureRequest) -> CrowdPrior:
    """One run of each prior family, for the summary's checks."""
    return _driven(1003, seed=5, prior=request.param)


@pytest.mark.parametrize("chunk", [1, 7, _posterior.CHUNK_ROWS])
@pytest.mark.parametrize("n", [1, 2, 1003])
def test_the_summary_has_the_floats_of_the_whole_posterior(
    monkeypatch: pytest.MonkeyPatch, chunk: int, n: int, run_of_prior: CrowdPrior
) -> None:
    algorithm = run_of_prior
    successes, counts = algorithm.scaled_successes()[:n], algorithm.stats.count[:n]
    monkeypatch.setattr(_posterior, "CHUNK_ROWS", chunk)
    summary = summarise_posterior(algorithm.prior, successes, counts, bar=0.6, q=0.1)
    expected = _whole(algorithm.prior, successes, counts, 0.6, 0.1)
    for got, want in zip(
        [summary.prob_below, summary.mean, summary.low, summary.high], expected, strict=True
    ):
        assert np.array_equal(got, want)


@pytest.mark.parametrize(
    "params",
    [{}, {"false_ban": 5.0, "missed_bad": 3.0}, {"robust": 0.0}, {"graded": True}],
    ids=["robust", "cost", "posterior", "graded"],
)
def test_the_result_shows_the_whole_posteriors_numbers(params: dict[str, Any]) -> None:
    algorithm = _driven(150 if params.get("graded") else 400, seed=3, **params)
    result = algorithm.result()
    successes, counts = algorithm.scaled_successes(), algorithm.stats.count
    prob_below, mean, low, high = _whole(algorithm.prior, successes, counts, 0.6, algorithm.q)
    lines = sorted(result.workers, key=lambda w: w.arm)
    assert np.array_equal([w.estimate for w in lines], mean)  # rewards on [0, 1]
    assert np.array_equal([w.lower for w in lines], np.maximum(low, 0.0))
    assert np.array_equal([w.upper for w in lines], np.minimum(high, 1.0))
    assert np.array_equal(algorithm.prob_below, prob_below)


def test_the_result_computes_each_workers_posterior_once(monkeypatch: pytest.MonkeyPatch) -> None:
    algorithm = _driven(500)
    rows: list[int] = []
    posterior = GridPrior.posterior

    def counted(prior: GridPrior, successes: Any, counts: Any) -> Any:
        rows.append(np.size(successes))
        return posterior(prior, successes, counts)

    monkeypatch.setattr(GridPrior, "posterior", counted)
    algorithm.result()
    assert sum(rows) == algorithm.n_arms


def test_an_undecided_workers_reason_reads_its_own_answers_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every worker's successes for each undecided worker made the result quadratic: 28 s
    of its 33 at 100,000 workers."""
    algorithm = _driven(500)
    everyone: list[bool] = []
    scaled = CrowdPrior._scaled_successes

    def counted(self: CrowdPrior, *arms: slice) -> Any:
        successes = scaled(self, *arms)
        everyone.append(successes.size == self.n_arms)
        return successes

    monkeypatch.setattr(CrowdPrior, "_scaled_successes", counted)
    result = algorithm.result()
    assert sum(w.decision is Decision.UNDECIDED for w in result.workers) > 50
    assert everyone.count(True) <= 2


def test_the_result_holds_one_posterior_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its peak memory is about one (workers x grid) matrix, not four."""
    algorithm = _driven(12_000, max_answers=4)
    algorithm._ensure_fresh()  # the refresh, outside the measure
    monkeypatch.setattr(f"{_POSTERIOR_MODULE}.CHUNK_ROWS", 1000)
    tracemalloc.start()
    try:
        algorithm.result()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    matrix = algorithm.n_arms * algorithm.prior.grid.size * 8
    assert peak < 2.5 * matrix


def test_a_snapshot_leaves_the_summary_out_and_reads_a_state_without_it() -> None:
    algorithm = _driven(300)
    expected = algorithm.result()
    assert algorithm._summary is not None
    copy = load_state(dump_state(algorithm), CrowdPrior)
    assert copy.result() == expected
    # A state stored before the summary was kept (as its probabilities alone) reads back.
    state = {k: v for k, v in algorithm.__dict__.items() if k != "_summary"}
    older = pickle.dumps(_OlderState(state))
    restored = pickle.loads(older)
    assert restored.result() == expected
    assert b"_summary" not in dump_state(algorithm)


class _OlderState:
    """Pickles as a CrowdPrior whose state has no ``_summary`` (what older code wrote)."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.state = {**state, "_prob_below": None}

    def __reduce__(self) -> tuple[Any, ...]:
        return (object.__new__, (CrowdPrior,), self.state)


def test_workers_with_the_same_answers_share_one_span(monkeypatch: pytest.MonkeyPatch) -> None:
    """An undecided worker's range over the region is computed once per (successes, answers)
    and is the one its own call gives, to the last bit."""
    algorithm = _driven(500)
    calls: list[tuple[float, int]] = []
    prob_below_range = PriorSet.prob_below_range

    def counted(region: PriorSet, successes: Any, counts: Any, bar: float) -> Any:
        calls.append((float(successes[0]), int(counts[0])))
        return prob_below_range(region, successes, counts, bar)

    monkeypatch.setattr(PriorSet, "prob_below_range", counted)
    result = algorithm.result()
    undecided = [w for w in result.workers if w.decision is Decision.UNDECIDED]
    assert len(undecided) > 50 and len(calls) == len(set(calls)) < len(undecided) / 5
    successes = algorithm.scaled_successes()
    for line in undecided:
        one = slice(line.arm, line.arm + 1)
        counts = algorithm.stats.count[one]
        low, high = prob_below_range(algorithm.region, successes[one], counts, 0.6)
        key = (float(successes[line.arm]), int(counts[0]))
        assert algorithm._spans[key] == (float(low[0]), float(high[0]))
        assert f"from {low[0]:.3f} to {high[0]:.3f}" in line.reason
