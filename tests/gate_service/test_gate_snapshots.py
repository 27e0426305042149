"""A gate run's snapshots: a live session takes them between its batches under concurrent
calls, a resume (and a report) from one gives the gate a full replay gives, and a damaged or
forged one falls back to the full replay, naming no code outside the allow-list."""

from __future__ import annotations

import asyncio
import os
import pickle
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from gate_helpers import QUICK, serving

from screener.algorithms import CrowdPrior
from screener.errors import SnapshotError
from screener.gate import Gate, GateSettings, GoldShare, ReplyKind, ValueOfGold
from screener.gate_service import (
    AnswerItem,
    GateSession,
    LabelItem,
    StreamQuery,
    gate_spec,
    rebuild_gate,
    replay_gate,
    run_gate,
)
from screener.gate_service.protocol import NextRequest
from screener.gate_service.snapshots import dump_gate, load_gate
from screener.journal import AsyncJournal, Event, Journal, Snapshot, snapshot_digest
from screener.reports.gate_run import load_gate_run

#: Audits and labels on (more of the gate's state in play), a snapshot every 40 events.
SETTINGS = replace(QUICK, audit_rate=0.3)
EVERY = 40
#: What a gate does under the same further calls: its replies, decisions and summary.
Further = tuple[list[dict[str, object]], list[object], dict[str, object]]


async def _worker_calls(session: GateSession, worker: str, accuracy: float, seed: int) -> None:
    """One worker's requests, each gold answered and now and then a task labelled."""
    rng = np.random.default_rng(seed)
    for step in range(12):
        await asyncio.sleep(rng.random() * 0.004)  # some calls come while a batch is written
        reply = await session.next(NextRequest(worker, f"{worker}-{step}"))
        if reply["kind"] == ReplyKind.GOLD.value:
            reward = float(rng.random() < accuracy)
            await session.answers([AnswerItem(reply["gold"], worker, reward=reward)])
        elif reply["kind"] != ReplyKind.BLOCKED.value and rng.random() < 0.5:
            await session.labels([LabelItem(worker, f"i{step}", "ab"[step % 2])])


class SlowCommits(AsyncJournal):
    """A journal whose commits let other calls run while they are written (as PostgreSQL's
    do; SQLite's often commit without yielding), and that keeps every snapshot it stores."""

    def __init__(self, journal: Journal) -> None:
        super().__init__(journal)
        self.snapshots: list[Snapshot] = []

    async def append(self, run_id: str, events: Sequence[Event]) -> None:
        await asyncio.sleep(0.002)
        await super().append(run_id, events)

    async def save_snapshot(self, run_id: str, state: bytes) -> int:
        last = await super().save_snapshot(run_id, state)
        self.snapshots.append(Snapshot(event_id=last, digest=snapshot_digest(state), state=state))
        return last


async def _serve_crowd(db: str) -> tuple[Gate, list[Snapshot]]:
    """A gate run in ``db`` served to 30 workers calling at once (batches of many calls,
    snapshots due while calls wait); the gate as it stands when the session closes, and every
    snapshot it stored."""
    journal = SlowCommits(Journal(db))
    run_id = await journal.create_run(gate_spec(SETTINGS, None), claim=True)
    session = GateSession(Gate(SETTINGS), journal, run_id, [], snapshot_every=EVERY)
    try:
        accuracy = np.where(np.random.default_rng(3).random(30) < 0.2, 0.35, 0.85)
        await asyncio.gather(
            *(_worker_calls(session, f"w{i:03d}", a, i) for i, a in enumerate(accuracy))
        )
    finally:
        await session.close()
    return session.gate, journal.snapshots


def _full_replay(db: str, run_id: str) -> tuple[Gate, list[float]]:
    with Journal(db, create=False) as journal:
        gate = run_gate(journal.get_run(run_id))
        return gate, replay_gate(gate, journal.events(run_id))


def _drive(gate: Gate, workers: int, requests: int, seed: int) -> list[dict[str, object]]:
    """Seeded requests of ``workers`` (a fifth of them spammers) on ``gate``, each gold
    question answered at once and every third task labelled; the replies."""
    rng = np.random.default_rng(seed)
    accuracy = np.where(rng.random(workers) < 0.2, 0.35, 0.85)
    replies = []
    for step in range(requests):
        worker = int(rng.integers(workers))
        reply = gate.next(f"w{worker:03d}")
        if reply.kind is ReplyKind.GOLD:
            assert reply.gold is not None
            gate.answer(
                reply.gold, worker=reply.worker, reward=float(rng.random() < accuracy[worker])
            )
        elif reply.kind is not ReplyKind.BLOCKED and step % 3 == 0:
            gate.tell_label(reply.worker, f"i{step % 50}", "ab"[step % 2])
        replies.append(reply.to_dict())
    return replies


def _further(gate: Gate) -> Further:
    """The same further calls on ``gate``: its replies, decisions and summary after them."""
    replies = _drive(gate, 40, 400, seed=11)
    return replies, [d.to_dict() for d in gate.decisions], gate.summary()


