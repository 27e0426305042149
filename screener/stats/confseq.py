"""Anytime-valid confidence sequences for the mean of rewards in [0, 1].

A confidence sequence (CS) at level alpha holds at every time at once:
``P(exists t: mu outside CS_t) <= alpha``, so it may be checked after every answer and a run
may stop whenever it likes. The anytime intervals used so far (``kl_bounds`` at the level
``6 delta / (pi^2 n t^2)``) get there by a union bound over counts, which costs about
``2 log t`` nats of budget; the two constructions here cost far less.

* ``mixture_bounds``: a conjugate mixture of sub-Bernoulli likelihood ratios (Howard,
  Ramdas, McAuliffe & Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence
  sequences", Annals of Statistics 2021: their beta-binomial conjugate mixture for
  sub-Bernoulli processes; the reading chosen here mixes with one fixed Beta prior on the
  tilted mean q, the same for every candidate mean, so the confidence set is an interval).
  For X in [0, 1] with mean m, convexity of ``exp`` gives
  ``E exp(lambda X) <= 1 - m + m e^lambda`` (X is *sub-Bernoulli* in their sense), so
  for every q in (0, 1), with ``e^lambda = q (1 - m) / ((1 - q) m)``,
  ``L_t(q) = (q / m)^S_t ((1 - q) / (1 - m))^(t - S_t)`` is a nonnegative supermartingale
  (S_t the sum of the rewards: graded rewards are covered, not only 0/1 answers). Mixing
  over q with a Beta(a, b) density keeps it one (Fubini) and gives the closed form
  ``M_t(m) = B(a + S_t, b + t - S_t) / (B(a, b) m^S_t (1 - m)^(t - S_t))``; by Ville's
  inequality ``P(exists t: M_t(mu) >= 1/alpha) <= alpha``. Since
  ``log M_t(m) = t kl(S_t / t, m) - R(S_t, t)`` with R >= 0 the log ratio of the maximum
  likelihood to the mixture, the CS is the KL interval of ``kl_bounds`` with the budget
  ``log(1/alpha) + R`` (``mixture_log_inverse``). For the Jeffreys prior (a = b = 1/2, the
  default) R is about ``0.5 log t + 0.23`` inside (0, 1) and ``0.5 log(pi t)`` at the ends.
  Both ends together miss with probability at most alpha.
* ``BettingCS``: the hedged capital process of Waudby-Smith & Ramdas, "Estimating means of
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

Every function takes scalars or numpy arrays and never mutates its inputs.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.arrays import BoolArray, FloatArray
from screener.stats.bounds import bernoulli_kl, kl_bounds
from screener.stats.running import ArmRuns
from screener.stats.tables import CountTable, PairTable

__all__ = [
    "JEFFREYS",
    "BettingCS",
    "Divergence",
    "clearing_count",
    "divergence",
    "log_beta",
    "log_gamma",
    "max_clearing_count",
    "mixture_bounds",
    "mixture_log_inverse",
    "mixture_log_inverse_max",
    "mixture_radius",
    "tabulated_mixture_bounds",
    "tabulated_mixture_interval",
]

Divergence = Literal["kl", "quadratic"]

#: The Jeffreys prior Beta(1/2, 1/2): the mixture's default (about the smallest worst-case R).
JEFFREYS = (0.5, 0.5)
_SHIFT = 10  # log_gamma shifts its argument to >= 10, where Stirling's series is exact enough
_STIRLING = (1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0, 1.0 / 1188.0)
_HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)
_FLUSH_CELLS = 1 << 20  # answers x grid points BettingCS brings up to date in one pass


# ------------------------------------------------------------------------- special functions
def log_gamma(x: ArrayLike) -> FloatArray:
    """``log Gamma(x)`` for x > 0, vectorised (numpy has no lgamma; scipy is not a dependency).

    ``Gamma(x) = Gamma(x + 10) / (x (x + 1) ... (x + 9))`` and Stirling's series for
    ``log Gamma(x + 10)`` up to the ``1 / (1188 z^9)`` term (the next one is below 2e-14 at
    z = 10). The product is taken in pairs, ``(x + j)(x + 9 - j) = u + j (9 - j)`` with
    ``u = x (x + 9)``. Tested against ``math.lgamma``.
    """
    value = np.asarray(x, dtype=np.float64)
    z = value + _SHIFT
    inverse = 1.0 / z
    square = inverse * inverse
    series = np.full_like(z, _STIRLING[-1])
    for coefficient in reversed(_STIRLING[:-1]):
        series = series * square + coefficient
    stirling = (z - 0.5) * np.log(z) - z + _HALF_LOG_TWO_PI + series * inverse
    u = value * (value + 9.0)
    product = u * (u + 8.0) * (u + 14.0) * (u + 18.0) * (u + 20.0)
    return np.asarray(stirling - np.log(product), dtype=np.float64)


def log_beta(a: ArrayLike, b: ArrayLike) -> FloatArray:
    """``log B(a, b) = log Gamma(a) + log Gamma(b) - log Gamma(a + b)`` for a, b > 0."""
    a_arr = np.asarray(a, dtype=np.float64)
    b_arr = np.asarray(b, dtype=np.float64)
    return np.asarray(log_gamma(a_arr) + log_gamma(b_arr) - log_gamma(a_arr + b_arr))


def _xlogy(x: FloatArray, y: FloatArray) -> FloatArray:
    """``x log y`` with ``0 log 0 = 0``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0.0, x * np.log(np.where(x > 0.0, y, 1.0)), 0.0)


