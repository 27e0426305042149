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
    """``function(sums, counts)`` (returning ``width`` arrays) for integer sums, by lookup."""

    def __init__(self, function: PairFunction, width: int, limit: int = PAIR_LIMIT) -> None:
        self._function = function
        self._width = width
        self._limit = limit
        self._blocks: dict[int, FloatArray] = {}  # block -> (width, pairs) values
        self._demand: dict[int, int] = {}

    def known(self, s: float, t: float, cost: int = _SCALAR_COST) -> tuple[float, ...] | None:
        """The values at one (sum, count) if its block is filled (filling it once its misses
        add up; a miss here costs the caller ``cost``), else None."""
        if not (s.is_integer() and t.is_integer() and 0.0 <= s <= t <= self._limit):
            return None
        block = int(t) // BLOCK
        values = self._blocks.get(block)
        if values is None:
            values = self._miss(block, cost)
            if values is None:
                return None
        return tuple(values[:, _offset(int(t), int(s), block)].tolist())

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
        out = np.empty((self._width, counts.size))
        found = np.zeros(counts.size, dtype=bool)
        whole = (sums >= 0.0) & (sums <= counts) & (sums % 1.0 == 0.0) & (counts % 1.0 == 0.0)
        inside = np.flatnonzero(whole & (counts <= self._limit))
        if inside.size == 0:
            return out, found
        t = counts[inside].astype(np.int64)
        blocks = t // BLOCK
        wanted = np.unique(blocks)
        for block in wanted.tolist():
            values = self._blocks.get(block)
            if values is None:
                values = self._miss(block, _CALL_COST)
                if values is None:
                    continue
            here = inside[blocks == block] if wanted.size > 1 else inside
            columns = _offset(counts[here].astype(np.int64), sums[here].astype(np.int64), block)
            out[:, here] = values[:, columns]
            found[here] = True
        return out, found

    def _miss(self, block: int, cost: int) -> FloatArray | None:
        """Count a miss in ``block``; fill it (and return its values) once misses add up to
        its pairs."""
        demand = self._demand.get(block, 0) + cost
        self._demand[block] = demand
        return self._fill(block) if demand >= _pairs(block) else None

    def _fill(self, block: int) -> FloatArray:
        rows = np.arange(block * BLOCK, min((block + 1) * BLOCK, self._limit + 1))
        lengths = rows + 1
        t = np.repeat(rows, lengths)
        s = np.arange(t.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        values = np.stack(self._function(s.astype(np.float64), t.astype(np.float64)))
        self._blocks[block] = values
        self._demand.pop(block, None)
        return values


def _pairs(block: int) -> int:
    """Pairs in a block: rows b B .. (b + 1) B - 1 hold t + 1 each."""
    first = block * BLOCK
    return BLOCK * first + BLOCK * (BLOCK + 1) // 2


def _offset(t: Any, s: Any, block: int) -> Any:
    """Column of (S, t) in its block (integers, or arrays of them)."""
    first = block * BLOCK
    return t * (t + 1) // 2 - first * (first + 1) // 2 + s


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
