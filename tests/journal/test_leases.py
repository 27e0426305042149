"""Run leases: one process drives a run at a time, on SQLite and PostgreSQL alike.

The claim race is run with real processes: several claim one run at the same instant and
exactly one may win, whatever the backend.
"""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

import pytest
from event_helpers import pull_event
from sqlalchemy import text

from screener.journal import (
    Event,
    EventKind,
    Journal,
    LeaseLostError,
    RunOwnedError,
    RunSpec,
    leases,
)


def make_spec() -> RunSpec:
    return RunSpec(
        algorithm="wrr",
        params={"k": 2.0},
        seed=0,
        oracle={"name": "simulated"},
        pool={"workers": ["w0", "w1"]},
        config={},
    )


def set_lease(url: str, run_id: str, **values: float | int | str) -> None:
    """Change the stored lease as another (stalled or dead) process would have left it."""
    assignments = ", ".join(f"{key} = :{key}" for key in values)
    with Journal(url) as journal, journal.engine.begin() as conn:
        conn.execute(
            text(f"UPDATE run_leases SET {assignments} WHERE run_id = :run_id"),
            {**values, "run_id": run_id},
        )


def n_events(journal: Journal, run_id: str) -> int:
    return len(journal.events(run_id))


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    return int(child.stdout)


def test_a_live_lease_refuses_a_second_driver_and_nothing_is_written(database_url: str) -> None:
    with Journal(database_url) as first, Journal(database_url) as second:
        run_id = first.create_run(make_spec(), claim=True)
        before = n_events(first, run_id)
        with pytest.raises(RunOwnedError) as refused:
            second.claim(run_id)
        message = str(refused.value)
        assert "\n" not in message
        assert f"run {run_id} is being driven by process" in message
        assert "lease expires in" in message
        second.append(run_id, [])  # no lease held: nothing to check, nothing written
        assert n_events(second, run_id) == before
        assert [s.state for s in second.runs()] == ["running"]


def test_an_expired_lease_is_taken_over_and_the_old_holder_is_fenced_off(
    database_url: str,
) -> None:
    with Journal(database_url) as first, Journal(database_url) as second:
        run_id = first.create_run(make_spec(), claim=True)
        first.append(run_id, [pull_event(EventKind.ASKED, 0)])
        set_lease(database_url, run_id, expires_at=time.time() - 1.0)  # first stalled
        lease = second.claim(run_id)
        assert lease.epoch == 2
        before = n_events(second, run_id)
        answer = pull_event(EventKind.ANSWERED, 0, at=2.0, reward=1.0)
        with pytest.raises(LeaseLostError, match=f"lost run {run_id} to process"):
            first.append(run_id, [answer])
        with pytest.raises(LeaseLostError):
            first.renew(run_id)
        assert n_events(second, run_id) == before
        second.append(run_id, [answer])
        assert n_events(second, run_id) == before + 1


@pytest.mark.subprocess
def test_a_lease_of_a_dead_process_on_this_machine_is_expired_at_once(database_url: str) -> None:
    with Journal(database_url) as first, Journal(database_url) as second:
        run_id = first.create_run(make_spec(), claim=True)
        set_lease(database_url, run_id, pid=dead_pid(), expires_at=time.time() + 3600)
        assert [s.state for s in second.runs()] == ["crashed"]
        assert second.claim(run_id).epoch == 2


def test_renew_pushes_the_expiry_and_release_frees_the_run(database_url: str) -> None:
    with Journal(database_url) as journal:
        run_id = journal.create_run(make_spec(), claim=True)
        set_lease(database_url, run_id, expires_at=time.time() + 1.0)
        journal.renew(run_id)
        with journal.engine.connect() as conn:
            holder = leases.read_holder(conn, run_id)
        assert holder is not None
        assert holder.expires_at > time.time() + leases.LEASE_SECONDS - 5
        journal.release(run_id)
        journal.release(run_id)  # twice is fine
        with journal.engine.connect() as conn:
            assert leases.read_holder(conn, run_id) is None
        assert journal.claim(run_id).epoch == 1


def test_states_of_runs(database_url: str) -> None:
    """finished, running, interrupted, failed and crashed, each from what the journal holds."""
    with Journal(database_url) as journal:
        ids = [journal.create_run(make_spec()) for _ in range(5)]
        finished, running, interrupted, failed, crashed = ids
        journal.append(finished, [Event(kind=EventKind.FINISHED, at=2.0, detail="condition met")])
        journal.claim(running)
        journal.append(interrupted, [Event(kind=EventKind.STOPPED, at=2.0, detail="interrupted")])
        journal.append(failed, [Event(kind=EventKind.STOPPED, at=2.0, detail="failed: HTTP 401")])
        # A failure that was resumed and then crashed: the resume is the last word.
        journal.append(crashed, [Event(kind=EventKind.STOPPED, at=2.0, detail="failed: x")])
        journal.append(crashed, [Event(kind=EventKind.RESUMED, at=3.0)])
        states = {s.id: (s.state, s.status) for s in journal.runs()}
    assert states[finished] == ("finished", "finished: condition met")
    assert states[running][0] == "running"
    assert states[running][1].startswith("running: process ")
    assert states[interrupted] == ("interrupted", "interrupted")
    assert states[failed] == ("failed", "failed: HTTP 401")
    assert states[crashed][0] == "crashed"


def _claim_in_a_process(
    url: str, run_id: str, start: float, outcomes: multiprocessing.Queue[str]
) -> None:
    journal = Journal(url)
    time.sleep(max(0.0, start - time.time()))
    try:
        journal.claim(run_id)
        outcomes.put("won")
        time.sleep(1.0)  # hold it while the others try
    except RunOwnedError:
        outcomes.put("refused")
    except Exception as error:  # reported, so the test shows it
        outcomes.put(f"error: {type(error).__name__}: {error}")
    finally:
        journal.close()


@pytest.mark.slow
@pytest.mark.parametrize("expired", [False, True], ids=["fresh", "taking-over"])
def test_processes_racing_for_a_run_leave_exactly_one_owner(
    database_url: str, tmp_path: Path, expired: bool
) -> None:
    with Journal(database_url) as journal:
        run_id = journal.create_run(make_spec(), claim=expired)
    if expired:
        set_lease(database_url, run_id, expires_at=time.time() - 1.0)
    context = multiprocessing.get_context("spawn")
    outcomes: multiprocessing.Queue[str] = context.Queue()
    start = time.time() + 2.0  # spawned interpreters take a moment to import
    racers = [
        context.Process(target=_claim_in_a_process, args=(database_url, run_id, start, outcomes))
        for _ in range(6)
    ]
    for racer in racers:
        racer.start()
    results = sorted(outcomes.get(timeout=60) for _ in racers)
    for racer in racers:
        racer.join(timeout=30)
    assert results == ["refused"] * 5 + ["won"], results
