"""The numpy array types screener's annotations use, named once, and the one way a
per-worker array grows."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["BoolArray", "FloatArray", "IntArray", "grown"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

#: The arrays ``grown`` returned, still growable in place: id -> (the array, weakly; its buffer).
_GROWABLE: dict[int, tuple[weakref.ref[NDArray[Any]], NDArray[Any]]] = {}


def grown(array: NDArray[Any], count: int, fill: Any) -> NDArray[Any]:
    """``array`` with ``count`` new rows of ``fill`` after it (workers who joined).

    Amortised O(count): the result is a prefix of a buffer with room to spare (its capacity
    doubles when full), so a pool that grows one worker at a time costs O(1) a worker, not a
    copy of every worker's entry each time. Only the array ``grown`` returned last grows in
    place (the old array and the result then share their first rows); any other, such as one
    grown since, is copied, so it never overwrites rows another array uses.

    Examples
    --------
    >>> a = grown(np.zeros(2), 1, 5.0)
    >>> b = grown(a, 2, 7.0)
    >>> b.tolist(), grown(a, 1, 9.0).tolist(), b.tolist()  # a was grown: copied
    ([0.0, 0.0, 5.0, 7.0, 7.0], [0.0, 0.0, 5.0, 9.0], [0.0, 0.0, 5.0, 7.0, 7.0])
    """
    rows = array.shape[0]
    entry = _GROWABLE.pop(id(array), None)
    buffer = entry[1] if entry is not None and entry[0]() is array else None
    if buffer is None or buffer.shape[0] < rows + count:
        capacity = max(2 * rows, rows + count, 8)
        buffer = np.empty((capacity, *array.shape[1:]), dtype=array.dtype)
        buffer[:rows] = array
    buffer[rows : rows + count] = fill
    result = buffer[: rows + count]
    key = id(result)
    _GROWABLE[key] = (weakref.ref(result, lambda _: _GROWABLE.pop(key, None)), buffer)
    return result
