"""Run ownership: one process drives a run at a time, under a lease it keeps renewing.

A lease is a row of ``run_leases`` (the journal's one table of mutable rows: it says who is
driving a run now, not what happened). Claiming bumps the run's ``epoch``; every append made
under a lease first checks, in the same transaction and with the row locked, that the epoch
is still the holder's. So a process that lost its lease (it stalled past the expiry and
another took the run over) cannot write another event: it gets LeaseLostError instead, and
two ``screener run --resume`` of one run can never both drive it.

A lease is live until ``expires_at`` (renewed every ``HEARTBEAT_SECONDS``, valid for
``LEASE_SECONDS``). One exception makes a crash resumable at once: a lease held by a process
of this machine that no longer exists (kill -9) is expired whatever its clock says. Lease
times are wall-clock seconds of the writing machine, so machines sharing one PostgreSQL
server need clocks in step to within a few seconds.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Dialect, bindparam, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from screener.errors import JournalError
from screener.journal.schema import RUN_LEASES_TABLE

__all__ = [
    "HEARTBEAT_SECONDS",
    "LEASE_SECONDS",
    "Lease",
    "LeaseHolder",
    "LeaseLostError",
    "RunOwnedError",
    "check_sql",
    "holder_is_live",
    "new_owner",
]

#: How long a lease lasts without renewal; a holder renews it every HEARTBEAT_SECONDS.
LEASE_SECONDS = 30.0
HEARTBEAT_SECONDS = 5.0

_L = RUN_LEASES_TABLE.c


class RunOwnedError(JournalError):
    """The run is being driven by another live process.

    Examples
    --------
    >>> from screener.journal import Event, EventKind, Journal, RunSpec
    >>> from screener.journal import RunOwnedError
    >>> with Journal(db) as first, Journal(db) as second:
    ...     run_id = first.create_run(spec, claim=True)
    ...     try:
    ...         second.claim(run_id)
    ...     except RunOwnedError as error:
    ...         print(str(error).split(" (")[0])  # doctest: +ELLIPSIS
    run ... is being driven by process ...
    """


class LeaseLostError(JournalError):
    """This process's lease on a run was taken over: it must stop writing.

    Examples
    --------
    >>> from screener.journal import LeaseLostError
    >>> with Journal(db) as first, Journal(db) as second:
    ...     run_id = first.create_run(spec, claim=True)
    ...     with first.engine.begin() as conn:  # as if the first had stalled past its lease
    ...         _ = conn.exec_driver_sql("UPDATE run_leases SET expires_at = 0")
    ...     _ = second.claim(run_id)
    ...     try:
    ...         asked = Event(kind=EventKind.ASKED, at=1.0, pull_id=0, arm=0, worker="ann", seq=0)
    ...         first.append(run_id, [asked])
    ...     except LeaseLostError:
    ...         print("the first process may not write any more")
    the first process may not write any more
    """


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    """Who holds a run's lease, as stored."""

    owner: str  # unique per claim: host, pid and a random token
    host: str
    pid: int
    epoch: int
    heartbeat_at: float
    expires_at: float

    def is_live(self, now: float) -> bool:
        """Live until it expires, unless its process is known to be gone (same machine)."""
        return holder_is_live(self.host, self.pid, self.expires_at, now)

    def describe(self, now: float) -> str:
        seen, left = max(0.0, now - self.heartbeat_at), max(0.0, self.expires_at - now)
        stopped = " is stopped (SIGSTOP or Ctrl-Z)" if self._stopped() else ""
        return (
            f"process {self.pid} on {self.host}{stopped} (last seen {seen:.0f} s ago; its "
            f"lease expires in {left:.0f} s unless renewed)"
        )

    def paused(self, now: float) -> str | None:
        """Why the holder, a process of this machine that still exists, is not driving the
        run (it is stopped, or has let its lease expire), or None: a paused process is told
        apart from a crashed one, and from one that drives the run."""
        if self.host != socket.gethostname() or not _process_exists(self.pid):
            return None
        late = now - self.expires_at
        if late >= 0:
            lease = (
                f"its lease expired {late:.0f} s ago, so `screener run --resume` takes the run "
                "over (the paused process then stops without writing)"
            )
        else:
            lease = f"its lease expires in {-late:.0f} s"
        if self._stopped():
            return (
                f"process {self.pid} on {self.host} is stopped (SIGSTOP or Ctrl-Z; "
                f"`kill -CONT {self.pid}` lets it go on); {lease}"
            )
        if late >= 0:
            return f"process {self.pid} on {self.host} is alive but not renewing; {lease}"
        return None

    def _stopped(self) -> bool:
        return self.host == socket.gethostname() and _process_stopped(self.pid)


@dataclass(frozen=True, slots=True)
class Lease:
    """A lease this process holds: the run and the epoch its appends must still match.

    Examples
    --------
    >>> with Journal(db) as journal:
    ...     lease = journal.claim(journal.create_run(spec))
    ...     state = journal.runs()[0].state
    >>> lease.epoch, state
    (1, 'running')
    """

    run_id: str
    owner: str
    epoch: int

    def matches(self, row: Sequence[Any] | None) -> bool:
        """Whether a row read by ``check_sql`` (epoch, owner) still names this lease."""
        return row is not None and row[0] == self.epoch and row[1] == self.owner


