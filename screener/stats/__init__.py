"""Small, incremental, checked statistics: running per-arm sums and confidence radii."""

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
from screener.stats.eprocess import BET_FRACTIONS, BettingEProcess, e_bh
from screener.stats.running import ArmStats

__all__ = [
    "BET_FRACTIONS",
    "ArmStats",
    "BettingEProcess",
    "QuantileRule",
    "agresti_coull_radius",
    "bernoulli_kl",
    "delta_method_threshold_radius",
    "e_bh",
    "hoeffding_radius",
    "kl_bounds",
    "ksigma_bounded_threshold_radius",
    "ksigma_lk",
    "normal_quantile",
    "round_level",
]
