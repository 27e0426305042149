"""The pool tables: two processes starting one pool at once create it once, a member of a
process gone from this machine is not live, evidence is replaced; SQLite and PostgreSQL."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text
from test_leases import dead_pid, make_spec

from screener.journal import Journal
from screener.journal.pools import PoolExistsError, PoolRecord, PoolStore


def test_two_starters_of_one_pool_create_it_once(database_url: str) -> None:
    Journal(database_url).close()  # the schema first: the race is the pool's, not the file's
    barrier, outcomes = threading.Barrier(2), list[PoolRecord | None]()

    def start() -> None:
        with Journal(database_url) as journal:
            barrier.wait()
            try:
                outcomes.append(PoolStore(journal).create("p", [make_spec()] * 3))
            except PoolExistsError:
                outcomes.append(None)

    threads = [threading.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    created = [o for o in outcomes if isinstance(o, PoolRecord)]
    assert len(created) == 1 and outcomes.count(None) == 1
    with Journal(database_url) as journal:
        assert PoolStore(journal).find("p") == created[0]
        assert sorted(run.id for run in journal.runs()) == sorted(created[0].runs)
        with pytest.raises(PoolExistsError):  # a later starter too, writing nothing
            PoolStore(journal).create("p", [make_spec()])
        assert len(journal.runs()) == 3


def test_a_member_whose_process_is_gone_is_not_live(database_url: str) -> None:
    with Journal(database_url) as journal:
        store = PoolStore(journal)
        store.create("p", [make_spec()])
        store.renew_member("p", "me", "http://127.0.0.1:1", [0])
        store.renew_member("p", "gone", "http://127.0.0.1:2", [])
        assert sorted(m.member for m in store.members("p")) == ["gone", "me"]
        with journal.engine.begin() as conn:
            conn.execute(text("UPDATE pool_members SET pid = :pid WHERE member = 'gone'"),
                         {"pid": dead_pid()})  # fmt: skip
        assert [(m.member, m.serving) for m in store.members("p")] == [("me", (0,))]
        store.leave("me")
        assert store.members("p") == []


def test_a_joining_member_forgets_the_members_whose_leases_ran_out(database_url: str) -> None:
    with Journal(database_url) as journal:
        store = PoolStore(journal)
        store.create("p", [make_spec()])
        store.renew_member("p", "killed", "http://127.0.0.1:1", [0])
        store.renew_member("p", "frozen", "http://127.0.0.1:2", [])
        with journal.engine.begin() as conn:  # both leases ran out: killed -9, or stopped
            conn.execute(text("UPDATE pool_members SET expires_at = 1"))
        store.renew_member("p", "frozen", "http://127.0.0.1:2", [])  # a renewal: no join
        store.renew_member("p", "new", "http://127.0.0.1:3", [0])
        with journal.engine.connect() as conn:
            rows = conn.execute(text("SELECT member FROM pool_members ORDER BY member"))
            assert [row[0] for row in rows] == ["frozen", "new"]


def test_a_shards_evidence_is_replaced_by_the_next(database_url: str) -> None:
    with Journal(database_url) as journal:
        store = PoolStore(journal)
        store.create("p", [make_spec()] * 2)
        store.publish("p", 0, [(1.0, 2, 3)])
        store.publish("p", 1, [(0.5, 1, 1)])
        store.publish("p", 0, [(2.0, 2, 1)])
        assert store.evidence("p") == {0: [(2.0, 2, 1)], 1: [(0.5, 1, 1)]}
        assert store.evidence("q") == {}
