"""Anytime-valid evidence against a bar: betting e-processes and the e-BH procedure.

An e-process for a null hypothesis is a nonnegative process whose value at any stopping time
has expectation at most 1 under the null; by Ville's inequality it exceeds ``1 / alpha`` at any
time with probability at most alpha. The e-BH procedure (Wang & Ramdas, JRSS-B 2022) turns n
e-values into a rejection set whose false-discovery rate is at most q under any dependence
between them, which is what makes it safe on e-processes stopped adaptively (Xu, Wang &
Ramdas, NeurIPS 2021, for bandits).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.arrays import FloatArray, grown

__all__ = ["BET_FRACTIONS", "BettingEProcess", "e_bh"]


#: The mixture's bets, as fractions of the largest bet that keeps the wealth nonnegative:
#: 20 midpoints of (0, 1). For 0/1 rewards a constant bet is a likelihood ratio (see
#: ``BettingEProcess``), so this is a uniform prior over the alternative means; on 4 to 60
#: answers it comes within 0.01 nats of the continuous uniform mixture (200 points).
BET_FRACTIONS: FloatArray = (np.arange(20, dtype=np.float64) + 0.5) / 20
BET_FRACTIONS.flags.writeable = False


def e_bh(e_values: ArrayLike, q: float) -> NDArray[np.bool_]:
    """The e-BH rejection set at level ``q`` (Wang & Ramdas 2022), as a boolean mask.

    With ``e_(1) >= ... >= e_(n)`` the e-values sorted in decreasing order, reject the
    hypotheses with the ``k*`` largest, ``k* = max{k : e_(k) >= n / (q k)}`` (none when no k
    qualifies). Equivalently, reject every i with ``e_i >= n / (q k*)``: ties never split,
    since an e-value equal to ``e_(k*)`` in position k* + 1 would make k* + 1 qualify too.
    The false-discovery rate is at most ``q n0 / n`` for any dependence between the e-values,
    and so is that of every self-consistent set (each member has ``e_i >= n / (q |set|)``).
    ``inf`` is a legal e-value; NaN and negative values are not.
    """
    e = np.asarray(e_values, dtype=np.float64).reshape(-1)
    if not 0.0 < q <= 1.0:
        raise ValueError(f"q must lie in (0, 1], got {q}")
    if not bool(np.all(e >= 0.0)):  # also catches NaN
        raise ValueError("e-values must be nonnegative numbers")
    n = e.size
    # Only values at or above the smallest cut (k = n) can pass any cut, and they are the
    # largest ones: k* is found among them alone, with no sort of the rest.
    candidates = e[e >= n / (q * n)] if n else e
    if candidates.size == 0:
        return np.zeros(n, dtype=np.bool_)
    ordered = np.sort(candidates)[::-1]
    cuts = n / (q * np.arange(1, candidates.size + 1, dtype=np.float64))
    passing = np.flatnonzero(ordered >= cuts)
    if passing.size == 0:
        return np.zeros(n, dtype=np.bool_)
    k_star = int(passing[-1]) + 1
    return np.asarray(e >= n / (q * k_star), dtype=np.bool_)


class BettingEProcess:
    """Per-arm betting e-processes for rewards in [0, 1] against one bar, in both directions.

    * ``e_below`` tests the null "mean >= bar" (evidence that the arm is below it), with
      wealth ``prod_t (1 + lam (bar - X_t))``, ``0 <= lam < 1 / (1 - bar)``;
    * ``e_above`` tests "mean <= above_bar" (``above_bar`` defaults to ``bar``), with wealth
      ``prod_t (1 + lam (X_t - above_bar))``, ``0 <= lam < 1 / above_bar``.

    Why it is an e-process for the whole composite null: given the past, each factor has
    expectation ``1 + lam (bar - E[X_t | past])``, at most 1 whenever the conditional mean is
    at least the bar (``lam >= 0``), and every factor is positive (``lam`` below the largest
    bet), so the wealth is a nonnegative supermartingale for every mean in the null, not only
    at the boundary. Waudby-Smith & Ramdas (JRSS-B 2024) construct such tests by betting.

    Bets: the e-value is the average of the wealth processes of the constant bets
    ``lam = f / (1 - bar)`` (``f / above_bar`` above) for ``f`` in ``fractions`` (default
    ``BET_FRACTIONS``); an average of e-processes is one. For 0/1 rewards the constant bet
    ``f`` is exactly the likelihood ratio of the mean ``bar (1 - f)`` against ``bar`` (below;
    ``above_bar + f (1 - above_bar)`` above), so the mixture is a Bayes factor over a grid of
    alternatives. A constant bet's wealth is a product, so the e-value depends on the arm's
    answers and not on their order: answers applied in arrival order, in batches or one at a
    time give the same value (validity needs each answer to have, given all answers that
    arrived before it, a conditional mean in the null: true when answers are independent of
    the order they arrive in).

    Cost: O(len(fractions)) per answer, vectorised over arms; wealths are kept as logs (no
    overflow) and summed answer by answer in the order given (``np.add.at``), so splitting a
    batch does not change a single bit.
    """

    def __init__(
        self,
        n_arms: int,
        bar: float,
        *,
        above_bar: float | None = None,
        fractions: ArrayLike = BET_FRACTIONS,
    ) -> None:
        if n_arms < 0:
            raise ValueError(f"n_arms must be at least 0, got {n_arms}")
        upper_bar = bar if above_bar is None else above_bar
        if not 0.0 <= bar < 1.0:
            raise ValueError(f"the bar tested for 'below' must lie in [0, 1), got {bar}")
        if not 0.0 < upper_bar <= 1.0:
            raise ValueError(f"the bar tested for 'above' must lie in (0, 1], got {upper_bar}")
        grid = np.asarray(fractions, dtype=np.float64).reshape(-1)
        if grid.size == 0 or not bool(np.all((grid >= 0.0) & (grid < 1.0))):
            raise ValueError("bet fractions must be a non-empty list of numbers in [0, 1)")
        self.n_arms = int(n_arms)
        self.bar = float(bar)
        self.above_bar = float(upper_bar)
        self.fractions = grid
        self._lam_below = grid / (1.0 - self.bar)
        self._lam_above = grid / self.above_bar
        self._log_norm = math.log(grid.size)
        self._log_wealth_below = np.zeros((self.n_arms, grid.size))
        self._log_wealth_above = np.zeros((self.n_arms, grid.size))
        self._count = np.zeros(self.n_arms, dtype=np.int64)
        self._cache_log_e()

    def _cache_log_e(self) -> None:
        """Each arm's log e-values, kept: an answer recomputes its own arm's only, so an
        answer costs the same at any number of arms (issue 50). A row's value does not
        depend on the rows beside it, so the cache holds the bits a full pass would give."""
        self._log_e_below = self._log_mean_exp(self._log_wealth_below)
        self._log_e_above = self._log_mean_exp(self._log_wealth_above)

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        if "_log_e_below" not in state:  # pickled before the cache
            self._cache_log_e()

    def grow(self, count: int) -> None:
        """Make room for ``count`` more arms, with no answers yet (workers who joined)."""
        self.n_arms += count
        self._log_wealth_below = grown(self._log_wealth_below, count, 0.0)
        self._log_wealth_above = grown(self._log_wealth_above, count, 0.0)
        self._count = grown(self._count, count, 0)
        fresh = np.zeros((count, self.fractions.size))
        self._log_e_below = np.concatenate([self._log_e_below, self._log_mean_exp(fresh)])
        self._log_e_above = np.concatenate([self._log_e_above, self._log_mean_exp(fresh)])

    def update_many(self, arms: ArrayLike, rewards: ArrayLike) -> None:
        """Add answers (rewards in [0, 1]) in the order given; repeated arms are fine."""
        a = np.asarray(arms, dtype=np.int64).reshape(-1)
        x = np.asarray(rewards, dtype=np.float64).reshape(-1)
        if a.size != x.size:
            raise ValueError("arms and rewards must have the same length")
        if a.size == 0:
            return
        if not bool(np.all((x >= 0.0) & (x <= 1.0))):
            raise ValueError("rewards must lie in [0, 1]")
        np.add.at(self._log_wealth_below, a, np.log1p(np.outer(self.bar - x, self._lam_below)))
        np.add.at(
            self._log_wealth_above, a, np.log1p(np.outer(x - self.above_bar, self._lam_above))
        )
        np.add.at(self._count, a, 1)
        moved = np.unique(a)
        self._log_e_below[moved] = self._log_mean_exp(self._log_wealth_below[moved])
        self._log_e_above[moved] = self._log_mean_exp(self._log_wealth_above[moved])

    @property
    def count(self) -> NDArray[np.int64]:
        """Answers absorbed per arm (read-only view)."""
        view = self._count.view()
        view.flags.writeable = False
        return view

    def log_e_below(self) -> FloatArray:
        """Natural log of each arm's e-value against "mean >= bar" (0 before any answer)."""
        return self._log_e_below.copy()

    def log_e_above(self) -> FloatArray:
        """Natural log of each arm's e-value against "mean <= above_bar"."""
        return self._log_e_above.copy()

    def log_e_of(self, arms: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """The log e-values of ``arms`` alone, below and above (the cached bits, copied)."""
        rows = np.asarray(arms, dtype=np.int64)
        return self._log_e_below[rows], self._log_e_above[rows]

    def e_below(self) -> FloatArray:
        """Each arm's e-value against "mean >= bar" (``inf`` past the float range)."""
        with np.errstate(over="ignore"):
            return np.exp(self.log_e_below())

    def e_above(self) -> FloatArray:
        """Each arm's e-value against "mean <= above_bar"."""
        with np.errstate(over="ignore"):
            return np.exp(self.log_e_above())

    def _log_mean_exp(self, log_wealth: FloatArray) -> FloatArray:
        top = log_wealth.max(axis=1)
        spread = np.exp(log_wealth - top[:, None]).sum(axis=1)
        return np.asarray(top + np.log(spread) - self._log_norm, dtype=np.float64)
