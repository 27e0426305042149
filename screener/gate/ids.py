"""The gate's gold ids: keyed, so that no one can guess another worker's.

A gold id is ``g`` and 16 hex characters of a keyed hash (BLAKE2b) of the question's number
under the gate's ``GateSettings.gold_key``, a random secret drawn per gate. The same key gives
the same ids in the same order (a replayed gate names its questions as the first did); without
the key the ids of a gate say nothing about those of another worker, or of the next question.
A gate journaled before gold keys (no key stored) keeps its sequential ids ``g0, g1, ...``.

Examples
--------
>>> key = new_gold_key()
>>> first = gold_id(key, 0, set())
>>> first == gold_id(key, 0, set()), first != gold_id(new_gold_key(), 0, set()), len(first)
(True, True, 17)
>>> gold_id(None, 7, set())  # a gate journaled before gold keys
'g7'
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Container

from screener.errors import ConfigError

__all__ = ["KEY_BYTES", "check_gold_key", "gold_id", "new_gold_key"]

#: The length of a gold key, in bytes (BLAKE2b takes keys of up to 64).
KEY_BYTES = 32


def new_gold_key() -> str:
    """A fresh random gold key, as hex (a gate's settings hold it as plain JSON)."""
    return secrets.token_hex(KEY_BYTES)


def check_gold_key(key: object) -> None:
    """Refuse a gold key that is not None or hex of ``KEY_BYTES`` bytes (without saying it:
    the key is a secret)."""
    if key is None:
        return
    valid = isinstance(key, str) and len(key) == 2 * KEY_BYTES
    try:
        valid = valid and len(bytes.fromhex(str(key))) == KEY_BYTES
    except ValueError:
        valid = False
    if not valid:
        raise ConfigError(
            f"gold_key must be {2 * KEY_BYTES} hex characters (a secret of {KEY_BYTES} bytes)",
            "leave it out: each gate draws its own",
        )


def gold_id(key: str | None, number: int, taken: Container[str]) -> str:
    """The id of the gate's gold question ``number`` (from 0) under ``key`` (None: the
    sequential ids of a gate journaled before gold keys), never one in ``taken``."""
    if key is None:
        return f"g{number}"
    secret = bytes.fromhex(key)
    attempt = 0
    while True:  # 64 bits: a clash is about 1 in 10^7 at a million questions, and skipped
        message = number.to_bytes(8, "little") + attempt.to_bytes(4, "little")
        found = "g" + hashlib.blake2b(message, key=secret, digest_size=8).hexdigest()
        if found not in taken:
            return found
        attempt += 1
