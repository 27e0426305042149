"""OptMAI (Zhou, Chen, Li, ICML 2014) with Quantile Elimination: the fixed-budget eps-top-k
baseline of Chen, Chen, Zhang, Zhou (ICML 2017, Section 3)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._test_setups import BUDGET, AlgorithmSetup
from screener.algorithms.result import Result, StopReason
from screener.algorithms.topk._selection import (
    SelectionAlgorithm,
    check_eps,
    check_k,
    top_by_mean,
    water_fill,
)
from screener.arrays import FloatArray, IntArray
from screener.errors import ConfigError

__all__ = ["OptMAI", "optmai_round_pulls", "quantile_step"]


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


class OptMAI(SelectionAlgorithm):
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
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (AlgorithmSetup({"k": 2, **BUDGET}),)
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
            return np.empty(0, dtype=np.int64)
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
            self._line(
                arm, float(self.means[arm]), (self.lower, self.upper),
                bool(selected[arm]), final, self._reason(arm, bool(selected[arm]), final),
            )
            for arm in range(self.n_arms)
        ]  # fmt: skip
        return self._selection_result(
            lines,
            self.eps,
            {
                "rounds": self.completed_rounds,
                "round": None if self._done else self.round,
                "round_pulls": None if self._done else self.round_pulls,
                "accepted": self.k - self.needed,
                "fixed_budget": True,
            },
        )
