"""UCB-E adapted to thresholding, fixed budget, with the exploration constant of Tao et al.
2019."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from screener.algorithms._test_setups import AROUND_MEANS, BAR, AlgorithmSetup
from screener.algorithms.thresholding._base import NO_CONFIDENCE, ThresholdingAlgorithm
from screener.arrays import FloatArray, IntArray
from screener.errors import ConfigError

__all__ = ["UCBE", "ucbe_exploration"]


def ucbe_exploration(b: float, budget: int, gaps: ArrayLike) -> float:
    """UCBE's exploration constant ``a = 4^b (T - K) / H`` with ``H = sum_i 1 / Delta_i^2``.

    Tao et al. 2019 tune UCBE this way from the true gaps of the instance (b in {-1, 0, 4});
    only a simulation knows them, so ``UCBE`` itself takes ``a``.
    """
    delta = np.asarray(gaps, dtype=np.float64).reshape(-1)
    if delta.size == 0 or not np.all(delta > 0):
        raise ConfigError("UCBE's a needs every gap |mu_i - threshold| to be positive")
    if budget <= delta.size:
        raise ConfigError(f"budget {budget} must exceed the number of workers {delta.size}")
    hardness = float(np.sum(1.0 / (delta * delta)))
    return float(4.0**b * (budget - delta.size) / hardness)


class UCBE(ThresholdingAlgorithm):
    """UCB-E (Audibert, Bubeck, Munos 2010) adapted to thresholding, fixed budget.

    Pull each worker once, then the worker minimising ``hatDelta_i - sqrt(a / T_i)``. The
    paper sets ``a = 4^b (T - K) / H`` from the instance's true gaps (``ucbe_exploration``);
    here ``a`` is given directly. Pending pulls: ``T_i`` is answered + pending (+ pulls
    already chosen in the same batch), the mean uses answers only; a worker whose first
    answer is in flight waits for it. Ties go to the lowest worker index.

    Examples
    --------
    On six simulated workers (three workers under the bar of 0.5, three over it):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.2, 0.35, 0.45, 0.65, 0.75, 0.9]
    >>> algorithm = UCBE(6, threshold=0.5, budget=600, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('budget spent', 600)
    >>> [w.decision.value for w in sorted(result.workers, key=lambda w: w.arm)]
    ['below', 'below', 'below', 'above', 'above', 'above']
    """

    name = "ucbe"
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup({**BAR, "a": 2.0}, means=AROUND_MEANS),
    )
    guarantee: ClassVar[str | None] = (
        f"fixed budget heuristic (best-arm UCB-E adapted to thresholding); {NO_CONFIDENCE}"
    )

    def __init__(self, n_workers: int, *, a: float = 1.0, **kwargs: Any) -> None:
        super().__init__(n_workers, **kwargs)
        if not (math.isfinite(a) and a > 0):
            raise ConfigError(f"a must be a finite number > 0, got {a}", "see ucbe_exploration")
        self.a = float(a)

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        return self.gaps[arms] - np.sqrt(self.a / effective)
