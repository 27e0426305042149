"""Values that depend on a count, or on an integer sum and a count, computed once each.

The Beta-mixture sequence's interval at (sum S, count t) is the same for every worker and
every run at the same level, and with 0/1 answers S is an integer in [0, t]: so the pairs a
run meets repeat, across workers and across the runs of a plan. ``PairTable`` keeps the
values of such a function for t up to ``limit`` in blocks of ``BLOCK`` counts (rows t, each
with S = 0..t), a block computed whole in one vectorised call once the misses it saw would
have paid for it: a vectorised call for a few pairs costs about as much as computing
``_CALL_COST`` pairs in a block (numpy's per-call overhead), a scalar stand-in (the caller's
own, e.g. ``near_mixture_interval``) about ``_SCALAR_COST``. A plan's runs fill the blocks
they share at once; a single long run fills few. Pairs outside the table (graded sums,
larger counts, blocks not filled yet) are computed directly.

The function must be elementwise (an entry never depends on the others in the same call):
a value read from the table is then exactly the value a direct call would give.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from screener.arrays import BoolArray, FloatArray

__all__ = ["BLOCK", "PAIR_LIMIT", "CountTable", "PairTable"]

PairFunction = Callable[[FloatArray, FloatArray], tuple[FloatArray, ...]]
#: Largest count kept (rows 0..limit hold about limit^2 / 2 pairs: 8 MB of two values).
PAIR_LIMIT = 1023
#: Counts per block.
BLOCK = 32
#: What a miss costs, in pairs computed in a block: a vectorised call, a scalar stand-in.
_CALL_COST = 300
_SCALAR_COST = 15


class PairTable:
    """``function(sums, counts)`` (returning ``width`` arrays) for integer sums, by lookup.

    The pairs sit in one flat array in row order (column ``t (t + 1) / 2 + S``), allocated
    whole at the first fill: the pages of blocks never filled are never touched, and a
    lookup is one gather whatever blocks its pairs fall in.
    """

    def __init__(self, function: PairFunction, width: int, limit: int = PAIR_LIMIT) -> None:
        self._function = function
        self._width = width
        self._limit = limit
        self._values: FloatArray | None = None  # (width, pairs of rows 0..limit)
        self._filled = np.zeros(limit // BLOCK + 1, dtype=bool)
        self._demand: dict[int, int] = {}

    def known(self, s: float, t: float, cost: int = _SCALAR_COST) -> tuple[float, ...] | None:
        """The values at one (sum, count) if its block is filled (filling it once its misses
        add up; a miss here costs the caller ``cost``), else None."""
        if not (s.is_integer() and t.is_integer() and 0.0 <= s <= t <= self._limit):
            return None
        row = int(t)
        block = row // BLOCK
        if not self._filled[block] and not self._miss(block, cost):
            return None
        assert self._values is not None
        return tuple(self._values[:, _column(row, int(s))].tolist())

    def one(self, s: float, t: float) -> tuple[float, ...]:
        """The values at one (sum, count)."""
        found = self.known(s, t, _CALL_COST)
        if found is not None:
            return found
        return tuple(float(v[0]) for v in self._function(np.array([s]), np.array([t])))

    def __call__(self, sums: FloatArray, counts: FloatArray) -> tuple[FloatArray, ...]:
        """The values at (sums, counts): flat float arrays of equal size."""
        if counts.size == 1:  # one answer's worth: scalar steps
            return tuple(np.array([value]) for value in self.one(float(sums[0]), float(counts[0])))
        out, found = self.lookup(sums, counts)
        missing = ~found
        if missing.any():
            out[:, missing] = np.stack(self._function(sums[missing], counts[missing]))
        return tuple(out)

    def lookup(self, sums: FloatArray, counts: FloatArray) -> tuple[FloatArray, BoolArray]:
        """The values found in filled blocks (shape (width, size); others unset) and where
        they were found; blocks asked for often enough are filled first."""
        whole = (sums >= 0.0) & (sums <= counts) & (sums % 1.0 == 0.0) & (counts % 1.0 == 0.0)
        whole &= counts <= self._limit
        if whole.all() and counts.size:  # the common case: every pair in the table's range
            rows = counts.astype(np.int64)
            blocks = rows // BLOCK
            filled = self._filled[blocks]
            if filled.all():
                assert self._values is not None
                columns = _column(rows, sums.astype(np.int64))
                return self._values[:, columns], filled
            inside = np.arange(counts.size)
        else:
            inside = np.flatnonzero(whole)
            rows = counts[inside].astype(np.int64)
            blocks = rows // BLOCK
            filled = self._filled[blocks]
        if not filled.all():  # count the misses (a block may fill), then keep what is there
            for block in np.unique(blocks[~filled]).tolist():
                self._miss(block, _CALL_COST)
            filled = self._filled[blocks]
            inside, rows = inside[filled], rows[filled]
        out = np.empty((self._width, counts.size))
        found = np.zeros(counts.size, dtype=bool)
        if inside.size:
            assert self._values is not None
            out[:, inside] = self._values[:, _column(rows, sums[inside].astype(np.int64))]
            found[inside] = True
        return out, found

    def _miss(self, block: int, cost: int) -> bool:
        """Count a miss in ``block``; fill it once misses add up to its pairs (True: filled)."""
        demand = self._demand.get(block, 0) + cost
        self._demand[block] = demand
        if demand < _pairs(block):
            return False
        self._fill(block)
        return True

    def _fill(self, block: int) -> None:
        rows = np.arange(block * BLOCK, min((block + 1) * BLOCK, self._limit + 1))
        lengths = rows + 1
        t = np.repeat(rows, lengths)
        s = np.arange(t.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        values = np.stack(self._function(s.astype(np.float64), t.astype(np.float64)))
        if self._values is None:
            self._values = np.empty((self._width, _column(self._limit + 1, 0)))
        start = _column(int(rows[0]), 0)
        self._values[:, start : start + t.size] = values
        self._filled[block] = True
        self._demand.pop(block, None)


def _pairs(block: int) -> int:
    """Pairs in a block: rows b B .. (b + 1) B - 1 hold t + 1 each."""
    first = block * BLOCK
    return BLOCK * first + BLOCK * (BLOCK + 1) // 2


def _column(t: Any, s: Any) -> Any:
    """Column of (S, t) in the flat table (integers, or arrays of them)."""
    return t * (t + 1) // 2 + s


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
