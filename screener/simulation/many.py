"""Many independent seeded runs at once: on this machine's cores, or on any executor.

Each run is a pure function of its seed, so where it runs cannot change what it returns:
the results come back in seed order, the same values as a loop over the seeds.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, TypeVar

from screener.algorithms import Algorithm, Result, create_algorithm
from screener.errors import ConfigError, ScreenerError
from screener.simulation.loop import simulate
from screener.simulation.rewards import BernoulliRewards, RewardModel

__all__ = ["BernoulliRun", "SeededRunError", "map_seeds", "simulate_many", "usable_cpus"]

_Out = TypeVar("_Out")
#: Chunks per worker: enough to even out runs of unequal length, few enough to amortise
#: sending the task and its results between processes.
_CHUNKS_PER_WORKER = 4


class SeededRunError(ScreenerError):
    """One of many seeded runs failed; ``seed`` says which, to rerun it alone.

    Examples
    --------
    >>> error = SeededRunError(7, "ValueError: bad reward")
    >>> error.seed, str(error)
    (7, 'the run with seed 7 failed: ValueError: bad reward (rerun that seed alone to debug it)')
    """

    def __init__(self, seed: int, reason: str) -> None:
        super().__init__(
            f"the run with seed {seed} failed: {reason}", "rerun that seed alone to debug it"
        )
        self.seed = seed
        self.reason = reason

    def __reduce__(self) -> tuple[type[SeededRunError], tuple[int, str]]:
        # Sent back from a worker process by pickle, which would otherwise call
        # SeededRunError(message) with the formatted message alone.
        return type(self), (self.seed, self.reason)


def map_seeds(
    run: Callable[[int], _Out],
    seeds: Iterable[int],
    *,
    processes: int | None = None,
    executor: Executor | None = None,
    chunksize: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> list[_Out]:
    """``[run(seed) for seed in seeds]``, computed in parallel, in seed order.

    ``run`` must be a pure function of the seed, picklable (a module-level function, a
    ``functools.partial`` of one, or an instance of a module-level class) and return a
    picklable value. By default the runs share ``processes`` fresh processes (all the CPUs
    this process may use when None; ``processes=1`` runs them here, with no pool); seeds go
    out in chunks of ``chunksize`` (default: about four chunks per process). Any
    ``concurrent.futures.Executor`` may be passed instead, to reuse a warm pool or to reach
    many machines through an engine the caller already runs; the result is the same.

    ``progress``, when given, is called with the number of runs just finished (after each
    run here, after each chunk on a pool), e.g. a progress bar's ``update``.

    Raises ``SeededRunError`` naming the first seed (in seed order) whose run failed.

    Examples
    --------
    >>> from functools import partial
    >>> map_seeds(partial(pow, 2), range(5), processes=1)
    [1, 2, 4, 8, 16]

    On Dask (``distributed.Client().get_executor()``), loky (``get_reusable_executor()``)
    or a pool kept for many calls, pass the executor:

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with ThreadPoolExecutor(2) as pool:
    ...     map_seeds(partial(pow, 2), [3, 1, 2], executor=pool, chunksize=1)
    [8, 2, 4]
    """
    order = [int(seed) for seed in seeds]
    if chunksize is not None and chunksize < 1:
        raise ConfigError(f"chunksize must be at least 1, got {chunksize}")
    if executor is None:
        return _on_own_processes(run, order, processes, chunksize, progress)
    if processes is not None:
        raise ConfigError("give processes or an executor, not both")
    return _gather(executor, run, _chunks(order, chunksize, usable_cpus()), progress)


def _on_own_processes(
    run: Callable[[int], _Out],
    order: list[int],
    processes: int | None,
    chunksize: int | None,
    progress: Callable[[int], object] | None,
) -> list[_Out]:
    """``map_seeds`` on a pool of fresh processes it starts and stops (none for one)."""
    width = usable_cpus() if processes is None else processes
    if width < 1:
        raise ConfigError(f"processes must be at least 1, got {width}")
    width = min(width, len(order))
    if width <= 1:
        return _run_chunk(run, order, progress)
    _require_picklable(run)
    context = multiprocessing.get_context("spawn")  # no fork: safe beside threads and loops
    with ProcessPoolExecutor(width, mp_context=context) as pool:
        return _gather(pool, run, _chunks(order, chunksize, width), progress)


def simulate_many(
    build: Callable[[int], tuple[Algorithm, RewardModel]],
    seeds: Iterable[int],
    *,
    batch: int | None = None,
    processes: int | None = None,
    executor: Executor | None = None,
    chunksize: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> list[Result]:
    """``simulate(*build(seed), batch=batch)`` for every seed, in parallel, in seed order.

    ``build(seed)`` returns a fresh algorithm and reward model for the run with that seed;
    like ``run`` in ``map_seeds`` (which says where the runs go: ``processes``, ``executor``,
    ``chunksize``, and reports ``progress``) it must be picklable: a module-level function,
    a ``functools.partial`` of one, or a frozen dataclass with ``__call__``. The results
    equal those of the runs made one by one.

    Examples
    --------
    >>> build = BernoulliRun("toloka-rule", {"threshold": 0.6}, (0.9, 0.85, 0.5))
    >>> results = simulate_many(build, range(4), processes=2)
    >>> [result.total_pulls for result in results]
    [44, 60, 43, 43]
    >>> results == [simulate(*build(seed)) for seed in range(4)]
    True

    Many machines through Dask, with the same results::

        from distributed import Client
        results = simulate_many(build, range(10_000), executor=Client().get_executor(),
                                chunksize=50)
    """
    return map_seeds(
        _Simulation(build, batch),
        seeds,
        processes=processes,
        executor=executor,
        chunksize=chunksize,
        progress=progress,
    )


@dataclass(frozen=True)
class BernoulliRun:
    """The run with seed ``s``: ``algorithm`` (a registry name) with ``params`` and seed ``s``
    on Bernoulli workers with accuracies ``means`` and reward seed ``s``; a picklable
    ``build`` for ``simulate_many``.

    Examples
    --------
    >>> build = BernoulliRun("toloka-rule", {"threshold": 0.6}, (0.9, 0.4))
    >>> algorithm, rewards = build(3)
    >>> algorithm.n_arms, rewards.seed
    (2, 3)
    """

    algorithm: str
    params: Mapping[str, Any]
    means: tuple[float, ...]

    def means_of(self, seed: int) -> tuple[float, ...]:
        """The workers' accuracies in the run with ``seed`` (the same in every run)."""
        return self.means

    def __call__(self, seed: int) -> tuple[Algorithm, RewardModel]:
        algorithm = create_algorithm(self.algorithm, len(self.means), {**self.params, "seed": seed})
        return algorithm, BernoulliRewards(self.means, seed=seed)


