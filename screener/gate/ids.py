"""The gate's gold ids: keyed, so that no one can guess another worker's.

A gold id is ``g`` and 16 hex characters, made under the gate's ``GateSettings.gold_key``, a
random secret drawn per gate. The same key gives the same ids in the same order (a replayed
gate names its questions as the first did); without the key the ids of a gate say nothing about
those of another worker, or of the next question.

- Sealed ids (``sealed_gold_id``, the default): the 64 bits are the worker's arm and the
  question's number among the worker's, enciphered under the key by a four-round Feistel
  network with keyed BLAKE2b rounds (Luby and Rackoff 1988: a pseudorandom permutation). The
  gate reads them back (``unsealed``), so it keeps no record of an answered question
  (``screener.gate.golds``). A guessed id names a question the gate handed out about once
  in 2^64 / (questions) tries, as a keyed hash does.
- Hashed ids (``gold_id``, a gate journaled before sealed ids): a keyed hash of the gate's
  question number, each kept with its record.
- Sequential ids ``g0, g1, ...``: a gate journaled before gold keys (no key stored).

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

import functools
import hashlib
import re
import secrets
from collections.abc import Container

from screener.errors import ConfigError

__all__ = [
    "KEY_BYTES",
    "check_gold_key",
    "gold_id",
    "new_gold_key",
    "sealed_gold_id",
    "unsealed",
]

#: The length of a gold key, in bytes (BLAKE2b takes keys of up to 64).
KEY_BYTES = 32
#: A sealed id's halves (the arm, the question's number) and the Feistel network's rounds.
_HALF = 32
_MASK = (1 << _HALF) - 1
_ROUNDS = 4
_SHAPE = re.compile(r"g[0-9a-f]{16}")


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


def sealed_gold_id(key: str, arm: int, number: int) -> str:
    """The sealed id of the ``number``-th gold question (from 0) of the worker on ``arm``.

    Examples
    --------
    >>> key = new_gold_key()
    >>> ident = sealed_gold_id(key, 3, 0)
    >>> unsealed(key, ident), unsealed(new_gold_key(), ident) == (3, 0), unsealed(key, "g7")
    ((3, 0), False, None)
    """
    if not (0 <= arm <= _MASK and 0 <= number <= _MASK):
        raise ConfigError(f"a sealed gold id holds an arm and a number below 2^{_HALF}")
    left, right = arm, number
    for step in range(_ROUNDS):
        left, right = right, left ^ _round(key, step, right)
    return f"g{left << _HALF | right:016x}"


@functools.lru_cache(maxsize=1024)  # a service checks an answer, then uses it: one opening
def unsealed(key: str, ident: str) -> tuple[int, int] | None:
    """The (arm, number) a sealed id was made of (``sealed_gold_id``); None for a text
    that is not of a gold id's shape. Any id of that shape opens to some pair: whether the
    gate handed it out is the caller's to check."""
    if not _SHAPE.fullmatch(ident):
        return None
    value = int(ident[1:], 16)
    left, right = value >> _HALF, value & _MASK
    for step in reversed(range(_ROUNDS)):
        left, right = right ^ _round(key, step, left), left
    return left, right


def _round(key: str, step: int, half: int) -> int:
    hasher = _keyed(key).copy()
    hasher.update(bytes((step,)) + half.to_bytes(4, "little"))
    return int.from_bytes(hasher.digest(), "little")


@functools.lru_cache(maxsize=64)
def _keyed(key: str) -> hashlib.blake2b:
    """A BLAKE2b keyed with ``key``, to copy per round (keying it again costs more)."""
    return hashlib.blake2b(key=bytes.fromhex(key), digest_size=_HALF // 8)
