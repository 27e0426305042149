"""Which shard of a pool a worker (or a task item) belongs to: the one rule, written once,
which the pool's processes route by and a platform may apply itself (docs/gate-api.md).

The rule, named ``HASH_RULE`` in ``GET /v1/pool``: the id's UTF-8 bytes hashed with BLAKE2b
(``digest_size=8``, no key), the 8 bytes read as a big-endian unsigned integer, modulo the
pool's shards.

Examples
--------
>>> shard_of("worker-17", 4), shard_of("worker-17", 1)
(2, 0)
"""

from __future__ import annotations

import hashlib

__all__ = ["HASH_RULE", "shard_of"]

#: The rule's name, as ``GET /v1/pool`` gives it.
HASH_RULE = "blake2b-8-big-endian-mod-shards"


def shard_of(key: str, shards: int) -> int:
    """The shard of worker (or item) ``key`` in a pool of ``shards`` (module docstring)."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % shards
