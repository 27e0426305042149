"""Simulated crowds: a synthetic pool of normal workers and spammers, and the demo pool that
``screener run`` screens when given no workers."""

from __future__ import annotations

import numpy as np

from screener.checks import check_seed
from screener.crowd.pool import WorkerPool, check_pool_size
from screener.errors import PoolError

__all__ = ["demo_pool", "synthetic_pool"]


def synthetic_pool(n_workers: int, n_outliers: int, *, seed: int = 0) -> WorkerPool:
    """Normal workers with accuracies uniform on [0.78, 0.92] and low-accuracy outliers.

    The outliers (spammers) answer at 0.45-0.55: clearly below mean - 2 std of the pool for
    pools of 10 workers or more with a handful of outliers.

    Examples
    --------
    >>> pool = synthetic_pool(6, 1, seed=3)
    >>> len(pool), min(pool.require_accuracies()) < 0.7 < max(pool.require_accuracies())
    (6, True)
    """
    if n_workers < 2 or not 0 <= n_outliers < n_workers:
        raise PoolError(
            f"cannot build {n_workers} workers with {n_outliers} outliers",
            "use at least 2 workers and fewer outliers than workers",
        )
    check_pool_size(n_workers, "a synthetic pool")
    rng = np.random.default_rng(check_seed(seed))
    normal = rng.uniform(0.78, 0.92, n_workers - n_outliers)
    spammers = rng.uniform(0.45, 0.55, n_outliers)
    accuracies = np.round(np.concatenate([normal, spammers]), 3)
    order = rng.permutation(n_workers)
    width = len(str(n_workers))
    workers = tuple(f"w{index + 1:0{width}d}" for index in range(n_workers))
    return WorkerPool(workers, tuple(float(a) for a in accuracies[order]), "synthetic")


def demo_pool() -> WorkerPool:
    """The embedded default: 30 simulated workers, 2 of them spammers.

    Examples
    --------
    >>> pool = demo_pool()
    >>> len(pool), pool.workers[:3]
    (30, ('w01', 'w02', 'w03'))
    >>> sorted(pool.require_accuracies())[:2]  # the two spammers, near chance
    [0.455, 0.531]
    """
    pool = synthetic_pool(30, 2, seed=2017)
    return WorkerPool(pool.workers, pool.accuracies, "demo")
