"""Anytime-valid confidence sequences for the mean of rewards in [0, 1].

A confidence sequence (CS) at level alpha holds at every time at once:
``P(exists t: mu outside CS_t) <= alpha``, so it may be checked after every answer and a run
may stop whenever it likes. The anytime intervals used so far (``kl_bounds`` at the level
``6 delta / (pi^2 n t^2)``) get there by a union bound over counts, which costs about
``2 log t`` nats of budget; the two constructions here cost far less.

* ``mixture``: a conjugate mixture of sub-Bernoulli likelihood ratios (Howard et al. 2021),
  closed-form and tabulated per level;
* ``betting``: the hedged capital process of Waudby-Smith & Ramdas (2024), kept per arm on a
  grid of candidate means;
* ``clearing``: the counts an interval family of the KL form needs to clear a bar.
"""

from screener.stats.confseq.betting import BettingCS
from screener.stats.confseq.clearing import (
    Divergence,
    clearing_count,
    divergence,
    max_clearing_count,
)
from screener.stats.confseq.mixture import (
    JEFFREYS,
    mixture_bounds,
    mixture_log_inverse,
    mixture_log_inverse_max,
    mixture_radius,
    tabulated_mixture_bounds,
    tabulated_mixture_interval,
)
from screener.stats.special import log_beta, log_gamma

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