@pytest.fixture(scope="module")
def serving_crowd(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Gate, list[Snapshot]]:
    db = str(tmp_path_factory.mktemp("snapshots") / "gate.db")
    return db, *asyncio.run(_serve_crowd(db))


@pytest.fixture(scope="module")
def served(serving_crowd: tuple[str, Gate, list[Snapshot]]) -> tuple[str, str, Further]:
    """The database of a served gate run, its id, and what the gate as served does next."""
    db, original, _ = serving_crowd
    with Journal(db, create=False) as journal:
        run_id = journal.latest_run_id()
    assert run_id is not None
    return db, run_id, _further(original)


def test_every_snapshot_is_of_exactly_the_events_up_to_its_tag(
    serving_crowd: tuple[str, Gate, list[Snapshot]],
) -> None:
    """Taken while other calls wait for the next commit, each snapshot holds the calls of
    its events and no other: the events after its tag replay on it to the full replay's gate."""
    db, _, snapshots = serving_crowd
    with Journal(db, create=False) as journal:
        run_id = journal.latest_run_id()
        assert run_id is not None
        events = journal.events(run_id)
    full, made = _full_replay(db, run_id)
    assert len(snapshots) >= 5
    for snapshot in snapshots:
        gate, before = load_gate(snapshot.state, CrowdPrior)
        after = [e for e in events if (e.id or 0) > snapshot.event_id]
        assert replay_gate(gate, after, before) == made
        assert gate.summary() == full.summary()


def _copy(db: str, tmp_path: Path) -> str:
    copy = tmp_path / "copy.db"
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    return str(copy)


def _set_snapshot(
    db: str, state: bytes, digest: str | None = None, *, halfway: bool = False
) -> None:
    """Replace the run's snapshot (``halfway``: tagged with the middle event, so that half
    the calls replay on it, wherever the last snapshot happened to be taken)."""
    with sqlite3.connect(db) as conn:
        changed = conn.execute(
            "UPDATE run_snapshots SET state = ?, digest = ?",
            (state, digest or snapshot_digest(state)),
        ).rowcount
        if halfway:
            middle = (
                "SELECT id FROM events ORDER BY id LIMIT 1 OFFSET (SELECT COUNT(*) / 2 FROM events)"
            )
            conn.execute(f"UPDATE run_snapshots SET event_id = ({middle})")
    assert changed == 1


def test_a_resume_from_the_snapshot_serves_as_a_full_replay_and_the_original(
    served: tuple[str, str, Further],
) -> None:
    db, run_id, original = served
    with Journal(db, create=False) as journal:
        snapshot, events = journal.snapshot(run_id), journal.events(run_id)
        rebuilt = rebuild_gate(journal, run_id, run_gate(journal.get_run(run_id)))
    assert snapshot is not None and 0 < snapshot.event_id < (events[-1].id or 0)
    assert rebuilt.from_snapshot
    assert rebuilt.replayed == sum((e.id or 0) > snapshot.event_id for e in events)
    full, made = _full_replay(db, run_id)
    assert rebuilt.made == made and len(made) > 0
    assert _further(rebuilt.gate) == _further(full) == original


@pytest.mark.parametrize("snapshot", [True, False])
def test_a_rebuild_read_a_few_events_at_a_time_is_the_rebuild_read_whole(
    served: tuple[str, str, Further],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    snapshot: bool,
) -> None:
    """``rebuild_gate`` replays the journal a page at a time (``Journal.event_pages``): with
    pages of 2 events it rebuilds the gate that one read of every event gives, from the
    snapshot and without one (the whole journal: hundreds of pages)."""
    served_db, run_id, original = served
    db = str(tmp_path / "copy.db")
    with sqlite3.connect(served_db) as source, sqlite3.connect(db) as copy:
        source.backup(copy)
        if not snapshot:
            copy.execute("DELETE FROM run_snapshots")
    whole, made = _full_replay(db, run_id)
    pages = Journal.event_pages
    monkeypatch.setattr(
        Journal,
        "event_pages",
        lambda self, run, *, after_id=0: pages(self, run, after_id=after_id, page=2),
    )
    with Journal(db, create=False) as journal:
        stored = journal.snapshot(run_id)
        first = stored.event_id if stored is not None else 0
        tail = sum((e.id or 0) > first for e in journal.events(run_id))
        rebuilt = rebuild_gate(journal, run_id, run_gate(journal.get_run(run_id)))
    assert (stored is not None) is snapshot and rebuilt.from_snapshot is snapshot
    assert rebuilt.replayed == tail and (snapshot or tail > 100)
    assert rebuilt.made == made
    assert _further(rebuilt.gate) == _further(whole) == original


async def test_the_session_resumes_from_the_snapshot_with_the_same_decision_times(
    served: tuple[str, str, Further], tmp_path: Path
) -> None:
    db, run_id, _ = served
    copy = _copy(db, tmp_path)
    _, made = _full_replay(copy, run_id)
    async with serving(copy, resume=run_id) as (session, _):
        listed = await session.decisions(StreamQuery(limit=1_000))
        snapshot = await session.journal.snapshot(run_id)
    assert [d["at"] for d in listed["decisions"]] == made
    assert snapshot is not None