# ----------------------------------------------------------------------- conjugate mixture
def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")


def _mixture_regret(sums: FloatArray, counts: FloatArray, prior: tuple[float, float]) -> FloatArray:
    """``R(S, t) = log max_q q^S (1-q)^(t-S) - log E_prior[q^S (1-q)^(t-S)] >= 0``."""
    a, b = prior
    t = np.maximum(counts, 0.0)
    s = np.clip(sums, 0.0, t)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(t > 0, s / np.where(t > 0, t, 1.0), 0.5)
    best = _xlogy(s, p) + _xlogy(t - s, 1.0 - p)
    # log B(a + S, b + t - S) with one log_gamma call over the three arguments.
    logs = log_gamma(np.stack(np.broadcast_arrays(a + s, b + t - s, a + b + t)))
    mixed = logs[0] + logs[1] - logs[2] - _log_beta_constant(a, b)
    return np.asarray(np.maximum(best - mixed, 0.0), dtype=np.float64)


@functools.cache
def _log_beta_constant(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def mixture_log_inverse(
    sums: ArrayLike, counts: ArrayLike, alpha: float, prior: tuple[float, float] = JEFFREYS
) -> FloatArray:
    """KL budget of the Beta-mixture CS: ``{q : t kl(S/t, q) <= log(1/alpha) + R(S, t)}``.

    ``sums`` are sums of rewards rescaled to [0, 1] (real numbers: graded rewards are fine),
    ``counts`` the numbers of answers. The set is ``{q : M_t(q) <= 1/alpha}`` of the module
    docstring; it contains the true mean at every t at once with probability >= 1 - alpha.
    """
    _check_alpha(alpha)
    s, t = np.broadcast_arrays(
        np.asarray(sums, dtype=np.float64), np.asarray(counts, dtype=np.float64)
    )
    (budget,) = _budget_table(alpha, prior)(s.reshape(-1), t.reshape(-1))
    return budget.reshape(t.shape)


def _mixture_budget(
    sums: FloatArray, counts: FloatArray, alpha: float, prior: tuple[float, float]
) -> tuple[FloatArray]:
    return (np.asarray(math.log(1.0 / alpha) + _mixture_regret(sums, counts, prior)),)


@functools.lru_cache(maxsize=16)
def _budget_table(alpha: float, prior: tuple[float, float]) -> PairTable:
    return PairTable(functools.partial(_mixture_budget, alpha=alpha, prior=prior), 1)


def mixture_log_inverse_max(
    counts: ArrayLike, alpha: float, prior: tuple[float, float] = JEFFREYS
) -> FloatArray:
    """The largest budget over all sums at count t, taken at S = 0 or S = t.

    That the regret peaks at the ends holds for the Jeffreys prior (checked numerically over
    dense, graded sums in tests/stats/test_confseq.py; there ``R(0, t) = R(t, t) =
    log(pi) - log B(1/2, t + 1/2)``, about ``0.5 log(pi t)``, against about
    ``0.5 log t + 0.23`` inside); check it before relying on it with another prior.
    """
    t = np.asarray(counts, dtype=np.float64)
    low = mixture_log_inverse(np.zeros_like(t), t, alpha, prior)
    high = mixture_log_inverse(t, t, alpha, prior)
    return np.asarray(np.maximum(low, high), dtype=np.float64)


def mixture_bounds(
    sums: ArrayLike, counts: ArrayLike, alpha: float, prior: tuple[float, float] = JEFFREYS
) -> tuple[FloatArray, FloatArray]:
    """The Beta-mixture confidence sequence at level alpha, as (lower, upper) arrays.

    Valid at every count at once (Howard et al. 2021; see the module docstring) for rewards
    in [0, 1], graded or not; both ends together miss the mean with probability at most
    alpha. Arms with no answers get [0, 1].
    """
    _check_alpha(alpha)
    s, t = np.broadcast_arrays(
        np.asarray(sums, dtype=np.float64), np.asarray(counts, dtype=np.float64)
    )
    low, high = _bounds_table(alpha, prior)(s.reshape(-1), t.reshape(-1))
    return low.reshape(t.shape), high.reshape(t.shape)


def tabulated_mixture_interval(
    sum_: float, count: float, alpha: float, prior: tuple[float, float] = JEFFREYS
) -> tuple[float, float] | None:
    """``mixture_bounds`` of one worker (a sum of rewards in [0, 1], a count) as floats, if
    the level's table holds it (``tabulated_mixture_bounds`` for one worker), else None."""
    _check_alpha(alpha)
    found = _bounds_table(alpha, prior).known(float(sum_), float(count))
    return None if found is None else (found[0], found[1])


def tabulated_mixture_bounds(
    sums: FloatArray, counts: FloatArray, alpha: float, prior: tuple[float, float] = JEFFREYS
) -> tuple[FloatArray, FloatArray, NDArray[np.bool_]]:
    """``mixture_bounds`` where the level's table holds them (flat arrays), and where that
    is: the rest is left for the caller (unset)."""
    _check_alpha(alpha)
    (low, high), found = _bounds_table(alpha, prior).lookup(sums, counts)
    return low, high, found


def _mixture_interval(
    sums: FloatArray, counts: FloatArray, alpha: float, prior: tuple[float, float]
) -> tuple[FloatArray, FloatArray]:
    with np.errstate(divide="ignore", invalid="ignore"):
        means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), 0.5)
    return kl_bounds(means, counts, mixture_log_inverse(sums, counts, alpha, prior))


