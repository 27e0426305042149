"""Screening from Python: one call from a script or a notebook, journaled like the CLI's runs.

``run`` blocks until the run stops and works both where no event loop runs (a script) and
inside one (Jupyter, where the cell's loop is already running: the run then gets its own loop
in a worker thread, so nothing needs patching); ``arun`` is the same as a coroutine. Both
set the run up as `screener run` does (screener.runs.setup: the same run file, defaults and
checks), journal every answer, and return the result with the workers' names and the run id
attached (``Result.to_dataframe``, ``Result.to_dict``): the run's live result, the one it
stores and ``screener report`` reads back (screener.runs.results).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import os
import tempfile
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import Any, Literal

from screener.algorithms import Result
from screener.crowd import WorkerPool
from screener.money import Prices
from screener.orchestrator import Progress, RunOptions
from screener.orchestrator.progress import auto_progress
from screener.runs.session import start_run
from screener.runs.settings import AlgorithmSettings, MoneySettings, OracleSettings, RunSettings
from screener.runs.setup import set_up_run

__all__ = ["arun", "run"]


def run(
    pool: WorkerPool | str | os.PathLike[str] | None = None,
    *,
    config: str | os.PathLike[str] | None = None,
    algorithm: str | None = None,
    params: Mapping[str, Any] | None = None,
    top: int | None = None,
    oracle: str | None = None,
    oracle_options: Mapping[str, Any] | None = None,
    db: str | os.PathLike[str] | None = None,
    seed: int | None = None,
    options: RunOptions | None = None,
    progress: Progress | Literal["auto"] | None = "auto",
    price: Prices | str | Mapping[str, float] | None = None,
) -> Result:
    """Screen ``pool`` with ``algorithm`` against ``oracle`` and return the named result.

    Each argument means what the `screener run` flag of its name means; None is not given.
    A run file (``config``, TOML as ``--config``) fills in what is not given, screener's
    defaults the rest (with no algorithm named, the default job, ``DEFAULT_JOB`` of
    ``screener.runs.setup``: crowd-prior against a bar of 0.6 with costs and a pilot; seed
    0, the simulated oracle, ``direction`` low where taken).
    ``pool``: the workers or a CSV file of them (default: the oracle's own, a dataset's or
    the 30-worker demo). ``params``: the algorithm's (``screener algorithms NAME``); ``top``:
    how many workers a top-K algorithm selects (its k). ``options``: all of them win over
    the run file's [run]. ``db``: the SQLite file or database URL the run is journaled in
    (``screener report RUN_ID --db FILE`` shows it); default: the run file's, else a
    temporary file, removed afterwards (``result.run_id`` then names nothing).
    ``progress``: "auto" shows a tqdm bar of the answers in a notebook or on a terminal
    (``screener.orchestrator.progress.auto_progress``); None shows nothing. ``price``: as
    ``--price`` (or ``Prices``), or a mapping as a run file's ``[price]`` (``budget``: money).

    Examples
    --------
    >>> import screener
    >>> pool = screener.synthetic_pool(12, 2, seed=1)
    >>> result = screener.run(pool, algorithm="toloka-rule", params={"threshold": 0.6})
    >>> result.condition_met, result.names[:2]
    (True, ('w01', 'w02'))
    >>> [result.name(w.arm) for w in result.workers if w.decision == "below"]
    ['w06', 'w08', 'w10', 'w11']

    Toloka's rule bans both spammers (w10, w11) and two good workers after bad luck (w06, w08).
    """
    return _blocking(
        arun(pool, config=config, algorithm=algorithm, params=params, top=top, oracle=oracle,
             oracle_options=oracle_options, db=db, seed=seed, options=options,
             progress=progress, price=price)
    )  # fmt: skip


async def arun(
    pool: WorkerPool | str | os.PathLike[str] | None = None,
    *,
    config: str | os.PathLike[str] | None = None,
    algorithm: str | None = None,
    params: Mapping[str, Any] | None = None,
    top: int | None = None,
    oracle: str | None = None,
    oracle_options: Mapping[str, Any] | None = None,
    db: str | os.PathLike[str] | None = None,
    seed: int | None = None,
    options: RunOptions | None = None,
    progress: Progress | Literal["auto"] | None = "auto",
    price: Prices | str | Mapping[str, float] | None = None,
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
    settings = RunSettings(
        run_file=_path(config),
        pool=pool if isinstance(pool, WorkerPool) else _path(pool),
        algorithm=AlgorithmSettings(name=algorithm, params=dict(params or {}), top=top, seed=seed),
        oracle=OracleSettings(name=oracle, options=dict(oracle_options or {})),
        options={} if options is None else dataclasses.asdict(options),
        db=None if db is None else os.fspath(db),
        money=_money(price),
    )
    setup = set_up_run(settings)
    names = setup.plan.pool.workers
    if setup.db is not None:
        run_id, result = await start_run(setup.plan, setup.db, progress=progress)
        return result.named(names, run_id)
    with tempfile.TemporaryDirectory(prefix="screener-") as folder:
        path = os.path.join(folder, "run.db")
        run_id, result = await start_run(setup.plan, path, progress=progress)
    return result.named(names, run_id)


def _blocking(coroutine: Coroutine[Any, Any, Result]) -> Result:
    """Run ``coroutine`` to its end, where no event loop runs or inside one."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop here (a script): run one
        return asyncio.run(coroutine)
    # Called from inside a running loop (a notebook cell): that loop cannot be re-entered,
    # so the run gets a loop of its own in a worker thread, and this call waits for it.
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="screener-run") as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _money(price: Prices | str | Mapping[str, float] | None) -> MoneySettings:
    """``price`` as the settings take it: a mapping's ``budget`` is the budget in money."""
    if not isinstance(price, Mapping):
        return MoneySettings(price=price)
    prices = {key: value for key, value in price.items() if key != "budget"}
    return MoneySettings(price=prices or None, budget=price.get("budget"))


def _path(path: str | os.PathLike[str] | None) -> Path | None:
    return None if path is None else Path(path)
