"""Counter-based randomness: the draw for (seed, stream, arm, seq) is a pure function of them.

A resumed, reordered or batched run therefore sees exactly the same rewards and latencies as
an uninterrupted sequential one: the j-th question put to worker i always gets the same draw.
"""

from __future__ import annotations

import functools
import hashlib

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "arm_key",
    "arm_keys",
    "stream_key",
    "uniform1",
    "uniform_at",
    "uniforms",
    "uniforms_at",
    "uniforms_keyed",
    "worker_rng",
]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_ARM = np.uint64(0xD6E8FEB86659FD93)
_TO_UNIT = 2.0**-53


def _splitmix(x: NDArray[np.uint64]) -> NDArray[np.uint64]:
    x = (x ^ (x >> np.uint64(30))) * _MIX_1
    x = (x ^ (x >> np.uint64(27))) * _MIX_2
    return x ^ (x >> np.uint64(31))


@functools.lru_cache(maxsize=64)
def _stream_key(seed: int, stream: int) -> NDArray[np.uint64]:
    return _stream_keys(np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64), stream)


def _stream_keys(seeds: NDArray[np.uint64], stream: int) -> NDArray[np.uint64]:
    """The key of each seed's ``stream``, in one pass (many runs: no cache to thrash)."""
    with np.errstate(over="ignore"):
        return _splitmix(_splitmix(seeds * _GOLDEN + np.uint64(stream)))


def uniforms(seed: int, stream: int, arms: ArrayLike, seqs: ArrayLike) -> NDArray[np.float64]:
    """Uniform draws in [0, 1), one per (arm, seq) pair, keyed by ``seed`` and ``stream``."""
    a = np.asarray(arms, dtype=np.int64).astype(np.uint64)
    s = np.asarray(seqs, dtype=np.int64).astype(np.uint64)
    base = _stream_key(seed, stream)
    if a.shape == s.shape == (1,):  # one draw: the same arithmetic on Python ints
        return np.array([uniform1(int(base[0]), int(a[0]), int(s[0]))])
    return _draws(base, a, s)


def uniforms_keyed(seeds: ArrayLike, arms: ArrayLike, seqs: ArrayLike) -> NDArray[np.float64]:
    """``uniforms(seed, 0, arm, seq)`` with a seed of its own per draw (many runs at once)."""
    seed = np.asarray(seeds, dtype=np.int64)
    distinct, where = np.unique(seed, return_inverse=True)
    keys = _stream_keys(distinct.astype(np.uint64), 0)
    a = np.asarray(arms, dtype=np.int64).astype(np.uint64)
    s = np.asarray(seqs, dtype=np.int64).astype(np.uint64)
    return _draws(keys[where.reshape(seed.shape)], a, s)


def _draws(
    base: NDArray[np.uint64], a: NDArray[np.uint64], s: NDArray[np.uint64]
) -> NDArray[np.float64]:
    with np.errstate(over="ignore"):
        keys = _splitmix(base + a * _ARM)
    return uniforms_at(keys, s)


def arm_keys(seed: int, stream: int, count: int) -> NDArray[np.uint64]:
    """``arm_key`` of workers ``0 .. count - 1`` of ``seed``'s ``stream``, at once: kept by a
    reward model, they halve the work of each batch of draws (``uniforms_at``)."""
    with np.errstate(over="ignore"):
        return _splitmix(_stream_key(seed, stream) + np.arange(count, dtype=np.uint64) * _ARM)


def uniforms_at(keys: NDArray[np.uint64], seqs: NDArray[np.uint64]) -> NDArray[np.float64]:
    """``uniforms`` of questions ``seqs`` from their workers' ``arm_keys``."""
    with np.errstate(over="ignore"):
        x = _splitmix(keys + seqs * _GOLDEN)
    return (x >> np.uint64(11)).astype(np.float64) * _TO_UNIT


_MASK = 0xFFFFFFFFFFFFFFFF
_INT_MIX_1, _INT_MIX_2, _INT_ARM, _INT_GOLDEN = map(int, (_MIX_1, _MIX_2, _ARM, _GOLDEN))


def _splitmix_int(x: int) -> int:
    """``_splitmix`` of one value, modulo 2^64 as numpy's uint64 wraps."""
    x = ((x ^ (x >> 30)) * _INT_MIX_1) & _MASK
    x = ((x ^ (x >> 27)) * _INT_MIX_2) & _MASK
    return x ^ (x >> 31)


def stream_key(seed: int, stream: int) -> int:
    """The key of ``seed``'s ``stream`` as a Python int, for ``uniform1``."""
    return int(_stream_key(seed, stream)[0])


def uniform1(base: int, arm: int, seq: int) -> float:
    """``uniforms`` of one (arm, seq) on Python ints; ``base`` is ``stream_key(seed, stream)``."""
    return uniform_at(arm_key(base, arm), seq)


def arm_key(base: int, arm: int) -> int:
    """The half of ``uniform1`` that depends on the worker alone: kept per worker, it halves
    the cost of each draw (``uniform_at``)."""
    return _splitmix_int((base + arm * _INT_ARM) & _MASK)


def uniform_at(key: int, seq: int) -> float:
    """``uniform1`` of question ``seq`` from its worker's ``arm_key`` (``_splitmix_int``
    written out: this runs once a simulated pull)."""
    x = (key + seq * _INT_GOLDEN) & _MASK
    x = ((x ^ (x >> 30)) * _INT_MIX_1) & _MASK
    x = ((x ^ (x >> 27)) * _INT_MIX_2) & _MASK
    return ((x ^ (x >> 31)) >> 11) * _TO_UNIT


def worker_rng(seed: int, stream: int, worker: str) -> np.random.Generator:
    """A generator keyed by (seed, stream, worker id): the same worker gets the same draws
    whatever its position in the pool (used for per-worker question and answer orders)."""
    digest = hashlib.blake2b(worker.encode("utf-8"), digest_size=8).digest()
    key = [seed & 0xFFFFFFFFFFFFFFFF, stream, int.from_bytes(digest, "little")]
    return np.random.Generator(np.random.PCG64(key))
