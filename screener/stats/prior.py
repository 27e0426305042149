"""A crowd prior: the distribution of worker accuracy, fitted from every worker's answers.

Empirical Bayes (Robbins 1956; the grid maximum-likelihood estimate of a mixing distribution,
Kiefer and Wolfowitz 1956, computed by EM as in Laird 1978 and Jiang and Zhang 2009): worker
i's accuracy p_i is drawn from an unknown prior G; given p_i, its answers are Bernoulli(p_i).
G is estimated on a fixed grid of accuracies from the (successes, answers) of all workers; each
worker's posterior is then the grid prior times its own likelihood.

Graded rewards in [0, 1] enter through the same likelihood ``p^s (1 - p)^(n - s)`` with a
fractional ``s`` (a quasi-likelihood: exact for binary answers, a documented approximation for
graded ones).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.arrays import FloatArray, IntArray

__all__ = [
    "GridPrior",
    "PriorSet",
    "StoppingCosts",
    "StoppingTable",
    "beta_prior_region",
    "first_actions",
    "fit_beta_prior",
    "fit_grid_prior",
    "prior_identified",
    "stopping_table",
]


#: Grid of candidate accuracies: cell midpoints, so no point sits on 0 or 1.
DEFAULT_GRID_SIZE = 100
#: EM iterations from the uniform start. The grid MLE itself is a few spikes; stopping EM early
#: keeps the prior smooth, which keeps posteriors of workers between the spikes honest.
DEFAULT_ITERATIONS = 60
#: Upper limit of a fitted Beta's a + b: at most as sure of the crowd as 100 answers would make it.
MAX_CONCENTRATION = 100.0


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
        return _log_likelihood(self.grid, successes, counts)

    def posterior(self, successes: ArrayLike, counts: ArrayLike) -> FloatArray:
        """Posterior weights on the grid, one row per worker."""
        return _normalise_rows(self.log_likelihood(successes, counts), self.weights)

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
    pairs, multiplicity = _distinct_pairs(s, n)
    log_lik = prior.log_likelihood(pairs[:, 0], pairs[:, 1])
    likelihood = np.exp(log_lik - log_lik.max(axis=1, keepdims=True))
    share = multiplicity / multiplicity.sum()
    weights = prior.weights.copy()
    for _ in range(iterations):
        joint = likelihood * weights
        joint /= joint.sum(axis=1, keepdims=True)
        weights = share @ joint
    return GridPrior(prior.grid, weights)


def prior_identified(counts: ArrayLike) -> bool:
    """Whether answers with these counts identify a crowd prior: at least two workers with two
    answers each (one answer per worker says nothing of the spread between workers). Before
    that ``fit_beta_prior`` and ``beta_prior_region`` give the uniform prior."""
    return int((np.asarray(counts) >= 2).sum()) >= 2


def fit_beta_prior(
    successes: ArrayLike,
    counts: ArrayLike,
    *,
    grid_size: int = DEFAULT_GRID_SIZE,
) -> GridPrior:
    """The Beta prior of largest marginal likelihood (the beta-binomial fit; Skellam 1948,
    Griffiths 1973), on the grid.

    Maximum likelihood, not moments: a screening run stops asking a worker once it is decided,
    so a worker's share correct is a biased estimate of its accuracy (optional stopping), while
    the likelihood does not depend on the stopping rule (the likelihood principle). Searched on
    (mean, log concentration) by three rounds of a 9 x 9 grid, each round zooming in on the
    best point of the last; concentration a + b in [0.5, MAX_CONCENTRATION]. Two parameters
    are what a crowd with a few answers per worker identifies; the grid maximum-likelihood
    prior (``fit_grid_prior``) overfits such data. Uniform until ``prior_identified``.
    """
    uniform = GridPrior.uniform(grid_size)
    s = np.asarray(successes, dtype=np.float64).reshape(-1)
    n = np.asarray(counts, dtype=np.float64).reshape(-1)
    if not prior_identified(n):
        return uniform
    pairs, multiplicity = _distinct_pairs(s, n)
    log_lik = uniform.log_likelihood(pairs[:, 0], pairs[:, 1])
    likelihood = np.exp(log_lik - log_lik.max(axis=1, keepdims=True))
    grid = uniform.grid
    log_p, log_q = np.log(grid), np.log1p(-grid)
    low = np.array([-6.0, math.log(0.5)])
    high = np.array([6.0, math.log(MAX_CONCENTRATION)])
    best = (low + high) / 2.0
    for _ in range(3):
        logits, log_c = (np.linspace(lo, hi, 9) for lo, hi in zip(low, high, strict=True))
        mean = 1.0 / (1.0 + np.exp(-logits))
        a = (mean[:, None] * np.exp(log_c)[None, :]).reshape(-1)
        b = ((1.0 - mean)[:, None] * np.exp(log_c)[None, :]).reshape(-1)
        weights = _beta_weights(a, b, log_p, log_q)  # grid x candidates
        fit = multiplicity @ np.log(likelihood @ weights)
        pick = int(np.argmax(fit))
        best = np.array([logits[pick // 9], log_c[pick % 9]])
        step = (high - low) / 8.0
        low, high = best - step, best + step
    mean_best = 1.0 / (1.0 + math.exp(-best[0]))
    concentration = math.exp(best[1])
    weights = _beta_weights(
        np.array([mean_best * concentration]), np.array([(1 - mean_best) * concentration]),
        log_p, log_q,
    )  # fmt: skip
    return GridPrior(grid, weights[:, 0])


@dataclass(frozen=True)
class PriorSet:
    """Several priors on one grid (``weights``: grid points x priors), for decisions that must
    hold under each of them (robust Bayes, Berger 1985 section 4.7)."""

    grid: FloatArray
    weights: FloatArray

    def contaminated(self, share: float) -> PriorSet:
        """Each prior mixed with the uniform, as ``GridPrior.contaminated``."""
        return PriorSet(self.grid, (1.0 - share) * self.weights + share / self.grid.size)

    def prob_below_range(
        self, successes: ArrayLike, counts: ArrayLike, bar: float
    ) -> tuple[FloatArray, FloatArray]:
        """Each worker's smallest and largest posterior probability of lying below ``bar``
        over the priors of the set."""
        log_lik = GridPrior(self.grid, self.weights[:, 0]).log_likelihood(successes, counts)
        likelihood = np.exp(log_lik - log_lik.max(axis=1, keepdims=True))
        below = self.grid < bar
        share = (likelihood[:, below] @ self.weights[below]) / (likelihood @ self.weights)
        return np.asarray(share.min(axis=1)), np.asarray(share.max(axis=1))


def beta_prior_region(
    successes: ArrayLike,
    counts: ArrayLike,
    *,
    level: float = 0.95,
    grid_size: int = DEFAULT_GRID_SIZE,
) -> PriorSet:
    """The Beta priors the answers cannot rule out: every (mean, concentration) of a
    41 x 21 grid (mean logit in [-6, 6], concentration in [0.5, MAX_CONCENTRATION], log scale)
    whose beta-binomial log marginal likelihood is within ``chi2_2(level) / 2`` of the
    maximum (the likelihood-ratio confidence region for the two hyperparameters, Wilks'
    approximation), plus the maximum-likelihood Beta of ``fit_beta_prior``.

    Few answers per worker identify the crowd's dispersion poorly; a decision that holds under
    every prior of the region does not rest on the fitted tail alone. Only the uniform prior
    while no two workers have two answers (as ``fit_beta_prior``)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    fitted = fit_beta_prior(successes, counts, grid_size=grid_size)
    s = np.asarray(successes, dtype=np.float64).reshape(-1)
    n = np.asarray(counts, dtype=np.float64).reshape(-1)
    if not prior_identified(n):
        return PriorSet(fitted.grid, fitted.weights[:, None])
    pairs, multiplicity = _distinct_pairs(s, n)
    log_lik = fitted.log_likelihood(pairs[:, 0], pairs[:, 1])
    likelihood = np.exp(log_lik - log_lik.max(axis=1, keepdims=True))
    grid = fitted.grid
    candidates = np.column_stack([fitted.weights, _region_candidates(_grid_key(grid))])
    fit = multiplicity @ np.log(likelihood @ candidates)
    allowed = -math.log1p(-level)  # chi2_2(level) / 2: the chi2_2 quantile is -2 log(1 - level)
    keep = fit >= fit.max() - allowed
    keep[0] = True
    return PriorSet(grid, candidates[:, keep])


