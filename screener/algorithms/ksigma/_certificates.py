"""O(1) answers to "is worker i active?" for the k-sigma rule, where they are sure.

A worker is active when its interval meets theta's interval (on the side of theta its mean
lies). theta's interval, as ``KSigmaIntervals`` computes it, contains the value of theta at
every point of the workers' box (``theta`` itself at the means, and at two vertices kept
below) and lies inside the Lipschitz enclosure
``theta -+ (mean(r) + k rms(r))`` with ``r_i = max(y_i - low_i, high_i - y_i)``
(``screener.stats.ksigma_threshold_enclosure``). So, with theta and the Lipschitz reach known
to within a margin:

* a worker above theta whose lower end is below theta at one of those points (one below
  theta whose upper end is above it at one) is active, whatever the exact computation gives
  for theta's interval;
* a worker above theta whose lower end is at or past ``theta + reach`` (one below whose upper
  end is at or before ``theta - reach``) is not;
* theta's lower end is the box minimum of theta (``ksigma_threshold_bounds``: its lower
  bound is the minimum, to within 1e-16 relative), and changing one worker's interval
  by a Hausdorff distance h moves that minimum by at most ``h (1 + k sqrt(n - 1)) / n``
  (mean and std move by h / n and h sqrt(n - 1) / n). So from the lower end computed
  exactly once (``anchor``) and the sum of those moves since (the drift), a worker below
  theta whose upper end is more than the drift above (at least the drift below) that end is
  active (is not).

Those values and the reach are kept from running sums over the workers, moved in O(1) per
worker whose answers moved and recomputed in full every ``_RESUM`` moves, so their rounding
stays far below the margin. Anything the margin cannot settle is left to the exact
computation (``None``).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from screener.arrays import FloatArray, IntArray
from screener.stats.scalar import NEAR

__all__ = ["Certificates"]

#: Moves between full recomputations of the running sums.
_RESUM = 256
#: Smallest spread of the means (relative to the reward scale) certificates are given at:
#: below it the square root in std would magnify the sums' rounding past the margin.
_MIN_SPREAD = 1e-2


class Certificates:
    """Running sums over n workers (sum and sum of squares of the means, of two vertices of
    the box and of the reaches) and the sure answers they give.

    The vertices: ``up`` takes each worker's upper end where theta rises with its mean and
    its lower end elsewhere (near the box maximum of theta), ``down`` the other ends; which
    is which is fixed at each full recomputation (any choice is a point of the box).
    The ends kept may be ``near_mixture_interval``'s, within ``NEAR`` (1e-9 of the width)
    of the exact ones, which moves theta at any point of the box, and the reach, by at most
    ``2 NEAR (1 + k)``. ``margin`` is ten times ``NEAR (1 + k)`` of the reward scale: it
    covers that, the sums' rounding and the enclosure's own outward rounding (1e-12
    relative).
    """

    def __init__(self, means: FloatArray, lows: FloatArray, highs: FloatArray, k: float,
                 scale: float) -> None:  # fmt: skip
        self.n = means.size
        self.k = k
        self.scale = scale
        self.margin = 10.0 * NEAR * scale * (1.0 + k)
        self._moves = 0
        self._rising: list[bool] = []
        self._rising_mask = np.zeros(0, dtype=bool)  # ``_rising`` as an array
        self._sums: list[list[float]] = []  # per kept row: [sum, sum of squares]
        self._cached: tuple[float, float, float, float] | None = None
        #: theta's lower end when last computed exactly, a value it was at most (theta at a
        #: point of the box), and the drift so far when each was taken (see ``move``).
        self._floor, self._ceiling, self._drift = math.nan, math.nan, 0.0
        self._floor_at = self._ceiling_at = 0.0
        self._lipschitz = (1.0 + k * math.sqrt(self.n - 1)) / self.n
        self.resum(means, lows, highs)

    def __getstate__(self) -> dict[str, object]:
        """Without ``_rising_mask``, which ``_rising`` holds too (rebuilt on loading)."""
        state = dict(self.__dict__)
        del state["_rising_mask"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._rising_mask = np.array(self._rising, dtype=bool)

    def anchor(self, lower_end: float) -> None:
        """theta's lower end as just computed exactly (``KSigmaAlgorithm``)."""
        self._floor, self._floor_at = lower_end, self._drift
        self.cap(lower_end)

    def cap(self, value: float) -> None:
        """theta at a point of the box now: theta's lower end is at most this."""
        self._ceiling, self._ceiling_at = value, self._drift

    def resum(self, means: FloatArray, lows: FloatArray, highs: FloatArray) -> None:
        centred = means - means.mean()
        rising = self.k * centred >= -math.sqrt(float(np.dot(centred, centred)) / self.n)
        rows = _box_rows(rising, means, lows, highs)
        self._rising = rising.tolist()
        self._rising_mask = rising
        self._sums = np.stack([rows.sum(axis=1), np.einsum("ij,ij->i", rows, rows)], 1).tolist()
        self._moves = 0
        self._cached = None

    def move(
        self, arm: int, old: tuple[float, float, float], new: tuple[float, float, float]
    ) -> None:
        """Worker ``arm``'s (mean, low, high) went from ``old`` to ``new``."""
        rising = self._rising[arm]
        self._drift += self._lipschitz * max(abs(new[1] - old[1]), abs(new[2] - old[2]))
        for sign, (y, low, high) in ((-1.0, old), (1.0, new)):
            up, down = (high, low) if rising else (low, high)
            for sums, value in zip(self._sums, (y, up, down, max(y - low, high - y)), strict=True):
                sums[0] += sign * value
                sums[1] += sign * value * value
        self._moves += 1
        self._cached = None

    def move_many(
        self,
        arms: IntArray,
        old: tuple[FloatArray, FloatArray, FloatArray],
        new: tuple[FloatArray, FloatArray, FloatArray],
    ) -> None:
        """``move`` of several workers at once (distinct ``arms``; each a (means, lows, highs)
        triple of arrays): the same sums up to their rounding, which the margin covers."""
        rising = self._rising_mask[arms]
        shifts = np.maximum(np.abs(new[1] - old[1]), np.abs(new[2] - old[2]))
        self._drift += self._lipschitz * float(shifts.sum())
        before, after = _box_rows(rising, *old), _box_rows(rising, *new)
        added = (after - before).sum(axis=1).tolist()
        squared = (after * after - before * before).sum(axis=1).tolist()
        for sums, value, square in zip(self._sums, added, squared, strict=True):
            sums[0] += value
            sums[1] += square
        self._moves += arms.size
        self._cached = None

    @property
    def stale(self) -> bool:
        """True when the sums should be recomputed before they are read."""
        return self._moves >= _RESUM

    def _theta(self, row: int) -> float:
        """theta at the point of the box kept in ``row`` (NaN when too flat to trust)."""
        total, squares = self._sums[row]
        centre = total / self.n
        variance = squares / self.n - centre * centre
        if not variance >= (_MIN_SPREAD * self.scale) ** 2:
            return math.nan
        return centre + self.k * math.sqrt(variance)

    def _known(self) -> tuple[float, float, float, float] | None:
        """theta, the largest and smallest theta at the kept points, the Lipschitz reach."""
        if self._cached is None:
            theta = self._theta(0)
            if math.isnan(theta):
                return None
            up, down = self._theta(1), self._theta(2)
            top = max(theta, up) if not math.isnan(up) else theta
            bottom = min(theta, down) if not math.isnan(down) else theta
            total, squares = self._sums[3]
            reach = total / self.n + self.k * math.sqrt(max(squares, 0.0) / self.n)
            self._cached = (theta, top, bottom, reach)
        return self._cached

    def activity(self, mean: float, low: float, high: float) -> bool | None:
        """True: surely active; False: surely not; None: the exact computation decides."""
        known = self._known()
        if known is None:
            return None
        theta, top, bottom, reach = known
        margin = self.margin
        if mean > theta + margin:  # surely above theta
            if low < top - margin:
                return True
            return False if low >= theta + reach + margin else None
        if mean < theta - margin:  # surely below
            # NaN before the first anchor or cap: no comparison holds.
            ceiling = self._ceiling + (self._drift - self._ceiling_at)
            floor = self._floor - (self._drift - self._floor_at)
            if high > bottom + margin or high > ceiling + margin:
                return True
            if high <= theta - reach - margin or high <= floor - margin:
                return False
            return None
        return True if low < theta - margin and high > theta + margin else None

    def witnesses(self, means: FloatArray, lows: FloatArray, highs: FloatArray) -> IntArray:
        """Indices of the workers surely active (vectorised ``activity(...) is True``)."""
        known = self._known()
        if known is None:
            return np.empty(0, dtype=np.int64)
        theta, top, bottom, _ = known
        margin = self.margin
        above = means > theta + margin
        below = means < theta - margin
        straddle = (lows < theta - margin) & (highs > theta + margin)
        ceiling = self._ceiling + (self._drift - self._ceiling_at)
        lifted = min(bottom, ceiling) if ceiling == ceiling else bottom
        sure = np.where(above, lows < top - margin, np.where(below, highs > lifted + margin,
                                                             straddle))  # fmt: skip
        return np.flatnonzero(sure).astype(np.int64)


def _box_rows(rising: NDArray[np.bool_], means: FloatArray, lows: FloatArray,
              highs: FloatArray) -> FloatArray:  # fmt: skip
    """The four kept rows of these workers: means, the ``up`` and ``down`` vertices, reaches."""
    # ``np.array`` of the rows, not ``np.stack``: the same array, at half the overhead.
    return np.array(
        [
            means,
            np.where(rising, highs, lows),
            np.where(rising, lows, highs),
            np.maximum(means - lows, highs - means),
        ]
    )