def holder_is_live(host: str, pid: int, expires_at: float, now: float) -> bool:
    """The one liveness rule of a lease and of a pool's member (journal.pools): live until
    ``expires_at``, unless it is a process of this machine that no longer exists (kill -9)."""
    if host == socket.gethostname() and not _process_exists(pid):
        return False
    return now < expires_at


def new_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def claim(conn: Connection, run_id: str, now: float) -> Lease:
    """Take run ``run_id``'s lease for this process, or raise RunOwnedError naming the
    live holder. Call inside a write transaction."""
    holder = read_holder(conn, run_id, lock=True)
    owner = new_owner()
    values = {
        "owner": owner,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "heartbeat_at": now,
        "expires_at": now + LEASE_SECONDS,
    }
    if holder is None:
        try:
            with conn.begin_nested():
                conn.execute(insert(RUN_LEASES_TABLE).values(run_id=run_id, epoch=1, **values))
        except IntegrityError:  # another process inserted it since our read
            raise _owned(run_id, read_holder(conn, run_id), now) from None
        return Lease(run_id, owner, 1)
    if holder.is_live(now):
        raise _owned(run_id, holder, now)
    # Compare-and-set on the epoch we read: of two processes taking over the same expired
    # lease, exactly one matches.
    taken = conn.execute(
        update(RUN_LEASES_TABLE)
        .where(_L.run_id == run_id, _L.epoch == holder.epoch)
        .values(epoch=holder.epoch + 1, **values)
    )
    if taken.rowcount != 1:
        raise _owned(run_id, read_holder(conn, run_id), now)
    return Lease(run_id, owner, holder.epoch + 1)


def renew(conn: Connection, lease: Lease, now: float) -> None:
    """Push the lease's expiry on; LeaseLostError if it is no longer ours."""
    renewed = conn.execute(
        update(RUN_LEASES_TABLE)
        .where(_L.run_id == lease.run_id, _L.epoch == lease.epoch, _L.owner == lease.owner)
        .values(heartbeat_at=now, expires_at=now + LEASE_SECONDS)
    )
    if renewed.rowcount != 1:
        raise _lost(lease, read_holder(conn, lease.run_id), now)


def check(conn: Connection, lease: Lease, now: float) -> None:
    """Inside an append's transaction: the lease is still ours (the row stays locked until
    the commit on PostgreSQL, so a takeover waits for this append).

    Every append runs this, so it is driver SQL compiled once per database kind: built
    through Core's select() on every call it would cost more than the insert."""
    sql, positional = check_sql(conn.dialect)
    row = conn.exec_driver_sql(
        sql, (lease.run_id,) if positional else {"run_id": lease.run_id}
    ).first()
    if not lease.matches(row):
        raise _lost(lease, read_holder(conn, lease.run_id), now)


def check_sql(dialect: Dialect) -> tuple[str, bool]:
    """The lease check's SQL for ``dialect`` (FOR UPDATE where the database has it) and
    whether it takes its parameter by position; compiled once per database kind and driver."""
    key = (dialect.name, dialect.driver, dialect.paramstyle)
    if key not in _CHECK_SQL:
        query = select(_L.epoch, _L.owner).where(_L.run_id == bindparam("run_id"))
        compiled = query.with_for_update().compile(dialect=dialect)
        _CHECK_SQL[key] = (str(compiled), bool(compiled.positional))
    return _CHECK_SQL[key]


_CHECK_SQL: dict[tuple[str, str, str], tuple[str, bool]] = {}


def release(conn: Connection, lease: Lease) -> None:
    """Give the lease up (the run stopped); a lease already taken over is left alone."""
    conn.execute(
        delete(RUN_LEASES_TABLE).where(
            _L.run_id == lease.run_id, _L.epoch == lease.epoch, _L.owner == lease.owner
        )
    )


def read_holder(conn: Connection, run_id: str, *, lock: bool = False) -> LeaseHolder | None:
    query = select(_L.owner, _L.host, _L.pid, _L.epoch, _L.heartbeat_at, _L.expires_at).where(
        _L.run_id == run_id
    )
    row = conn.execute(query.with_for_update() if lock else query).one_or_none()
    return None if row is None else LeaseHolder(*row)


def all_holders(conn: Connection) -> dict[str, LeaseHolder]:
    query = select(_L.run_id, _L.owner, _L.host, _L.pid, _L.epoch, _L.heartbeat_at, _L.expires_at)
    return {row[0]: LeaseHolder(*row[1:]) for row in conn.execute(query)}


def _owned(run_id: str, holder: LeaseHolder | None, now: float) -> RunOwnedError:
    who = "another process" if holder is None else holder.describe(now)
    return RunOwnedError(
        f"run {run_id} is being driven by {who}",
        "wait for it to finish or stop it (Ctrl-C), then resume",
    )


def _lost(lease: Lease, holder: LeaseHolder | None, now: float) -> LeaseLostError:
    who = "another process" if holder is None else holder.describe(now)
    return LeaseLostError(
        f"this process lost run {lease.run_id} to {who}; it stopped without writing more",
        "let that process drive the run; `screener runs` shows who holds it",
    )


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def _process_stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped by a signal (Linux's /proc; False elsewhere)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    # "pid (command) state ...": the command may hold spaces and parentheses.
    fields = stat.rpartition(")")[2].split()
    return bool(fields) and fields[0] in ("T", "t")
