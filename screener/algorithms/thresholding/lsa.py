"""LSA: the logarithmic-sample algorithm of Tao et al. 2019, fixed budget."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from screener.algorithms._test_setups import AROUND_MEANS, BAR, AlgorithmSetup
from screener.algorithms.thresholding._base import ThresholdingAlgorithm
from screener.arrays import FloatArray, IntArray
from screener.errors import ConfigError

__all__ = ["LSA"]


class LSA(ThresholdingAlgorithm):
    """Logarithmic-Sample Algorithm (Tao et al. 2019, Algorithm 1), fixed budget.

    Pull each worker once, then the worker minimising
    ``alpha * T_i * hatDelta_i^2 + 0.5 * ln T_i`` with ``hatDelta_i = |mean_i - threshold|``
    (``alpha = 1.35`` as in the paper's experiments; Theorem 1 covers ``0 < alpha <= 8``).
    The gap is in reward units: for rewards in [lower, upper] it is not rescaled, so ``alpha``
    is meant for rewards in [0, 1].

    Output (anytime): ``result()`` at any moment classifies worker i ABOVE iff mean_i >=
    threshold, else BELOW. When the budget is spent the run stops with BUDGET_SPENT and those
    classifications are the decisions (never UNDECIDED for a worker with answers): LSA
    minimises the expected number of misclassified workers, it gives no per-worker confidence.

    Pending pulls: ``T_i`` is answered + pending (+ pulls already chosen in the same batch),
    the mean uses answers only; a worker whose first answer is in flight is not asked again
    until it arrives. Ties go to the lowest worker index.

    Examples
    --------
    On six simulated workers (three workers under the bar of 0.5, three over it):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.2, 0.35, 0.45, 0.65, 0.75, 0.9]
    >>> algorithm = LSA(6, threshold=0.5, budget=600, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('budget spent', 600)
    >>> [w.decision.value for w in sorted(result.workers, key=lambda w: w.arm)]
    ['below', 'below', 'below', 'above', 'above', 'above']
    """

    name = "lsa"
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (AlgorithmSetup(BAR, means=AROUND_MEANS),)
    guarantee: ClassVar[str | None] = (
        "fixed budget: minimises the expected number of misclassified workers (aggregate "
        "regret), instance-wise asymptotically optimal (Tao et al. 2019, Theorem 1, for "
        "0 < alpha <= 8 and budget >= max(40 / alpha + 1, 40) * workers); no per-worker "
        "confidence"
    )

    def __init__(self, n_workers: int, *, alpha: float = 1.35, **kwargs: Any) -> None:
        super().__init__(n_workers, **kwargs)
        if not (math.isfinite(alpha) and alpha > 0):
            raise ConfigError(f"alpha must be a finite number > 0, got {alpha}", "try 1.35")
        self.alpha = float(alpha)

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        gaps = self.gaps[arms]
        return self.alpha * effective * gaps * gaps + 0.5 * np.log(effective)
