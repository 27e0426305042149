"""What a decision asks a platform to do (banned / accepted), and which decisions a stream may
act on before the run ends: a verdict that ``streamable_verdicts`` reports is never taken
back, under batches, answers out of order and released pulls."""

from __future__ import annotations

import numpy as np
import pytest

from screener.algorithms import (
    ALGORITHMS,
    Decision,
    ThresholdingAlgorithm,
    Verdict,
    create_algorithm,
    streamable_verdicts,
    verdict_of,
)
from screener.testing.algorithm_conformance import TEST_SETUPS

LOW = {"direction": "low"}
HIGH = {"direction": "high"}


@pytest.mark.parametrize(
    ("decision", "params", "verdict"),
    [
        (Decision.BELOW, {}, Verdict.BANNED),
        (Decision.ABOVE, {}, Verdict.ACCEPTED),
        (Decision.OUTLIER, LOW, Verdict.BANNED),
        (Decision.NORMAL, LOW, Verdict.ACCEPTED),
        (Decision.OUTLIER, HIGH, None),
        (Decision.NORMAL, HIGH, None),
        (Decision.OUTLIER, {}, None),  # GOLD: outliers on either side
        (Decision.SELECTED, {"k": 2}, Verdict.ACCEPTED),
        (Decision.REJECTED, {"k": 2}, None),
        (Decision.UNDECIDED, {}, None),
        (Decision.UNDECIDED, LOW, None),
    ],
)
def test_each_question_maps_to_block_or_qualify(
    decision: Decision, params: dict[str, str], verdict: Verdict | None
) -> None:
    assert verdict_of(decision, params) is verdict


def _history(algorithm: ThresholdingAlgorithm, means: np.ndarray, seed: int) -> tuple[int, int]:
    """Asks of 1 to 8, answers told in random order, a tenth of the pulls released, the
    verdicts read after every step and at the end: (how many times a verdict read was taken
    back or changed, verdicts read in all)."""
    rng = np.random.default_rng(seed)
    shown = np.zeros(algorithm.n_arms, dtype=np.int8)
    outstanding: list[int] = []
    taken_back = reported = 0
    done = False
    while not done:
        ask = algorithm.ask(int(rng.integers(1, 9)))
        done = ask.done or algorithm.n_asked > 5000
        outstanding += ask.ids.tolist()
        rng.shuffle(outstanding)
        cut = int(rng.integers(0, len(outstanding) + 1))
        told, outstanding = outstanding[:cut], outstanding[cut:]
        for pull_id in told:
            info = algorithm.pull_info(pull_id)
            assert info is not None
            if rng.random() < 0.1:
                algorithm.release(pull_id)
            else:
                algorithm.tell(pull_id, float(rng.random() < means[info.arm]))
        verdicts = algorithm.verdicts()
        taken_back += int(((shown != 0) & (verdicts != shown)).sum())
        reported += int(((shown == 0) & (verdicts != 0)).sum())
        shown = np.where(verdicts != 0, verdicts, shown)
    return taken_back, reported


def _streamed(name: str) -> bool:
    cls = ALGORITHMS[name]
    return issubclass(cls, ThresholdingAlgorithm) and cls.verdicts_final


@pytest.mark.parametrize("name", [name for name in TEST_SETUPS if _streamed(name)])
def test_a_streamed_verdict_is_never_taken_back(name: str) -> None:
    """Every test setup of the method, three histories each."""
    reported = 0
    for setup in TEST_SETUPS[name]:
        means = np.asarray(setup.means or np.linspace(0.15, 0.95, setup.n_workers))
        params = {**setup.params, "budget": 1000}  # room to decide, answers lost and all
        for seed in range(3):
            algorithm = create_algorithm(name, setup.n_workers, {**params, "seed": seed})
            assert isinstance(algorithm, ThresholdingAlgorithm)
            taken_back, shown = _history(algorithm, means, seed)
            assert taken_back == 0, (setup.label, seed)
            reported += shown
    assert reported > 0  # the histories did decide workers


def test_confident_thresholding_takes_verdicts_back_so_it_is_not_streamed() -> None:
    """Why ``verdicts_final`` is False for it: a worker whose interval cleared the bar is
    undecided again when answers that were in flight pull its interval back over it."""
    means = np.array([0.45, 0.5, 0.55, 0.5, 0.6, 0.4, 0.5, 0.55])
    params = {"threshold": 0.5, "eps": 0.1, "interval": "hoeffding", "delta": 0.3}
    taken = 0
    for seed in range(5):
        algorithm = create_algorithm("confident-thresholding", means.size, {**params, "seed": seed})
        assert isinstance(algorithm, ThresholdingAlgorithm)
        assert streamable_verdicts(algorithm) is None
        taken += _history(algorithm, means, seed)[0]
    assert taken > 0


@pytest.mark.parametrize(
    "params",
    [
        {"threshold": 0.6},
        {"threshold": 0.6, "false_ban": 5.0, "missed_bad": 60.0, "pilot": 10},
        {"threshold": 0.6, "robust": 0.0},
    ],
    ids=["robust", "costs-pilot", "fitted"],
)
def test_a_streamed_decision_is_explained_as_the_result_explains_it(
    params: dict[str, float],
) -> None:
    """``explain`` (the stream's reason) is the result line's reason for every worker, the
    decided ones read without the crowd's posterior."""
    means = np.concatenate([np.full(8, 0.35), np.linspace(0.7, 0.95, 32)])
    algorithm = create_algorithm("crowd-prior", means.size, {**params, "seed": 3})
    assert isinstance(algorithm, ThresholdingAlgorithm)
    _history(algorithm, means, seed=3)
    lines = {line.arm: line for line in algorithm.result().workers}
    decided = algorithm.verdicts()
    assert (decided != 0).sum() >= 10
    for arm, line in lines.items():
        assert algorithm.explain(arm) == line.reason