@functools.lru_cache(maxsize=16)
def _bounds_table(alpha: float, prior: tuple[float, float]) -> PairTable:
    """Each level's intervals, shared by every worker and run at that level."""
    return PairTable(functools.partial(_mixture_interval, alpha=alpha, prior=prior), 2)


def mixture_radius(
    counts: ArrayLike, alpha: float, prior: tuple[float, float] = JEFFREYS
) -> FloatArray:
    """One radius per count, whatever the sum: ``sqrt(b_max(t) / (2 t))``, b_max the largest
    Beta-mixture budget at count t (``mixture_log_inverse_max``).

    By Pinsker's inequality (``kl(p, q) >= 2 (p - q)^2``) the mixture CS at count t,
    ``{q : t kl(S/t, q) <= b(S, t)}``, lies inside ``S/t -+ sqrt(b(S, t) / (2 t))``, and
    ``b(S, t) <= b_max(t)``. So ``P(exists t: |S_t / t - mu| > radius(t)) <= alpha`` for
    rewards in [0, 1]: a symmetric, data-free anytime radius, for rules that need every arm's
    radius to be the same function of its count (GOLD's neighbour test). ``inf`` at t = 0.
    """
    _check_alpha(alpha)
    return _radius_table(alpha, prior)(np.asarray(counts, dtype=np.float64))


def _pinsker_radius(counts: FloatArray, alpha: float, prior: tuple[float, float]) -> FloatArray:
    budget = mixture_log_inverse_max(np.maximum(counts, 1.0), alpha, prior)
    with np.errstate(divide="ignore"):
        return np.asarray(
            np.where(counts > 0, np.sqrt(budget / (2.0 * counts)), np.inf), dtype=np.float64
        )


@functools.lru_cache(maxsize=16)
def _radius_table(alpha: float, prior: tuple[float, float]) -> CountTable:
    return CountTable(functools.partial(_pinsker_radius, alpha=alpha, prior=prior))


