"""Screening from Python: one call from a script or a notebook, journaled like the CLI's runs.

``run`` blocks until the run stops and works both where no event loop runs (a script) and
inside one (Jupyter, where the cell's loop is already running: the run then gets its own loop
in a worker thread, so nothing needs patching); ``arun`` is the same as a coroutine. Both
validate everything before the first question, journal every answer, and return the result
with the workers' names and the run id attached (``Result.to_dataframe``, ``Result.to_dict``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import tempfile
from collections.abc import Mapping
from typing import Any, Literal

from screener.algorithms import Result
from screener.orchestrator import Progress, RunOptions
from screener.orchestrator.progress import auto_progress
from screener.pool import WorkerPool
from screener.runs.session import RunPlan, default_pool, start_run

__all__ = ["arun", "run"]


def run(
    pool: WorkerPool | None = None,
    *,
    algorithm: str = "wrr",
    params: Mapping[str, Any] | None = None,
    oracle: str = "simulated",
    oracle_options: Mapping[str, Any] | None = None,
    db: str | os.PathLike[str] | None = None,
    seed: int = 0,
    options: RunOptions | None = None,
    progress: Progress | Literal["auto"] | None = "auto",
) -> Result:
    """Screen ``pool`` with ``algorithm`` against ``oracle`` and return the named result.

    ``pool``: the workers (default: the oracle's own: a dataset's, or the 30-worker demo for
    the simulated oracle; an oracle without workers of its own needs one). ``params``: the
    algorithm's parameters (``screener algorithms NAME`` lists them).
    ``db``: the SQLite file (or database URL) the run is journaled in, so that
    ``screener report RUN_ID --db FILE`` shows it again and ``screener run --resume`` continues
    it; default: a temporary file, removed afterwards (``result.run_id`` then names nothing).
    ``progress``: "auto" shows a tqdm bar of the answers in a notebook or on a terminal
    (``screener.orchestrator.progress.auto_progress``); None shows nothing.

    Examples
    --------
    >>> import screener
    >>> pool = screener.synthetic_pool(12, 2, seed=1)
    >>> result = screener.run(pool, algorithm="toloka-rule", params={"threshold": 0.6})
    >>> result.condition_met, result.names[:2]
    (True, ('w01', 'w02'))
    >>> [result.name(w.arm) for w in result.workers if w.decision == "below"]
    ['w06', 'w08', 'w10', 'w11']

    Toloka's rule bans the two spammers (w10, w11: about 50% right) and two good workers
    (w06, w08: 84% and 82%) that had a bad run of ten answers.
    """
    coroutine = arun(
        pool, algorithm=algorithm, params=params, oracle=oracle, oracle_options=oracle_options,
        db=db, seed=seed, options=options, progress=progress,
    )  # fmt: skip
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop here (a script): run one
        return asyncio.run(coroutine)
    # Called from inside a running loop (a notebook cell): that loop cannot be re-entered,
    # so the run gets a loop of its own in a worker thread, and this call waits for it.
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="screener-run") as pool_:
        return pool_.submit(asyncio.run, coroutine).result()


async def arun(
    pool: WorkerPool | None = None,
    *,
    algorithm: str = "wrr",
    params: Mapping[str, Any] | None = None,
    oracle: str = "simulated",
    oracle_options: Mapping[str, Any] | None = None,
    db: str | os.PathLike[str] | None = None,
    seed: int = 0,
    options: RunOptions | None = None,
    progress: Progress | Literal["auto"] | None = "auto",
) -> Result:
    """``run`` as a coroutine, for code that already runs an event loop.

    Examples
    --------
    Inside a running event loop (a notebook, an async service):

    >>> import asyncio
    >>> import screener
    >>> async def main() -> screener.Result:
    ...     pool = screener.synthetic_pool(12, 2, seed=1)
    ...     return await screener.arun(pool, algorithm="toloka-rule", params={"threshold": 0.6})
    >>> asyncio.run(main()).condition_met
    True
    """
    if progress == "auto":
        progress = auto_progress()
    chosen = pool if pool is not None else default_pool(oracle, oracle_options or {})
    plan = RunPlan(
        pool=chosen, algorithm=algorithm, params=dict(params or {}), oracle=oracle,
        oracle_options=dict(oracle_options or {}), seed=seed, options=options or RunOptions(),
    )  # fmt: skip
    if db is not None:
        run_id, result = await start_run(plan, os.fspath(db), progress=progress)
        return result.named(chosen.workers, run_id)
    with tempfile.TemporaryDirectory(prefix="screener-") as folder:
        run_id, result = await start_run(plan, os.path.join(folder, "run.db"), progress=progress)
    return result.named(chosen.workers, run_id)
