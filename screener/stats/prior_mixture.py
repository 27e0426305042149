"""A two-component crowd prior: a mixture of two Betas, for crowds a single Beta cannot hold.

Real crowds are often mostly good workers plus a block of spammers; a Beta is unimodal (or
U-shaped) and spreads such a crowd over the gap between the two. The two-component prior is
``share * Beta(low) + (1 - share) * Beta(high)``, the components ordered by mean.

Why two Betas rather than a Beta plus a spammer point mass: the spammers of the real crowds
are not one accuracy (the shared datasets' low blocks spread from 0.07 to 0.55: random
guessing over two to five labels, and workers who always give one label, scoring that label's
share), and a point mass misplaces all but one of them; a second Beta holds a point-like block
(high concentration) and a spread one alike, and the single Beta is its special case (share 0,
or two equal components), so the two fits compare by likelihood.

Fitted by maximum likelihood on the beta-binomial likelihood of every worker's (successes,
answers), which the stopping rule leaves unchanged (the likelihood principle, as
``fit_beta_prior``), by EM (Dempster, Laird and Rubin 1977): the E-step gives each worker the
posterior probability of the low component, the M-step the share and, for each component, the
Beta of largest weighted likelihood among a fixed set (mean logit in [-6, 6] by 0.2,
concentration in [0.5, MAX_CONCENTRATION] in 25 log steps: 1,525 Betas), so each M-step is
exact within the set and the likelihood never falls. EM starts from four splits of the workers
by their share correct (below its 10th, 20th, 35th and 50th percentile: low) and keeps the best.

Chosen over the Beta by BIC (Schwarz 1978): ``2 (loglik_mixture - loglik_beta) > 3 log N``
(three more parameters, N workers with answers). BIC is consistent (it picks the mixture only
when the evidence for it grows with N) and conservative on a few dozen workers, where the
mixture's five parameters are barely identified.

The robust region (``beta_mixture_region``) is the likelihood-ratio region of the five
parameters (within ``chi2_5(level) / 2`` of the best log-likelihood, Wilks), searched on a
lattice around the fit: the share's logit within +-1 of the fit's (offsets 0, +-0.25, +-0.5,
+-1), each component's mean logit and concentration within 4 steps of the set above (offsets
0, +-1, +-2, +-4 steps: 7 x 7 Betas each), 16,807 candidates; the members kept are those the
likelihood does not rule out. A region wider than the lattice is cut at its edge (an inner
approximation, stated), and one between its points is represented by the points inside it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.arrays import FloatArray
from screener.stats.prior.beta import (
    MAX_CONCENTRATION,
    PriorSet,
    beta_weights,
    fit_beta_prior,
    prior_identified,
)
from screener.stats.prior.grid import DEFAULT_GRID_SIZE, GridPrior, distinct_pairs, grid_key
from screener.stats.prior_check import chi2_quantile

__all__ = ["BetaMixture", "beta_mixture_region", "fit_beta_mixture", "log_marginal_likelihood"]


COMPONENT_LOGITS = np.linspace(-6.0, 6.0, 61)
COMPONENT_CONCENTRATIONS = np.geomspace(0.5, MAX_CONCENTRATION, 25)
#: Shares of the low component EM starts from: workers whose share correct is at or below
#: this percentile of the crowd's start in the low component.
START_PERCENTILES = (10.0, 20.0, 35.0, 50.0)
#: Extra parameters of the mixture over the Beta (share, second mean, second concentration).
EXTRA_PARAMETERS = 3
_EM_ITERATIONS = 500
_SHARE_OFFSETS = np.array([-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0])
_COMPONENT_OFFSETS = np.array([-4, -2, -1, 0, 1, 2, 4])


@dataclass(frozen=True)
class BetaMixture:
    """``share * Beta(low) + (1 - share) * Beta(high)`` on a grid (``prior``), as fitted to a
    crowd's answers: each component as (mean, concentration) and its index in the set of
    Betas EM chooses from; the log marginal likelihood of the answers under it and under the
    single Beta of ``fit_beta_prior``, over ``workers`` workers with answers."""

    prior: GridPrior
    share: float
    low: tuple[float, float]
    high: tuple[float, float]
    components: tuple[int, int]
    log_likelihood: float
    beta_log_likelihood: float
    workers: int

    @property
    def bic_gain(self) -> float:
        """BIC of the Beta minus BIC of the mixture: above 0, the mixture fits better."""
        if self.workers < 2 or self.share <= 0.0:
            return -math.inf
        lift = 2.0 * (self.log_likelihood - self.beta_log_likelihood)
        return lift - EXTRA_PARAMETERS * math.log(self.workers)


def log_marginal_likelihood(prior: GridPrior, successes: ArrayLike, counts: ArrayLike) -> float:
    """``sum_i log sum_grid w p^s_i (1 - p)^(n_i - s_i)``: the workers' log marginal likelihood
    under ``prior`` (without the binomial coefficients, the same under every prior)."""
    s = np.asarray(successes, dtype=np.float64).reshape(-1)
    n = np.asarray(counts, dtype=np.float64).reshape(-1)
    pairs, multiplicity = distinct_pairs(s, n)
    likelihood, top = _scaled_likelihood(prior.grid, pairs)
    return float(multiplicity @ (np.log(likelihood @ prior.weights) + top))


def fit_beta_mixture(
    successes: ArrayLike,
    counts: ArrayLike,
    *,
    grid_size: int = DEFAULT_GRID_SIZE,
    start: BetaMixture | None = None,
) -> BetaMixture:
    """The two-Beta mixture of largest marginal likelihood (module docstring); EM from
    ``start`` (a previous fit, e.g. on fewer answers) alone when it is given. Before
    ``prior_identified``, or when no split of the workers separates two groups, the single
    Beta with share 0."""
    s = np.asarray(successes, dtype=np.float64).reshape(-1)
    n = np.asarray(counts, dtype=np.float64).reshape(-1)
    beta = fit_beta_prior(s, n, grid_size=grid_size)
    workers = int((n > 0).sum())
    if not prior_identified(n):
        return BetaMixture(beta, 0.0, (beta.mean(), 2.0), (beta.mean(), 2.0), (0, 0),
                           0.0, 0.0, workers)  # fmt: skip
    pairs, multiplicity = distinct_pairs(s, n)
    likelihood, top = _scaled_likelihood(beta.grid, pairs)
    constant = float(multiplicity @ top)
    beta_fit = float(multiplicity @ np.log(likelihood @ beta.weights)) + constant
    components = _components(grid_key(beta.grid))
    marginal = likelihood @ components  # pairs x Betas of the set
    best: tuple[float, float, int, int] | None = None
    for low_share in _starts(pairs, multiplicity, marginal, start):
        found = _em(marginal, multiplicity, low_share)
        if found is not None and (best is None or found[0] > best[0]):
            best = found
    if best is None:
        return BetaMixture(beta, 0.0, (beta.mean(), 2.0), (beta.mean(), 2.0), (0, 0),
                           beta_fit, beta_fit, workers)  # fmt: skip
    fit, share, low, high = best
    weights = share * components[:, low] + (1.0 - share) * components[:, high]
    return BetaMixture(GridPrior(beta.grid, weights), share, _component(low), _component(high),
                       (low, high), fit + constant, beta_fit, workers)  # fmt: skip


def beta_mixture_region(
    fit: BetaMixture, successes: ArrayLike, counts: ArrayLike, *, level: float = 0.95
) -> PriorSet:
    """The two-Beta mixtures the answers cannot rule out (module docstring), the fit first."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    grid = fit.prior.grid
    s = np.asarray(successes, dtype=np.float64).reshape(-1)
    n = np.asarray(counts, dtype=np.float64).reshape(-1)
    if fit.share <= 0.0 or not prior_identified(n):
        return PriorSet(grid, fit.prior.weights[:, None])
    pairs, multiplicity = distinct_pairs(s, n)
    likelihood, _ = _scaled_likelihood(grid, pairs)
    components = _components(grid_key(grid))
    lows, highs = (_neighbours(index) for index in fit.components)
    logit = math.log(fit.share / (1.0 - fit.share))
    shares = 1.0 / (1.0 + np.exp(-(logit + _SHARE_OFFSETS)))
    low_lik = likelihood @ components[:, lows]  # pairs x lows
    high_lik = likelihood @ components[:, highs]
    mixed = (shares[:, None, None, None] * low_lik[None, :, :, None]
             + (1.0 - shares)[:, None, None, None] * high_lik[None, :, None, :])  # fmt: skip
    fits = np.einsum("j,wjab->wab", multiplicity, np.log(mixed))
    best = max(float(fits.max()), float(multiplicity @ np.log(likelihood @ fit.prior.weights)))
    keep = np.argwhere(fits >= best - chi2_quantile(level, 5) / 2.0)
    w = shares[keep[:, 0]]
    members = w * components[:, lows[keep[:, 1]]] + (1 - w) * components[:, highs[keep[:, 2]]]
    return PriorSet(grid, np.column_stack([fit.prior.weights, members]))


