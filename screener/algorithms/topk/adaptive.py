"""eps-top-k selection by aggregate regret: ADAPTIVETOPK (Chen, Chen, Zhang, Zhou, ICML 2017).

Select k workers whose mean total is within ``eps * k`` of the best k workers' (the aggregate
regret), with probability at least 1 - delta. The algorithm runs in rounds r = 1, 2, ...; S is
the set of undecided workers, A the accepted, B the rejected ones (Algorithm 1 of the paper).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._checks import check_budget_given, check_delta
from screener.algorithms._test_setups import BUDGET, AlgorithmSetup
from screener.algorithms.result import Result
from screener.algorithms.topk._selection import (
    SelectionAlgorithm,
    check_eps,
    check_k,
    top_by_mean,
    water_fill,
)
from screener.algorithms.worker_result import WorkerResult
from screener.arrays import FloatArray, IntArray

__all__ = ["AdaptiveTopK", "accept_reject", "round_target"]


_FIXED_BUDGET_GUARANTEE = (
    "fixed budget: none; the selection is the accepted workers plus the undecided workers "
    "with the largest means when the budget is spent (Chen et al. 2017, Section 3)"
)


def round_target(r: int, n_arms: int, delta: float, width: float = 1.0) -> int:
    """Answers per undecided worker at the end of round r: ``ceil(R^2 4^r ln(2 n r^2 / delta))``.

    With that many answers Hoeffding's inequality puts the worker's mean within ``2^-r`` of
    its true mean except with probability ``2 (delta / (2 n r^2))^2 <= delta / (2 n r^2)``;
    summed over the n workers and all rounds that is ``delta pi^2 / 12 < delta`` (Claim 1).
    """
    return max(1, math.ceil(width * width * 4.0**r * math.log(2.0 * n_arms * r * r / delta)))


def accept_reject(
    means: FloatArray, undecided: IntArray, needed: int, margin: float
) -> list[tuple[int, bool]]:
    """The inner loop of one round: which undecided workers to accept (True) or reject (False).

    ``needed`` is k - |A|, ``margin`` is ``2 * 2^-r``. With a and b the (needed + 1)-th and
    needed-th largest means in S, ``gap_i = max(mean_i - a, b - mean_i)``; while the largest
    gap exceeds ``margin``, the worker x with the largest gap (lowest index on ties) is accepted
    if ``mean_x > a``, else rejected, removed from S, and a, b are recomputed. The loop also
    ends when nothing is left to choose (needed = 0, or |S| = needed). Returns the decisions
    in order.
    """
    remaining = [int(arm) for arm in undecided]
    decisions: list[tuple[int, bool]] = []
    while 0 < needed < len(remaining):
        values = means[np.array(remaining, dtype=np.int64)]
        ordered = np.sort(values)[::-1]
        a, b = float(ordered[needed]), float(ordered[needed - 1])
        gaps = np.maximum(values - a, b - values)
        best = int(np.argmax(gaps))
        if not gaps[best] > margin:
            break
        arm = remaining.pop(best)
        accepted = bool(values[best] > a)
        decisions.append((arm, accepted))
        if accepted:
            needed -= 1
    return decisions


class AdaptiveTopK(SelectionAlgorithm):
    """ADAPTIVETOPK (Chen et al. 2017, Algorithm 1): eps-top-k workers by aggregate regret.

    Rounds r = 1, 2, ...: while ``2 * 2^-r * (k - |A|) > eps * k`` (checked before each round),
    every undecided worker is pulled until it has ``N_r = ceil(R^2 4^r ln(2 n r^2 / delta))``
    answers *in total* (R = upper - lower, the reward range; ``round_target``); then the
    accept/reject loop (``accept_reject``) runs on the means of all answers so far. The run
    stops when the outer condition fails or nothing is left to choose (all k accepted, or as
    many undecided workers as places left); the selection is A plus the ``k - |A|`` undecided
    workers with the largest means (ties: lowest index).

    Cumulative counts: the paper pulls each arm "2^(2r) ln(2 n r^2 / delta) times" in round r
    and uses that round's empirical mean. Claim 1 only needs the mean of round r to rest on
    at least that many independent answers (a fixed number per round and worker), so the
    answers of earlier rounds are reused: round r tops each worker up to ``N_r`` answers in
    total. The same union bound holds, with fewer pulls. ``eps`` and
    the margins ``2^-r`` are in reward units (R^2 in ``N_r`` keeps the radius at ``2^-r``).

    Rounds are batches: ``ask`` hands out the pulls still missing in the current round (round
    robin: the worker with the fewest answered + pending pulls first, lowest index on ties, so
    ``ask(k)`` equals k calls of ``ask(1)``). When every missing pull is in flight the round
    ends only once those answers are back: ``ask`` says WAIT. Released pulls are reissued;
    a worker made unavailable before its round is complete stalls the round, and the run ends
    with WORKERS_EXHAUSTED once nothing else can be pulled.

    Before round 1 (no answers) any selection is within R per place of the best k, so when the
    outer condition fails before round 1 and ``eps >= R`` the selection needs no question:
    the run stops at once, selecting the k lowest indices (the paper, R = 1: ``eps >= 1``).
    When ``R > 1`` the outer condition alone would stop there for ``1 <= eps < R`` without a
    question, and the promise would not hold; round 1 is then run.

    ``min_answers`` (default 1, the paper's behaviour): every round tops each undecided worker
    up to ``max(N_r, min_answers)`` answers, so no accept, reject or fill rests on fewer (more
    answers than ``N_r`` only narrow the round's radius, a fixed count per round and worker as
    Claim 1 needs). When no round is needed (above) and ``min_answers > 1``, the workers are
    asked that many questions and the fill uses their means.

    Fixed budget (``fixed_budget=True``, the paper's experiments): the outer condition is
    dropped and the run stops when the budget is spent (a budget is required); the selection
    is the same fill, from the means of all answers at that moment.

    Result: when the condition held (or the fixed budget was spent) the k selected workers are
    SELECTED ("accepted in round r" or "filled at the end"), the rest REJECTED. Before that, or
    when a fixed-confidence run stopped otherwise, every worker is UNDECIDED with its leaning
    (the selection if the run stopped now). Ranked by mean, descending.

    Examples
    --------
    On six simulated workers (the best two are 0.85 and 0.9):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.3, 0.5, 0.55, 0.6, 0.85, 0.9]
    >>> algorithm = AdaptiveTopK(6, k=2, eps=0.1, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('condition met', 2570)
    >>> [w.decision.value for w in sorted(result.workers, key=lambda w: w.arm)]
    ['rejected', 'rejected', 'rejected', 'rejected', 'selected', 'selected']
    """

    name = "adaptive-topk"
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup({"k": 2, "eps": 0.1, "delta": 0.1, **BUDGET}),
        AlgorithmSetup({"k": 2, "eps": 0.1, "fixed_budget": True, **BUDGET}, label="fixed-budget"),
    )
    guarantee: ClassVar[str | None] = (
        "the selected workers' mean total is within eps*k of the best k with probability at "
        "least 1 - delta"
    )

    def __init__(
        self,
        n_workers: int,
        *,
        k: int,
        eps: float,
        delta: float = 0.05,
        fixed_budget: bool = False,
        min_answers: int = 1,
        **common: Any,
    ) -> None:
        super().__init__(n_workers, **common)
        self._set_min_answers(min_answers)
        check_delta(delta, suggestion=0.05)
        if fixed_budget:
            check_budget_given(self.name, self.budget, "with fixed_budget=True")
        self.k = check_k(k, n_workers)
        self.eps = check_eps(eps)
        self.delta = float(delta)
        self.fixed_budget = bool(fixed_budget)
        self.width = self.upper - self.lower
        self.means: FloatArray = np.full(self.n_arms, np.nan)
        #: Round in which each worker was accepted / rejected (0: not).
        self.accepted_round = np.zeros(self.n_arms, dtype=np.int64)
        self.rejected_round = np.zeros(self.n_arms, dtype=np.int64)
        self.round = 1
        self.completed_rounds = 0
        self.target = self._target(1)
        #: No round is needed, only min_answers answers (when > 1) before the fill.
        self._fill_only = not self.fixed_budget and not (
            self._outer_holds(1) or self.eps < self.width
        )
        self._done = self._fill_only and self.min_answers == 1
        if self._fill_only:
            self.target = self.min_answers

    def _target(self, r: int) -> int:
        """Answers per undecided worker at the end of round r: ``N_r``, at least min_answers."""
        return max(round_target(r, self.n_arms, self.delta, self.width), self.min_answers)

    # ----------------------------------------------------------------------- state
    @property
    def undecided(self) -> NDArray[np.bool_]:
        """The set S: neither accepted nor rejected."""
        return np.asarray((self.accepted_round == 0) & (self.rejected_round == 0))

    @property
    def n_accepted(self) -> int:
        return int(np.count_nonzero(self.accepted_round))

    def _outer_holds(self, r: int) -> bool:
        """The paper's outer condition before round r: ``2 * 2^-r * (k - |A|) > eps * k``."""
        return 2.0 * 2.0**-r * (self.k - self.n_accepted) > self.eps * self.k

    def _nothing_to_choose(self) -> bool:
        needed = self.k - self.n_accepted
        return needed == 0 or int(np.count_nonzero(self.undecided)) == needed

    def _round_complete(self) -> bool:
        s = self.undecided
        return bool(np.all(self.stats.count[s] >= self.target) and not self.pending[s].any())

    # ------------------------------------------------------------------ subclass steps
    def _refresh(self) -> None:
        self.means = self.stats.means()
        while not self._done and self._round_complete():
            if self._fill_only:
                self._done = True  # the min_answers answers are in: fill on their means
                break
            r = self.round
            s = np.flatnonzero(self.undecided).astype(np.int64)
            needed = self.k - self.n_accepted
            for arm, accepted in accept_reject(self.means, s, needed, 2.0 * 2.0**-r):
                if accepted:
                    self.accepted_round[arm] = r
                else:
                    self.rejected_round[arm] = r
            self.completed_rounds = r
            if self._nothing_to_choose() or (
                not self.fixed_budget and not self._outer_holds(r + 1)
            ):
                self._done = True
                break
            self.round = r + 1
            self.target = self._target(r + 1)

    def _condition_met(self) -> bool:
        return self._done

    def _schedule(self, limit: int) -> IntArray:
        if self._done:
            return np.empty(0, dtype=np.int64)
        candidates = np.flatnonzero(self.undecided & self.available).astype(np.int64)
        effective = self.stats.count[candidates] + self.pending[candidates]
        keep = effective < self.target
        return water_fill(candidates[keep], effective[keep], self.target, limit)

    def _can_progress(self) -> bool:
        return not self._done and bool((self.available & self.undecided).any())

    # ------------------------------------------------------------------------- result
    def _selection(self) -> NDArray[np.bool_]:
        """A plus the k - |A| undecided workers with the largest means (NaN last, low index)."""
        chosen = self.accepted_round > 0
        s = np.flatnonzero(self.undecided)
        needed = self.k - self.n_accepted
        chosen[top_by_mean(self.means, s, needed)] = True
        return chosen

    def _final(self) -> bool:
        """True when the decisions are final (the condition held, or the fixed budget ran out)."""
        return self._final_when(self.fixed_budget)

    def _reason(self, arm: int, selected: bool) -> str:
        acc, rej = int(self.accepted_round[arm]), int(self.rejected_round[arm])
        if acc:
            reason = f"accepted in round {acc}"
        elif rej:
            reason = f"rejected in round {rej}"
        elif selected:
            reason = "filled at the end: among the k - |A| largest means of the undecided"
        else:
            reason = "not filled at the end: below the k - |A| largest means of the undecided"
        if not self._final():
            if not (acc or rej):
                reason = reason.replace(" at the end", " if the run stopped now")
            if self.finished:
                reason += f"; stopped before the condition held ({self.stop_reason})"
            else:
                reason += f"; round {self.round} running"
        return reason

    def _describe(self) -> Result:
        selected = self._selection()
        final = self._final()
        counts = self.stats.count
        lines: list[WorkerResult] = []
        for arm in range(self.n_arms):
            mean, count = float(self.means[arm]), int(counts[arm])
            bounds = (self.lower, self.upper)
            if count > 0:
                # Claim 1's radius at this count: exactly 2^-r when count = N_r.
                r = int(self.accepted_round[arm] or self.rejected_round[arm] or self.round)
                level = math.log(2.0 * self.n_arms * r * r / self.delta)
                radius = self.width * math.sqrt(level / count)
                bounds = (max(mean - radius, self.lower), min(mean + radius, self.upper))
            chosen = bool(selected[arm])
            lines.append(self._line(arm, mean, bounds, chosen, final, self._reason(arm, chosen)))
        result = self._selection_result(
            lines,
            self.eps,
            {
                "rounds": self.completed_rounds,
                "round": None if self._done else self.round,
                "accepted": self.n_accepted,
                "fixed_budget": self.fixed_budget,
            },
        )
        if self.fixed_budget:
            result = replace(result, guarantee=_FIXED_BUDGET_GUARANTEE)
        return result
