"""``simulate(batch=1)`` runs in scalar steps (``ask1``, ``sample1``, ``tell1``): the same
draws, pulls and results as the batch-of-one loop through ``ask(1)``, ``sample`` and
``tell_many``, for every registered algorithm and every reward model."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.tao2019 import RunRewards
from screener import BernoulliRewards, simulate
from screener.algorithms import Algorithm, AlgorithmSetup, create_algorithm
from screener.simulation import BetaRewards, RewardModel
from screener.simulation.recorded import EXHAUSTED_RECORDS, RecordedRewards
from screener.testing.algorithm_conformance import TEST_SETUPS

SEEDS = (0, 1, 2)


def _batch_of_one(algorithm: Algorithm, rewards: RewardModel) -> list[tuple[int, int]]:
    """The loop ``simulate(batch=1)`` ran before its scalar path, with its pulls."""
    pulls: list[tuple[int, int]] = []
    while True:
        ask = algorithm.ask(1)
        if ask.done:
            return pulls
        assert not ask.wait
        pulls += list(zip(ask.arms.tolist(), ask.seqs.tolist(), strict=True))
        draws = rewards.sample(ask.arms, ask.seqs)
        gone = np.isnan(draws)
        algorithm.tell_many(ask.ids[~gone], draws[~gone])
        for pull_id, arm in zip(ask.ids[gone].tolist(), ask.arms[gone].tolist(), strict=True):
            algorithm.set_unavailable(arm, EXHAUSTED_RECORDS)
            algorithm.release(pull_id)


def _cases() -> list[object]:
    return [
        pytest.param(name, setup, id=f"{name}{setup.label and '-' + setup.label}")
        for name, setups in TEST_SETUPS.items()
        for setup in setups
    ]


@pytest.mark.parametrize(("name", "setup"), _cases())
def test_one_at_a_time_makes_the_batch_of_one_pulls_and_result(
    name: str, setup: AlgorithmSetup
) -> None:
    n = setup.n_workers
    means = setup.means or tuple(0.15 + 0.8 * i / max(n - 1, 1) for i in range(n))
    for seed in SEEDS:
        reference = create_algorithm(name, n, {**setup.params, "seed": seed})
        pulls = _batch_of_one(reference, BernoulliRewards(means, seed=seed + 100))
        scalar = create_algorithm(name, n, {**setup.params, "seed": seed})
        result = simulate(scalar, BernoulliRewards(means, seed=seed + 100), batch=1)
        assert result.to_json() == reference.result().to_json()
        infos = [scalar.pull_info(pull_id) for pull_id in range(scalar.n_asked)]
        assert [(i.arm, i.seq) for i in infos if i is not None] == pulls
        assert scalar.n_pending == 0 == int(scalar.pending.sum())


def _recorded(*, replacement: bool, shuffle: bool = True) -> RecordedRewards:
    """Four workers with 0, 1, 5 and 12 records (with replacement: the last three)."""
    rng = np.random.default_rng(4)
    records = [rng.random(size).round(2) for size in (0, 1, 5, 12)]
    if replacement:
        return RecordedRewards(["b", "c", "d"], records[1:], 9)
    return RecordedRewards(["a", "b", "c", "d"], records, 9, replacement=False, shuffle=shuffle)


@pytest.mark.parametrize(
    "model",
    [
        BernoulliRewards([0.0, 0.3, 0.5, 0.99, 1.0], seed=-7),
        BernoulliRewards([0.2, 0.8], seed=2**63 + 5),
        RunRewards([0.2, 0.5, 0.7], seed=3, run=4),  # overrides sample alone
        BetaRewards([0.3, 0.9], seed=1),
        _recorded(replacement=True, shuffle=True),
        _recorded(replacement=False, shuffle=True),
        _recorded(replacement=False, shuffle=False),
    ],
    ids=["bernoulli", "bernoulli-big-seed", "sample-overridden", "beta", "recorded",
         "recorded-once", "recorded-in-order"],
)  # fmt: skip
def test_a_scalar_draw_is_the_batch_draw(model: RewardModel) -> None:
    arms = np.repeat(np.arange(model.n_arms), 40)
    seqs = np.tile(np.arange(40), model.n_arms)
    batch = model.sample(arms, seqs)
    scalar = [model.sample1(int(a), int(s)) for a, s in zip(arms, seqs, strict=True)]
    assert isinstance(scalar[0], float)
    np.testing.assert_array_equal(np.array(scalar), batch)  # NaN where exhausted, alike


def test_recorded_answers_run_out_alike_one_at_a_time() -> None:
    """Exhausted workers leave the run in the scalar loop as in the batch loop."""
    model = _recorded(replacement=False, shuffle=True)
    params = {"threshold": 0.5, "budget": 60}
    reference = create_algorithm("uniform-thresholding", 4, params)
    _batch_of_one(reference, model)
    scalar = create_algorithm("uniform-thresholding", 4, params)
    result = simulate(scalar, model, batch=1)
    assert result.to_json() == reference.result().to_json()
    assert scalar.unavailable_reason == reference.unavailable_reason
    assert {0, 1, 2} <= set(scalar.unavailable_reason)  # every worker but the last ran out
