"""The conjugate-mixture confidence sequence for the mean of rewards in [0, 1].

``mixture_bounds``: a conjugate mixture of sub-Bernoulli likelihood ratios (Howard,
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

Each level's intervals, budgets and radii are kept in tables shared by every worker and run
at that level. Every function takes scalars or numpy arrays and never mutates its inputs.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.arrays import FloatArray
from screener.stats.bounds import kl_bounds
from screener.stats.special import cached_log_beta, log_gamma, xlogy
from screener.stats.tables import CountTable, PairTable

__all__ = [
    "JEFFREYS",
    "check_alpha",
    "mixture_bounds",
    "mixture_log_inverse",
    "mixture_log_inverse_max",
    "mixture_radius",
    "tabulated_mixture_bounds",
    "tabulated_mixture_interval",
]

#: The Jeffreys prior Beta(1/2, 1/2): the mixture's default (about the smallest worst-case R).
JEFFREYS = (0.5, 0.5)


def check_alpha(alpha: float) -> None:
    """Refuse a level outside (0, 1)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")


def _mixture_regret(sums: FloatArray, counts: FloatArray, prior: tuple[float, float]) -> FloatArray:
    """``R(S, t) = log max_q q^S (1-q)^(t-S) - log E_prior[q^S (1-q)^(t-S)] >= 0``."""
    a, b = prior
    t = np.maximum(counts, 0.0)
    s = np.clip(sums, 0.0, t)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(t > 0, s / np.where(t > 0, t, 1.0), 0.5)
    best = xlogy(s, p) + xlogy(t - s, 1.0 - p)
    # log B(a + S, b + t - S) with one log_gamma call over the three arguments.
    logs = log_gamma(np.stack(np.broadcast_arrays(a + s, b + t - s, a + b + t)))
    mixed = logs[0] + logs[1] - logs[2] - cached_log_beta(a, b)
    return np.asarray(np.maximum(best - mixed, 0.0), dtype=np.float64)


def mixture_log_inverse(
    sums: ArrayLike, counts: ArrayLike, alpha: float, prior: tuple[float, float] = JEFFREYS
) -> FloatArray:
    """KL budget of the Beta-mixture CS: ``{q : t kl(S/t, q) <= log(1/alpha) + R(S, t)}``.

    ``sums`` are sums of rewards rescaled to [0, 1] (real numbers: graded rewards are fine),
    ``counts`` the numbers of answers. The set is ``{q : M_t(q) <= 1/alpha}`` of the module
    docstring; it contains the true mean at every t at once with probability >= 1 - alpha.
    """
    check_alpha(alpha)
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
    check_alpha(alpha)
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
    check_alpha(alpha)
    found = _bounds_table(alpha, prior).known(float(sum_), float(count))
    return None if found is None else (found[0], found[1])


def tabulated_mixture_bounds(
    sums: FloatArray, counts: FloatArray, alpha: float, prior: tuple[float, float] = JEFFREYS
) -> tuple[FloatArray, FloatArray, NDArray[np.bool_]]:
    """``mixture_bounds`` where the level's table holds them (flat arrays), and where that
    is: the rest is left for the caller (unset)."""
    check_alpha(alpha)
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
    check_alpha(alpha)
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
