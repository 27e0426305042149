"""The pool's rules, each written once: the shard of a worker (the documented hash, which a
platform may apply itself), the fair share, and which shards a member claims or hands over."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from screener.gate_service.pool import fair_share, shards_to_move
from screener.gate_service.sharding import HASH_RULE, shard_of


@pytest.mark.parametrize("shards", [1, 2, 3, 8])
def test_a_worker_s_shard_is_the_documented_hash(shards: int) -> None:
    for worker in ["ann", "worker-17", "Zoë", "x" * 200]:
        digest = hashlib.blake2b(worker.encode("utf-8"), digest_size=8).digest()
        assert shard_of(worker, shards) == int.from_bytes(digest, "big") % shards
    assert HASH_RULE == "blake2b-8-big-endian-mod-shards"


def test_workers_spread_evenly_over_the_shards() -> None:
    counts = Counter(shard_of(f"w{i}", 4) for i in range(4000))
    assert sorted(counts) == [0, 1, 2, 3] and min(counts.values()) > 900


@pytest.mark.parametrize(
    ("shards", "members", "fair"), [(4, 1, 4), (4, 2, 2), (4, 3, 2), (5, 2, 3), (2, 3, 1)]
)
def test_the_fair_share_is_the_ceiling_of_shards_per_live_member(
    shards: int, members: int, fair: int
) -> None:
    assert fair_share(shards, members) == fair


def test_a_member_claims_up_to_its_share_and_hands_over_beyond_it() -> None:
    assert shards_to_move(set(), [0, 1, 2, 3], 2) == ([0, 1], [])
    assert shards_to_move({2}, [3, 0], 2) == ([0], [])
    assert shards_to_move({0, 1, 2, 3}, [], 2) == ([], [3, 2])
    assert shards_to_move({0, 1}, [2, 3], 2) == ([], [])  # at its share: a standby for more
    assert shards_to_move(set(), [], 1) == ([], [])  # nothing free: a standby
