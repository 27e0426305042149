"""The crowd prior on a grid of accuracies, each worker's posterior on it, and the grid
maximum-likelihood fit by EM (the model: ``screener.stats.prior``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from screener.arrays import FloatArray

__all__ = [
    "DEFAULT_GRID_SIZE",
    "DEFAULT_ITERATIONS",
    "GridPrior",
    "distinct_likelihood",
    "fit_grid_prior",
    "grid_key",
    "grid_log_likelihood",
    "normalise_rows",
]

#: Grid of candidate accuracies: cell midpoints, so no point sits on 0 or 1.
DEFAULT_GRID_SIZE = 100
#: EM iterations from the uniform start. The grid MLE itself is a few spikes; stopping EM early
#: keeps the prior smooth, which keeps posteriors of workers between the spikes honest.
DEFAULT_ITERATIONS = 60


@dataclass(frozen=True)
class GridPrior:
    """A prior on [0, 1] with ``weights`` on the points of ``grid`` (weights sum to 1)."""

    grid: FloatArray
    weights: FloatArray

    @classmethod
    def uniform(cls, size: int = DEFAULT_GRID_SIZE) -> GridPrior:
        grid = (np.arange(size, dtype=np.float64) + 0.5) / size
        return cls(grid, np.full(size, 1.0 / size))

    def contaminated(self, share: float) -> GridPrior:
        """``(1 - share) * self + share * uniform``: the epsilon-contamination class of robust
        Bayes (Berger and Berliner 1986). The uniform share keeps every accuracy possible, so
        a prior fitted on few answers per worker cannot rule out the tails it failed to see."""
        weights = (1.0 - share) * self.weights + share / self.grid.size
        return GridPrior(self.grid, weights)

    def log_likelihood(self, successes: ArrayLike, counts: ArrayLike) -> FloatArray:
        """``s log p + (n - s) log(1 - p)`` for every worker (rows) and grid point (columns)."""
        return grid_log_likelihood(self.grid, successes, counts)

    def posterior(self, successes: ArrayLike, counts: ArrayLike) -> FloatArray:
        """Posterior weights on the grid, one row per worker."""
        return normalise_rows(self.log_likelihood(successes, counts), self.weights)

    def prob_below(self, successes: ArrayLike, counts: ArrayLike, bar: float) -> FloatArray:
        """Posterior probability that each worker's accuracy is below ``bar``."""
        below = self.grid < bar
        return np.asarray(self.posterior(successes, counts)[:, below].sum(axis=1))

    def mean(self) -> float:
        return float(self.weights @ self.grid)

    def quantile(self, level: float) -> float:
        cumulative = np.cumsum(self.weights)
        return float(self.grid[min(int(np.searchsorted(cumulative, level)), self.grid.size - 1)])


def fit_grid_prior(
    successes: ArrayLike,
    counts: ArrayLike,
    *,
    grid_size: int = DEFAULT_GRID_SIZE,
    iterations: int = DEFAULT_ITERATIONS,
) -> GridPrior:
    """The grid prior that (approximately) maximises the marginal likelihood of all workers.

    EM from the uniform prior: ``w <- mean_i posterior_i(w)``, ``iterations`` times. A pure
    function of the (successes, counts) table: workers without answers carry no information
    and are left out. With no answers at all, the uniform prior.
    """
    prior = GridPrior.uniform(grid_size)
    s = np.asarray(successes, dtype=np.float64).reshape(-1)
    n = np.asarray(counts, dtype=np.float64).reshape(-1)
    seen = n > 0
    if not seen.any():
        return prior
    # The likelihood matrix is fixed; only the weights move, so exponentiate once.
    likelihood, multiplicity = distinct_likelihood(prior.grid, s, n)
    share = multiplicity / multiplicity.sum()
    weights = prior.weights.copy()
    for _ in range(iterations):
        joint = likelihood * weights
        joint /= joint.sum(axis=1, keepdims=True)
        weights = share @ joint
    return GridPrior(prior.grid, weights)


def grid_key(grid: ArrayLike) -> bytes:
    """A grid as the key of the caches below (its float64 bytes)."""
    return np.asarray(grid, dtype=np.float64).tobytes()


def distinct_pairs(successes: FloatArray, counts: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The distinct (successes, count) pairs of workers with answers, and how many workers
    share each: workers with the same counts have the same likelihood, and early in a run
    (everyone at 3 answers) there are only a handful of distinct pairs."""
    seen = counts > 0
    s, n = successes[seen], counts[seen]
    if s.size == 0:
        return np.empty((0, 2)), np.empty(0)
    # np.unique(axis=0)'s rows (by successes, then count) without its sort of records.
    order = np.lexsort((n, s))
    s, n = s[order], n[order]
    starts = np.flatnonzero(np.r_[True, (s[1:] != s[:-1]) | (n[1:] != n[:-1])])
    multiplicity = np.diff(np.r_[starts, s.size]).astype(np.float64)
    return np.stack([s[starts], n[starts]], axis=1), multiplicity


def distinct_likelihood(
    grid: FloatArray, successes: FloatArray, counts: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """The likelihood on ``grid`` of each distinct (successes, count) pair of workers with
    answers (each row scaled to a largest value of 1), and how many workers share each pair."""
    pairs, multiplicity = distinct_pairs(successes, counts)
    log_lik = grid_log_likelihood(grid, pairs[:, 0], pairs[:, 1])
    return np.exp(log_lik - log_lik.max(axis=1, keepdims=True)), multiplicity


def grid_log_likelihood(grid: FloatArray, successes: ArrayLike, counts: ArrayLike) -> FloatArray:
    s = np.asarray(successes, dtype=np.float64).reshape(-1, 1)
    n = np.asarray(counts, dtype=np.float64).reshape(-1, 1)
    return np.asarray(s * np.log(grid) + (n - s) * np.log1p(-grid))


def normalise_rows(log_likelihood: FloatArray, weights: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore"):
        log_joint = log_likelihood + np.log(weights)
    joint = np.exp(log_joint - log_joint.max(axis=1, keepdims=True))
    return np.asarray(joint / joint.sum(axis=1, keepdims=True))
