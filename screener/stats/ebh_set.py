"""The e-BH rejection set kept while e-values change, at a cost per change, not per hypothesis.

``e_bh`` sorts the candidates on each call: a method that calls it after every answer does work
in the number of hypotheses on every answer (issue 50). ``EBHSet`` keeps the candidates sorted
as their values move and finds the same set from the changes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from sortedcontainers import SortedList

__all__ = ["EBHSet"]

#: Steps of the descent (``solve``) before it falls back on one pass over the candidates.
_MOST_STEPS = 64


class EBHSet:
    """The e-BH rejection set at level ``q`` over ``n`` hypotheses, kept as values change.

    ``enter(i, e)`` gives hypothesis i its e-value (``None``, or a value under the smallest
    cut ``n / (q n)``, takes it out: it can pass no cut); ``solve()`` then finds k*;
    ``contains(i)`` says whether i is rejected. The set is the one ``e_bh`` gives on the same
    values, hypotheses never entered counting with e-value 0, bit for bit: the cuts are
    computed as it computes them.

    How. With P(k) the number of values at or above the cut ``n / (q k)`` (nondecreasing in
    k), ``e_(k) >= n / (q k)`` iff P(k) >= k, so k* = max{k : P(k) >= k} and P(k*) = k* (a
    larger P(k*) would itself qualify). From k = m, the candidates' count and an upper
    bound of k*, the descent k <- P(k) while P(k) < k stays at or above k* (P is monotone)
    and falls strictly, so it stops at k*. Each step is one bisection of the sorted values;
    after ``_MOST_STEPS`` (values just under many consecutive cuts) one pass over the
    candidates finishes, as ``e_bh`` would.

    Cost: ``enter`` O(log m); ``solve`` O(steps log m); ``between`` the hypotheses it yields.
    """

    def __init__(self, n: int, q: float) -> None:
        if not 0.0 < q <= 1.0:
            raise ValueError(f"q must lie in (0, 1], got {q}")
        self.n, self.q = int(n), float(q)
        self.k = 0  # k* of the last solve (0: nothing rejected)
        self._sorted: SortedList[tuple[float, int]] = SortedList()  # (value, hypothesis)
        self._value: dict[int, float] = {}
        self._floor = self.cut(self.n) if self.n else math.inf

    def cut(self, k: int) -> float:
        """``n / (q k)``, the value every member of a set of k must reach."""
        return self.n / (self.q * k)

    @property
    def threshold(self) -> float | None:
        """The last solve's cut ``n / (q k*)``; None when it rejected nothing."""
        return self.cut(self.k) if self.k else None

    def __len__(self) -> int:
        """The candidates: hypotheses entered with a value at or above the smallest cut."""
        return len(self._value)

    def value(self, i: int) -> float | None:
        return self._value.get(i)

    def enter(self, i: int, e: float | None) -> None:
        """Hypothesis ``i`` now has e-value ``e`` (None: out of the procedure)."""
        old = self._value.get(i)
        if e is not None and not e >= self._floor:
            e = None
        if old == e:
            return
        if old is not None:
            self._sorted.remove((old, i))
            del self._value[i]
        if e is not None:
            self._sorted.add((e, i))
            self._value[i] = e

    def contains(self, i: int) -> bool:
        """Whether ``i`` was rejected by the last ``solve`` (and its value has not moved)."""
        value = self._value.get(i)
        return value is not None and self.k > 0 and value >= self.cut(self.k)

    def solve(self) -> int:
        """Find k* for the values entered; returns it."""
        size = len(self._sorted)
        k = size
        for _ in range(_MOST_STEPS):
            if k == 0:
                break
            passing = size - self._sorted.bisect_left((self.cut(k), -1))
            if passing >= k:
                break
            k = passing
        else:
            k = self._solve_by_pass()
        self.k = k
        return k

    def between(self, low: float | None, high: float | None) -> Iterator[int]:
        """The hypotheses a move of the cut from ``low`` to ``high`` (either way; None: no
        set) may move in or out of the set: values in [min, max), or from the cut up when
        one side is None."""
        if low is None and high is None:
            return iter(())
        if low is None or high is None:
            start = high if low is None else low
            assert start is not None
            return (i for _, i in self._sorted.irange((start, -1)))
        low, high = min(low, high), max(low, high)
        return (i for _, i in self._sorted.irange((low, -1), (high, -1), inclusive=(True, False)))

    def _solve_by_pass(self) -> int:
        """k* by one pass over the candidates, largest first (``e_bh``'s own rule)."""
        k_star = 0
        for rank, (value, _) in enumerate(reversed(self._sorted), start=1):
            if value >= self.cut(rank):
                k_star = rank
        return k_star

    # A snapshot holds plain values (``screener.algorithms.snapshot`` loads only its own
    # classes): the sorted list is rebuilt from them.
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_sorted"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._sorted = SortedList((value, i) for i, value in self._value.items())
