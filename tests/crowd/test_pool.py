"""The workers to screen (screener.crowd): a pool read from a CSV file, checked as it is built,
kept in the journal's format, and the simulated crowds, each the same for the same seed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from screener.checks import MAX_WORKERS
from screener.crowd import WorkerPool, demo_pool, load_pool_csv, synthetic_pool
from screener.crowd.pool import check_pool_size
from screener.errors import PoolError


def _pool_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pool.csv"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "accuracies"),
    [
        ("worker,accuracy\nann,0.9\nbob,0.4\n", (0.9, 0.4)),
        ("\ufeffWorker , Mean\n ann ,0.9\nbob, 0.4\n", (0.9, 0.4)),  # a BOM, spaces, the alias
        ("worker,country\nann,fr\nbob,de\n", None),  # no accuracies: a live pool
    ],
)
def test_a_pool_file_is_read_in_its_order(
    tmp_path: Path, text: str, accuracies: tuple[float, ...] | None
) -> None:
    pool = load_pool_csv(_pool_file(tmp_path, text))
    assert pool.workers == ("ann", "bob")
    assert pool.accuracies == accuracies


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("ann,0.9\nbob,0.4\n", "no 'worker' column (found ann, 0.9)"),
        ("worker,worker\nann,bob\n", "more than one worker column"),
        ("worker,accuracy,mean\nann,0.9,0.9\nbob,0.4,0.4\n", "two accuracy columns"),
        ("worker,accuracy\nann,0.9,extra\nbob,0.4\n", "line 2: more fields than the 2 columns"),
        ("worker,accuracy\nann,0.9\nbob,high\n", "line 3: accuracy 'high' is not a number"),
        ("worker,accuracy\nann,0.9\nann,0.4\n", "worker 'ann' appears twice"),
        ("worker,accuracy\nann,0.9\n,0.4\n", "empty worker id"),
        ("worker,accuracy\nann,0.9\nbob,1.5\n", "accuracy 1.5 of worker 'bob' is not in [0, 1]"),
        ("worker,accuracy\nann,0.9\n", "a pool needs at least 2 workers"),
    ],
)
def test_a_bad_pool_file_is_refused_saying_where(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(PoolError, match=re.escape(says)):
        load_pool_csv(_pool_file(tmp_path, text))


def test_a_missing_pool_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(PoolError, match=r"no pool file at .*nowhere\.csv") as refused:
        load_pool_csv(tmp_path / "nowhere.csv")
    assert refused.value.hint == "check the path"


def test_the_largest_pool_is_the_limit_and_one_more_is_refused() -> None:
    check_pool_size(MAX_WORKERS, "a pool")  # at the limit: accepted
    with pytest.raises(PoolError, match=f"{MAX_WORKERS + 1:,} workers, more than"):
        check_pool_size(MAX_WORKERS + 1, "a pool")


def test_a_pool_without_accuracies_cannot_be_simulated() -> None:
    pool = WorkerPool(("ann", "bob"))
    with pytest.raises(PoolError, match="no accuracy column"):
        pool.require_accuracies()


def test_a_pool_survives_the_journals_format() -> None:
    pool = WorkerPool(("ann", "bob", "cy"), (0.9, 0.85, 0.4), "pool.csv")
    again = WorkerPool.from_dict(json.loads(json.dumps(pool.to_dict())))
    assert again == pool
    assert WorkerPool.from_dict({"workers": ["a", "b"]}) == WorkerPool(("a", "b"))


def test_a_synthetic_pool_depends_on_its_seed_only() -> None:
    first, again, other = (synthetic_pool(40, 3, seed=s) for s in (5, 5, 6))
    assert first == again
    assert first.accuracies != other.accuracies
    accuracies = first.require_accuracies()
    assert sum(a <= 0.55 for a in accuracies) == 3  # the outliers
    assert all(0.78 <= a <= 0.92 for a in accuracies if a > 0.55)
    assert first.workers[0] == "w01" and first.workers[-1] == "w40"


@pytest.mark.parametrize(("workers", "outliers"), [(1, 0), (5, 5), (5, -1)])
def test_an_impossible_synthetic_pool_is_refused(workers: int, outliers: int) -> None:
    with pytest.raises(PoolError, match=f"cannot build {workers} workers with {outliers}"):
        synthetic_pool(workers, outliers)


def test_the_demo_pool_is_thirty_workers_two_of_them_spammers() -> None:
    pool = demo_pool()
    assert (len(pool), pool.source) == (30, "demo")
    assert pool.accuracies == synthetic_pool(30, 2, seed=2017).accuracies
    assert sum(a < 0.6 for a in pool.require_accuracies()) == 2
