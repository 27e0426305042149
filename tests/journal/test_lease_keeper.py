"""``LeaseKeeper``, the one heartbeat of a run's lease (``screener run``'s and the gate's), on
a real SQLite journal: it renews while entered and never after, hands over a lease taken
over and stops, skips what it is not told to stop on, and stops renewing once ``until`` is set.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from test_leases import make_spec, set_lease

from screener.errors import DatabaseGoneError, JournalError
from screener.journal import AsyncJournal, Journal, LeaseLostError, leases
from screener.journal.lease_keeper import LeaseKeeper

BEAT = 0.02


@pytest.fixture
async def claimed(tmp_path: Path) -> AsyncIterator[tuple[AsyncJournal, str]]:
    """A run of a fresh database, its lease held by the journal handed out."""
    journal = AsyncJournal(Journal(tmp_path / "runs.db"))
    run_id = await journal.create_run(make_spec(), claim=True)
    yield journal, run_id
    await journal.aclose()


async def heartbeat_at(journal: AsyncJournal, run_id: str) -> float:
    """The lease's last renewal, read on the journal's one thread: after any renewal queued
    there before."""

    def read(store: Journal) -> float:
        with store.engine.connect() as conn:
            holder = leases.read_holder(conn, run_id)
        assert holder is not None
        return holder.heartbeat_at

    return await journal.read(read)


async def test_it_renews_while_entered_and_never_after(claimed: tuple[AsyncJournal, str]) -> None:
    journal, run_id = claimed
    lost: list[JournalError] = []
    claimed_at = await heartbeat_at(journal, run_id)
    async with LeaseKeeper(journal, run_id, lost.append, every=BEAT):
        await asyncio.sleep(10 * BEAT)
        renewed_at = await heartbeat_at(journal, run_id)
    assert renewed_at > claimed_at
    left_at = await heartbeat_at(journal, run_id)
    await asyncio.sleep(5 * BEAT)
    assert await heartbeat_at(journal, run_id) == left_at  # no beat after leaving
    assert lost == []


async def test_a_lease_taken_over_is_handed_to_on_lost_once(
    claimed: tuple[AsyncJournal, str],
) -> None:
    journal, run_id = claimed
    set_lease(journal.journal.name, run_id, expires_at=time.time() - 1.0)  # as if it stalled
    with Journal(journal.journal.name) as other:
        other.claim(run_id)
    lost: list[JournalError] = []
    async with LeaseKeeper(journal, run_id, lost.append, every=BEAT):
        await asyncio.sleep(10 * BEAT)
    assert len(lost) == 1  # the keeper stopped at the first refusal
    assert isinstance(lost[0], LeaseLostError)


@pytest.mark.parametrize("ends", [True, False], ids=["named-ends-it", "skipped-as-busy"])
async def test_only_the_errors_named_end_it(
    claimed: tuple[AsyncJournal, str], tmp_path: Path, ends: bool
) -> None:
    """The gate names a deleted database file (it stops serving at once); a run does not (its
    next append says so). Either way a lease that is still its own is not lost."""
    journal, run_id = claimed
    lost: list[JournalError] = []
    ends_on = (LeaseLostError, DatabaseGoneError) if ends else (LeaseLostError,)
    keeper = LeaseKeeper(journal, run_id, lost.append, ends_on=ends_on, every=BEAT)
    async with keeper:
        (tmp_path / "runs.db").unlink()
        await asyncio.sleep(10 * BEAT)
        assert keeper.running is not ends
    assert [type(error) for error in lost] == ([DatabaseGoneError] if ends else [])


async def test_it_renews_no_more_once_until_is_set(claimed: tuple[AsyncJournal, str]) -> None:
    journal, run_id = claimed
    until = asyncio.Event()
    lost: list[JournalError] = []
    keeper = LeaseKeeper(journal, run_id, lost.append, every=BEAT, until=until)
    keeper.start()
    await asyncio.sleep(5 * BEAT)
    assert keeper.running
    until.set()
    await asyncio.sleep(2 * BEAT)  # at most the beat under way
    stopped_at = await heartbeat_at(journal, run_id)
    await asyncio.sleep(5 * BEAT)
    assert await heartbeat_at(journal, run_id) == stopped_at
    assert not keeper.running
    await keeper.stop()
    assert lost == []
