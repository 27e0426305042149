"""The k-sigma algorithms' decisions: the active set (workers whose interval meets theta's)
and the stopping condition (no worker active), each answered as cheaply as the state allows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from screener.algorithms.ksigma._certificates import Certificates
from screener.algorithms.ksigma.intervals import KSigmaIntervals
from screener.algorithms.worker_result import Decision, WorkerResult
from screener.arrays import IntArray
from screener.stats import (
    ksigma_threshold_enclosure,
    ksigma_threshold_end,
    threshold_end_bracket,
)
from screener.stats.scalar import NEAR

__all__ = ["KSigmaAlgorithm"]


class KSigmaAlgorithm(KSigmaIntervals):
    """Base of RR, WRR, NRR and IB: the active set over the intervals of ``KSigmaIntervals``
    (whose docstring says how delta is spent), and the stop once no worker is active.

    Examples
    --------
    Every k-sigma algorithm shares its parameters and its threshold estimate:

    >>> from screener.algorithms import RoundRobin, WeightedRoundRobin
    >>> issubclass(WeightedRoundRobin, KSigmaAlgorithm)
    True
    >>> params = RoundRobin(10, k=2.0).params()
    >>> params["k"], params["delta"], params["interval"], params["direction"]
    (2.0, 0.1, 'mixture', 'high')
    """

    def __init__(self, n_workers: int, **kwargs: Any) -> None:
        super().__init__(n_workers, **kwargs)
        n = self.n_arms
        #: Activity and theta as of the last refresh; None: not computed yet (``active``).
        self._active: NDArray[np.bool_] | None = np.ones(n, dtype=bool)
        #: theta's interval, computed when first read after a refresh (``_threshold_interval``).
        self._theta_interval: tuple[float, float] | None = (-math.inf, math.inf)
        #: theta(x) for every x in the sampled workers' box lies in here (cheap; no level;
        #: None: not computed yet, see ``_enclosure``).
        self._band: tuple[float, float] | None = (-math.inf, math.inf)
        #: The O(1) activity certificates (mixture intervals, once every worker has
        #: min_answers answers; else None).
        self._certificates: Certificates | None = None
        self._witness = -1  # a worker found surely active at the last check
        #: Workers below min_answers at the last full refresh (active by rule); None: none.
        self._held_back: NDArray[np.bool_] | None = None
        self._ends: dict[bool, float] = {}  # ends of theta's interval alone (_threshold_end)
        self._near_band: tuple[float, float] | None = None  # see _clear_of_near_band
        self._available_cache: IntArray | None = None  # the available workers, in index order
        self._available_n = n
        #: Every available worker has min_answers answers (one, by default) and some have any.
        self._warmed_up = False

    @property
    def active(self) -> NDArray[np.bool_]:
        """Workers whose interval meets theta's (``_activity``), as of the last refresh, and
        those held back (no answers yet, or fewer than min_answers)."""
        if self._active is None:
            active = self._activity()
            if self._held_back is not None:
                active[self._held_back] = True
            self._active = active
        return self._active

    @active.setter
    def active(self, value: NDArray[np.bool_]) -> None:
        self._active = value

    def _refresh(self) -> None:
        certificates = self._certificates
        if certificates is not None and certificates.n == self.n_arms:
            self._refresh_moved(certificates)
        else:
            self._refresh_all()

    def _refresh_moved(self, certificates: Certificates) -> None:
        """Every worker has min_answers answers: bring the moved ones up to date, in
        O(moved); theta, the enclosure and the activity are computed when read."""
        answered = self._answered_arms
        if len(answered) == 1 and answered[0].size == 1:
            self._move_one(int(answered[0][0]), certificates)
        elif answered:
            self._move_many(np.unique(np.concatenate(answered)), certificates)
        answered.clear()
        if certificates.stale:
            certificates.resum(self.means, self._lows, self._highs)
        self._theta = self._active = self._band = self._theta_interval = None
        self._near_band = self._held_back = None
        self._ends.clear()

    def _refresh_all(self) -> None:
        self._answered_arms.clear()
        stats = self.stats
        counts = stats.count
        sampled = counts > 0
        held_back = self._too_few_answers()
        self._warmed_up = not bool(held_back[self.available].any()) and bool(sampled.any())
        self.means = stats.means()
        self.lows, self.highs = self._worker_bounds(stats.n_samples)
        self._sampled = sampled
        self._certificates = None
        if sampled.sum() < 2:
            self.theta, self._theta_interval = math.nan, (-math.inf, math.inf)
            self._band = (-math.inf, math.inf)
            self.active = np.ones(self.n_arms, dtype=bool)
            return
        self._theta = self._band = self._theta_interval = self._active = None
        self._held_back = held_back
        if self.interval != "mixture":  # its level moves with every answer: decide now
            self.active = self.active
        elif not held_back.any():
            scale = max(self.width, abs(self.lower), abs(self.upper))
            self._certificates = Certificates(self.means, self.lows, self.highs, self.k, scale)

    def _enclosure(self) -> tuple[float, float]:
        """``ksigma_threshold_enclosure`` of the sampled workers' box (mixture intervals)."""
        if self._band is None:
            self._band = (-math.inf, math.inf)
            if self.interval == "mixture":
                sampled = self._sampled
                y, lows, highs = self.means[sampled], self.lows[sampled], self.highs[sampled]
                self._band = ksigma_threshold_enclosure(y, lows, highs, self.k)
        return self._band

    def _activity(self) -> NDArray[np.bool_]:
        """Workers whose interval meets theta's (on the side their mean lies).

        The box range (``_threshold_interval``) is the costly part, so it is computed only
        when a decision depends on it. theta's interval holds the value of theta at every
        point of the box, and lies inside the cheap ``ksigma_threshold_enclosure``: an
        interval reaching past theta at a point of the box meets it, and one clear of the
        enclosure is clear of it. The points tried (``_box_probes``): one near the box
        maximum, a few near its minimum. The answer is the same as with the box range.
        Restated over a runs axis for RR and WRR in ``screener.algorithms.ksigma.lockstep``
        (bound by tests/algorithms/ksigma/test_lockstep_ksigma.py).
        """
        above = self.means > self.theta
        band_low, band_high = self._enclosure()
        if math.isfinite(band_high - band_low):
            reach_high, reach_low = self._box_probes()
            if self._certificates is not None:
                self._certificates.cap(reach_low)
            meets = np.where(above, self.lows < reach_high, self.highs > reach_low)
            clear = np.where(above, self.lows >= band_high, self.highs <= band_low)
            if bool((meets | clear)[self._sampled].all()):
                return meets
        low, high = self._threshold_interval()
        return np.where(above, self.lows < high, self.highs > low)

    def _box_probes(self) -> tuple[float, float]:
        """theta at points of the sampled workers' box: the largest value found (at the
        vertex where theta's gradient at the means points) and the smallest (on the segment
        from the means to the opposite vertex). Both lie inside theta's interval."""
        sampled = self._sampled
        y, low, high = self.means[sampled], self.lows[sampled], self.highs[sampled]
        rising = self.k * (y - y.mean()) >= -float(y.std())  # theta's gradient at y >= 0
        toward_min = np.where(rising, low, high) - y
        points = np.stack(
            [np.where(rising, high, low), *(y + t * toward_min for t in (0.25, 0.5, 0.75, 1.0))]
        )
        values = points.mean(axis=1) + self.k * points.std(axis=1)
        return max(float(values[0]), self.theta), min(float(values[1:].min()), self.theta)

    def _threshold_interval(self) -> tuple[float, float]:
        if self._theta_interval is None:
            low, high = self._threshold_bounds(self.stats.n_samples, self._sampled)
            # Both are bounds on the same event: keep the tighter end of each.
            band_low, band_high = self._enclosure()
            self._theta_interval = (max(low, band_low), min(high, band_high))
            if self._certificates is not None:
                self._certificates.anchor(self._theta_interval[0])
        return self._theta_interval

    def _on_unavailable(self, arm: int) -> None:
        self._available_cache = None

    def _available_arms(self) -> IntArray:
        """The available workers in index order (kept until one leaves or the pool grows)."""
        if self._available_cache is None or self._available_n != self.n_arms:
            self._available_cache = np.flatnonzero(self.available).astype(np.int64)
            self._available_n = self.n_arms
        return self._available_cache

    def _condition_met(self) -> bool:
        return self._warmed_up and not self._someone_active(among_available=False)

    def _can_progress(self) -> bool:
        # Pulling can only help while some worker we may still ask is unsampled or active.
        return self._someone_active(among_available=True)

    def _someone_active(self, *, among_available: bool) -> bool:
        """Whether some worker (some available worker) is active: a worker surely active
        (``Certificates``) answers it in O(1), else the exact activity does."""
        held_back = self._held_back
        if self._active is None and held_back is not None:  # held back: active, by rule
            reachable = held_back & self.available if among_available else held_back
            if reachable.any():
                return True
        certificates = self._certificates
        if self._active is None and certificates is not None:
            witness = self._witness
            usable = witness >= 0 and (not among_available or self.available[witness])
            if usable and self._is_active(witness):
                return True
            found = certificates.witnesses(self.means, self._lows, self._highs)
            if among_available:
                found = found[self.available[found]]
            if found.size:
                self._witness = int(found[0])
                return True
        active = self.active & self.available if among_available else self.active
        return bool(active.any())

    def _is_active(self, arm: int) -> bool | None:
        """Whether ``arm`` is active: exact when the activity was computed, else from the
        certificates (None when they cannot tell)."""
        if self._active is not None:
            return bool(self._active[arm])
        if self._certificates is None:
            return bool(self.active[arm])
        return self._certificates.activity(
            float(self.means[arm]), float(self._lows[arm]), float(self._highs[arm])
        )

    def _activity_of(self, arm: int) -> bool:
        """Whether ``arm`` is active, exactly: the certificates, then the enclosure (a worker
        clear of it is clear of theta's interval), then the one end of theta's interval
        that its side of theta needs (``_activity`` decides each worker by that end)."""
        sure = self._is_active(arm)
        if sure is not None:
            return sure
        above = bool(self.means[arm] > self.theta)
        if self._clear_of_near_band(arm, above):
            return False
        band_low, band_high = self._enclosure()
        low, high = float(self.lows[arm]), float(self.highs[arm])
        if (low >= band_high) if above else (high <= band_low):
            return False
        if self._theta_interval is None and self.interval == "mixture":
            end = self._threshold_end(upper=above, reach=low if above else high)
            if end is not None:
                return end
        theta_low, theta_high = self._threshold_interval()
        return low < theta_high if above else high > theta_low

    def _clear_of_near_band(self, arm: int, above: bool) -> bool:
        """Whether ``arm`` is clear of the enclosure computed on the ends as kept (some may
        be ``near_mixture_interval``'s, within ``NEAR`` of the width), by more than those
        ends can move it: each piece moves by at most ``d (1 + k) (1 + mean(r) / s)`` when
        every end moves by d (r the reaches, s the means' spread; see
        ``ksigma_threshold_enclosure``), so the exact enclosure is that close."""
        if self._near_band is None:
            y, lows, highs = self.means, self._lows, self._highs
            # Sums over n, not ``mean()`` and ``std()``: the same floats, without their overhead.
            reach = float(np.maximum(y - lows, highs - y).sum()) / y.size
            centred = y - float(y.sum()) / y.size
            spread = math.sqrt(float((centred * centred).sum()) / y.size)
            if not spread > 0.0:
                self._near_band = (math.inf, -math.inf)  # nothing is settled this way
            else:
                # With every end exact and every worker sampled, the enclosure of the ends
                # as kept is ``_enclosure``'s: computed once, for both.
                exact = not self._inexact and self.interval == "mixture"
                if exact and bool(self._sampled.all()):
                    low, high = self._enclosure()
                else:
                    low, high = ksigma_threshold_enclosure(y, lows, highs, self.k)
                slack = 10.0 * NEAR * self.width * (1.0 + self.k) * (1.0 + reach / spread)
                self._near_band = (low - slack, high + slack)
        band_low, band_high = self._near_band
        return bool(self._lows[arm] >= band_high) if above else bool(self._highs[arm] <= band_low)

    @property
    def threshold_end_bound(self) -> float:
        """Either end of theta's interval lies within this of zero: ``scale (3 + 3 k)``, the
        scale the largest of the reward range's width and its ends' sizes."""
        return max(self.width, abs(self.lower), abs(self.upper)) * (3.0 + 3.0 * self.k)

    def _threshold_end(self, *, upper: bool, reach: float) -> bool | None:
        """Whether ``reach`` lies inside theta's interval's upper end (``reach < high``; lower
        end: ``reach > low``), from that end alone: its outward rounding
        ``1e-12 (1 + max(|lower|, |upper|))`` needs the other end, which lies within
        ``threshold_end_bound`` of zero, so the rounding is bracketed (None: too close to
        tell)."""
        sampled = self._sampled
        raw = self._ends.get(upper)
        if raw is None:
            end = ksigma_threshold_end(self.lows[sampled], self.highs[sampled], self.k, upper=upper)
            raw = self._ends[upper] = float(end)
        band_low, band_high = self._enclosure()
        band = band_high if upper else band_low
        ends = threshold_end_bracket(raw, band, upper=upper, other=self.threshold_end_bound)
        near, far = float(ends[0]), float(ends[1])
        if upper:
            return True if reach < near else False if reach >= far else None
        if self._certificates is not None:
            self._certificates.anchor(near)  # at least theta's lower end
        return True if reach > near else False if reach <= far else None

    # ------------------------------------------------------------------------- result
    def _worker_line(self, arm: int, condition_met: bool) -> WorkerResult:
        if self.stats.count[arm] == 0:
            return self._unanswered_line(arm, self._availability_reason(arm) or "no answers yet")
        mean = float(self.means[arm])
        leaning = Decision.OUTLIER if mean > self.theta else Decision.NORMAL
        if self._is_decided(arm, condition_met):
            decision = leaning
            reason = self._decided_reason(condition_met)
        else:
            decision = Decision.UNDECIDED
            reason = self._availability_reason(arm) or self._undecided_reason(arm)
        ends = (float(self.lows[arm]), float(self.highs[arm]))
        return self._answered_line(arm, mean, ends, decision, leaning, reason)

    def _is_decided(self, arm: int, condition_met: bool) -> bool:
        return not self.active[arm]
