"""A run's result, by one route.

A run's result is what its algorithm says after the run's events, read from the first of
these places that applies:

1. Live: while a run is driven (``start_run`` and ``resume_run`` of screener.runs.session,
   which `screener run` and ``screener.run()`` call), the orchestrator's algorithm holds it;
   the run returns it when it stops, and a run that finishes stores it with its "finished"
   event.
2. Stored: a finished run whose "finished" event is still its last (no answer invalidated
   since) is read back as it stored that result, in one query.
3. Snapshot and replay: otherwise the run's algorithm is restored from its latest snapshot
   when that can be trusted (``screener.runs.stored.restored``; a fresh algorithm when not),
   and the events after it are replayed (``screener.runs.state.replay``).
4. Full replay: a fresh algorithm replays every event when gold questions were invalidated
   (rescoring needs every answer), or when the stored result is to be checked against the
   journal (``from_events``: derived data is not trusted then).

Reading a run back is ``load_results`` (2, 3 or 4), for `screener report`, `invalidate`,
`replay`, `export --decisions` of a run without decided events, and every other reader; a run
with invalidated gold questions also gets its result rebuilt from the remaining answers
(screener.runs.rescoring). Resuming a run needs its algorithm, not only its result:
``resumed_algorithm`` takes route 3 (a finished run is never resumed, and one with
invalidations is refused, so 2 and 4 never apply), and the resumed run goes on by route 1.
"""

from __future__ import annotations

from screener.algorithms import Algorithm, Result
from screener.errors import JournalError
from screener.journal import AsyncJournal, EventKind, Journal, RunRecord
from screener.runs.answers import invalidations
from screener.runs.rescoring import rescored_result
from screener.runs.state import pending_pulls, replay
from screener.runs.stored import build_algorithm, restored

__all__ = ["load_result", "load_results", "resumed_algorithm"]


def load_result(db: str, run_id: str | None = None) -> tuple[RunRecord, Result]:
    """Read run ``run_id`` (default: the latest) back offline (no oracle): its record and
    result; a run with invalidated gold questions gets its rescored result (``load_results``
    gives both).
    Examples
    --------
    >>> import screener
    >>> pool = screener.synthetic_pool(12, 2, seed=1)
    >>> live = screener.run(pool, algorithm="toloka-rule", params={"threshold": 0.6}, db=db)
    >>> record, result = load_result(db)  # the latest run: stored when it finished
    >>> record.algorithm, result.total_pulls == live.total_pulls
    ('toloka-rule', True)
    """
    record, original, rescored = load_results(db, run_id)
    return record, original if rescored is None else rescored


def load_results(
    db: str, run_id: str | None = None, *, from_events: bool = False
) -> tuple[RunRecord, Result, Result | None]:
    """The run's record, its result as journaled, and, when gold questions were invalidated,
    its result rebuilt from the remaining answers (else None): the module docstring's routes
    2, 3 and 4, the first that applies.
    Examples
    --------
    >>> import screener
    >>> pool = screener.synthetic_pool(12, 2, seed=1)
    >>> live = screener.run(pool, algorithm="toloka-rule", params={"threshold": 0.6}, db=db)
    >>> _, stored, rescored = load_results(db)
    >>> _, replayed, _ = load_results(db, from_events=True)  # the journal, read again
    >>> stored.total_pulls == replayed.total_pulls == live.total_pulls, rescored is None
    (True, True)
    """
    with Journal(db, read_only=True) as journal:
        chosen = run_id or journal.latest_run_id()
        if chosen is None:
            raise JournalError(f"{journal.name} holds no runs", "start one with `screener run`")
        record = journal.get_run(chosen)
        stored = None if from_events else journal.stored_result(chosen)
        if stored is not None and (result := Result.from_json(stored)) is not None:
            return record, result, None
        if from_events or journal.invalidations(chosen):
            algorithm, events = build_algorithm(record), journal.events(chosen)
        else:
            algorithm, after = restored(record, journal.snapshot(chosen))
            events = journal.events(chosen, after_id=after)
    replay(algorithm, events)
    finished = any(event.kind is EventKind.FINISHED for event in events)
    result = _finished_result(algorithm) if finished else algorithm.result()
    return record, result, rescored_result(record, events) if invalidations(events) else None


async def resumed_algorithm(journal: AsyncJournal, record: RunRecord) -> Algorithm:
    """The run's algorithm as its journal leaves it, to go on live: restored from its
    snapshot when that can be trusted, the events after it replayed (route 3)."""
    algorithm, after = restored(record, await journal.snapshot(record.id))
    replay(algorithm, await journal.events(record.id, after_id=after))
    return algorithm


def _finished_result(algorithm: Algorithm) -> Result:
    """A finished run stopped at an ask that returned done; make the replay do the same."""
    for pull_id in pending_pulls(algorithm):
        algorithm.release(pull_id)
    algorithm.ask(1)
    return algorithm.result()
