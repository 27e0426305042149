"""Confidence radii and intervals as pure functions.

* ``radii``: Hoeffding and Agresti-Coull radii, and the normal quantile;
* ``kl``: the Chernoff-Hoeffding (KL) interval;
* ``ksigma``: the radius of the k-sigma threshold at a level;
* ``theta_box``: where the k-sigma threshold lies when every worker's interval holds.
"""

from screener.stats.bounds.kl import bernoulli_kl, kl_bounds
from screener.stats.bounds.ksigma import (
    delta_method_threshold_radius,
    ksigma_bounded_threshold_radius,
    ksigma_lk,
)
from screener.stats.bounds.radii import (
    QuantileRule,
    agresti_coull_radius,
    hoeffding_radius,
    normal_quantile,
    scaled_agresti_coull_radius,
)
from screener.stats.bounds.theta_box import (
    ksigma_threshold_bounds,
    ksigma_threshold_enclosure,
    ksigma_threshold_end,
    threshold_end_bracket,
)

__all__ = [
    "QuantileRule",
    "agresti_coull_radius",
    "bernoulli_kl",
    "delta_method_threshold_radius",
    "hoeffding_radius",
    "kl_bounds",
    "ksigma_bounded_threshold_radius",
    "ksigma_lk",
    "ksigma_threshold_bounds",
    "ksigma_threshold_enclosure",
    "ksigma_threshold_end",
    "normal_quantile",
    "scaled_agresti_coull_radius",
    "threshold_end_bracket",
]