@pytest.mark.parametrize("damage", ["bytes", "digest", "forged", "another_gate"])
def test_a_bad_snapshot_falls_back_to_the_full_replay(
    served: tuple[str, str, Further], tmp_path: Path, damage: str
) -> None:
    db, run_id, original = served
    copy = _copy(db, tmp_path)
    marker = tmp_path / "ran"
    with Journal(copy, create=False) as journal:
        good = journal.snapshot(run_id)
    assert good is not None
    if damage == "bytes":  # a damaged file: the digest no longer matches
        _set_snapshot(copy, good.state[:-9] + b"\x00" * 9, good.digest)
    elif damage == "digest":  # another screener version's
        _set_snapshot(copy, good.state, "0.0.0:" + good.digest.split(":")[-1])
    elif damage == "forged":  # a digest anyone can compute, over a pickle calling a shell
        _set_snapshot(copy, _forged_system_call(f"touch {marker}"))
    else:  # a gate of other settings
        _set_snapshot(copy, dump_gate(Gate(replace(SETTINGS, audit_rate=0.5)), []))
    with Journal(copy, create=False) as journal:
        rebuilt = rebuild_gate(journal, run_id, run_gate(journal.get_run(run_id)))
    assert not rebuilt.from_snapshot and not marker.exists()
    assert rebuilt.made == _full_replay(copy, run_id)[1]
    assert _further(rebuilt.gate) == original


def test_a_snapshot_the_later_events_disagree_with_falls_back(
    served: tuple[str, str, Further], tmp_path: Path
) -> None:
    """A snapshot of an earlier state than its tag says (so the calls after the tag do not
    replay on it): the full replay, not a refused resume."""
    db, run_id, original = served
    copy = _copy(db, tmp_path)
    empty = dump_gate(run_gate(Journal(copy, create=False).get_run(run_id)), [])
    _set_snapshot(copy, empty, halfway=True)
    with Journal(copy, create=False) as journal:
        rebuilt = rebuild_gate(journal, run_id, run_gate(journal.get_run(run_id)))
    assert not rebuilt.from_snapshot
    assert _further(rebuilt.gate) == original


def test_the_report_of_a_gate_run_reads_the_same_from_the_snapshot(
    served: tuple[str, str, Further], tmp_path: Path
) -> None:
    db, run_id, _ = served
    replayed = _copy(db, tmp_path)
    _set_snapshot(replayed, b"damaged", "0.0.0:damaged")
    from_snapshot, from_replay = load_gate_run(db, run_id), load_gate_run(replayed, run_id)
    assert from_snapshot.served == from_replay.served
    assert from_snapshot.result.workers == from_replay.result.workers


def _forged_system_call(command: str) -> bytes:
    """A pickle that, loaded by ``pickle.loads``, runs ``command`` in a shell."""

    class Forged:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return os.system, (command,)

    return pickle.dumps((Forged(), []), protocol=5)


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("os", "system"),
        ("builtins", "eval"),
        ("screener.gate.ids", "new_gold_key"),  # a function of the gate's package
        ("screener.bank.questions", "Path"),  # a class imported into it, not its own
        ("screener.gate_service.session", "GateSession"),  # outside the gate's packages
    ],
)
def test_a_forged_snapshot_naming_code_outside_the_allow_list_is_refused(
    module: str, name: str, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    data = b"\x80\x05c" + f"{module}\n{name}\n".encode() + b"(V" + str(marker).encode() + b"\ntR."
    with pytest.raises(SnapshotError, match=f"names {module}.{name}, which is not allowed"):
        load_gate(data, CrowdPrior)
    assert not marker.exists()


@pytest.mark.parametrize(
    "settings",
    [
        GateSettings(),  # the value policy and its judge
        GateSettings(policy=GoldShare(), on_change="reopen", audit_rate=0.5),
        GateSettings(
            policy=ValueOfGold(tenure=True, bans="cost"), agreement=0.05, binary_labels=True
        ),
        GateSettings(gold_ids="hashed", on_change="reopen", audit_rate=0.5),
    ],
    ids=["value", "reopen", "tenure-agreement", "hashed-ids"],
)
def test_a_gate_loaded_from_its_snapshot_goes_on_as_the_original(settings: GateSettings) -> None:
    gate = Gate(settings)
    _drive(gate, 25, 600, seed=2)
    gate.tell_label("w001", "i1", "a", "r1")
    copy, made = load_gate(dump_gate(gate, [1.0] * len(gate.decisions)), type(gate.method))
    assert made == [1.0] * len(gate.decisions)
    assert copy.labels.repeats("r1") and copy.settings == gate.settings
    owed = [w.owed for w in copy.workers.values() if w.owed is not None]
    assert all(copy.gold(gold.id) is gold for gold in owed)  # one record, as in the gate
    assert len(copy.golds.kept) == (gate.golds.count if not gate.golds.sealed else 0)
    assert _further(copy) == _further(gate)
