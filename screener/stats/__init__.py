"""Small, incremental, checked statistics: running per-arm sums, confidence radii and
anytime-valid confidence sequences."""

from screener.stats.bounds import (
    QuantileRule,
    agresti_coull_radius,
    bernoulli_kl,
    delta_method_threshold_radius,
    hoeffding_radius,
    kl_bounds,
    ksigma_bounded_threshold_radius,
    ksigma_lk,
    normal_quantile,
    round_level,
)
from screener.stats.confseq import (
    JEFFREYS,
    BettingCS,
    Divergence,
    clearing_count,
    divergence,
    log_beta,
    log_gamma,
    max_clearing_count,
    mixture_bounds,
    mixture_log_inverse,
    mixture_log_inverse_max,
)
from screener.stats.eprocess import BET_FRACTIONS, BettingEProcess, e_bh
from screener.stats.running import ArmRuns, ArmStats

__all__ = [
    "BET_FRACTIONS",
    "JEFFREYS",
    "ArmRuns",
    "ArmStats",
    "BettingCS",
    "BettingEProcess",
    "Divergence",
    "QuantileRule",
    "agresti_coull_radius",
    "bernoulli_kl",
    "clearing_count",
    "delta_method_threshold_radius",
    "divergence",
    "e_bh",
    "hoeffding_radius",
    "kl_bounds",
    "ksigma_bounded_threshold_radius",
    "ksigma_lk",
    "log_beta",
    "log_gamma",
    "max_clearing_count",
    "mixture_bounds",
    "mixture_log_inverse",
    "mixture_log_inverse_max",
    "normal_quantile",
    "round_level",
]
