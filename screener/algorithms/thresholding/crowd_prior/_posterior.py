"""What the result shows of each worker's posterior on the crowd prior's grid, from one pass
over it: the probability of lying below the bar, the mean and the central interval.

The posterior is a (workers x grid) matrix, 80 MB at 100,000 workers; computed whole for each
of the three, with its temporaries, it took the result from 60 to 360 MB. Here it is computed
once, ``CHUNK_ROWS`` rows at a time (each row is its worker's alone, so the floats are the
same), and the two sums taken over all of it are taken over the whole matrix, as before:
BLAS's matrix-vector product and numpy's row sums add in an order set by the shape and the
memory they are given, so a chunk's last bits could differ from the whole's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from screener.arrays import FloatArray
from screener.stats.prior import GridPrior

__all__ = ["CHUNK_ROWS", "PosteriorSummary", "summarise_posterior"]

#: Rows of the posterior computed at a time: their temporaries stay a few MB.
CHUNK_ROWS = 8192


@dataclass(frozen=True)
class PosteriorSummary:
    """Per worker, on [0, 1]: ``prob_below`` the bar (``GridPrior.prob_below``), the
    posterior ``mean``, and the grid points ``low`` and ``high`` that end its central
    interval of probability 1 - 2q."""

    prob_below: FloatArray
    mean: FloatArray
    low: FloatArray
    high: FloatArray


def summarise_posterior(
    prior: GridPrior, successes: FloatArray, counts: NDArray[np.int64], *, bar: float, q: float
) -> PosteriorSummary:
    """The summary of every worker's posterior under ``prior`` (``successes`` on [0, 1])."""
    posterior = np.empty((successes.size, prior.grid.size))
    for rows in _chunks(successes.size):
        posterior[rows] = prior.posterior(successes[rows], counts[rows])
    mean = np.asarray(posterior @ prior.grid)
    prob_below = np.asarray(posterior[:, prior.grid < bar].sum(axis=1))
    low, high = np.empty(successes.size), np.empty(successes.size)
    last = prior.grid.size - 1
    for rows in _chunks(successes.size):
        cumulative = np.cumsum(posterior[rows], axis=1)  # row by row: the same floats
        low[rows] = prior.grid[np.minimum((cumulative < q).sum(axis=1), last)]
        high[rows] = prior.grid[np.minimum((cumulative < 1.0 - q).sum(axis=1), last)]
    return PosteriorSummary(prob_below, mean, low, high)


def _chunks(size: int) -> list[slice]:
    return [slice(start, start + CHUNK_ROWS) for start in range(0, size, CHUNK_ROWS)]
