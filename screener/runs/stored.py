"""A stored run read back: its record and events, its pool, a fresh copy of its algorithm.

The journal stores runs as plain values (``screener.journal``); turning them back into a
pool and an algorithm is this package's work, so the journal imports neither.
"""

from __future__ import annotations

from screener.algorithms import Algorithm, create_algorithm
from screener.journal import Event, Journal, RunRecord
from screener.pool import WorkerPool

__all__ = ["build_algorithm", "read_run", "worker_pool"]


def read_run(db: str, run_id: str) -> tuple[RunRecord, list[Event]]:
    """The run's record and its events, from an existing database (RunNotFoundError when
    the run is not there).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from screener.journal import Journal, RunSpec
    >>> db = str(pathlib.Path(tempfile.mkdtemp()) / "runs.db")
    >>> spec = RunSpec("wrr", {"k": 2.0}, 0, {"name": "simulated"}, {"workers": ["ann", "bob"]}, {})
    >>> with Journal(db) as journal:
    ...     run_id = journal.create_run(spec)
    >>> record, events = read_run(db, run_id)
    >>> worker_pool(record).workers, type(build_algorithm(record)).__name__, len(events)
    (('ann', 'bob'), 'WeightedRoundRobin', 1)
    """
    with Journal(db, create=False) as journal:
        record = journal.get_run(run_id)
        return record, journal.events(run_id)


def worker_pool(record: RunRecord) -> WorkerPool:
    """The run's workers (and question bank) as they were stored.

    Examples
    --------
    >>> from screener.journal import RunRecord
    >>> record = RunRecord("wrr", {}, 0, {"name": "simulated"}, {"workers": ["ann", "bob"]},
    ...                    {}, id="r1", created_at=0.0, screener_version="0.1.0")
    >>> worker_pool(record).workers
    ('ann', 'bob')
    """
    return WorkerPool.from_dict(dict(record.pool))


def build_algorithm(record: RunRecord) -> Algorithm:
    """A fresh algorithm with the run's parameters, to replay the run's events into.

    Examples
    --------
    >>> from screener.journal import RunRecord
    >>> record = RunRecord("wrr", {"k": 3.0}, 0, {"name": "simulated"}, {"workers": ["a", "b"]},
    ...                    {}, id="r1", created_at=0.0, screener_version="0.1.0")
    >>> algorithm = build_algorithm(record)
    >>> type(algorithm).__name__, algorithm.n_arms, algorithm.k
    ('WeightedRoundRobin', 2, 3.0)
    """
    return create_algorithm(record.algorithm, len(record.pool["workers"]), dict(record.params))
