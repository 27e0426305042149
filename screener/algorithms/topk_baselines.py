"""The eps-top-k baselines of Chen, Chen, Zhang, Zhou (ICML 2017, Section 3): OptMAI and CLUCB-PAC.

Both select k workers and are judged, like ``AdaptiveTopK``, by the aggregate regret: the best
k workers' mean total minus the selected workers' (``eps * k`` in reward units is the
tolerance). Results have AdaptiveTopK's shape: SELECTED / REJECTED once the decisions are
final, otherwise every worker UNDECIDED with its leaning (the selection if the run stopped now);
``extra`` holds ``k`` and ``eps``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._checks import check_budget_given, check_delta, check_flag
from screener.algorithms.base import Algorithm
from screener.algorithms.result import Decision, Result, StopReason, WorkerResult
from screener.algorithms.topk import (
    AdaptiveTopK,
    check_eps,
    check_k,
    ranked,
    top_by_mean,
    water_fill,
)
from screener.arrays import FloatArray, IntArray
from screener.errors import ConfigError
from screener.stats import clucb_radius

__all__ = [
    "CLUCBPAC",
    "OptMAI",
    "optmai_round_pulls",
    "quantile_step",
    "top_by_mean",
]

_EMPTY = np.empty(0, dtype=np.int64)


def _line(
    alg: Algorithm,
    arm: int,
    mean: float,
    bounds: tuple[float, float],
    selected: bool,
    final: bool,
    reason: str,
) -> WorkerResult:
    """One worker's line: decision only when final, leaning always."""
    leaning = Decision.SELECTED if selected else Decision.REJECTED
    unavailable = alg._availability_reason(arm)
    if unavailable is not None:
        reason += f"; {unavailable}"
    return WorkerResult(
        arm, mean, bounds[0], bounds[1], int(alg.stats.count[arm]), int(alg.pending[arm]),
        leaning if final else Decision.UNDECIDED, leaning, reason, 0,
    )  # fmt: skip


# ------------------------------------------------------------------------- OptMAI
def optmai_round_pulls(r: int, budget: int, beta: float, n_active: int) -> int:
    """Pulls per surviving worker in round r: ``max(1, floor((beta-1) beta^-r Q / |S_r|))``.

    The shares ``(beta - 1) beta^-r Q`` of rounds r = 1, 2, ... add up to Q, so the rounds never
    overspend; at least one pull per worker keeps a tiny budget from stalling (the base class
    then stops the run when Q is spent).
    """
    share = (beta - 1.0) * beta**-r * budget
    return max(1, math.floor(share / n_active))