# ----------------------------------------------------------------------- betting (WSR 2024)
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

    Running intersection: a candidate once rejected stays rejected (the capital kept is the
    running maximum), which Ville's inequality allows since it bounds the chance of *ever*
    crossing. Rewards must lie in [0, 1] (rescale first).
    """

    def __init__(
        self,
        n_arms: int,
        alpha: float,
        *,
        grid: ArrayLike | None = None,
        truncation: float = 0.5,
    ) -> None:
        _check_alpha(alpha)
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
        self._best_plus = np.zeros(shape)
        self._best_minus = np.zeros(shape)
        #: Answers (arms, rewards, bets) whose grid work waits for the next read.
        self._pending: list[tuple[NDArray[np.int64], FloatArray, FloatArray]] = []
        self.counts = np.zeros(self.n_arms, dtype=np.int64)
        self.sums = np.zeros(self.n_arms)
        self._squares = np.zeros(self.n_arms)  # sum_i (X_i - mu_i)^2
        self._variance = np.full(self.n_arms, 0.25)  # sigma2_{t-1}, the prior 1/4 at t = 1

    def grow(self, count: int) -> None:
        """Make room for ``count`` more arms, with no answers yet (workers who joined)."""
        self.n_arms += count
        rows = np.zeros((count, self.grid.size))
        self._log_plus = np.concatenate([self._log_plus, rows])
        self._log_minus = np.concatenate([self._log_minus, rows])
        self._best_plus = np.concatenate([self._best_plus, rows])
        self._best_minus = np.concatenate([self._best_minus, rows])
        self.counts = np.concatenate([self.counts, np.zeros(count, dtype=np.int64)])
        self.sums = np.concatenate([self.sums, np.zeros(count)])
        self._squares = np.concatenate([self._squares, np.zeros(count)])
        self._variance = np.concatenate([self._variance, np.full(count, 0.25)])

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
        variance estimate as if the answers came one at a time."""
        runs = ArmRuns(index)
        x = values[runs.order]
        before = runs.arms_of_rows
        t = self.counts[before] + runs.rank + 1.0
        sums = self.sums[before] + runs.cumsum(x)
        running_mean = (0.5 + sums) / (t + 1.0)
        squares = self._squares[before] + runs.cumsum((x - running_mean) ** 2)
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
        """Both capitals along each arm's answers, keeping their running maxima."""
        runs = ArmRuns(arms)
        centred = x[runs.order, None] - self.grid[None, :]
        bet = bets[runs.order, None]
        sides = (
            (self._log_plus, self._best_plus, np.minimum(bet, self._cap_plus)),
            (self._log_minus, self._best_minus, -np.minimum(bet, self._cap_minus)),
        )
        for log, best, signed_bet in sides:
            path = runs.cumsum(np.log1p(signed_bet * centred)) + log[runs.arms_of_rows]
            best[runs.arms] = np.maximum(best[runs.arms], np.maximum.reduceat(path, runs.starts))
            log[runs.arms] = path[runs.ends]

    def rejected(self) -> tuple[BoolArray, BoolArray]:
        """Per arm and grid point: ever rejected as too small (K+) / too large (K-)."""
        self._flush()
        return self._best_plus >= self.log_threshold, self._best_minus >= self.log_threshold

    def bounds(self) -> tuple[FloatArray, FloatArray]:
        """(lower, upper) per arm, rounded outwards to the grid; [0, 1] before any answer."""
        too_small, too_large = self.rejected()
        below = np.logical_and.accumulate(too_small, axis=1)  # rejected from the left end on
        above = np.logical_and.accumulate(too_large[:, ::-1], axis=1)[:, ::-1]
        n_below = below.sum(axis=1)
        n_above = above.sum(axis=1)
        last = self.grid.size - 1
        lower = np.where(n_below > 0, self.grid[np.maximum(n_below - 1, 0)], 0.0)
        rejected_top = self.grid[np.minimum(last - n_above + 1, last)]
        upper = np.where(n_above > 0, np.nextafter(rejected_top, -math.inf), 1.0)
        return lower.astype(np.float64), upper.astype(np.float64)


# ------------------------------------------------------------- counts to clear a bar (KL form)
def divergence(kind: Divergence, p: ArrayLike, q: ArrayLike) -> FloatArray:
    """Bernoulli ``kl(p, q)``, or Hoeffding's ``2 (p - q)^2`` (``kind="quadratic"``): the
    divergences whose sub-level sets ``{q : t D(p, q) <= b}`` are the KL and Hoeffding
    intervals on [0, 1]."""
    if kind == "kl":
        return bernoulli_kl(p, q)
    gap = np.asarray(p, dtype=np.float64) - np.asarray(q, dtype=np.float64)
    return np.asarray(2.0 * gap * gap, dtype=np.float64)


