"""Thresholding: classify every worker as ABOVE or BELOW a known bar ``threshold``.

Arm i is ABOVE when its mean reward is at least the threshold, BELOW otherwise. Two settings:

* fixed budget (``LSA`` of Tao, Blanco, Peng, Zhou, NeurIPS 2019, and the baselines in
  ``thresholding_baselines``): spend exactly ``budget`` pulls, then classify every worker by
  its estimate. These minimise the expected number of misclassified workers (the aggregate
  regret); no single worker's decision carries a confidence level, and the intervals in the
  result are informational only.
* fixed confidence (``ConfidentThresholding``): pull until every worker's anytime confidence
  interval lies on one side of the bar; every decided worker is right with probability at least
  1 - delta (jointly).

Index policies share one pending-aware scheduler (``ThresholdingAlgorithm._schedule``): each
arm has a priority computed from its answered mean and its *effective* count
``T_i = answered_i + pending_i`` (pulls in flight count as pulls already made, their answers
not yet in the mean). A batch is chosen one pull at a time from a heap: the chosen arm's
effective count goes up by one and only its priority is recomputed, so ``ask(k)`` hands out
exactly what k calls of ``ask(1)`` with no tell between would, in O(n + k log n).
"""

from __future__ import annotations

import abc
import heapq
import math
from dataclasses import replace
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._checks import check_budget_given, check_choice, check_delta
from screener.algorithms.base import Algorithm, IntArray
from screener.algorithms.result import Decision, Result, Threshold, WorkerResult
from screener.errors import ConfigError
from screener.stats import bernoulli_kl, hoeffding_radius, kl_bounds

__all__ = ["LSA", "ConfidentThresholding", "ThresholdingAlgorithm"]

FloatArray = NDArray[np.float64]
#: Per-side miss level of the informational interval shown by fixed-budget algorithms.
INFO_LEVEL = 0.025