def _grid_key(grid: ArrayLike) -> bytes:
    """A grid as the key of the caches below (its float64 bytes)."""
    return np.asarray(grid, dtype=np.float64).tobytes()


@functools.lru_cache(maxsize=4)
def _region_candidates(grid_bytes: bytes) -> FloatArray:
    """The 41 x 21 Betas ``beta_prior_region`` tries, on the grid: the same at every refit."""
    grid = np.frombuffer(grid_bytes, dtype=np.float64)
    mean = 1.0 / (1.0 + np.exp(-np.linspace(-6.0, 6.0, 41)))
    concentration = np.exp(np.linspace(math.log(0.5), math.log(MAX_CONCENTRATION), 21))
    a = np.outer(mean, concentration).ravel()
    b = np.outer(1.0 - mean, concentration).ravel()
    weights = _beta_weights(a, b, np.log(grid), np.log1p(-grid))
    weights.flags.writeable = False
    return weights


def _distinct_pairs(successes: FloatArray, counts: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The distinct (successes, count) pairs of workers with answers, and how many workers
    share each: workers with the same counts have the same likelihood, and early in a run
    (everyone at 3 answers) there are only a handful of distinct pairs."""
    seen = counts > 0
    table = np.stack([successes[seen], counts[seen]], axis=1)
    pairs, multiplicity = np.unique(table, axis=0, return_counts=True)
    return pairs, multiplicity.astype(np.float64)


def _beta_weights(a: FloatArray, b: FloatArray, log_p: FloatArray, log_q: FloatArray) -> FloatArray:
    """Beta(a_j, b_j) densities on the grid, normalised per column."""
    log_density = np.outer(log_p, a - 1.0) + np.outer(log_q, b - 1.0)
    weights = np.exp(log_density - log_density.max(axis=0, keepdims=True))
    return np.asarray(weights / weights.sum(axis=0, keepdims=True))


@dataclass(frozen=True)
class StoppingCosts:
    """What a requester pays: one gold question, one good worker banned, one bad worker kept."""

    question: float
    false_ban: float
    missed_bad: float


@dataclass(frozen=True)
class StoppingTable:
    """The Bayes-optimal action at every (correct, wrong) answer count up to the horizon.

    ``action[s, f]``: CONTINUE (ask another question), BAN or ACCEPT; ``cost[s, f]``: the
    expected cost still to come from that state under the prior (questions plus mistakes).
    """

    action: NDArray[np.int8]
    cost: FloatArray
    horizon: int

    CONTINUE = 0
    BAN = 1
    ACCEPT = 2

    def lookup(
        self, successes: ArrayLike, counts: ArrayLike
    ) -> tuple[NDArray[np.int8], FloatArray]:
        """Action and expected cost to come for workers at these counts (fractional
        successes of graded answers are rounded to the nearest lattice point)."""
        n = np.minimum(np.asarray(counts, dtype=np.int64), self.horizon)
        s = np.clip(np.rint(np.asarray(successes, dtype=np.float64)).astype(np.int64), 0, n)
        return self.action[s, n - s], self.cost[s, n - s]


def stopping_table(
    prior: GridPrior,
    bar: float,
    costs: StoppingCosts,
    *,
    horizon: int,
    min_answers: int = 1,
    ban_from: float = 0.0,
) -> StoppingTable:
    """Backward induction over the answer lattice (Wald and Wolfowitz 1948; DeGroot 1970,
    Ch. 12): at (s correct, f wrong), stopping costs ``P(good | s, f) * false_ban`` (ban) or
    ``P(bad | s, f) * missed_bad`` (accept); asking costs ``question`` plus the expected cost
    of the state the next answer leads to, whose probability of being correct is the posterior
    mean. At ``horizon`` answers the worker must be decided; before ``min_answers`` it must not.
    ``ban_from``: a ban is open only where ``P(bad | s, f) >= ban_from`` (a posterior-mode
    promise; elsewhere stopping keeps the worker), 0 for no such limit.
    """
    successes, counts, log_lik = _lattice(_grid_key(prior.grid), horizon)
    posterior = _normalise_rows(log_lik, prior.weights)
    p_bad = posterior[:, prior.grid < bar].sum(axis=1)[:, None]
    p_correct = (posterior @ prior.grid)[:, None]
    action, cost = _backward_induction(p_bad, p_correct, costs, horizon, min_answers, ban_from)
    table_action = np.zeros((horizon + 1, horizon + 1), dtype=np.int8)
    table_cost = np.full((horizon + 1, horizon + 1), np.inf)
    table_action[successes, counts - successes] = action[:, 0]
    table_cost[successes, counts - successes] = cost[:, 0]
    return StoppingTable(table_action, table_cost, horizon)


def first_actions(
    priors: PriorSet, bar: float, costs: StoppingCosts, *, horizon: int
) -> NDArray[np.int8]:
    """The Bayes-optimal action before any answer (``stopping_table(...).action[0, 0]`` with
    no minimum) under each prior of ``priors``, in one backward induction for them all."""
    _, _, log_lik = _lattice(_grid_key(priors.grid), horizon)
    likelihood = np.exp(log_lik - log_lik.max(axis=1, keepdims=True))
    total = likelihood @ priors.weights
    below = priors.grid < bar
    p_bad = (likelihood[:, below] @ priors.weights[below]) / total
    p_correct = ((likelihood * priors.grid) @ priors.weights) / total
    action, _ = _backward_induction(p_bad, p_correct, costs, horizon, 0)
    return np.asarray(action[0])


@functools.lru_cache(maxsize=8)
def _lattice(grid_bytes: bytes, horizon: int) -> tuple[IntArray, IntArray, FloatArray]:
    """The answer lattice in diagonal order (count n = 0..horizon, then successes s = 0..n):
    each point's s, n and log-likelihood on the grid (given as its bytes: the same grid and
    horizon at every refit of a run, so kept, read-only)."""
    grid = np.frombuffer(grid_bytes, dtype=np.float64)
    counts = np.repeat(np.arange(horizon + 1), np.arange(1, horizon + 2))
    successes = np.arange(counts.size) - counts * (counts + 1) // 2
    log_lik = _log_likelihood(grid, successes, counts)
    for array in (counts, successes, log_lik):
        array.flags.writeable = False
    return successes, counts, log_lik


def _backward_induction(
    p_bad: FloatArray,
    p_correct: FloatArray,
    costs: StoppingCosts,
    horizon: int,
    min_answers: int,
    ban_from: float = 0.0,
) -> tuple[NDArray[np.int8], FloatArray]:
    """Actions and costs to come at every lattice point (rows in ``_lattice``'s diagonal
    order), for each prior of the last axis of the posteriors ``p_bad`` and ``p_correct``.
    From (s, n), a correct answer leads to point s + 1 of diagonal n + 1 and a wrong one to
    point s: slices of the next diagonal."""
    ban = np.where(p_bad >= ban_from, (1.0 - p_bad) * costs.false_ban, np.inf)
    accept = p_bad * costs.missed_bad
    stop_cost = np.minimum(ban, accept)
    stop_action = np.where(ban <= accept, StoppingTable.BAN, StoppingTable.ACCEPT).astype(np.int8)
    cost = stop_cost.copy()  # at the horizon the worker must be decided
    action = stop_action.copy()
    for n in range(horizon - 1, -1, -1):
        here = slice(n * (n + 1) // 2, (n + 1) * (n + 2) // 2)
        after = (n + 1) * (n + 2) // 2  # where diagonal n + 1 starts
        right = p_correct[here]
        go_on = (
            costs.question
            + right * cost[after + 1 : after + n + 2]
            + (1.0 - right) * cost[after : after + n + 1]
        )
        keep_asking = (n < min_answers) | (go_on < stop_cost[here])
        cost[here] = np.where(keep_asking, go_on, stop_cost[here])
        action[here] = np.where(keep_asking, StoppingTable.CONTINUE, stop_action[here])
    return action, cost


def _log_likelihood(grid: FloatArray, successes: ArrayLike, counts: ArrayLike) -> FloatArray:
    s = np.asarray(successes, dtype=np.float64).reshape(-1, 1)
    n = np.asarray(counts, dtype=np.float64).reshape(-1, 1)
    return np.asarray(s * np.log(grid) + (n - s) * np.log1p(-grid))


def _normalise_rows(log_likelihood: FloatArray, weights: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore"):
        log_joint = log_likelihood + np.log(weights)
    joint = np.exp(log_joint - log_joint.max(axis=1, keepdims=True))
    return np.asarray(joint / joint.sum(axis=1, keepdims=True))