def clearing_count(
    means: ArrayLike,
    low_bar: float,
    high_bar: float,
    log_inverse: Callable[[FloatArray, FloatArray], FloatArray],
    kind: Divergence = "kl",
    iterations: int = 8,
) -> FloatArray:
    """How many answers an interval ``{q : t D(p, q) <= b(p t, t)}`` needs to clear a bar.

    For a worker whose mean stays ``p`` (rewards in [0, 1]): the smallest count t at which
    its lower end reaches ``low_bar`` (``t D(p, low_bar) >= b``) or its upper end drops below
    ``high_bar`` (``t D(p, high_bar) > b``), whichever comes first; ``inf`` when neither can
    (p on a bar with an empty indifference zone). ``log_inverse(sums, counts)`` is the
    family's budget b and ``kind`` its divergence D. Solved by the fixed-point iteration
    ``t <- b(p t, t) / D``, which rises to the smallest solution because b grows like
    ``log t`` (contraction factor about ``2 / b``); a real number, for scheduling (not a
    promise: see ``max_clearing_count``).
    """
    p = np.asarray(means, dtype=np.float64).reshape(-1)
    # Both sides at once: rows [p against low_bar, p against high_bar].
    q = np.concatenate([p, p])
    bars = np.repeat([low_bar, high_bar], p.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = divergence(kind, q, bars)
        usable = np.concatenate([p >= low_bar, p < high_bar]) & (rate > 0.0)
    t = np.full(q.shape, math.inf)
    if usable.any():
        r, qu = rate[usable], q[usable]
        count = np.ones_like(qu)
        # A mean a hair from its bar sends the count past what the budget can be computed at
        # (log-gamma overflows near 1e30): that worker never clears, its t is inf, not NaN.
        with np.errstate(over="ignore", invalid="ignore"):
            for _ in range(iterations):
                budget = np.asarray(log_inverse(qu * count, count), dtype=np.float64)
                count = np.maximum(budget / r, 1.0)
        t[usable] = np.where(np.isnan(count), math.inf, count)
    return np.asarray(np.minimum(t[: p.size], t[p.size :]).reshape(np.shape(means)))


def max_clearing_count(
    low_bar: float,
    high_bar: float,
    log_inverse_max: Callable[[FloatArray], FloatArray],
    kind: Divergence = "kl",
    horizon: int = 10**12,
) -> int | None:
    """The count N by which every worker is decided, whatever its answers (None: never).

    With ``low_bar < high_bar`` (an indifference zone) and an interval family
    ``{q : t D(S/t, q) <= b(S, t)}`` whose budget is at most ``log_inverse_max(t)`` for every
    sum S, the interval at count t is inside the one with budget ``b_max(t)``. That one
    clears ``low_bar`` for every mean ``p >= p_L(t)`` (root of ``t D(p, low_bar) = b_max``)
    and ``high_bar`` for every ``p < p_U(t)``; once ``p_U(t) >= p_L(t)`` every mean in [0, 1]
    is decided at count t, and N is the first such t (searched over t, since ``b_max(t) / t``
    falls with t). The roots are rounded outwards, so rounding can only make N larger.
    """
    if not low_bar < high_bar:
        return None

    def all_clear(t: FloatArray) -> BoolArray:
        allowed = np.asarray(log_inverse_max(t), dtype=np.float64) / t
        p_low = _root(low_bar, 1.0, allowed, kind)
        p_high = _root(high_bar, 0.0, allowed, kind)
        return np.asarray(p_high >= p_low + 1e-12)

    # Powers of two first, then 64-way splits of the bracket, each a single vectorised call.
    doubling = np.exp2(np.arange(0.0, math.ceil(math.log2(horizon)) + 1.0))
    clear = all_clear(doubling)
    if not clear.any():
        return None
    first = int(np.argmax(clear))
    if first == 0:
        return 1
    low, high = doubling[first - 1], doubling[first]  # all_clear(high) holds, (low) not
    while high - low > 1.0:
        inside = np.unique(np.floor(np.linspace(low, high, 66)))
        inside = inside[(inside > low) & (inside < high)]
        clear = all_clear(inside)
        if clear.any():
            first = int(np.argmax(clear))
            high = inside[first]
            low = inside[first - 1] if first > 0 else low
        else:
            low = inside[-1]
    return int(high)


def _root(bar: float, end: float, allowed: FloatArray, kind: Divergence) -> FloatArray:
    """The p between ``bar`` (where D is 0) and ``end`` at which ``D(p, bar)`` reaches
    ``allowed``, rounded away from the bar (the conservative side for ``max_clearing_count``:
    every p beyond it clears); ``end`` pushed one step further out when D never gets there.
    """
    near = np.full_like(allowed, bar)
    far = np.full_like(allowed, end)
    bars = np.full_like(allowed, bar)
    reachable = divergence(kind, far, bars) >= allowed
    for _ in range(64):
        middle = (near + far) / 2.0
        enough = divergence(kind, middle, bars) >= allowed
        near = np.where(enough, near, middle)
        far = np.where(enough, middle, far)
    beyond = end + (1.0 if end >= bar else -1.0)
    return np.asarray(np.where(reachable, far, beyond), dtype=np.float64)
