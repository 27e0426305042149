"""Values that depend on a count, or on an integer sum and a count, computed once each.

The Beta-mixture sequence's interval at (sum S, count t) is the same for every worker and
every run at the same level, and with 0/1 answers S is an integer in [0, t]: so the pairs a
run meets repeat, across workers and across the runs of a plan. ``PairTable`` keeps the
values of such a function for t up to ``limit``, packed row by row (row t holds S = 0..t);
a missing row is computed whole, together with the rows after it up to a block, in one
vectorised call, so a run pays one call per block of counts rather than one per answer.
Pairs outside the table (graded sums, larger counts) are computed directly.

The function must be elementwise (an entry never depends on the others in the same call):
a value read from the table is then exactly the value a direct call would give.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

__all__ = ["CountTable", "PairTable"]

FloatArray = NDArray[np.float64]
PairFunction = Callable[[FloatArray, FloatArray], tuple[FloatArray, ...]]
#: Largest count kept (rows 0..limit hold about limit^2 / 2 pairs: 8 MB of two values).
PAIR_LIMIT = 1024
#: Rows computed together when one is missing.
_BLOCK = 32


class PairTable:
    """``function(sums, counts)`` (returning ``width`` arrays) for integer sums, by lookup."""

    def __init__(self, function: PairFunction, width: int, limit: int = PAIR_LIMIT) -> None:
        self._function = function
        self._width = width
        self._limit = limit
        self._rows = 0  # rows 0 .. _rows - 1 are computed
        self._values = np.empty((width, 0))

    def __call__(self, sums: FloatArray, counts: FloatArray) -> tuple[FloatArray, ...]:
        """The values at (sums, counts): flat float arrays of equal size."""
        if counts.size == 1:  # one answer's worth: scalar steps
            return tuple(np.array([value]) for value in self.one(float(sums[0]), float(counts[0])))
        whole = (sums >= 0.0) & (sums <= counts) & (sums % 1.0 == 0.0) & (counts % 1.0 == 0.0)
        inside = whole & (counts <= self._limit)
        if not inside.all():
            out = [np.empty(counts.size) for _ in range(self._width)]
            parts = [(~inside, self._function(sums[~inside], counts[~inside]))]
            if inside.any():
                parts.append((inside, self(sums[inside], counts[inside])))
            for where, values in parts:
                for target, part in zip(out, values, strict=True):
                    target[where] = part
            return tuple(out)
        if counts.size == 0:
            return tuple(np.empty(0) for _ in range(self._width))
        top = int(counts.max())
        if top >= self._rows:
            self._fill(top)
        columns = _packed_start(counts.astype(np.int64)) + sums.astype(np.int64)
        return tuple(self._values[:, columns])

    def known(self, s: float, t: float) -> tuple[float, ...] | None:
        """The values at one (sum, count) if their row is computed, else None."""
        if t < self._rows and s.is_integer() and t.is_integer() and 0.0 <= s <= t:
            column = int(t) * (int(t) + 1) // 2 + int(s)
            return tuple(self._values[:, column].tolist())
        return None

    def one(self, s: float, t: float) -> tuple[float, ...]:
        """The values at one (sum, count)."""
        if s.is_integer() and t.is_integer() and 0.0 <= s <= t <= self._limit:
            if t >= self._rows:
                self._fill(int(t))
            column = int(t) * (int(t) + 1) // 2 + int(s)
            return tuple(self._values[:, column].tolist())
        return tuple(float(v[0]) for v in self._function(np.array([s]), np.array([t])))

    def _fill(self, top: int) -> None:
        """Compute rows ``_rows`` .. at least ``top`` (a block at a time)."""
        rows = np.arange(self._rows, min(max(top, self._rows + _BLOCK - 1), self._limit) + 1)
        lengths = rows + 1
        t = np.repeat(rows, lengths)
        s = np.arange(t.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        new = np.stack(self._function(s.astype(np.float64), t.astype(np.float64)))
        self._values = np.concatenate([self._values, new], axis=1)
        self._rows = int(rows[-1]) + 1


class CountTable:
    """``function(counts)`` (one array) for integer counts 0..limit, by lookup."""

    def __init__(self, function: Callable[[FloatArray], FloatArray], limit: int = 1 << 16) -> None:
        self._function = function
        self._limit = limit
        self._values = np.empty(0)

    def __call__(self, counts: FloatArray) -> FloatArray:
        """The values at ``counts`` (any shape); counts outside the table computed directly."""
        flat = counts.reshape(-1)
        if flat.size == 0:
            return np.empty(counts.shape)
        inside = (flat >= 0.0) & (flat <= self._limit) & (flat % 1.0 == 0.0)
        if not inside.all():
            out = np.asarray(self._function(flat), dtype=np.float64).copy()
            if inside.any():
                out[inside] = self(flat[inside])
            return out.reshape(counts.shape)
        top = int(flat.max())
        if top >= self._values.size:
            size = min(max(2 * self._values.size, top + 1, 64), self._limit + 1)
            self._values = np.asarray(
                self._function(np.arange(size, dtype=np.float64)), dtype=np.float64
            )
        return self._values[flat.astype(np.int64)].reshape(counts.shape)


def _packed_start(t: NDArray[np.int64]) -> NDArray[np.int64]:
    """Index of (S = 0, count t) in the packed rows."""
    return np.asarray(t * (t + 1) // 2, dtype=np.int64)
