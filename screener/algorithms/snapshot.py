"""An algorithm's whole state as bytes and back: what a run's snapshot stores.

A snapshot lets a report or a resume start from the state after event N and replay only the
events after it. The state is pickled: an algorithm is numpy arrays, a random generator and
plain values, which pickle copies exactly, so the restored algorithm goes on bit for bit as
the original would (the conformance suite's ``snapshot`` check holds every algorithm to that).

Bytes read back from a database are not trusted to name code: loading goes through an
allow-list (the classes of ``screener.algorithms`` and ``screener.stats``, the classes of the
algorithm's own module, numpy's array, dtype and random-generator constructors, a few
containers), so a forged snapshot cannot call anything else. The journal keeps a digest of
the bytes and the screener version beside them (``screener.journal.snapshot_digest``) against
corruption and state written by other code. Every failure is a SnapshotError, and a reader
falls back to replaying the whole journal.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

from screener.algorithms.base import Algorithm
from screener.errors import SnapshotError

__all__ = ["AllowListUnpickler", "dump_state", "load_state", "unpickled"]

_PACKAGES = ("screener.algorithms.", "screener.stats.")
_NUMPY_CALLABLES = frozenset(
    {
        ("numpy", "dtype"),
        ("numpy", "ndarray"),
        ("numpy._core.numeric", "_frombuffer"),
        ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "scalar"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy.random._pickle", "__bit_generator_ctor"),
        ("numpy.random._pickle", "__generator_ctor"),
        ("numpy.random._pickle", "__randomstate_ctor"),
        ("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
    }
)
_CONTAINERS = frozenset(
    {
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("builtins", "complex"),
        ("builtins", "slice"),
        ("builtins", "range"),
        ("collections", "deque"),
        ("collections", "OrderedDict"),
        ("collections", "Counter"),
        ("copyreg", "_reconstructor"),
        ("builtins", "object"),
    }
)


def dump_state(algorithm: Algorithm) -> bytes:
    """The algorithm's state as bytes (pickle protocol 5).

    Examples
    --------
    >>> from screener import RoundRobin
    >>> algorithm = RoundRobin(3, seed=0)
    >>> ask = algorithm.ask(3)
    >>> _ = algorithm.tell_many(ask.ids, [1.0, 0.0, 1.0])
    >>> copy = load_state(dump_state(algorithm), RoundRobin)
    >>> copy.stats.count.tolist(), copy.ask(3).arms.tolist() == algorithm.ask(3).arms.tolist()
    ([1, 1, 1], True)
    """
    try:
        return pickle.dumps(algorithm, protocol=5)
    except (pickle.PicklingError, TypeError, AttributeError) as error:
        raise SnapshotError(
            f"the state of {type(algorithm).__name__} cannot be stored: {error}",
            "the run replays its journal instead of reading a snapshot",
        ) from None


def load_state(data: bytes, expected: type[Algorithm]) -> Algorithm:
    """The algorithm ``dump_state`` wrote, which must be an ``expected`` exactly.

    SnapshotError when the bytes are not such a state or name anything outside the
    allow-list (module docstring).

    Examples
    --------
    >>> import pickle, os
    >>> try:
    ...     load_state(pickle.dumps(os.getcwd), RoundRobin)
    ... except Exception as error:
    ...     print(type(error).__name__)
    SnapshotError
    """
    state = unpickled(data, expected)
    if type(state) is not expected:
        raise SnapshotError(
            f"the stored state is a {type(state).__name__}, not a {expected.__name__}"
        )
    return state


def unpickled(
    data: bytes, expected: type[Algorithm], unpickler: type[AllowListUnpickler] | None = None
) -> object:
    """What ``data`` pickles, read through ``unpickler`` (the allow-list, for a state whose
    algorithm is an ``expected``); SnapshotError for damaged bytes or a name outside it."""
    try:
        return (unpickler or AllowListUnpickler)(io.BytesIO(data), expected).load()
    except SnapshotError:
        raise
    except Exception as error:  # any damage to the bytes lands here
        raise SnapshotError(f"the stored state cannot be read: {type(error).__name__}") from None


class AllowListUnpickler(pickle.Unpickler):
    """An unpickler that resolves only the allow-listed names (module docstring): a class of
    screener's algorithms and statistics is one defined in the module named, not a name
    imported there."""

    def __init__(self, file: io.BytesIO, expected: type[Algorithm]) -> None:
        super().__init__(file)
        self._own_module = expected.__module__

    def find_class(self, module: str, name: str) -> Any:
        key = (module, name)
        if key in _NUMPY_CALLABLES or key in _CONTAINERS:
            return super().find_class(module, name)
        if module == self._own_module or module.startswith(_PACKAGES):
            found = super().find_class(module, name)
            if isinstance(found, type) and found.__module__ == module:
                return found
        if module.startswith("numpy.random.") or module == "numpy.dtypes":
            found = super().find_class(module, name)
            if isinstance(found, type):  # bit generators, dtype classes
                return found
        raise SnapshotError(f"the stored state names {module}.{name}, which is not allowed")