@dataclass(frozen=True)
class _Simulation:
    """One seeded run through ``simulate``: picklable when ``build`` is."""

    build: Callable[[int], tuple[Algorithm, RewardModel]]
    batch: int | None

    def __call__(self, seed: int) -> Result:
        algorithm, rewards = self.build(seed)
        return simulate(algorithm, rewards, batch=self.batch)


def usable_cpus() -> int:
    """The CPUs this process may run on (what ``map_seeds`` spreads its runs over)."""
    if hasattr(os, "sched_getaffinity"):  # the CPUs this process may run on (containers)
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _chunks(seeds: list[int], chunksize: int | None, width: int) -> list[list[int]]:
    size = chunksize or max(1, math.ceil(len(seeds) / (_CHUNKS_PER_WORKER * width)))
    return [seeds[start : start + size] for start in range(0, len(seeds), size)]


def _run_chunk(
    run: Callable[[int], _Out],
    seeds: Sequence[int],
    progress: Callable[[int], object] | None = None,
) -> list[_Out]:
    out = []
    for seed in seeds:
        try:
            out.append(run(seed))
        except Exception as error:
            raise SeededRunError(seed, f"{type(error).__name__}: {error}") from error
        if progress is not None:
            progress(1)
    return out


def _gather(
    executor: Executor,
    run: Callable[[int], _Out],
    chunks: list[list[int]],
    progress: Callable[[int], object] | None,
) -> list[_Out]:
    futures: list[Future[list[_Out]]] = [
        executor.submit(_run_chunk, run, chunk) for chunk in chunks
    ]
    results: list[_Out] = []
    try:
        for future, chunk in zip(futures, chunks, strict=True):
            try:
                results.extend(future.result())
                if progress is not None:
                    progress(len(chunk))
            except BrokenProcessPool as error:
                raise ScreenerError(
                    f"a worker process died during the runs with seeds {chunk[0]} to "
                    f"{chunk[-1]} ({error})",
                    "rerun them with processes=1 to see why: out of memory? or a script that "
                    'starts the runs outside `if __name__ == "__main__":`',
                ) from error
    finally:
        for future in futures:
            future.cancel()  # after a failure, the chunks not yet started are not run
    return results


def _require_picklable(run: Callable[[int], object]) -> None:
    try:
        pickle.dumps(run)
    except (pickle.PicklingError, AttributeError, TypeError) as error:
        raise ConfigError(
            f"the run function cannot be sent to another process: {error}",
            "define it at module level (not a lambda or a local function), or use processes=1",
        ) from error
