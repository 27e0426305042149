"""Fixed-budget thresholding baselines from Tao et al. 2019, Section 5: Uniform, APT, UCBE and
Opt-KG. Each one spends its budget, then classifies every worker by its estimate (Opt-KG: by
its posterior); see ``screener.algorithms.thresholding`` for the shared contract, the result
lines and how pending pulls enter the effective count ``T_i = answered_i + pending_i``.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.algorithms.base import IntArray
from screener.algorithms.thresholding import FloatArray, ThresholdingAlgorithm
from screener.errors import ConfigError

__all__ = ["APT", "UCBE", "OptKG", "UniformThresholding", "ucbe_exploration"]

_NO_CONFIDENCE = "no per-worker confidence"


class UniformThresholding(ThresholdingAlgorithm):
    """Uniform baseline: pull the workers in turn until the budget is spent.

    The next pull goes to the worker with the fewest pulls, counting pending ones (ties to the
    lowest index): with answers coming back this is round robin 0, 1, ..., n-1, 0, ...; with
    pulls in flight or released it keeps the counts balanced. The mean is not used, so a
    worker whose answers are in flight is asked again when its turn comes.
    """

    name = "uniform-thresholding"
    needs_answers = False
    guarantee: ClassVar[str | None] = (
        f"fixed budget: equal pulls per worker, each classified by its estimate; {_NO_CONFIDENCE}"
    )

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        return effective.copy()


class APT(ThresholdingAlgorithm):
    """APT (Locatelli, Gutzeit, Carpentier 2016) with precision ``epsilon``, fixed budget.

    Pull each worker once, then the worker minimising ``sqrt(T_i) (hatDelta_i + epsilon)``,
    ``hatDelta_i = |mean_i - threshold|`` in reward units. Pending pulls: ``T_i`` is answered
    + pending (+ pulls already chosen in the same batch), the mean uses answers only; a worker
    whose first answer is in flight waits for it. Ties go to the lowest worker index.
    """

    name = "apt"
    guarantee: ClassVar[str | None] = (
        "fixed budget: the probability of misclassifying a worker farther than epsilon from "
        "the threshold decays exponentially in budget / H (Locatelli et al. 2016); "
        + _NO_CONFIDENCE
    )

    def __init__(self, n_workers: int, *, epsilon: float = 0.0, **kwargs: Any) -> None:
        super().__init__(n_workers, **kwargs)
        if not (math.isfinite(epsilon) and epsilon >= 0):
            raise ConfigError(f"epsilon must be a finite number >= 0, got {epsilon}", "try 0.05")
        self.epsilon = float(epsilon)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "epsilon": self.epsilon}

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        return np.sqrt(effective) * (self.gaps[arms] + self.epsilon)


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
    """

    name = "ucbe"
    guarantee: ClassVar[str | None] = (
        f"fixed budget heuristic (best-arm UCB-E adapted to thresholding); {_NO_CONFIDENCE}"
    )

    def __init__(self, n_workers: int, *, a: float = 1.0, **kwargs: Any) -> None:
        super().__init__(n_workers, **kwargs)
        if not (math.isfinite(a) and a > 0):
            raise ConfigError(f"a must be a finite number > 0, got {a}", "see ucbe_exploration")
        self.a = float(a)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "a": self.a}

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        return self.gaps[arms] - np.sqrt(self.a / effective)


