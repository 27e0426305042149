"""A crowd prior: the distribution of worker accuracy, fitted from every worker's answers.

Empirical Bayes (Robbins 1956; the grid maximum-likelihood estimate of a mixing distribution,
Kiefer and Wolfowitz 1956, computed by EM as in Laird 1978 and Jiang and Zhang 2009): worker
i's accuracy p_i is drawn from an unknown prior G; given p_i, its answers are Bernoulli(p_i).
G is estimated on a fixed grid of accuracies from the (successes, answers) of all workers; each
worker's posterior is then the grid prior times its own likelihood.

Graded rewards in [0, 1] enter through the same likelihood ``p^s (1 - p)^(n - s)`` with a
fractional ``s`` (a quasi-likelihood: exact for binary answers, a documented approximation for
graded ones).

* ``grid``: the prior on a grid of accuracies and its grid maximum-likelihood fit;
* ``beta``: Beta priors fitted by maximum likelihood, and the region the answers allow;
* ``stopping``: the Bayes-optimal stopping table under a prior.
"""

from screener.stats.prior.beta import (
    MAX_CONCENTRATION,
    PriorSet,
    beta_prior_region,
    fit_beta_prior,
    prior_identified,
)
from screener.stats.prior.grid import (
    DEFAULT_GRID_SIZE,
    DEFAULT_ITERATIONS,
    GridPrior,
    fit_grid_prior,
)
from screener.stats.prior.stopping import (
    StoppingCosts,
    StoppingTable,
    first_actions,
    stopping_table,
)

__all__ = [
    "DEFAULT_GRID_SIZE",
    "DEFAULT_ITERATIONS",
    "MAX_CONCENTRATION",
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
