"""A stored run read back: its record and events, its pool, a fresh copy of its algorithm.

The journal stores runs as plain values (``screener.journal``); turning them back into a
pool and an algorithm is this package's work, so the journal imports neither.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from screener.algorithms import Algorithm, create_algorithm
from screener.algorithms.snapshot import load_state
from screener.crowd import WorkerPool
from screener.errors import ConfigError, JournalError, SnapshotError
from screener.journal import Event, Journal, RunRecord, Snapshot
from screener.money import Prices
from screener.orchestrator import RunOptions
from screener.runs.answers import answers_by_worker

__all__ = [
    "GATE_ORACLE",
    "build_algorithm",
    "observed_accuracies",
    "oracle_name",
    "read_run",
    "restored",
    "run_config",
    "run_options",
    "run_prices",
    "run_state",
    "worker_pool",
]

#: Where a run's prices are kept in its stored config, beside its RunOptions' fields.
PRICE_KEY = "price"
#: The oracle name of a run that `screener gate` serves (screener.gate_service): its events
#: are the gate's calls, not pulls, so it has neither a pool nor an algorithm to rebuild here.
GATE_ORACLE = "gate"


def read_run(db: str, run_id: str) -> tuple[RunRecord, list[Event]]:
    """The run's record and its events, from an existing database (RunNotFoundError when
    the run is not there).

    Examples
    --------
    >>> from screener.journal import Journal, RunSpec
    >>> with Journal(db) as journal:
    ...     run_id = journal.create_run(spec)
    >>> record, events = read_run(db, run_id)
    >>> worker_pool(record).workers, type(build_algorithm(record)).__name__, len(events)
    (('ann', 'bob'), 'WeightedRoundRobin', 1)
    """
    with Journal(db, read_only=True) as journal:
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
    _refuse_gate_run(record)
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
    _refuse_gate_run(record)
    return create_algorithm(record.algorithm, len(record.pool["workers"]), dict(record.params))


def _refuse_gate_run(record: RunRecord) -> None:
    if record.oracle.get("name") == GATE_ORACLE:
        raise JournalError(
            f"run {record.id} is a gate run: it has no screening of its own to report, "
            "replay or resume here",
            f"serve it again with `screener gate --resume {record.id}`; its GET /v1/status "
            "summarises it",
        )


def restored(record: RunRecord, snapshot: Snapshot | None) -> tuple[Algorithm, int]:
    """The run's algorithm as ``snapshot`` stored it, and the id of the last event it has
    seen; a fresh algorithm and 0 when there is no snapshot or it cannot be trusted (its
    bytes do not match their digest, another screener version wrote it, or it is
    not this run's algorithm with this run's parameters). Replay the events after the id.

    Examples
    --------
    >>> from screener.algorithms.snapshot import dump_state
    >>> from screener.journal import RunRecord, Snapshot, snapshot_digest
    >>> record = RunRecord("rr", {}, 0, {"name": "simulated"}, {"workers": ["a", "b"]},
    ...                    {}, id="r1", created_at=0.0, screener_version="0.1.0")
    >>> live = build_algorithm(record)
    >>> ask = live.ask(2)
    >>> state = dump_state(live)
    >>> algorithm, after = restored(record, Snapshot(event_id=3, digest=snapshot_digest(state),
    ...                                              state=state))
    >>> after, algorithm.n_asked
    (3, 2)
    >>> restored(record, Snapshot(event_id=3, digest=snapshot_digest(state), state=state[:-1]))[1]
    0
    """
    fresh = build_algorithm(record)
    if snapshot is None or not snapshot.intact:
        return fresh, 0
    try:
        algorithm = load_state(snapshot.state, type(fresh))
    except SnapshotError:
        return fresh, 0
    if _params(algorithm) != _params(fresh):
        return fresh, 0
    return algorithm, snapshot.event_id


def _params(algorithm: Algorithm) -> str:
    return json.dumps(algorithm.params(), sort_keys=True, default=str)


def observed_accuracies(db: str, run_id: str) -> list[float]:
    """Each answered worker's share of correct answers (mean score) in the run, after
    invalidations: the crowd a plan draws from (``screener plan --like RUN_ID``).

    Examples
    --------
    >>> spec = RunSpec("rr", {}, 0, {"name": "simulated"}, {"workers": ["ann", "bob"]}, {})
    >>> answered = [Event(kind=EventKind.ANSWERED, at=1.0, pull_id=i, arm=0, worker="ann",
    ...                   seq=i, reward=r) for i, r in enumerate([1.0, 0.0, 1.0, 1.0])]
    >>> with Journal(db) as journal:
    ...     journal.append(run_id := journal.create_run(spec), answered)
    >>> observed_accuracies(db, run_id)  # bob never answered: left out
    [0.75]
    """
    record, events = read_run(db, run_id)
    pool = worker_pool(record)
    per_worker = answers_by_worker(events, len(pool.workers), pool.bank)
    observed = [sum(a.reward for a in answers) / len(answers) for answers in per_worker if answers]
    if not observed:
        raise ConfigError(f"run {run_id} has no answers to plan from", "give a run with answers")
    return observed


def run_config(options: RunOptions, prices: Prices | None) -> dict[str, Any]:
    """What the journal keeps as a run's config: every RunOptions field, so that a resume
    continues with all of them, and its prices when it has any.

    Examples
    --------
    >>> config = run_config(RunOptions(concurrency=4), Prices(gold=0.1))
    >>> config["concurrency"], config["price"]
    (4, {'gold': 0.1, 'task': 0.05})
    """
    config: dict[str, Any] = dataclasses.asdict(options)
    if prices is not None:
        config[PRICE_KEY] = prices.to_dict()
    return config


def run_options(record: RunRecord) -> RunOptions:
    """The RunOptions run ``record`` was started with.

    Examples
    --------
    >>> record = RunRecord("wrr", {}, 0, {"name": "simulated"}, {"workers": ["a", "b"]},
    ...                    run_config(RunOptions(concurrency=4), Prices()), id="r1",
    ...                    created_at=0.0, screener_version="0.1.0")
    >>> run_options(record).concurrency, run_prices(record)
    (4, Prices(gold=0.05, task=0.05))
    """
    return RunOptions(**{k: v for k, v in record.config.items() if k != PRICE_KEY})


def oracle_name(record: RunRecord) -> str | None:
    """The name of the answer source run ``record`` was given (which says whether its
    pool's accuracies are a truth to judge the decisions by).

    Examples
    --------
    >>> record = RunRecord("wrr", {}, 0, {"name": "simulated"}, {"workers": ["a", "b"]},
    ...                    {}, id="r1", created_at=0.0, screener_version="0.1.0")
    >>> oracle_name(record)
    'simulated'
    """
    name = dict(record.oracle).get("name")
    return None if name is None else str(name)


def run_prices(record: RunRecord) -> Prices | None:
    """What run ``record``'s questions cost, when it was given prices.

    Examples
    --------
    >>> record = RunRecord("wrr", {}, 0, {"name": "simulated"}, {"workers": ["a", "b"]},
    ...                    run_config(RunOptions(), None), id="r1", created_at=0.0,
    ...                    screener_version="0.1.0")
    >>> run_prices(record) is None
    True
    """
    prices = record.config.get(PRICE_KEY)
    return None if prices is None else Prices.of(prices)


def run_state(db: str, run_id: str) -> str:
    """A stored run's lifecycle state, as ``screener runs`` shows it: "finished",
    "running", "paused", "interrupted", "crashed" or "failed: why".

    Examples
    --------
    >>> with Journal(db) as journal:
    ...     run_id = journal.create_run(spec)
    >>> run_state(db, run_id)  # no process drives it, and it never said why it stopped
    'crashed'
    """
    with Journal(db, read_only=True) as journal:
        summary = next(run for run in journal.runs() if run.id == run_id)
    return summary.status if summary.state == "failed" else summary.state
