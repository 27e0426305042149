"""Does the crowd prior fit the crowd? A posterior predictive check of the answers.

A screening run stops asking a worker once it is decided, so a worker's answer count depends
on its answers (optional stopping), and the histogram of (successes, answers) per worker has
no simple distribution under the prior. What keeps one whatever the stopping rule is each
answer against its posterior predictive: under a crowd prior G, the worker's next answer is
right with probability ``pi = E_G[p | the worker's answers before it]``, so ``x - pi`` has mean
zero given everything before it, for any rule that decides from past answers alone (a
martingale difference; the prequential principle of Dawid 1984, the calibration test of
Seillier-Moiseiwitsch and Dawid 1993).

The check groups the answers by their predictive probability (``bins`` groups of about equal
numbers of answers) and compares, in each group, the answers that were right (O) with their
predictive expectation (E): ``T = sum (O - E)^2 / V`` with ``V = sum pi (1 - pi)``. Under the
prior each term is about a squared standard normal and the groups are uncorrelated, so T is
about chi-square with as many degrees of freedom as non-empty groups. G is fitted from the same
answers (its two Beta parameters absorb part of any discrepancy), so that reference is
conservative (Chernoff and Lehmann 1954): a check at level alpha raises a false alarm at most
about alpha of the time on crowds the prior fits. A two-component crowd (mostly good workers
plus a block of spammers) makes the Beta's predictions wrong for workers with a poor record:
the posterior mean is linear in a worker's successes under a Beta, S-shaped under a mixture.

Only what the check needs is kept: per (successes before, answers before) state of a worker,
how many answers were given from it and how many of them were right (``AnswerLattice``), not
the answers themselves. Graded rewards enter with fractional successes, the state rounded to
the nearest lattice point, and ``pi (1 - pi)`` bounds their variance (conservative again).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from screener.arrays import FloatArray
from screener.stats.prior import GridPrior

__all__ = ["AnswerLattice", "PriorCheck", "chi2_quantile", "chi2_sf", "predictive_check"]


#: Groups of answers the check compares (by predictive probability; an even number keeps the
#: chi-square tail in closed form).
DEFAULT_BINS = 10


@dataclass
class AnswerLattice:
    """Answers given from each state of a worker: ``answered[s, t]`` answers came from workers
    with ``s`` successes in ``t`` answers before them, ``correct[s, t]`` of them were right
    (their rewards summed, for graded answers). An accumulator: ``add`` grows it in place."""

    answered: FloatArray
    correct: FloatArray

    @classmethod
    def empty(cls, horizon: int) -> AnswerLattice:
        """Room for workers with up to ``horizon`` answers before an answer."""
        shape = (horizon + 1, horizon + 1)
        return cls(np.zeros(shape), np.zeros(shape))

    @property
    def answers(self) -> int:
        return int(self.answered.sum())

    def add(
        self, successes_before: ArrayLike, counts_before: ArrayLike, rewards: ArrayLike
    ) -> None:
        """Count answers (rewards scaled to [0, 1]) given from these states."""
        horizon = self.answered.shape[0] - 1
        t = np.minimum(np.asarray(counts_before, dtype=np.int64), horizon)
        s = np.clip(np.rint(np.asarray(successes_before, dtype=np.float64)).astype(np.int64), 0, t)
        np.add.at(self.answered, (s, t), 1.0)
        np.add.at(self.correct, (s, t), np.asarray(rewards, dtype=np.float64))


@dataclass(frozen=True)
class PriorCheck:
    """One check of a prior against the answers: the statistic, its degrees of freedom (the
    non-empty groups), its p-value and the answers it covered."""

    statistic: float
    bins: int
    p_value: float
    answers: int


def predictive_check(
    prior: GridPrior, lattice: AnswerLattice, *, bins: int = DEFAULT_BINS
) -> PriorCheck:
    """The calibration of ``prior``'s posterior predictive probabilities against the answers
    of ``lattice`` (module docstring). No answers: statistic 0, p-value 1."""
    s, t = np.nonzero(lattice.answered)
    if s.size == 0:
        return PriorCheck(0.0, 0, 1.0, 0)
    predicted = prior.posterior(s, t) @ prior.grid
    answered, correct = lattice.answered[s, t], lattice.correct[s, t]
    order = np.argsort(predicted, kind="stable")
    middle = (np.cumsum(answered[order]) - answered[order] / 2.0) / answered.sum()
    group = np.minimum((middle * bins).astype(np.int64), bins - 1)  # by each state's middle
    observed = np.bincount(group, correct[order], bins)
    expected = np.bincount(group, (answered * predicted)[order], bins)
    variance = np.bincount(group, (answered * predicted * (1.0 - predicted))[order], bins)
    used = variance > 0
    statistic = float(((observed[used] - expected[used]) ** 2 / variance[used]).sum())
    df = int(used.sum())
    return PriorCheck(statistic, df, chi2_sf(statistic, df), lattice.answers)


def chi2_sf(x: float, df: int) -> float:
    """P(chi-square with ``df`` degrees of freedom > x), in closed form for integer df (the
    regularised upper incomplete gamma at half-integers); 1 for df = 0."""
    if df <= 0 or x <= 0:
        return 1.0
    half = x / 2.0
    if df % 2 == 0:  # exp(-x/2) sum_{i < df/2} (x/2)^i / i!
        term = total = 1.0
        for i in range(1, df // 2):
            term *= half / i
            total += term
        return min(1.0, math.exp(-half) * total)
    # erfc(sqrt(x/2)) + exp(-x/2) sum_{i=1}^{(df-1)/2} x^(i-1/2) / (Gamma(i + 1/2))
    total = math.erfc(math.sqrt(half))
    term = math.sqrt(half) / math.gamma(1.5)  # (x/2)^(1/2) / Gamma(3/2)
    for i in range(1, (df - 1) // 2 + 1):
        total += math.exp(-half) * term
        term *= half / (i + 0.5)
    return min(1.0, total)


def chi2_quantile(level: float, df: int) -> float:
    """The ``level`` quantile of chi-square with ``df`` degrees of freedom (bisection on
    ``chi2_sf``, to 1e-10)."""
    if not 0.0 < level < 1.0 or df < 1:
        raise ValueError(f"need 0 < level < 1 and df >= 1, got {level}, {df}")
    low, high = 0.0, 1.0
    while chi2_sf(high, df) > 1.0 - level:
        high *= 2.0
    while high - low > 1e-10 * max(1.0, high):
        middle = (low + high) / 2.0
        if chi2_sf(middle, df) > 1.0 - level:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0