class OptKG(ThresholdingAlgorithm):
    """Optimistic knowledge gradient (Chen, Lin, Zhou 2015) with a Beta(prior_a, prior_b) prior.

    Rewards are rescaled to [0, 1] and the bar to ``x = (threshold - lower) / (upper -
    lower)``, which must lie strictly inside (0, 1). Worker i has the posterior Beta(a_i, b_i)
    with ``a_i = prior_a + S_i`` and ``b_i = prior_b + T_i - S_i`` (S_i the sum of rescaled
    rewards: exact for Bernoulli rewards, pseudo-counts for graded ones). Its value is
    ``h = max(P(mu_i >= x), P(mu_i < x))``; Opt-KG pulls the worker whose value rises most
    under the better of the two outcomes (a success, a + 1, or a failure, b + 1), with no
    initial round (the prior stands in). A worker is classified ABOVE iff its posterior
    P(mu_i >= x) >= 1/2.

    Pending pulls (a constant liar): each pull in flight, or already chosen in the same
    batch, is counted as an answer equal to the posterior mean, ``a_i += p_i a_i / (a_i +
    b_i)`` and ``b_i += p_i b_i / (a_i + b_i)``; this keeps the mean and narrows the posterior,
    so a batch spreads over workers. Ties go to the lowest worker index.
    """

    name = "opt-kg"
    pull_each_first = False
    needs_answers = False
    guarantee: ClassVar[str | None] = (
        "fixed budget: optimistic one-step lookahead on the expected number of correct "
        "classifications under the Beta prior, consistent (Chen, Lin, Zhou 2015); " + _NO_CONFIDENCE
    )

    def __init__(
        self, n_workers: int, *, prior_a: float = 1.0, prior_b: float = 1.0, **kwargs: Any
    ) -> None:
        super().__init__(n_workers, **kwargs)
        for label, value in (("prior_a", prior_a), ("prior_b", prior_b)):
            if not (math.isfinite(value) and value > 0):
                raise ConfigError(f"{label} must be a finite number > 0, got {value}", "try 1")
        self.prior_a = float(prior_a)
        self.prior_b = float(prior_b)
        self.bar = (self.threshold - self.lower) / self.width
        if not 0.0 < self.bar < 1.0:
            raise ConfigError(
                f"Opt-KG needs the threshold strictly inside ({self.lower}, {self.upper}), "
                f"got {self.threshold}"
            )

    def params(self) -> dict[str, Any]:
        return {**super().params(), "prior_a": self.prior_a, "prior_b": self.prior_b}

    def posterior(self) -> tuple[FloatArray, FloatArray]:
        """Beta posterior parameters (a_i, b_i) of every worker from the answers so far."""
        count = self.stats.count.astype(np.float64)
        successes = (self.stats.total - self.lower * count) / self.width
        return self.prior_a + successes, self.prior_b + count - successes

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        a_all, b_all = self.posterior()
        keys = np.empty(arms.size, dtype=np.float64)
        count = self.stats.count
        for j, (arm, eff) in enumerate(zip(arms.tolist(), effective.tolist(), strict=True)):
            a, b = float(a_all[arm]), float(b_all[arm])
            lies = eff - float(count[arm])
            a, b = a + lies * a / (a + b), b + lies * b / (a + b)
            keys[j] = -self._gain(a, b)
        return keys

    def _gain(self, a: float, b: float) -> float:
        """Optimistic KG: the larger rise of max(P(mu >= x), P(mu < x)) after one answer."""
        now = min(_beta_tails(self.bar, a, b))
        success = min(_beta_tails(self.bar, a + 1.0, b))
        failure = min(_beta_tails(self.bar, a, b + 1.0))
        return max(now - success, now - failure)

    def _above(self) -> NDArray[np.bool_]:
        a_all, b_all = self.posterior()
        pairs = zip(a_all.tolist(), b_all.tolist(), strict=True)
        return np.array([_beta_tails(self.bar, a, b)[0] <= 0.5 for a, b in pairs], dtype=bool)


# ------------------------------------------------------------ regularized incomplete beta
_TINY = 1e-300
_EPS = 1e-15
_MAX_ITERATIONS = 100_000


def _beta_tails(x: float, a: float, b: float) -> tuple[float, float]:
    """``(I_x(a, b), 1 - I_x(a, b))``: the Beta(a, b) mass below and above x.

    Numerical Recipes' ``betai``: the continued fraction converges fast for
    ``x < (a + 1) / (a + b + 2)``, otherwise it is applied to ``I_{1-x}(b, a)``. The tail
    evaluated directly is the one that can be tiny, so both are returned to full relative
    precision there (``1 - I`` would round away small differences).
    """
    if not (a > 0 and b > 0):
        raise ValueError(f"Beta parameters must be positive, got a={a}, b={b}")
    if x <= 0.0:
        return 0.0, 1.0
    if x >= 1.0:
        return 1.0, 0.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        below = math.exp(log_front) * _beta_fraction(x, a, b) / a
        return below, 1.0 - below
    above = math.exp(log_front) * _beta_fraction(1.0 - x, b, a) / b
    return 1.0 - above, above


def _regularized_incomplete_beta(x: float, a: float, b: float) -> float:
    """``I_x(a, b)``, the Beta(a, b) distribution function at x."""
    return _beta_tails(x, a, b)[0]


def _beta_fraction(x: float, a: float, b: float) -> float:
    """The continued fraction of ``I_x(a, b)`` by the modified Lentz method (NR ``betacf``)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_ITERATIONS + 1):
        m2 = 2 * m
        for numerator in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            step = d * c
            h *= step
        if abs(step - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge (a={a}, b={b})")
