"""CLUCB-PAC (Chen, Lin, King, Lyu, Chen, NIPS 2014) on the top-k matroid: the
fixed-confidence eps-top-k baseline of Chen, Chen, Zhang, Zhou (ICML 2017, Section 3)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._checks import check_budget_given, check_delta
from screener.algorithms._test_setups import BUDGET, AlgorithmSetup
from screener.algorithms.result import Result, StopReason
from screener.algorithms.topk._selection import (
    SelectionAlgorithm,
    check_eps,
    check_k,
    top_by_mean,
    water_fill,
)
from screener.algorithms.topk.adaptive import AdaptiveTopK
from screener.algorithms.worker_result import WorkerResult
from screener.arrays import FloatArray, IntArray
from screener.checks import check_flag
from screener.stats import clucb_radius

__all__ = ["CLUCBPAC"]

_EMPTY = np.empty(0, dtype=np.int64)

_CLUCB_FIXED_BUDGET_GUARANTEE = (
    "fixed budget: none when the budget is spent first (the selection is then the k largest "
    "means); within eps*k of the best k with probability at least 1 - delta when the stopping "
    "rule held (Chen et al. 2014)"
)


class CLUCBPAC(SelectionAlgorithm):
    """CLUCB-PAC (Chen, Lin, King, Lyu, Chen, NIPS 2014) on the top-k matroid.

    Each worker answers ``min_answers`` times (once by default, the paper's initialisation;
    round robin); then at each step t (t = answers so far): M = the k largest
    means; ``rad_i = clucb_radius`` (sigma = R/2); ``w~_i = mean_i - rad_i`` on M, ``mean_i +
    rad_i`` off M; M~ = the k largest w~. Stop when ``w~(M~) - w~(M) <= eps * k`` and select
    M; else pull the worker of M xor M~ with the largest radius (ties: lowest index).

    Units: the paper's PAC rule bounds the regret of the total, ``w(M*) - w(M) <= eps'``; our
    eps is per selected worker (aggregate regret, as in AdaptiveTopK), so ``eps' = eps * k``.

    Pending: the step uses answers only. A batch hands out distinct workers of M xor M~ by
    radius, skipping workers with a pull in flight (their answers are what the next step
    needs). The first answers go out in index order; the steps begin when all are back.

    Under concurrency: once every worker of M xor M~ has a pull in flight, the rest of the
    window is filled with the steps that would follow if the pulls in flight came back at
    the current means (a constant liar, as Optuna counts running trials): counts and t
    include the pending pulls, M stays (the means do not move), the radii shrink, and each
    further slot goes to the worker of the liar's M xor M~ with the largest liar radius,
    one slot at a time. For top-1 that is the pair's next pulls, then the next most
    ambiguous workers by the same index. Filling stops (WAIT) when the liar's stopping rule
    holds: the pulls in flight are then likely to end the run. ``ask(k)`` equals k calls of
    ``ask(1)``; with one pull at a time nothing is ever pending at ``ask``, so the pulls are
    exactly the paper's. Decisions use answers only, and the radii hold for any sampling
    rule (the union is over t and the counts), so the promise is unchanged.
    ``liar=False`` leaves the rest of the window empty instead: a batch is the step's own
    pulls (each free worker of M xor M~ once), then WAIT until answers move the means. Fewer
    pulls are chosen on stale means and a batch costs one step (the fill costs one step per
    pull), at the price of idle slots when answers are slow; ``ask(k)`` still equals k
    calls of ``ask(1)``.
    Unavailable workers are skipped; one without any answer blocks the rule for good (so
    does one that left with fewer than ``min_answers``). Every decision comes with the stop,
    after the initial answers, so none rests on fewer than ``min_answers``; the radii and
    their levels are the paper's whatever the counts, so the promise is unchanged.

    Budget: optional. When it runs out first, the selection is M at that moment: a leaning
    (UNDECIDED) in fixed-confidence mode, final (SELECTED / REJECTED) with ``fixed_budget=True``,
    which is how Chen et al. 2017 run it against a budget. The stopping rule stays on in both
    modes: a run that meets it has its answer (and uses less than the budget).

    Examples
    --------
    On six simulated workers (the best two are 0.85 and 0.9):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.3, 0.5, 0.55, 0.6, 0.85, 0.9]
    >>> algorithm = CLUCBPAC(6, k=2, eps=0.1, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('condition met', 1757)
    >>> [w.decision.value for w in sorted(result.workers, key=lambda w: w.arm)]
    ['rejected', 'rejected', 'rejected', 'rejected', 'selected', 'selected']
    """

    name = "clucb-pac"
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup({"k": 2, "eps": 0.05, "delta": 0.1, **BUDGET}),
        AlgorithmSetup({"k": 2, "eps": 0.05, "fixed_budget": True, **BUDGET}, label="fixed-budget"),
    )
    guarantee: ClassVar[str | None] = AdaptiveTopK.guarantee

    def __init__(
        self,
        n_workers: int,
        *,
        k: int,
        eps: float,
        delta: float = 0.05,
        fixed_budget: bool = False,
        min_answers: int = 1,
        liar: bool = True,
        **common: Any,
    ) -> None:
        super().__init__(n_workers, **common)
        self._set_min_answers(min_answers)
        self.k = check_k(k, n_workers)
        self.eps = check_eps(eps)
        self.delta = check_delta(delta, suggestion=0.05)
        if fixed_budget:
            check_budget_given(self.name, self.budget, "with fixed_budget=True")
        self.fixed_budget = bool(fixed_budget)
        self.liar = check_flag("liar", liar)
        self.width = self.upper - self.lower
        self.means: FloatArray = np.full(self.n_arms, np.nan)
        self.radius: FloatArray = np.full(self.n_arms, math.inf)
        self.chosen = np.zeros(self.n_arms, dtype=bool)  # M
        self.gap = math.nan  # w~(M~) - w~(M); NaN before every worker has answered
        self._order = _EMPTY  # M xor M~ by radius, descending
        self._done = False

    # ------------------------------------------------------------------ subclass steps
    def _refresh(self) -> None:
        self.means = self.stats.means()
        if self._done:
            return  # M at the stop is the answer; late answers only update the means
        counts = self.stats.count
        every = np.arange(self.n_arms, dtype=np.int64)
        self.radius = clucb_radius(counts, self.n_answered, self.n_arms, self.delta, self.width)
        self.chosen = np.zeros(self.n_arms, dtype=bool)
        self.chosen[top_by_mean(self.means, every, self.k)] = True
        if self._too_few_answers().any():  # the initial answers are not all in
            self.gap, self._order = math.nan, _EMPTY
            return
        self.gap, self._order = self._step_at(self.radius)
        self._done = self.gap <= self.eps * self.k

    def _step_at(self, radius: FloatArray) -> tuple[float, IntArray]:
        """CLUCB's step at these radii: the gap w~(M~) - w~(M) and M xor M~ by radius,
        largest first."""
        rival, gap = self._rival(radius)
        differ = np.flatnonzero(rival ^ self.chosen)
        return gap, top_by_mean(radius, differ, differ.size)

    def _rival(self, radius: FloatArray) -> tuple[NDArray[np.bool_], float]:
        """M~ (the k largest w~, ties by index as a stable sort orders them, found by a
        partition: this runs once per pull in the liar's fill) and the gap w~(M~) - w~(M)."""
        chosen = self.chosen
        adjusted = np.where(chosen, self.means - radius, self.means + radius)
        kth = self.n_arms - self.k
        boundary = np.partition(adjusted, kth)[kth]
        rival = adjusted > boundary
        ties = self.k - int(np.count_nonzero(rival))
        if ties:
            rival[np.flatnonzero(adjusted == boundary)[:ties]] = True
        # Summed over the symmetric difference only: exactly 0 when M~ = M.
        gap = float(adjusted[rival & ~chosen].sum() - adjusted[chosen & ~rival].sum())
        return rival, gap

    def _condition_met(self) -> bool:
        return self._done

    def _schedule(self, limit: int) -> IntArray:
        if self._too_few_answers().any():
            candidates = np.flatnonzero(self.available).astype(np.int64)
            effective = self.stats.count[candidates] + self.pending[candidates]
            short = effective < self.min_answers
            return water_fill(candidates[short], effective[short], self.min_answers, limit)
        order = self._order
        free = self.available[order] & (self.pending[order] == 0)
        picks = np.asarray(order[free][:limit], dtype=np.int64)
        if picks.size == limit or not self.liar:
            return picks
        return np.concatenate([picks, self._liar_fill(limit - picks.size, picks)])

    def _liar_fill(self, room: int, picks: IntArray) -> IntArray:
        """Up to ``room`` further pulls: the constant liar's steps (see the docstring); the
        pull is the first largest radius among the available workers of M xor M~."""
        pending = self.pending + np.bincount(picks, minlength=self.n_arms)
        counts = self.stats.count + pending
        t = self.n_answered + int(pending.sum())
        filled: list[int] = []
        for _ in range(room):
            radius = clucb_radius(counts, t, self.n_arms, self.delta, self.width)
            rival, gap = self._rival(radius)
            if gap <= self.eps * self.k:
                break  # the answers in flight would likely end the run
            candidates = (rival ^ self.chosen) & self.available
            if not candidates.any():
                break
            arm = int(np.argmax(np.where(candidates, radius, -math.inf)))
            filled.append(arm)
            counts[arm] += 1
            t += 1
        return np.array(filled, dtype=np.int64)

    def _can_progress(self) -> bool:
        blocked = self._too_few_answers() & ~self.available & (self.pending == 0)
        return bool(self.available.any()) and not bool(blocked.any())

    # ------------------------------------------------------------------------- result
    def _final(self) -> bool:
        return self._final_when(self.fixed_budget)

    def _reason(self, selected: bool, final: bool) -> str:
        place = "among" if selected else "below"
        reason = f"{place} the k largest means"
        if self.stop_reason is StopReason.CONDITION_MET:
            return f"{reason}; stopping rule held (gap {self.gap:.4g} <= eps*k)"
        if final:
            return f"{reason} when the budget was spent"
        if self.finished:
            stopped = f"stopped before the rule held ({self.stop_reason})"
            return f"{reason} if the run stopped now; {stopped}"
        gap = "no gap yet" if math.isnan(self.gap) else f"gap {self.gap:.4g} > eps*k"
        return f"{reason} if the run stopped now; {gap}"

    def _describe(self) -> Result:
        final = self._final()
        lines: list[WorkerResult] = []
        for arm in range(self.n_arms):
            mean, radius = float(self.means[arm]), float(self.radius[arm])
            bounds = (self.lower, self.upper)
            if math.isfinite(radius):
                bounds = (max(mean - radius, self.lower), min(mean + radius, self.upper))
            selected = bool(self.chosen[arm])
            reason = self._reason(selected, final)
            lines.append(self._line(arm, mean, bounds, selected, final, reason))
        result = self._selection_result(
            lines,
            self.eps,
            {
                "gap": None if math.isnan(self.gap) else self.gap,
                "fixed_budget": self.fixed_budget,
            },
        )
        if self.fixed_budget:
            result = replace(result, guarantee=_CLUCB_FIXED_BUDGET_GUARANTEE)
        return result