class ThresholdingAlgorithm(Algorithm):
    """Base of the thresholding algorithms: bar, estimates, pending-aware index scheduling.

    Subclasses supply ``_index(arms, effective)``: a priority per arm, lowest pulled first,
    from the arm's answered mean and its effective count (answered + pending, plus the pulls
    already chosen in the current batch). ``+inf`` (or NaN) means "do not pull now".

    Two switches describe the index: ``pull_each_first`` gives arms never asked (effective
    count 0) top priority, in worker order (the initialisation of LSA, APT, UCBE, Uniform);
    ``needs_answers`` holds back an arm whose first answer is still in flight (its mean is
    unknown, so its index is undefined) until that answer arrives.
    """

    min_workers: ClassVar[int] = 1
    #: True when the run length is the budget (then a budget is required).
    fixed_budget: ClassVar[bool] = True
    pull_each_first: ClassVar[bool] = True
    needs_answers: ClassVar[bool] = True

    def __init__(
        self,
        n_workers: int,
        *,
        threshold: float,
        lower: float = 0.0,
        upper: float = 1.0,
        budget: int | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(n_workers, lower=lower, upper=upper, budget=budget, seed=seed)
        if not (math.isfinite(threshold) and self.lower <= threshold <= self.upper):
            raise ConfigError(
                f"threshold must lie in the reward range [{self.lower}, {self.upper}], "
                f"got {threshold}",
                "give the bar in reward units, e.g. threshold=0.7 for 70% correct",
            )
        if self.fixed_budget:
            check_budget_given(self.name, budget, "is a fixed-budget algorithm and")
        self.threshold = float(threshold)
        self.width = self.upper - self.lower
        self.means: FloatArray = np.full(self.n_arms, np.nan)
        self.gaps: FloatArray = np.full(self.n_arms, np.nan)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "threshold": self.threshold}

    # ------------------------------------------------------------------ subclass steps
    @abc.abstractmethod
    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        """Priority of ``arms`` at effective counts ``effective`` (lowest pulled first)."""

    def _refresh(self) -> None:
        self.means = self.stats.means()
        self.gaps = np.abs(self.means - self.threshold)

    def _condition_met(self) -> bool:
        return False  # fixed budget: the base stops with BUDGET_SPENT

    def _schedule(self, limit: int) -> IntArray:
        arms = np.flatnonzero(self.available).astype(np.int64)
        effective = (self.stats.count + self.pending).astype(np.float64)
        keys = self._priority(arms, effective[arms])
        if limit == 1:  # the heap below, short-cut: argmin takes the first (lowest) arm on ties
            best = int(np.argmin(keys)) if keys.size else 0
            if keys.size == 0 or keys[best] == math.inf:
                return np.empty(0, dtype=np.int64)
            return arms[best : best + 1]
        heap = [(k, a) for k, a in zip(keys.tolist(), arms.tolist(), strict=True) if k < math.inf]
        heapq.heapify(heap)
        picks: list[int] = []
        while heap and len(picks) < limit:
            _, arm = heapq.heappop(heap)
            picks.append(arm)
            if len(picks) == limit:
                break
            effective[arm] += 1.0
            one = np.array([arm], dtype=np.int64)
            key = float(self._priority(one, effective[arm : arm + 1])[0])
            if key < math.inf:
                heapq.heappush(heap, (key, arm))
        return np.array(picks, dtype=np.int64)

    def _priority(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = np.asarray(self._index(arms, effective), dtype=np.float64)
        keys = np.where(np.isnan(keys), math.inf, keys)
        if self.needs_answers:
            keys = np.where(self.stats.count[arms] == 0, math.inf, keys)
        if self.pull_each_first:
            keys = np.where(effective == 0, -math.inf, keys)
        return keys

    # ------------------------------------------------------------------------- result
    def _above(self) -> NDArray[np.bool_]:
        """The classification rule: ABOVE iff the estimate is at least the bar."""
        return np.asarray(self.means >= self.threshold)

    def _interval(self) -> tuple[FloatArray, FloatArray]:
        """Per-arm interval shown in the result (informational Hoeffding, pointwise)."""
        radius = hoeffding_radius(self.stats.count, INFO_LEVEL, self.width)
        return self.means - radius, self.means + radius

    def _decide(self, arm: int, leaning: Decision) -> tuple[Decision, str]:
        """Decision and reason of an arm with answers (fixed budget: the classification)."""
        if self.finished:
            reason = "classified by its estimate at the end of the budget"
        else:
            reason = "classified by its estimate so far (anytime; budget not spent yet)"
        reason += (
            f"; no per-worker guarantee, interval informational (Hoeffding, each side "
            f"misses with probability <= {INFO_LEVEL}, pointwise)"
        )
        unavailable = self._availability_reason(arm)
        if unavailable is not None:
            reason += f"; {unavailable}"
        return leaning, reason

    def _describe(self) -> Result:
        above = self._above()
        lows, highs = self._interval()
        counts = self.stats.count
        lines: list[WorkerResult] = []
        for arm in range(self.n_arms):
            pending = int(self.pending[arm])
            if counts[arm] == 0:
                reason = self._availability_reason(arm) or "no answers yet"
                lines.append(
                    WorkerResult(
                        arm, math.nan, self.lower, self.upper, 0, pending,
                        Decision.UNDECIDED, Decision.UNDECIDED, reason, 0,
                    )
                )  # fmt: skip
                continue
            leaning = Decision.ABOVE if above[arm] else Decision.BELOW
            decision, reason = self._decide(arm, leaning)
            mean = float(self.means[arm])
            lines.append(
                WorkerResult(
                    arm, mean, max(float(lows[arm]), self.lower),
                    min(float(highs[arm]), self.upper), int(counts[arm]), pending,
                    decision, leaning, reason, 0, mean - self.threshold,
                )
            )  # fmt: skip
        ranked = sorted(lines, key=_rank_key)
        workers = tuple(replace(w, rank=position) for position, w in enumerate(ranked, start=1))
        theta = self.threshold
        return self._result(
            workers,
            threshold=Threshold(theta, theta, theta),
            extra={"threshold": theta, "fixed_budget": self.fixed_budget},
        )


def _rank_key(line: WorkerResult) -> tuple[float, int]:
    """Estimate descending; workers without answers last; ties by worker index."""
    estimate = line.estimate if math.isfinite(line.estimate) else -math.inf
    return (-estimate, line.arm)


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
    """

    name = "lsa"
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

    def params(self) -> dict[str, Any]:
        return {**super().params(), "alpha": self.alpha}

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        gaps = self.gaps[arms]
        return self.alpha * effective * gaps * gaps + 0.5 * np.log(effective)


def anytime_log_inverse(counts: NDArray[Any], delta: float, n_arms: int) -> FloatArray:
    """``log(1 / level)`` at the level ``6 delta / (pi^2 n t^2)`` for an arm with ``t`` answers.

    The level depends on the arm's own count t. Summed over t >= 1 and the n arms the levels
    add up to delta, so with probability at least 1 - delta every arm's mean stays inside
    its interval at every count (one side per arm is all a wrong decision needs).
    """
    t = np.asarray(counts, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.asarray(np.log(math.pi**2 * n_arms * t * t / (6.0 * delta)), dtype=np.float64)


def anytime_radius(counts: NDArray[Any], delta: float, n_arms: int, width: float) -> FloatArray:
    """Hoeffding radius at the anytime level of ``anytime_log_inverse`` (arms with no answers:
    an infinite radius)."""
    t = np.asarray(counts, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_inverse = anytime_log_inverse(t, delta, n_arms)
        radius = width * np.sqrt(np.maximum(log_inverse, 0.0) / (2.0 * t))
    return np.where(t > 0, radius, math.inf)


class ConfidentThresholding(ThresholdingAlgorithm):
    """Fixed-confidence thresholding: stop when every worker is on one side of the bar.

    Not from Tao et al. (their setting is a fixed budget): requesters also ask "who is above
    my bar, with 95% confidence, for as few questions as possible?".

    Interval, at level ``6 delta / (pi^2 n t_i^2)`` per side for worker i after its ``t_i``-th
    answer (``anytime_log_inverse``: a union bound over workers and over each worker's own
    count, valid at any stopping time), for rewards in [lower, upper] (graded rewards are fine):

    * ``interval="kl"`` (default): the Chernoff-Hoeffding interval
      ``{q : t_i kl(mean_i, q) <= log(1 / level)}`` on rewards rescaled to [0, 1]
      (``screener.stats.kl_bounds``; valid for any bounded reward, Hoeffding 1963, Thm 1).
      Never wider than Hoeffding's; for accurate workers (means near 1) it decides with a
      fraction of the questions: at a 0.75 bar, a worker at 0.95 needs about half as many.
    * ``interval="hoeffding"``: ``mean_i +- R sqrt(log(1 / level) / (2 t_i))``.

    Worker i is decided ABOVE when its lower end is at least the threshold and BELOW when its
    upper end is below it (for "kl" tested directly: ``mean_i >= threshold`` and
    ``t_i kl(mean_i, threshold) >= log(1 / level)``, and the mirror with a strict inequality);
    a decided worker is not pulled again. The decision follows the current interval (answers
    that were in flight when it cleared still count), and every decided worker is right with
    probability at least 1 - delta jointly.

    Schedule: after one pull each, the undecided worker with the least evidence against the
    bar: ``argmin kl(mean_i, threshold) - log(1 / level_i) / t_i`` ("kl": the divergence per
    answer still missing; with "hoeffding" the margin ``|mean_i - threshold| - r_i``, i.e. how
    deep the bar sits inside the interval).
    Pending pulls: the count in that key is answered + pending (the interval the worker will
    have once its answers arrive), the mean uses answers only; a worker whose projected
    interval already clears the bar is left alone until its answers arrive (the algorithm
    may then say WAIT).

    Stops with CONDITION_MET when every worker is decided. Workers still overlapping when the
    budget is spent, or made unavailable, stay UNDECIDED with the reason.
    """

    name = "confident-thresholding"
    fixed_budget = False
    guarantee: ClassVar[str | None] = (
        "every decided worker is on the correct side of the threshold, jointly, with "
        "probability at least 1 - delta"
    )

    def __init__(
        self,
        n_workers: int,
        *,
        delta: float = 0.05,
        interval: Literal["kl", "hoeffding"] = "kl",
        **kwargs: Any,
    ) -> None:
        super().__init__(n_workers, **kwargs)
        check_delta(delta, suggestion=0.05)
        check_choice("interval", interval, ("kl", "hoeffding"))
        self.delta = float(delta)
        self.interval: Literal["kl", "hoeffding"] = interval
        self.decided_above = np.zeros(self.n_arms, dtype=bool)
        self.decided_below = np.zeros(self.n_arms, dtype=bool)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "delta": self.delta, "interval": self.interval}

    def _refresh(self) -> None:
        super()._refresh()
        if self.interval == "hoeffding":
            lows, highs = self._interval()
            with np.errstate(invalid="ignore"):
                self.decided_above = lows >= self.threshold
                self.decided_below = highs < self.threshold
            return
        evidence = self._evidence(np.arange(self.n_arms), self.stats.count.astype(np.float64))
        with np.errstate(invalid="ignore"):
            self.decided_above = (self.means >= self.threshold) & (evidence >= 0.0)
            self.decided_below = (self.means < self.threshold) & (evidence > 0.0)

    def _evidence(self, arms: IntArray, counts: FloatArray) -> FloatArray:
        """``kl(mean, threshold) - log(1 / level(t)) / t``: >= 0 once the KL interval at count
        ``t`` excludes the bar; below 0, how much divergence per answer is still missing
        (NaN for arms without answers)."""
        theta = (self.threshold - self.lower) / self.width
        scaled = np.clip((self.means[arms] - self.lower) / self.width, 0.0, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            divergence = bernoulli_kl(scaled, np.full_like(scaled, theta))
            allowed = anytime_log_inverse(counts, self.delta, self.n_arms) / counts
        return np.asarray(divergence - allowed, dtype=np.float64)

    @property
    def decided(self) -> NDArray[np.bool_]:
        return self.decided_above | self.decided_below

    def _condition_met(self) -> bool:
        return bool(self.decided.all())

    def _can_progress(self) -> bool:
        return bool((self.available & ~self.decided).any())

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        if self.interval == "kl":
            keys = self._evidence(arms, effective)
            # The same tie rule as the decisions: a tie decides ABOVE, never BELOW.
            clear = (keys > 0.0) | ((keys == 0.0) & (self.means[arms] >= self.threshold))
        else:
            keys = self.gaps[arms] - anytime_radius(effective, self.delta, self.n_arms, self.width)
            clear = keys > 0.0
        return np.where(~clear & ~self.decided[arms], keys, math.inf)

    def _interval(self) -> tuple[FloatArray, FloatArray]:
        """The anytime intervals the decisions use (KL: solved only for the result, the
        decisions test the bar directly)."""
        counts = self.stats.count
        if self.interval == "hoeffding":
            radii = anytime_radius(counts, self.delta, self.n_arms, self.width)
            return self.means - radii, self.means + radii
        budget = anytime_log_inverse(counts, self.delta, self.n_arms)
        low, high = kl_bounds((self.means - self.lower) / self.width, counts, budget)
        return self.lower + self.width * low, self.lower + self.width * high

    def _decide(self, arm: int, leaning: Decision) -> tuple[Decision, str]:
        if self.decided[arm]:
            return leaning, "anytime interval clear of the threshold"
        unavailable = self._availability_reason(arm)
        if unavailable is not None:
            return Decision.UNDECIDED, f"interval overlaps the threshold; {unavailable}"
        if self.finished:
            return Decision.UNDECIDED, f"interval overlaps the threshold ({self.stop_reason})"
        return Decision.UNDECIDED, "interval overlaps the threshold"