def quantile_step(round_means: FloatArray, active: IntArray, needed: int) -> tuple[IntArray, bool]:
    """Quantile Elimination on S: the workers decided this round, and whether they are accepted.

    m = max(1, floor(|S| / 4)). When ``needed <= |S| / 2`` the m lowest round means are
    eliminated (QE); otherwise QE runs on the complement problem (find the |S| - needed worst,
    rewards negated), whose eliminated quarter is S's m highest means: those are accepted.
    Ties: the lower index ranks higher.
    """
    m = max(1, active.size // 4)
    order = top_by_mean(round_means, active, active.size)
    if 2 * needed <= active.size:
        return order[active.size - m :], False
    return order[:m], True


class OptMAI(Algorithm):
    """OptMAI (Zhou, Chen, Li, ICML 2014) with Quantile Elimination: fixed budget Q = ``budget``.

    Round r = 1, 2, ... with S_r the surviving workers and ``needed = k - |A|``: every worker in
    S_r answers ``t_r = optmai_round_pulls(r, Q, beta, |S_r|)`` fresh questions; on the means of
    round r's answers only, ``quantile_step`` eliminates the bottom quarter of S_r (needed <=
    |S_r| / 2) or accepts its top quarter (the complement problem). The run stops when all k
    are accepted or |S| equals the places left; the selection is A plus the rest of S.

    Reconstructed, not from our paper set (Zhou et al. 2014 is not in /work/shared/papers and
    Chen et al. 2017 give no parameters): the geometric split ``(beta - 1) beta^-r Q`` (it sums
    to Q over all rounds), ``beta = e^0.2`` by default (the value recalled from Zhou et al.'s
    experiments; per-worker round sizes grow only for beta < 4/3, since |S| shrinks by at least
    a quarter), the rounding (``floor``, at least one pull each, m = max(1, floor(|S| / 4))), the
    branch point ``needed <= |S| / 2``, and ties to the lower index. Round means use that
    round's answers only, as QE samples afresh: survivors' earlier means are biased upwards by
    the selection.

    ``eps`` is not used by the algorithm (its input is the budget); it is only reported in
    ``extra`` so that reports can score runs by it. There is no ``delta``: OptMAI has none.

    Pending-aware rounds as in AdaptiveTopK: ``ask`` hands out the round's missing pulls round
    robin (fewest answered + pending in this round first, lowest index on ties: ``ask(k)``
    equals k calls of ``ask(1)``) and says WAIT while the rest are in flight; the round ends
    when all its answers are back. A worker made unavailable mid-round stalls the round.

    If Q runs out first (only with rounds of one pull each), the run ends BUDGET_SPENT and the
    selection fills the places left with the survivors of largest mean over all their answers.
    Both endings are final: SELECTED / REJECTED.

    Examples
    --------
    On six simulated workers (the best two are 0.85 and 0.9):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.3, 0.5, 0.55, 0.6, 0.85, 0.9]
    >>> algorithm = OptMAI(6, k=2, budget=600, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('condition met', 370)
    >>> [w.decision.value for w in sorted(result.workers, key=lambda w: w.arm)]
    ['rejected', 'rejected', 'rejected', 'rejected', 'selected', 'selected']
    """

    name = "optmai"
    min_workers: ClassVar[int] = 2
    fixed_roster: ClassVar[str | None] = (
        "the best K are the best K of a given crowd: a worker who joins may displace them"
    )
    guarantee: ClassVar[str | None] = (
        "fixed budget: none per run; Zhou et al. 2014 show the selection is eps-top-k with "
        "probability 1 - delta once the budget is at least c n / eps^2 (1 + ln(1/delta) / k), "
        "c an unstated constant"
    )

    def __init__(
        self,
        n_workers: int,
        *,
        k: int,
        eps: float | None = None,
        beta: float = math.exp(0.2),
        **common: Any,
    ) -> None:
        super().__init__(n_workers, **common)
        self.k = check_k(k, n_workers)
        self.eps = None if eps is None else check_eps(eps)
        if not (math.isfinite(beta) and beta > 1.0):
            raise ConfigError(
                f"beta must be a finite number > 1, got {beta}",
                "the round budgets decay as beta^-r; Zhou et al. use beta = e^0.2 (about 1.22)",
            )
        if self.budget is None:
            raise ConfigError(
                f"{self.name} needs a budget (OptMAI's Q)",
                "pass budget=<total number of gold questions>",
            )
        self.beta = float(beta)
        self.q = int(self.budget)
        self.means: FloatArray = np.full(self.n_arms, np.nan)
        self.active = np.ones(self.n_arms, dtype=bool)
        self.accepted_round = np.zeros(self.n_arms, dtype=np.int64)
        self.rejected_round = np.zeros(self.n_arms, dtype=np.int64)
        self.completed_rounds = 0
        self._done = False
        self._start_round(1)

    @property
    def needed(self) -> int:
        """Places left: k - |A|."""
        return self.k - int(np.count_nonzero(self.accepted_round))

    def _start_round(self, r: int) -> None:
        self.round = r
        # Answers before the round are not used by its means: QE samples afresh.
        self._start_count = self.stats.count.copy()
        self._start_total = self.stats.total.copy()
        n_active = int(np.count_nonzero(self.active))
        self.round_pulls = optmai_round_pulls(r, self.q, self.beta, n_active)

    def _round_counts(self) -> IntArray:
        return np.asarray(self.stats.count - self._start_count, dtype=np.int64)

    def _round_complete(self) -> bool:
        s = self.active
        return bool(
            np.all(self._round_counts()[s] >= self.round_pulls) and not self.pending[s].any()
        )

    # ------------------------------------------------------------------ subclass steps
    def _refresh(self) -> None:
        self.means = self.stats.means()
        while not self._done and self._round_complete():
            r = self.round
            s = np.flatnonzero(self.active).astype(np.int64)
            round_means = np.full(self.n_arms, np.nan)
            round_means[s] = (self.stats.total[s] - self._start_total[s]) / self._round_counts()[s]
            decided, accepted = quantile_step(round_means, s, self.needed)
            (self.accepted_round if accepted else self.rejected_round)[decided] = r
            self.active[decided] = False
            self.completed_rounds = r
            remaining = int(np.count_nonzero(self.active))
            if self.needed == 0 or remaining == self.needed:
                self._done = True
                break
            self._start_round(r + 1)

    def _condition_met(self) -> bool:
        return self._done

    def _schedule(self, limit: int) -> IntArray:
        if self._done:
            return _EMPTY.copy()
        candidates = np.flatnonzero(self.active & self.available).astype(np.int64)
        effective = self._round_counts()[candidates] + self.pending[candidates]
        keep = effective < self.round_pulls
        return water_fill(candidates[keep], effective[keep], self.round_pulls, limit)

    def _can_progress(self) -> bool:
        return not self._done and bool((self.available & self.active).any())

    # ------------------------------------------------------------------------- result
    def _selection(self) -> NDArray[np.bool_]:
        chosen = self.accepted_round > 0
        s = np.flatnonzero(self.active).astype(np.int64)
        chosen[top_by_mean(self.means, s, self.needed)] = True
        return chosen

    def _reason(self, arm: int, selected: bool, final: bool) -> str:
        acc, rej = int(self.accepted_round[arm]), int(self.rejected_round[arm])
        if acc:
            return f"accepted in round {acc}: top quarter of the round's means"
        if rej:
            return f"eliminated in round {rej}: bottom quarter of the round's means"
        when = "at the end" if final else "if the run stopped now"
        reason = f"{'filled' if selected else 'not filled'} {when}: survivor"
        if not final:
            reason += (
                f"; stopped ({self.stop_reason})"
                if self.finished
                else f"; round {self.round} running"
            )
        return reason

    def _describe(self) -> Result:
        selected = self._selection()
        final = self.stop_reason in (StopReason.CONDITION_MET, StopReason.BUDGET_SPENT)
        lines = [
            _line(
                self, arm, float(self.means[arm]), (self.lower, self.upper),
                bool(selected[arm]), final, self._reason(arm, bool(selected[arm]), final),
            )
            for arm in range(self.n_arms)
        ]  # fmt: skip
        return self._result(
            ranked(lines),
            extra={
                "k": self.k,
                "eps": self.eps,
                "rounds": self.completed_rounds,
                "round": None if self._done else self.round,
                "round_pulls": None if self._done else self.round_pulls,
                "accepted": self.k - self.needed,
                "fixed_budget": True,
            },
        )


# ---------------------------------------------------------------------- CLUCB-PAC
_CLUCB_FIXED_BUDGET_GUARANTEE = (
    "fixed budget: none when the budget is spent first (the selection is then the k largest "
    "means); within eps*k of the best k with probability at least 1 - delta when the stopping "
    "rule held (Chen et al. 2014)"
)


class CLUCBPAC(Algorithm):
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
    min_workers: ClassVar[int] = 2
    fixed_roster: ClassVar[str | None] = (
        "the best K are the best K of a given crowd: a worker who joins may displace them"
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
        reason = self.stop_reason
        return reason is StopReason.CONDITION_MET or (
            self.fixed_budget and reason is StopReason.BUDGET_SPENT
        )

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
            lines.append(_line(self, arm, mean, bounds, selected, final, reason))
        result = self._result(
            ranked(lines),
            extra={
                "k": self.k,
                "eps": self.eps,
                "gap": None if math.isnan(self.gap) else self.gap,
                "fixed_budget": self.fixed_budget,
            },
        )
        if self.fixed_budget:
            result = replace(result, guarantee=_CLUCB_FIXED_BUDGET_GUARANTEE)
        return result
