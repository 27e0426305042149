"""The betting confidence sequence for the mean of rewards in [0, 1].

``BettingCS``: the hedged capital process of Waudby-Smith & Ramdas, "Estimating means of
bounded random variables by betting", JRSS-B 2024 (Theorem 3, Section 5.1, predictable
plug-in bets). For a candidate mean m, ``K+_t(m) = prod_i (1 + lambda_i+(m) (X_i - m))``
and ``K-_t(m) = prod_i (1 - lambda_i-(m) (X_i - m))`` are nonnegative martingales when m is
the mean. Bets: ``lambda_t = sqrt(2 log(2 / alpha) / (sigma2_{t-1} t log(1 + t)))`` with
the regularised running estimates ``mu_t = (1/2 + sum X) / (t + 1)`` and
``sigma2_t = (1/4 + sum_i (X_i - mu_i)^2) / (t + 1)``; truncated as
``lambda+ = min(lambda, c / m)``, ``lambda- = min(lambda, c / (1 - m))`` (c = 1/2). The
reading chosen: each side is its own test at ``alpha / 2`` (``K+ >= 2 / alpha`` rejects
m as too small), a little more conservative than the paper's hedged process
``K+ / 2 + K- / 2 >= 1 / alpha`` (which rejects whenever one of these does), so that a
caller needing one end only can spend its level there.
The bets depend on the data, so the CS needs each arm's answers in order: an incremental
object keeping the log capital on a grid of candidate means (O(grid) per answer, done in
one array pass for all the answers given since the capital was last read).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.arrays import BoolArray, FloatArray, grown
from screener.stats.confseq.mixture import check_alpha
from screener.stats.running import ArmRuns

__all__ = ["BettingCS"]

_FLUSH_CELLS = 1 << 20  # answers x grid points BettingCS brings up to date in one pass


class BettingCS:
    """Hedged-capital betting confidence sequences, one per arm (Waudby-Smith & Ramdas 2024).

    ``alpha`` is the level of the two-sided interval; each end is its own test at
    ``alpha / 2`` (see the module docstring). The log capital of both sides is kept for every
    candidate mean of ``grid`` (sorted, in [0, 1]; default 401 points, step 0.0025), so the
    bounds are rounded outwards to the grid: ``lower`` is the largest grid point m such that
    every grid point up to m has been rejected as too small (the CS lies strictly above it),
    and ``upper`` the float just below the smallest grid point from which every larger one
    has been rejected as too large (the CS lies strictly below that point). With truncated
    plug-in bets each factor ``1 + lambda+(m) (x - m)`` is positive and non-increasing in m
    (and the ``K-`` factors non-decreasing), so a rejected m rejects every smaller one: the
    bounds are exact up to the grid step, and a grid point is inside the CS exactly when
    neither side has rejected it.

    Running intersection: a candidate once rejected stays rejected, which Ville's inequality
    allows since it bounds the chance of *ever* crossing. Each side keeps only how far its
    rejections ever reached (``_below``: the most leading grid points rejected as too small
    after any one answer; ``_above``: the trailing ones as too large), not a running maximum
    per grid point: by the monotonicity above each answer's rejections on one side are a
    prefix (suffix) of the grid, so their union is the longest of them. Where the log capital
    is not monotone to the last bit, counting leading rejections keeps the bounds valid (a
    gap rejects nothing beyond it). Rewards must lie in [0, 1] (rescale first).
    """

    def __init__(
        self,
        n_arms: int,
        alpha: float,
        *,
        grid: ArrayLike | None = None,
        truncation: float = 0.5,
    ) -> None:
        check_alpha(alpha)
        if not 0.0 < truncation < 1.0:
            raise ValueError(f"truncation must lie in (0, 1), got {truncation}")
        points = np.linspace(0.0, 1.0, 401) if grid is None else np.asarray(grid, dtype=float)
        points = np.unique(points.reshape(-1))
        if points.size == 0 or points[0] < 0.0 or points[-1] > 1.0:
            raise ValueError("grid points must lie in [0, 1]")
        self.n_arms = int(n_arms)
        self.alpha = float(alpha)
        self.truncation = float(truncation)
        self.grid: FloatArray = points
        self.grid.flags.writeable = False
        #: Rejection threshold of each side: log(2 / alpha).
        self.log_threshold = math.log(2.0 / alpha)
        with np.errstate(divide="ignore"):
            self._cap_plus = truncation / points  # c / m (inf at m = 0)
            self._cap_minus = truncation / (1.0 - points)  # c / (1 - m)
        shape = (self.n_arms, points.size)
        self._log_plus = np.zeros(shape)
        self._log_minus = np.zeros(shape)
        #: Grid points ever rejected, per arm: the leading ones as too small (K+), the
        #: trailing ones as too large (K-).
        self._below = np.zeros(self.n_arms, dtype=np.int64)
        self._above = np.zeros(self.n_arms, dtype=np.int64)
        #: Answers (arms, rewards, bets) whose grid work waits for the next read.
        self._pending: list[tuple[NDArray[np.int64], FloatArray, FloatArray]] = []
        self.counts = np.zeros(self.n_arms, dtype=np.int64)
        self.sums = np.zeros(self.n_arms)
        self._squares = np.zeros(self.n_arms)  # sum_i (X_i - mu_i)^2
        self._variance = np.full(self.n_arms, 0.25)  # sigma2_{t-1}, the prior 1/4 at t = 1

    def grow(self, count: int) -> None:
        """Make room for ``count`` more arms, with no answers yet (workers who joined)."""
        self.n_arms += count
        for name in ("_log_plus", "_log_minus", "sums", "_squares"):
            setattr(self, name, grown(getattr(self, name), count, 0.0))
        for name in ("counts", "_below", "_above"):
            setattr(self, name, grown(getattr(self, name), count, 0))
        self._variance = grown(self._variance, count, 0.25)

    def __getstate__(self) -> dict[str, Any]:
        """The state with every waiting answer's grid work done: a snapshot stores the
        capital, not the answers queued for it (24 bytes each, the whole run's when only the
        result reads the grid). Bit for bit the same capital (reads never change it)."""
        self._flush()
        return self.__dict__

    def __setstate__(self, state: dict[str, Any]) -> None:
        best_plus, best_minus = state.pop("_best_plus", None), state.pop("_best_minus", None)
        self.__dict__.update(state)
        if best_plus is not None and best_minus is not None:  # pickled before reach was kept
            self._below = _leading(best_plus >= self.log_threshold)
            self._above = _leading((best_minus >= self.log_threshold)[:, ::-1])

    @property
    def log_plus(self) -> FloatArray:
        """log K+ per arm (rows) and grid point (columns), after every answer given."""
        self._flush()
        return self._log_plus

    @property
    def log_minus(self) -> FloatArray:
        """log K- per arm and grid point, after every answer given."""
        self._flush()
        return self._log_minus

    def bets(self, arms: ArrayLike) -> FloatArray:
        """The untruncated predictable bet ``lambda_t`` each arm makes on its next answer."""
        index = np.asarray(arms, dtype=np.int64)
        return self._bet(self._variance[index], self.counts[index] + 1.0)

    def _bet(self, variance: FloatArray, t: NDArray[np.floating[Any]]) -> FloatArray:
        return np.asarray(
            np.sqrt(2.0 * self.log_threshold / (variance * t * np.log1p(t))), dtype=np.float64
        )

    def update_many(self, arms: ArrayLike, rewards: ArrayLike) -> None:
        """Apply answers in the order given (answers of one arm are sequential bets).

        The running statistics and each answer's bet are updated at once (they are cheap);
        the capital on the grid, O(grid) per answer, is brought up to date only when it is
        read (``log_plus``, ``rejected``, ``bounds``), for every waiting answer in one pass."""
        index = np.asarray(arms, dtype=np.int64).reshape(-1)
        values = np.asarray(rewards, dtype=np.float64).reshape(-1)
        if index.size != values.size:
            raise ValueError("arms and rewards must have the same length")
        if values.size and (np.any(values < 0.0) or np.any(values > 1.0) or
                            not np.all(np.isfinite(values))):  # fmt: skip
            raise ValueError("BettingCS rewards must lie in [0, 1]")
        if index.size:
            self._pending.append((index, values, self._advance(index, values)))

    def _advance(self, index: NDArray[np.int64], values: FloatArray) -> FloatArray:
        """Each answer's bet (from the variance before it), updating counts, sums and the
        variance estimate as if the answers came one at a time (``ArmRuns.running``: the same
        bits whatever other arms the batch holds and however answers are grouped in tells)."""
        runs = ArmRuns(index)
        x = values[runs.order]
        before = runs.arms_of_rows
        t = self.counts[before] + runs.rank + 1.0
        sums = runs.running(self.sums[runs.arms], x)
        running_mean = (0.5 + sums) / (t + 1.0)
        squares = runs.running(self._squares[runs.arms], (x - running_mean) ** 2)
        variance = (0.25 + squares) / (t + 1.0)
        previous = np.r_[0.0, variance[:-1]]
        previous[runs.starts] = self._variance[runs.arms]  # each run's first: the stored one
        bets = np.empty(index.size)
        bets[runs.order] = self._bet(previous, t)
        ends = runs.ends
        self.counts[runs.arms] += runs.lengths
        self.sums[runs.arms] = sums[ends]
        self._squares[runs.arms] = squares[ends]
        self._variance[runs.arms] = variance[ends]
        return bets

    def _flush(self) -> None:
        if not self._pending:
            return
        arms = np.concatenate([p[0] for p in self._pending])
        values = np.concatenate([p[1] for p in self._pending])
        bets = np.concatenate([p[2] for p in self._pending])
        self._pending.clear()
        rows = max(1, _FLUSH_CELLS // self.grid.size)  # bounds the memory of one pass
        for start in range(0, arms.size, rows):
            chunk = slice(start, start + rows)
            self._grow_capital(arms[chunk], values[chunk], bets[chunk])

    def _grow_capital(self, arms: NDArray[np.int64], x: FloatArray, bets: FloatArray) -> None:
        """Both capitals along each arm's answers, one factor at a time, and how far each
        side's rejections reached after any one of them."""
        runs = ArmRuns(arms)
        centred = x[runs.order, None] - self.grid[None, :]
        bet = bets[runs.order, None]
        sides = (
            (self._log_plus, self._below, np.minimum(bet, self._cap_plus), False),
            (self._log_minus, self._above, -np.minimum(bet, self._cap_minus), True),
        )
        for log, reach, signed_bet, from_top in sides:
            path = runs.running(log[runs.arms], np.log1p(signed_bet * centred))
            rejected = path >= self.log_threshold
            farthest = np.maximum.reduceat(
                _leading(rejected[:, ::-1] if from_top else rejected), runs.starts
            )
            reach[runs.arms] = np.maximum(reach[runs.arms], farthest)
            log[runs.arms] = path[runs.ends]

    def reach(self, arms: ArrayLike | None = None) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Per arm (of ``arms`` alone when given): how many leading grid points have been
        rejected as too small (K+), and how many trailing ones as too large (K-)."""
        self._flush()
        if arms is None:
            return self._below.copy(), self._above.copy()
        rows = np.asarray(arms, dtype=np.int64)  # only their rows: a few cost the few
        return self._below[rows], self._above[rows]

    def rejected(self, arms: ArrayLike | None = None) -> tuple[BoolArray, BoolArray]:
        """Per arm (of ``arms`` alone when given) and grid point: ever rejected as too small
        (K+) / too large (K-)."""
        n_below, n_above = self.reach(arms)
        column = np.arange(self.grid.size)
        return column < n_below[:, None], column >= self.grid.size - n_above[:, None]

    def bounds(self, arms: ArrayLike | None = None) -> tuple[FloatArray, FloatArray]:
        """(lower, upper) per arm (of ``arms`` alone when given), rounded outwards to the
        grid; [0, 1] before any answer."""
        n_below, n_above = self.reach(arms)
        last = self.grid.size - 1
        lower = np.where(n_below > 0, self.grid[np.maximum(n_below - 1, 0)], 0.0)
        rejected_top = self.grid[np.minimum(last - n_above + 1, last)]
        upper = np.where(n_above > 0, np.nextafter(rejected_top, -math.inf), 1.0)
        return lower.astype(np.float64), upper.astype(np.float64)


def _leading(rows: BoolArray) -> NDArray[np.int64]:
    """How many leading entries of each row are True."""
    return np.asarray(np.logical_and.accumulate(rows, axis=1).sum(axis=1), dtype=np.int64)
