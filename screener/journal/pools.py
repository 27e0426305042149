"""Pools: several gate processes serving the shards of one pool on one run database.

A pool is a row of ``pools`` naming its ``shards`` gate runs, one per shard, created with it
in one transaction (``PoolStore.create``): of two processes starting the same pool at once,
the pool's name, a primary key, lets exactly one create it (the other gets ``PoolExistsError``
and joins it). Each shard is an ordinary gate run: the process serving it holds the run's
lease (journal.leases), so a shard is served by one process at a time and taken over once
that process is gone.

Membership: a ``pool_members`` row per process serving the pool, with the URL it serves,
renewed on its heartbeat until ``expires_at``, live by the lease's rule (``holder_is_live``:
a process of this machine that no longer exists is gone at once). Evidence: a
``pool_evidence`` row per shard, the latest crowd evidence its process published (the
processes share the crowd prior through it: ``screener.gate_service.pool``).
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from screener.errors import JournalError
from screener.journal.events import RunSpec
from screener.journal.leases import LEASE_SECONDS, LeaseHolder, holder_is_live, read_holder
from screener.journal.opening import BEGIN_OPTION, database_errors
from screener.journal.schema import POOL_EVIDENCE_TABLE, POOL_MEMBERS_TABLE, POOLS_TABLE
from screener.journal.store import Journal
from screener.stats.prior.evidence import Pairs

__all__ = ["PoolExistsError", "PoolMember", "PoolRecord", "PoolStore"]

_P, _M, _E = POOLS_TABLE.c, POOL_MEMBERS_TABLE.c, POOL_EVIDENCE_TABLE.c


class PoolExistsError(JournalError):
    """Another process created the pool first (join it instead)."""


@dataclass(frozen=True)
class PoolRecord:
    """A pool as stored: its name and its shards' run ids, shard k's at index k."""

    name: str
    runs: tuple[str, ...]

    @property
    def shards(self) -> int:
        return len(self.runs)


@dataclass(frozen=True)
class PoolMember:
    """A process serving a pool, as stored."""

    member: str
    url: str
    host: str
    pid: int
    expires_at: float
    serving: tuple[int, ...]

    def is_live(self, now: float) -> bool:
        return holder_is_live(self.host, self.pid, self.expires_at, now)


class PoolStore:
    """The pool tables of ``journal``'s database. Blocking: call it off the event loop."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._engine: Engine = journal.engine
        self._writer = self._engine.execution_options(**{BEGIN_OPTION: "IMMEDIATE"})

    def find(self, name: str) -> PoolRecord | None:
        """Pool ``name``, or None when there is none."""
        query = select(_P.runs).where(_P.name == name)
        with database_errors(f"cannot read pool {name}"), self._engine.connect() as conn:
            runs = conn.execute(query).scalar_one_or_none()
        return None if runs is None else PoolRecord(name, tuple(json.loads(runs)))

    def create(self, name: str, specs: Sequence[RunSpec]) -> PoolRecord:
        """Pool ``name`` with a new gate run of each spec (shard k's is ``specs[k]``), all in
        one transaction; PoolExistsError, writing nothing, when the pool exists already."""

        def pool_row(conn: Connection, run_ids: list[str]) -> None:
            row = {"name": name, "created_at": time.time(), "shards": len(run_ids),
                   "runs": json.dumps(run_ids)}  # fmt: skip
            try:
                with conn.begin_nested():
                    conn.execute(insert(POOLS_TABLE).values(**row))
            except IntegrityError:
                raise PoolExistsError(f"pool {name} exists already", "join it") from None

        return PoolRecord(name, tuple(self.journal.create_runs(specs, pool_row)))

    def renew_member(self, name: str, member: str, url: str, serving: Sequence[int]) -> None:
        """Add or renew this process's membership of pool ``name``, for LEASE_SECONDS, with
        the shards it ``serving`` at ``url``. Joining also forgets the members whose leases
        ran out (killed before they could leave), so the table holds the live ones."""
        now = time.time()
        values = {"pool": name, "url": url, "host": socket.gethostname(), "pid": os.getpid(),
                  "expires_at": now + LEASE_SECONDS,
                  "serving": json.dumps(sorted(serving))}  # fmt: skip
        doing = f"cannot renew the membership of pool {name}"
        with database_errors(doing), self._writer.begin() as conn:
            mine = update(POOL_MEMBERS_TABLE).where(_M.member == member)
            if conn.execute(mine.values(**values)).rowcount != 1:  # joining
                # The rows of members killed before they could leave, their leases long run
                # out (a live member past its lease writes its row again when it renews).
                gone = delete(POOL_MEMBERS_TABLE).where(_M.pool == name, _M.expires_at < now)
                conn.execute(gone)
                conn.execute(insert(POOL_MEMBERS_TABLE).values(member=member, **values))

    def leave(self, member: str) -> None:
        """Take this process's membership out (it stops serving)."""
        with database_errors("cannot leave the pool"), self._writer.begin() as conn:
            conn.execute(delete(POOL_MEMBERS_TABLE).where(_M.member == member))

    def members(self, name: str) -> list[PoolMember]:
        """The live members of pool ``name`` (``PoolMember.is_live``), oldest row first."""
        columns = (_M.member, _M.url, _M.host, _M.pid, _M.expires_at, _M.serving)
        query = select(*columns).where(_M.pool == name)
        with database_errors(f"cannot read pool {name}"), self._engine.connect() as conn:
            rows = [PoolMember(*row[:5], tuple(json.loads(row[5]))) for row in conn.execute(query)]
        now = time.time()
        return [member for member in rows if member.is_live(now)]

    def holders(self, pool: PoolRecord) -> list[LeaseHolder | None]:
        """Who holds each shard's run lease, live or not (None: nobody), in shard order."""
        with database_errors(f"cannot read pool {pool.name}"), self._engine.connect() as conn:
            return [read_holder(conn, run_id) for run_id in pool.runs]

    def publish(self, name: str, shard: int, pairs: Pairs) -> None:
        """Store ``pairs`` as shard ``shard``'s latest evidence, replacing the one before."""
        values = {"at": time.time(), "pairs": json.dumps(pairs)}
        with database_errors(f"cannot publish to pool {name}"), self._writer.begin() as conn:
            row = update(POOL_EVIDENCE_TABLE).where(_E.pool == name, _E.shard == shard)
            if conn.execute(row.values(**values)).rowcount != 1:
                conn.execute(insert(POOL_EVIDENCE_TABLE).values(pool=name, shard=shard, **values))

    def evidence(self, name: str) -> dict[int, Pairs]:
        """Every shard's latest evidence, by shard."""
        query = select(_E.shard, _E.pairs).where(_E.pool == name)
        with database_errors(f"cannot read pool {name}"), self._engine.connect() as conn:
            rows = conn.execute(query).all()
        return {int(shard): [(float(s), int(n), int(w)) for s, n, w in json.loads(pairs)]
                for shard, pairs in rows}  # fmt: skip
