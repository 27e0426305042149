"""One process of a pool of gates (``screener gate --pool``): the shards it serves, claimed,
handed over and taken over through the journal (journal.pools), and where the others are.

Each shard is an ordinary gate run served by a ``GateSession``; the process holding its
lease serves it. Every ``POOL_BEAT`` seconds, off the request path, a process renews its
membership, reads the live members and the shards' lease holders, and moves toward its fair
share, ``ceil(shards / live members)``: under it, it claims free shards (nobody's, or whose
holder is gone: its lease expired, or its process of this machine no longer exists) by
resuming their runs (``GateSession.resume``: the latest snapshot and the journal after it);
over it (a member joined), it hands its highest shards over: the shard stops taking calls,
the calls already made are committed, a snapshot is stored and the lease released, so the
next member under its share claims it at its next look. A process that can claim nothing is
a standby: it redirects every call.

The crowd prior is shared through the database: every ``EVIDENCE_SECONDS`` a process
publishes each shard's own evidence (its workers' distinct (successes, answers) pairs,
``screener.stats.prior.evidence``) and tells each shard it serves the sum of the other
shards' latest rows (``GateSession.tell_outside``, journaled before it is used), when that
sum changed. Gates whose decisions do not depend on other workers share nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import time
from collections.abc import Callable
from typing import TypeVar

from screener.algorithms import CrowdPrior
from screener.errors import JournalError
from screener.gate_service.session import GateSession
from screener.journal import AsyncJournal, Journal
from screener.journal.leases import new_owner
from screener.journal.pools import PoolMember, PoolRecord, PoolStore
from screener.stats.prior.evidence import Pairs, add_pairs, evidence_pairs

__all__ = ["EVIDENCE_SECONDS", "POOL_BEAT", "PoolProcess", "fair_share", "shards_to_move"]

#: Seconds between two looks at the pool (membership, claims, handovers, the routes).
POOL_BEAT = 1.0
#: Seconds between two exchanges of crowd evidence between the shards.
EVIDENCE_SECONDS = 3.0

log = logging.getLogger(__name__)
_T = TypeVar("_T")


def fair_share(shards: int, members: int) -> int:
    """The most shards a member serves while ``members`` are live: ceil(shards / members).

    Examples
    --------
    >>> fair_share(4, 1), fair_share(4, 2), fair_share(4, 3), fair_share(5, 0)
    (4, 2, 2, 5)
    """
    return math.ceil(shards / max(members, 1))


def shards_to_move(mine: set[int], free: list[int], fair: int) -> tuple[list[int], list[int]]:
    """(shards to claim, shards to hand over) for a member serving ``mine`` with ``free``
    shards claimable: claim the lowest free ones up to its fair share, hand its highest over
    beyond it.

    Examples
    --------
    >>> shards_to_move({0, 1, 2, 3}, [], 2), shards_to_move({1}, [0, 2, 3], 2)
    (([], [3, 2]), ([0], []))
    """
    if len(mine) > fair:
        return [], sorted(mine, reverse=True)[: len(mine) - fair]
    return [k for k in sorted(free) if k not in mine][: fair - len(mine)], []


class PoolProcess:
    """This process's part of pool ``record`` in ``db`` (module docstring). ``start(url)``
    begins the looks once it serves at ``url``; ``close`` hands every shard back."""

    def __init__(self, db: str, record: PoolRecord, *, snapshot_every: int | None = None):
        self.db, self.record = db, record
        self.member = new_owner()
        self.url = ""
        self.sessions: dict[int, GateSession] = {}
        #: Each shard's owner's URL at the last look (None: nobody serves it now).
        self.owners: list[str | None] = [None] * record.shards
        self.stopped = asyncio.Event()
        self._snapshot_every = snapshot_every
        self._store = PoolStore(Journal(db))
        self._journal = AsyncJournal(self._store.journal)
        self._told: dict[int, Pairs] = {}
        self._published: dict[int, Pairs] = {}
        self._evidence_at = 0.0
        self._task: asyncio.Task[None] | None = None

    @property
    def shards(self) -> int:
        return self.record.shards

    def serving(self, shard: int) -> GateSession | None:
        """The session of ``shard`` when this process serves it now."""
        session = self.sessions.get(shard)
        return None if session is None or session.stopped.is_set() else session

    def start(self, url: str) -> None:
        """Join the pool as the member serving ``url`` and begin the looks."""
        self.url = url
        self._task = asyncio.create_task(self._keep())

    async def look(self) -> None:
        """One look at the pool (module docstring)."""
        await self._renew()
        members = await self._read(lambda s: s.members(self.record.name))
        await self._drop_stopped()
        holders = await self._read(lambda s: s.holders(self.record))
        now = time.time()
        free = [k for k, h in enumerate(holders) if h is None or not h.is_live(now)]
        fair = fair_share(self.shards, len(members))
        claim, hand_over = shards_to_move(set(self.sessions), free, fair)
        for shard in hand_over:
            await self._hand_over(shard)
        for shard in claim:
            await self._claim(shard)
        if claim or hand_over:
            await self._renew()
        self.owners = self._routes(members)
        if time.monotonic() - self._evidence_at >= EVIDENCE_SECONDS:
            self._evidence_at = time.monotonic()
            await self.share_evidence()

    async def share_evidence(self) -> None:
        """Publish the served shards' own crowd evidence; tell each the other shards' sum."""
        served = {k: s for k, s in self.sessions.items() if s.gate.shares_prior}
        for shard, session in served.items():
            pairs = _own_pairs(session)
            if pairs != self._published.get(shard):
                await self._read(functools.partial(_publish, self.record.name, shard, pairs))
                self._published[shard] = pairs
        every = await self._read(lambda s: s.evidence(self.record.name))
        for shard, session in served.items():
            outside = add_pairs(pairs for k, pairs in every.items() if k != shard)
            if outside != self._told.get(shard, []) and self.serving(shard) is not None:
                await session.tell_outside(outside)
                self._told[shard] = outside

    def fail(self, why: str) -> None:
        """Stop serving every shard for good (an internal error)."""
        for session in self.sessions.values():
            session.fail(why)

    async def close(self, why: str = "interrupted") -> None:
        """Stop the looks, hand every shard back (snapshot, lease released), leave the pool."""
        self.stopped.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for shard in list(self.sessions):
            await self._hand_over(shard, why)
        with contextlib.suppress(JournalError):
            await self._read(lambda s: s.leave(self.member))
        await self._journal.aclose()

    async def _keep(self) -> None:
        while not self.stopped.is_set():
            try:
                await self.look()
            except JournalError as error:  # a busy or unreachable database: the next look
                log.warning("pool %s: %s", self.record.name, error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopped.wait(), POOL_BEAT)

    async def _claim(self, shard: int) -> None:
        run_id = self.record.runs[shard]
        try:
            session = await GateSession.resume(run_id, self.db, **self._snapshots())
        except JournalError as error:  # taken by another member first, or a busy database
            log.info("pool %s: shard %d not claimed: %s", self.record.name, shard, error)
            return
        self.sessions[shard] = session
        self._told.pop(shard, None)  # what its gate was told is not known here: tell again

    async def _hand_over(self, shard: int, why: str = "handed over") -> None:
        session = self.sessions.pop(shard)
        session.stop_serving()  # calls made already are committed by close
        await session.close(why, snapshot=True)

    async def _drop_stopped(self) -> None:
        """Sessions that stopped by themselves (their lease taken over, a journal failure)."""
        for shard, session in list(self.sessions.items()):
            if session.stopped.is_set():
                del self.sessions[shard]
                await session.close()

    async def _renew(self) -> None:
        serving = [k for k in self.sessions if self.serving(k) is not None]
        name, member, url = self.record.name, self.member, self.url
        await self._read(lambda s: s.renew_member(name, member, url, serving))

    def _routes(self, members: list[PoolMember]) -> list[str | None]:
        """Each shard's owner: this process where it serves it, else the live member that
        said it serves it at its last renewal, else None."""
        routes: list[str | None] = [None] * self.shards
        for member in members:
            if member.member != self.member:
                for shard in member.serving:
                    routes[shard] = member.url
        for shard in range(self.shards):
            if self.serving(shard) is not None:
                routes[shard] = self.url
        return routes

    def _snapshots(self) -> dict[str, int]:
        return {} if self._snapshot_every is None else {"snapshot_every": self._snapshot_every}

    async def _read(self, call: Callable[[PoolStore], _T]) -> _T:
        """``call(store)`` on the journal's thread (the pool tables are read blocking)."""
        return await self._journal.read(lambda _: call(self._store))


def _publish(name: str, shard: int, pairs: Pairs, store: PoolStore) -> None:
    store.publish(name, shard, pairs)


def _own_pairs(session: GateSession) -> Pairs:
    method = session.gate.method
    assert isinstance(method, CrowdPrior)
    return evidence_pairs(method.scaled_successes(), method.stats.count)
