"""How a driven run stops, said in its journal: the lease kept while it runs, "interrupted"
(Ctrl-C), "interrupted: terminated" (SIGTERM), "failed: why", and a stop the journal cannot
take (its database cannot be written) said in the error instead, with the resume command.
An interrupted run leaves a snapshot of where it stopped, for its report and resume."""

from __future__ import annotations

import asyncio
import contextlib
import time

from screener.algorithms import Result
from screener.errors import JournalError, one_line
from screener.journal import HEARTBEAT_SECONDS, AsyncJournal, Event, EventKind, LeaseLostError
from screener.journal.lease_keeper import LeaseKeeper
from screener.orchestrator import Orchestrator

__all__ = ["TERMINATED", "UNJOURNALED_STOP", "drive_owned", "release"]

#: The message a run's task is cancelled with when the process is asked to terminate
#: (SIGTERM, as systemd, docker stop and `timeout` send): journaled "interrupted: terminated".
TERMINATED = "terminated"
#: How a resume journals a stop the process before it could not journal.
UNJOURNALED_STOP = (
    "crashed: the process that drove it ended without journaling how it stopped (killed, "
    "or its database could not be written)"
)
#: The most characters of an error a run's "failed" event (or the error that replaces it) keeps.
_DETAIL = 300


async def drive_owned(journal: AsyncJournal, run_id: str, orchestrator: Orchestrator) -> Result:
    """Drive the run while renewing its lease, and journal how a run that did not finish
    stopped ("interrupted", "interrupted: terminated" when cancelled with TERMINATED, or
    "failed: why"), so that `screener runs` can tell a stop from a crash. A process that
    loses its lease stops at once and writes nothing more; a stop that cannot be journaled
    (the database cannot be written) is said in the error, with the command that resumes."""
    work = asyncio.create_task(orchestrator.run())
    lost: list[JournalError] = []

    def lease_lost(error: JournalError) -> None:
        lost.append(error)
        work.cancel()

    async with LeaseKeeper(journal, run_id, lease_lost, every=HEARTBEAT_SECONDS):
        try:
            return await work
        except asyncio.CancelledError as cancel:
            if lost:
                raise lost[0] from None
            why = f"interrupted: {TERMINATED}" if cancel.args == (TERMINATED,) else "interrupted"
            await _snapshot_stop(orchestrator)
            await _journal_stop(journal, run_id, why)
            raise
        except LeaseLostError:
            raise
        except Exception as error:
            detail = f"failed: {one_line(error, limit=_DETAIL)}"
            if not await _journal_stop(journal, run_id, detail):
                raise _unjournaled(error, run_id, journal.journal.name) from error
            raise


def _unjournaled(error: Exception, run_id: str, name: str) -> JournalError:
    """The error of a run whose stop could not be journaled either: what failed, that the
    journal does not say so, and the command that continues the run."""
    return JournalError(
        f"{one_line(error, hint=False, limit=_DETAIL)}; run {run_id} stopped, and its journal "
        "could not record why",
        f"once {name} can be written again, continue it with "
        f"`screener run --resume {run_id} --db {name}`",
    )


async def _snapshot_stop(orchestrator: Orchestrator) -> None:
    """The state an interrupted run stopped in, as its snapshot, so that its report and its
    resume replay nothing (when it stopped where its state is the journal's replay:
    ``Orchestrator.save_snapshot``). A database that refuses it loses nothing: readers
    replay from the snapshot before."""
    with contextlib.suppress(JournalError):
        await orchestrator.save_snapshot()


async def _journal_stop(journal: AsyncJournal, run_id: str, why: str) -> bool:
    """Journal how the run stopped; False when the database refuses (it may be what failed)."""
    try:
        await journal.append(run_id, [Event(kind=EventKind.STOPPED, at=time.time(), detail=why)])
    except JournalError:
        return False
    return True


async def release(journal: AsyncJournal, run_id: str) -> None:
    """Give the run's lease up. When the database cannot be written (a full disk) the lease
    is left to expire: the error that stopped the run is the one to report."""
    with contextlib.suppress(JournalError):
        await journal.release(run_id)
