"""Dataset and log replay: what each worker is answered, exhaustion, and the conformance suite."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from screener.algorithms import StopReason, create_algorithm
from screener.crowd import WorkerPool
from screener.errors import ConfigError, PoolError
from screener.oracles.answer_file import load_answers
from screener.oracles.dataset import DatasetOracle
from screener.simulation.loop import simulate
from screener.simulation.recorded import RecordedRewards
from screener.testing import OracleConformance, default_pool


def write_dataset(path: Path, pool: WorkerPool, per_worker: int, seed: int = 0) -> Path:
    """Long-format answers: worker i answers ``per_worker`` items, right with its accuracy."""
    rng = np.random.default_rng(seed)
    accuracies = pool.require_accuracies()
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["worker", "item", "answer", "gold"])
        for worker, accuracy in zip(pool.workers, accuracies, strict=True):
            for item in range(per_worker):
                right = rng.random() < accuracy
                writer.writerow([worker, f"i{item}", "Yes" if right else "no", "yes"])
    return path


def test_rewards_match_a_direct_computation(tmp_path: Path) -> None:
    pool = default_pool()
    file = write_dataset(tmp_path / "answers.csv", pool, 40)
    recorded = load_answers(file)
    with file.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for worker, rewards in zip(recorded.workers, recorded.rewards, strict=True):
        expected = [float(r["answer"].lower() == r["gold"]) for r in rows if r["worker"] == worker]
        np.testing.assert_array_equal(rewards, expected)
    assert recorded.pool().accuracies == tuple(float(np.mean(r)) for r in recorded.rewards)


def test_with_replacement_draws_each_workers_own_records_uniformly() -> None:
    records = [np.array([0.0, 1.0, 1.0, 1.0]), np.array([0.25])]
    model = RecordedRewards(["a", "b"], records, seed=3)
    draws = model.sample(np.zeros(40_000, dtype=np.int64), np.arange(40_000))
    assert set(np.unique(draws)) == {0.0, 1.0}
    assert abs(draws.mean() - 0.75) < 0.01  # 4 standard errors
    assert np.all(model.sample([1, 1, 1], [0, 5, 9]) == 0.25)
    np.testing.assert_array_equal(model.sample([0, 0], [7, 8]), model.sample([0, 0], [7, 8]))


def test_without_replacement_uses_each_record_once_then_exhausts() -> None:
    records = [np.array([0.1, 0.2, 0.3, 0.4]), np.array([1.0, 0.0])]
    shuffled = RecordedRewards(["a", "b"], records, seed=5, replacement=False)
    got = shuffled.sample([0, 0, 0, 0, 0], [0, 1, 2, 3, 4])
    assert sorted(got[:4].tolist()) == [0.1, 0.2, 0.3, 0.4] and np.isnan(got[4])
    in_order = RecordedRewards(["a", "b"], records, replacement=False, shuffle=False)
    np.testing.assert_array_equal(in_order.sample([1, 1], [0, 1]), [1.0, 0.0])
    assert np.isnan(in_order.sample([1], [2])[0])


def test_an_exhausted_worker_ends_the_run_instead_of_looping() -> None:
    records = [np.ones(5), np.zeros(3), np.ones(4)]
    model = RecordedRewards(["a", "b", "c"], records, replacement=False, shuffle=False)
    result = simulate(create_algorithm("rr", 3, {"k": 1.0}), model)
    assert result.stop_reason is StopReason.WORKERS_EXHAUSTED
    assert [w.pulls for w in sorted(result.workers, key=lambda w: w.arm)] == [5, 3, 4]
    assert all("exhausted" in w.reason for w in result.workers)


def test_bad_datasets_and_options_say_what_is_wrong(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("worker,item\nw1,i1\n", encoding="utf-8")
    with pytest.raises(PoolError, match="expected columns worker,item,answer"):
        load_answers(bad)
    bad.write_text("worker,item,score\nw1,i1,1.5\n", encoding="utf-8")
    with pytest.raises(PoolError, match=r"line 2: score '1.5' is not in \[0, 1\]"):
        load_answers(bad)
    good = write_dataset(tmp_path / "good.csv", default_pool(), 5)
    other = WorkerPool(("x", "y"), (0.5, 0.5))
    with pytest.raises(ConfigError, match="have no answers in"):
        DatasetOracle.from_options(other, {"path": str(good)}, 0)
    with pytest.raises(ConfigError, match="replacement must be true or false"):
        DatasetOracle.from_options(default_pool(), {"path": str(good), "replacement": "maybe"}, 0)
    with pytest.raises(ConfigError, match="unknown option"):
        DatasetOracle.from_options(default_pool(), {"path": str(good), "colour": 1}, 0)


@pytest.fixture(scope="module")
def dataset_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("dataset")
    return write_dataset(folder / "answers.csv", default_pool(), 200)


class TestDatasetOracleConformance(OracleConformance):
    path: ClassVar[Path]

    @pytest.fixture(autouse=True)
    def _file(self, dataset_file: Path) -> None:
        type(self).path = dataset_file

    def make_oracle(self, pool: WorkerPool, options: Any, seed: int) -> DatasetOracle:
        return DatasetOracle.from_options(pool, {"path": str(self.path), **options}, seed)

    options: ClassVar[dict[str, Any]] = {"replacement": False}
    silent_options: ClassVar[dict[str, Any]] = {"loss": 0.4}


@pytest.mark.skipif(not os.environ.get("SCREENER_DATA"), reason="SCREENER_DATA is not set")
def test_the_hcb_dataset_loads_with_the_documented_figures() -> None:
    """../shared/data/README.md: 722 workers, 19,699 answers, 105 with >= 30 answers."""
    file = Path(os.environ["SCREENER_DATA"]) / "gold_answers" / "SQUARE_HCB_trec2010rf.csv"
    recorded = load_answers(file)
    assert len(recorded.workers) == 722
    assert sum(r.size for r in recorded.rewards) == 19_699
    assert len(recorded.pool(min_answers=30)) == 105