def _scaled_likelihood(grid: FloatArray, pairs: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Each pair's likelihood on the grid divided by its largest value, and the log of that."""
    prior = GridPrior(grid, np.full(grid.size, 1.0 / grid.size))
    log_lik = prior.log_likelihood(pairs[:, 0], pairs[:, 1])
    top = log_lik.max(axis=1)
    return np.exp(log_lik - top[:, None]), top


@functools.lru_cache(maxsize=4)
def _components(grid_bytes: bytes) -> FloatArray:
    """The 61 x 25 Betas a component is chosen from, on the grid (column = mean index x 25 +
    concentration index)."""
    grid = np.frombuffer(grid_bytes, dtype=np.float64)
    mean = 1.0 / (1.0 + np.exp(-COMPONENT_LOGITS))
    a = np.outer(mean, COMPONENT_CONCENTRATIONS).ravel()
    b = np.outer(1.0 - mean, COMPONENT_CONCENTRATIONS).ravel()
    weights = beta_weights(a, b, np.log(grid), np.log1p(-grid))
    weights.flags.writeable = False
    return weights


def _component(index: int) -> tuple[float, float]:
    """(mean, concentration) of the set's Beta number ``index``."""
    logit, concentration = divmod(index, COMPONENT_CONCENTRATIONS.size)
    mean = 1.0 / (1.0 + math.exp(-float(COMPONENT_LOGITS[logit])))
    return mean, float(COMPONENT_CONCENTRATIONS[concentration])


def _neighbours(index: int) -> NDArray[np.int64]:
    """The set's Betas within the region's offsets of Beta ``index`` (distinct, in range)."""
    logit, concentration = divmod(index, COMPONENT_CONCENTRATIONS.size)
    logits = np.clip(logit + _COMPONENT_OFFSETS, 0, COMPONENT_LOGITS.size - 1)
    spreads = np.clip(concentration + _COMPONENT_OFFSETS, 0, COMPONENT_CONCENTRATIONS.size - 1)
    both = np.unique(np.add.outer(logits * COMPONENT_CONCENTRATIONS.size, spreads).ravel())
    return np.asarray(both, dtype=np.int64)


def _starts(
    pairs: FloatArray, multiplicity: FloatArray, marginal: FloatArray, start: BetaMixture | None
) -> list[FloatArray]:
    """Each start's probability of the low component per pair: the responsibilities under a
    previous fit, or else splits by share correct."""
    share = pairs[:, 0] / pairs[:, 1]
    order = np.argsort(share, kind="stable")
    percentile = 100.0 * np.cumsum(multiplicity[order]) / multiplicity.sum()
    if start is not None and start.share > 0.0:
        low_part = start.share * marginal[:, start.components[0]]
        return [low_part / (low_part + (1.0 - start.share) * marginal[:, start.components[1]])]
    starts = []
    for cut in START_PERCENTILES:
        at = min(int(np.searchsorted(percentile, cut)), share.size - 1)
        low = (share <= share[order][at]).astype(np.float64)
        if 0 < low.sum() < low.size:
            starts.append(low)
    return starts


def _em(
    marginal: FloatArray, multiplicity: FloatArray, low_share: FloatArray
) -> tuple[float, float, int, int] | None:
    """EM from the given probabilities of the low component: (log-likelihood without the
    pairs' scale, share, low Beta, high Beta), or None when a component empties."""
    log_marginal = np.log(marginal)
    responsibility = low_share
    previous = -math.inf
    fit, share, low, high = previous, 0.0, 0, 0
    for _ in range(_EM_ITERATIONS):
        share = float(multiplicity @ responsibility / multiplicity.sum())
        if not 0.0 < share < 1.0:
            return None
        low = int(np.argmax((multiplicity * responsibility) @ log_marginal))
        high = int(np.argmax((multiplicity * (1.0 - responsibility)) @ log_marginal))
        mixed = share * marginal[:, low] + (1.0 - share) * marginal[:, high]
        fit = float(multiplicity @ np.log(mixed))
        responsibility = share * marginal[:, low] / mixed
        if fit - previous <= 1e-10:
            break
        previous = fit
    if (
        COMPONENT_LOGITS[low // COMPONENT_CONCENTRATIONS.size]
        > COMPONENT_LOGITS[high // COMPONENT_CONCENTRATIONS.size]
    ):
        share, low, high = 1.0 - share, high, low
    return fit, share, low, high
