"""IB: iterated best-arm identification, the baseline of Zhuang, Wang, Wang, NIPS 2017 (Sec. 5.2).

Also the IB baseline of Ban & He, KDD 2020. The paper runs CLUCB (Chen et al. 2014) on the
remaining arms, removes the best arm, and repeats until the best arm is not above the estimated
k-sigma threshold. This implementation uses LUCB1 (Kalyanakrishnan et al. 2012), a LUCB-style
algorithm with the same confidence machinery as CLUCB for the top-1 case.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._test_setups import HOEFFDING, KSIGMA, OUTLIER_MEANS, AlgorithmSetup
from screener.algorithms.ksigma.algorithm import KSigmaAlgorithm
from screener.algorithms.ksigma.cursor import RoundRobinCursor
from screener.algorithms.result import Result
from screener.algorithms.worker_result import Decision, WorkerResult
from screener.arrays import BoolArray, IntArray
from screener.errors import ConfigError

__all__ = ["IteratedBestArm"]


class IteratedBestArm(KSigmaAlgorithm):
    """IB: LUCB1 best-arm identification applied stage after stage, removing the best arm.

    Confidence: every arm interval and theta's interval are the RR/WRR ones, at the levels of
    ``KSigmaIntervals`` (the mixture default: each worker's confidence sequence at
    ``delta / n``, theta's interval their box range; with Hoeffding:
    ``6 delta / (pi^2 (n + 2) T^2)`` per end, summing to delta). Every decision below leans on
    ends of these intervals: a removal on h's lower end and theta's upper end; the stop on the
    upper ends of h and of the arms below it, and theta's lower end
    (``UCB_j < LCB_h + epsilon <= UCB_h + epsilon < theta_low``). With the mixture every end
    of every interval holds at every time with probability 1 - delta, so every decision is
    right whatever the schedule: IB has RR's guarantee (with Hoeffding, RR's argument and its
    caveat on theta's interval under a data-dependent schedule; Agresti-Coull is a
    heuristic). LUCB1's own exploration rate is replaced by this level.

    Stages, on the remaining set R (all arms at first; pulled once each before any decision):
    (1) LUCB1 on R: h = empirical best, l = argmax UCB over R - {h}; pull h and l; h is the
    best of R once LCB_h > UCB_l (then mu_h > mu_j for every j in R). (2) compare h with theta:
    LCB_h > theta_high: h is an outlier, remove it from R, next stage;
    UCB_h < theta_low: stop, the outliers are the removed arms (every arm of R is
    below mu_h < theta); otherwise pull h and the next arm of a round robin over all arms in turn
    (theta depends on every arm, removed ones included: theta is over all n arms).
    ``min_answers`` (default 1, the paper's): every available arm is pulled that many times,
    round robin, before the first stage, so no stage decides an arm on fewer answers (an arm
    that left with fewer stays undecided, and a stage whose best arm is such an arm stalls).
    ``epsilon`` > 0 (not in the paper; default 0) makes LUCB1 epsilon-PAC: h is identified once
    UCB_l - LCB_h < epsilon (mu_j < mu_h + epsilon for j in R), and the stop then needs
    UCB_h + epsilon < theta_low. With epsilon = 0, two remaining arms with equal
    means never separate and IB runs until its budget is spent (the paper capped it too).

    Stage decisions are taken at ``ask`` on the answers that arrived (never in ``result``), so
    a replay of the asks and answers rebuilds the same stages. Pending pulls: the LUCB pair is
    chosen on answered means, and the challenger's UCB - mean by sqrt(m / (m + pending)),
    the width it will have once its answers arrive (scheduling only: decisions use answers
    only), so a batch spreads over challengers instead of repeating one pair. With one pull per
    ask and immediate answers the pulls are exactly LUCB1's: h, then l, then a new pair.

    Examples
    --------
    On six simulated workers (one worker far above the rest):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.2, 0.25, 0.3, 0.3, 0.35, 0.95]
    >>> algorithm = IteratedBestArm(6, k=1.5, budget=2000, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('budget spent', 2000)
    >>> [w.decision.value for w in sorted(result.workers, key=lambda w: w.arm)]
    ['undecided', 'undecided', 'undecided', 'undecided', 'undecided', 'outlier']
    """

    name = "ib"
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup(KSIGMA, means=OUTLIER_MEANS),
        AlgorithmSetup(HOEFFDING, means=OUTLIER_MEANS, label="hoeffding"),
    )

    def __init__(self, n_workers: int, *, epsilon: float = 0.0, **kwargs: Any) -> None:
        super().__init__(n_workers, **kwargs)
        if not (math.isfinite(epsilon) and 0.0 <= epsilon < self.width):
            raise ConfigError(
                f"epsilon must lie in [0, {self.width}) (the reward range), got {epsilon}",
                "omit it for exact best-arm identification, or try epsilon=0.02",
            )
        self.epsilon = float(epsilon)
        self.remaining = np.ones(self.n_arms, dtype=bool)
        self.removed: list[int] = []  # outliers in the order they were identified
        self.best = -1  # the identified best arm of R in the current stage (-1: not yet)
        self._stopped = False
        self._owed = -1  # the challenger of a LUCB pair whose best arm was already handed out
        self._best_turn = True  # the comparison phase alternates the best arm and round robin
        self._cursor = RoundRobinCursor()  # the comparison phase's round robin

    # --------------------------------------------------------------------------- stages
    def _before_ask(self) -> None:
        # Stage changes happen here, not in _refresh: result() refreshes too, and taking a
        # result must not decide a stage on answers an ask would never have looked at.
        self._ensure_fresh()
        self._advance()

    def _advance(self) -> None:
        """Take every stage decision the current intervals allow (a fixpoint: idempotent)."""
        if self._stopped or not self._warmed_up or not math.isfinite(self.theta):
            return
        while True:
            if self.best < 0:
                self.best = self._identify_best()
                if self.best < 0:
                    return
                self._owed, self._best_turn = -1, True
            h = self.best
            if self.stats.count[h] < self.min_answers:
                return  # h left before min_answers answers: it can never be decided
            if self.lows[h] > self.theta_high:
                self.remaining[h] = False
                self.removed.append(h)
                self.best = -1
                continue
            if self.highs[h] + self.epsilon < self.theta_low:
                self._stopped = True
            return

    def _candidates(self) -> BoolArray:
        # Unsampled arms are unavailable ones (every available arm is sampled by now): like
        # RR, the k-sigma rule then runs over the sampled arms only.
        return self.remaining & (self.stats.count > 0)

    def _identify_best(self) -> int:
        """LUCB1's stopping rule on R: the empirical best arm when it is separated, else -1."""
        candidates = np.flatnonzero(self._candidates())
        if candidates.size <= 1:
            # R = {h}: h is trivially the best (R cannot be empty: some arm is <= theta).
            return int(candidates[0]) if candidates.size else -1
        h, c = self._pair(candidates, self.highs)
        # UCB_l - LCB_h < epsilon (c is LUCB1's l); with epsilon = 0 that is LUCB1's LCB_h > UCB_l.
        gap = self.highs[c] - self.lows[h]
        return h if gap < self.epsilon else -1

    def _pair(self, candidates: IntArray, ucb: NDArray[np.float64]) -> tuple[int, int]:
        """LUCB1's pair: the empirical best h and the challenger l = argmax UCB over the rest."""
        h = int(candidates[np.argmax(self.means[candidates])])
        others = candidates[candidates != h]
        challenger = int(others[np.argmax(ucb[others])])
        return h, challenger

    def _condition_met(self) -> bool:
        return self._stopped

    # ------------------------------------------------------------------------- schedule
    def _can_progress(self) -> bool:
        return bool(self.available.any())

    def _schedule(self, limit: int) -> IntArray:
        # Slot by slot, counting the pulls handed out so far as pending, so that ask(k) is
        # exactly k calls of ask(1).
        pending = self.pending.copy()
        picks: list[int] = []
        for _ in range(limit):
            arm = self._next_arm(pending)
            if arm < 0:
                break
            picks.append(arm)
            pending[arm] += 1
        return np.array(picks, dtype=np.int64)

    def _next_arm(self, pending: IntArray) -> int:
        if not self._warmed_up:
            # First every arm min_answers times (once by default), round robin; then wait for
            # those answers before any LUCB pair.
            effective = self.stats.count + pending
            short = np.flatnonzero(self.available & (effective < self.min_answers))
            return int(short[np.argmin(effective[short])]) if short.size else -1
        if not math.isfinite(self.theta):
            return -1  # fewer than two workers ever answered: nothing to compare with
        if self.best >= 0:
            return self._comparison_arm()
        return self._lucb_arm(pending)

    def _comparison_arm(self) -> int:
        turn, self._best_turn = self._best_turn, not self._best_turn
        if turn and self.available[self.best]:
            return self.best
        return self._cursor.next_one(np.flatnonzero(self.available))

    def _lucb_arm(self, pending: IntArray) -> int:
        owed, self._owed = self._owed, -1
        if owed >= 0 and self.available[owed]:
            return owed
        candidates = np.flatnonzero(self._candidates())
        if candidates.size < 2:
            return -1  # only when every arm was removed, which the intervals rule out
        counts = self.stats.count
        # Pending answers narrow a radius as if already in; an arm with no answer keeps its
        # infinite one (inf * 0 would be NaN and poison the choice of pair).
        shrink = np.where(counts > 0, np.sqrt(counts / np.maximum(counts + pending, 1)), 1.0)
        h, challenger = self._pair(candidates, self.means + (self.highs - self.means) * shrink)
        if self.available[h]:
            if self.available[challenger]:
                self._owed = challenger
            return h
        return challenger if self.available[challenger] else -1

    # --------------------------------------------------------------------------- result
    def _describe(self) -> Result:
        result = super()._describe()
        extra = {**result.extra, "stages": len(self.removed) + 1, "removed": list(self.removed)}
        return replace(result, extra=extra)

    def _worker_line(self, arm: int, condition_met: bool) -> WorkerResult:
        line = super()._worker_line(arm, condition_met)
        if arm in self.removed:
            return replace(
                line,
                decision=Decision.OUTLIER,
                leaning=Decision.OUTLIER,
                reason="best remaining worker, interval clear above the threshold's",
            )
        if line.pulls < self.min_answers:
            return line  # undecided: no answers, or too few (a worker that left)
        if condition_met:
            return replace(
                line,
                decision=Decision.NORMAL,
                leaning=Decision.NORMAL,
                reason="below the best remaining worker, which is clear below the threshold",
            )
        if arm == self.best:
            reason = "best remaining worker, interval overlaps the threshold's"
        else:
            reason = "not separated by the best-arm search yet"
        return replace(line, reason=self._availability_reason(arm) or reason)

    def _is_decided(self, arm: int, condition_met: bool) -> bool:
        # Decisions are set in _worker_line: IB decides by stages, not by the active set.
        return False
