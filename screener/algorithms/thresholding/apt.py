"""APT: the anytime parameter-free thresholding of Locatelli et al. 2016, fixed budget."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from screener.algorithms._test_setups import AROUND_MEANS, BAR, AlgorithmSetup
from screener.algorithms.thresholding._base import NO_CONFIDENCE, ThresholdingAlgorithm
from screener.arrays import FloatArray, IntArray
from screener.errors import ConfigError

__all__ = ["APT"]


class APT(ThresholdingAlgorithm):
    """APT (Locatelli, Gutzeit, Carpentier 2016) with precision ``epsilon``, fixed budget.

    Pull each worker once, then the worker minimising ``sqrt(T_i) (hatDelta_i + epsilon)``,
    ``hatDelta_i = |mean_i - threshold|`` in reward units. Pending pulls: ``T_i`` is answered
    + pending (+ pulls already chosen in the same batch), the mean uses answers only; a worker
    whose first answer is in flight waits for it. Ties go to the lowest worker index.

    Examples
    --------
    On six simulated workers (three workers under the bar of 0.5, three over it):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.2, 0.35, 0.45, 0.65, 0.75, 0.9]
    >>> algorithm = APT(6, threshold=0.5, budget=600, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('budget spent', 600)
    >>> [w.decision.value for w in sorted(result.workers, key=lambda w: w.arm)]
    ['below', 'below', 'below', 'above', 'above', 'above']
    """

    name = "apt"
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup({**BAR, "epsilon": 0.05}, means=AROUND_MEANS),
    )
    guarantee: ClassVar[str | None] = (
        "fixed budget: the probability of misclassifying a worker farther than epsilon from "
        "the threshold decays exponentially in budget / H (Locatelli et al. 2016); " + NO_CONFIDENCE
    )

    def __init__(self, n_workers: int, *, epsilon: float = 0.0, **kwargs: Any) -> None:
        super().__init__(n_workers, **kwargs)
        if not (math.isfinite(epsilon) and epsilon >= 0):
            raise ConfigError(f"epsilon must be a finite number >= 0, got {epsilon}", "try 0.05")
        self.epsilon = float(epsilon)

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        return np.sqrt(effective) * (self.gaps[arms] + self.epsilon)
