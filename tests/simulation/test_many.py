"""Many seeded runs at once: the same results, in the same order, as the runs one by one,
wherever they run; a failed run names its seed."""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

import pytest

from screener import ScreenerError
from screener.algorithms import Algorithm, Result
from screener.errors import ConfigError
from screener.simulation import (
    BernoulliRun,
    RewardModel,
    SeededRunError,
    map_seeds,
    simulate,
    simulate_many,
)

MEANS = (0.9, 0.8, 0.7, 0.55, 0.4, 0.3)
#: A k-sigma, two thresholding and two top-K algorithms, each run short.
RUNS = {
    "rr": BernoulliRun("rr", {"k": 1.0, "budget": 600}, MEANS),
    "apt": BernoulliRun("apt", {"threshold": 0.6, "budget": 600}, MEANS),
    "crowd-prior": BernoulliRun("crowd-prior", {"threshold": 0.6}, MEANS),
    "clucb-pac": BernoulliRun("clucb-pac", {"k": 2, "eps": 0.2, "delta": 0.2}, MEANS),
    "adaptive-topk": BernoulliRun("adaptive-topk", {"k": 2, "eps": 0.2}, MEANS),
}
SEEDS = [7, 0, 3, 12, 5, 1]  # not sorted: the results follow this order


@pytest.fixture(scope="module")
def warm_pool() -> Iterator[Executor]:
    """A process pool kept across calls, as a caller with many plans would keep one."""
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


def _distinct(results: list[Result]) -> int:
    return len({repr(result.to_dict()) for result in results})


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RUNS))
def test_the_runs_equal_the_runs_made_one_by_one(name: str, warm_pool: Executor) -> None:
    build = RUNS[name]
    one_by_one = [simulate(*build(seed)) for seed in SEEDS]
    assert _distinct(one_by_one) == len(SEEDS)  # each seed its own run: the order is checkable
    here = simulate_many(build, SEEDS, processes=1)
    elsewhere = simulate_many(build, SEEDS, executor=warm_pool, chunksize=2)
    assert here == elsewhere == one_by_one
    assert [r.to_dict() for r in elsewhere] == [r.to_dict() for r in one_by_one]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["apt", "clucb-pac"])
def test_a_pool_of_two_processes_gives_the_same_runs(name: str) -> None:
    build = RUNS[name]
    assert simulate_many(build, SEEDS, processes=2) == [simulate(*build(s)) for s in SEEDS]


def test_batch_is_passed_to_every_run(warm_pool: Executor) -> None:
    build = RUNS["crowd-prior"]
    one_at_a_time = [simulate(*build(seed), batch=1) for seed in SEEDS]
    assert simulate_many(build, SEEDS, batch=1, executor=warm_pool) == one_at_a_time
    assert simulate_many(build, SEEDS, executor=warm_pool) != one_at_a_time


@pytest.mark.parametrize("name", ["apt", "adaptive-topk"])
def test_any_executor_gives_the_same_runs(name: str, warm_pool: Executor) -> None:
    build = RUNS[name]
    expected = [simulate(*build(seed)) for seed in SEEDS]
    with ThreadPoolExecutor(3) as threads:
        assert simulate_many(build, SEEDS, executor=threads, chunksize=1) == expected
    assert simulate_many(build, SEEDS[::-1], executor=warm_pool) == expected[::-1]


def _slower_for_smaller_seeds(seed: int) -> int:
    time.sleep(0.02 * (10 - seed))
    return seed


def test_seed_order_is_kept_when_later_seeds_finish_first() -> None:
    with ThreadPoolExecutor(10) as threads:
        done = map_seeds(_slower_for_smaller_seeds, range(10), executor=threads, chunksize=1)
    assert done == list(range(10))


def _process_id(seed: int) -> int:
    return os.getpid()


def test_one_process_runs_here_and_more_run_elsewhere() -> None:
    assert set(map_seeds(_process_id, range(4), processes=1)) == {os.getpid()}
    elsewhere = map_seeds(_process_id, range(4), processes=2, chunksize=1)
    assert os.getpid() not in elsewhere
    assert map_seeds(_process_id, [], processes=2) == []


def _build_failing_at_3(seed: int) -> tuple[Algorithm, RewardModel]:
    if seed == 3:
        raise ValueError("no such worker")
    return RUNS["apt"](seed)


@pytest.mark.parametrize("where", [{"processes": 1}, {"processes": 2}, {"executor": "threads"}])
def test_a_failed_run_names_its_seed(where: dict[str, Any]) -> None:
    with ThreadPoolExecutor(2) as threads:
        options = {**where, "executor": threads} if "executor" in where else where
        with pytest.raises(SeededRunError, match=r"seed 3 failed: ValueError: no such worker"):
            simulate_many(_build_failing_at_3, SEEDS, chunksize=2, **options)


def test_the_first_failure_in_seed_order_is_reported(warm_pool: Executor) -> None:
    with pytest.raises(ScreenerError) as raised:
        map_seeds(_failing_from_4, [9, 1, 5, 4, 0], executor=warm_pool, chunksize=1)
    assert isinstance(raised.value, SeededRunError) and raised.value.seed == 9


def _failing_from_4(seed: int) -> int:
    if seed >= 4:
        raise RuntimeError(f"seed {seed} is too large")
    return seed


def test_a_run_that_cannot_reach_another_process_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match="module level"):
        map_seeds(lambda seed: seed, range(4), processes=2)
    assert map_seeds(lambda seed: seed + 1, range(3), processes=1) == [1, 2, 3]


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"processes": 0}, "processes must be at least 1"),
        ({"processes": 2, "executor": "threads"}, "not both"),
        ({"chunksize": 0}, "chunksize must be at least 1"),
    ],
)
def test_bad_options_are_config_errors(options: dict[str, Any], words: str) -> None:
    with ThreadPoolExecutor(1) as threads:
        if "executor" in options:
            options = {**options, "executor": threads}
        with pytest.raises(ConfigError, match=words):
            map_seeds(_process_id, range(4), **options)
