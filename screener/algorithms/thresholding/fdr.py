"""False-discovery control across workers: ban and accept lists by e-BH on e-processes.

Family-wise methods (``ConfidentThresholding``) make every decision right jointly, a union
bound over all workers that rarely decides within the 4 to 60 gold questions a real crowd
worker answers. Controlling the false-discovery rate asks less: among the workers banned, the
expected share of good ones is at most q. Wang & Ramdas (JRSS-B 2022) give the e-BH
procedure; Xu, Wang & Ramdas (NeurIPS 2021) apply it to e-processes in bandits, where it stays
valid at data-dependent stopping times (Jamieson & Jain, NeurIPS 2018, for the bandit setting
with FDR control).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._test_setups import AROUND_MEANS, BUDGET, AlgorithmSetup
from screener.algorithms.ask_tell import Ask
from screener.algorithms.result import Result
from screener.algorithms.thresholding._roster import RosterThresholding, check_max_workers
from screener.algorithms.topk import water_fill
from screener.algorithms.worker_result import Decision
from screener.arrays import BoolArray, FloatArray, IntArray, grown
from screener.errors import ConfigError
from screener.stats import BettingEProcess, e_bh

__all__ = ["FDRThresholding"]


class FDRThresholding(RosterThresholding):
    """Ban and accept workers with the false-discovery rate of each list at most ``q``.

    Evidence: one ``BettingEProcess`` per worker (screener.stats.eprocess) on rewards rescaled
    to [0, 1]: ``e_below`` against "accuracy >= threshold + eps" and ``e_above`` against
    "accuracy <= threshold - eps". Decisions, over all n workers:

    * BELOW (banned): the e-BH set at level q of the ``e_below`` values;
    * ABOVE (accepted): the e-BH set at level q of the ``e_above`` values;

    only workers with at least ``min_answers`` answers take part (the others count with
    e-value 0). ``eps`` > 0 is an indifference zone: a worker within eps of the bar may end
    on either side and is then no error, so every worker is eventually decided and the run can
    end; with eps = 0 a worker exactly at the bar is never decided.

    The lists are recomputed from the answers so far; a worker on a list is not asked again.
    Its decision is settled (final, its e-values frozen: answers already in flight still count
    in its estimate, not in its evidence) by the next ``ask`` that hands out questions or ends
    the run. Those are the asks a journal records, so a replay settles at the same moments; an
    ask that says WAIT settles nothing, and neither does ``result()``, which shows what a stop
    at that moment would conclude: looking never changes the run.

    Why the lists keep their promise. Index time by answers received. Each worker's e-process
    stopped when its decision is settled (a stopping time), or at the end of the run, is a
    nonnegative supermartingale under its null, so by optional stopping its final value e_i
    has expectation at most 1. A worker settled as banned at ask s had ``e_i >= n / (q |R_s|)``
    with R_s the ban list at that ask, and every member of R_s was settled at s or before, so
    ``|R_s| <= |B|`` for the final ban list B: B is self-consistent (every member has
    ``e_i >= n / (q |B|)``, values frozen since). Then FDP(B) = (banned nulls) / |B| <=
    (q / n) * (sum of e_i over nulls), whose expectation is at most q n0 / n whatever the
    dependence between workers (the e-BH argument of Wang & Ramdas 2022; Xu, Wang & Ramdas
    2021 for bandits). The same count shows that settled workers stay on every later list (the
    k settled members keep e-values >= n / (q k), so e-BH rejects at least k), and that
    restricting the lists (``min_answers``, the conflicts below) keeps the promise, which needs
    self-consistency only. The values are stopped ones, not running maxima: e-BH on suprema of
    e-processes does not control the FDR (Tavyrikov, Goeman & de Heide 2025), which is why an
    unsettled worker's evidence is its current value. The accept list is the mirror image.

    The two lists are disjoint. With eps = 0 a worker cannot qualify for both: ``e_below > 1``
    needs an average answer below the bar (``log(1 + lam y) <= lam y``) and ``e_above > 1``
    one above it, while every e-BH cut ``n / (q k)`` is at least ``1 / q > 1``; a worker
    decided on one side keeps, frozen, an e-value at most 1 on the other and never enters it.
    With eps > 0 an undecided worker averaging inside the zone can qualify for both: it goes to
    the side with the larger e-value (a tie to ABOVE, as elsewhere in screener), is removed
    from the other side's candidates and both sets are recomputed until they are disjoint.
    Either side is right for such a worker only if its accuracy is inside the zone, and each
    list's promise holds either way.

    Schedule: round robin over the undecided workers: fewest answered + pending first, ties to
    the lowest index (pending pulls count, so a batch spreads like single asks). The n of
    e-BH is the roster: ``max_workers`` in an open pool (workers yet to join count with
    e-value 0, so the lists stay valid whoever joins), else the pool.

    Result: decided workers' reasons name their e-value and their list's cut ``n / (q k)``;
    the intervals are informational (Hoeffding, pointwise, as in the fixed-budget methods):
    the decisions come from the e-values, not from them. ``extra`` holds both lists' cuts and
    every worker's natural-log e-values. Stops with CONDITION_MET when every worker is decided;
    workers exhausted or left undecided by the budget stay UNDECIDED with the reason.

    Examples
    --------
    On six simulated workers (three workers under the bar of 0.5, three over it):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.2, 0.35, 0.45, 0.65, 0.75, 0.9]
    >>> algorithm = FDRThresholding(6, threshold=0.5, eps=0.1, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('condition met', 198)
    >>> [w.decision.value for w in sorted(result.workers, key=lambda w: w.arm)]
    ['below', 'below', 'below', 'above', 'above', 'above']
    """

    name = "fdr-thresholding"
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup({"threshold": 0.6, "q": 0.2, **BUDGET}, means=AROUND_MEANS),
        AlgorithmSetup(
            {"threshold": 0.6, "q": 0.2, "eps": 0.05, **BUDGET}, means=AROUND_MEANS, label="eps"
        ),
        AlgorithmSetup(
            {"threshold": 0.6, "q": 0.2, "max_workers": 100, **BUDGET},
            means=AROUND_MEANS,
            label="open-pool",
        ),
    )
    fixed_budget = False
    pull_each_first = False
    needs_answers = False
    guarantee: ClassVar[str | None] = (
        "false-discovery rates at most q: in expectation at most a share q of the banned "
        "workers are at or above threshold + eps, and at most a share q of the accepted "
        "workers are at or below threshold - eps (e-BH on betting e-processes, any stopping "
        "time)"
    )

    def __init__(
        self,
        n_workers: int,
        *,
        q: float = 0.1,
        eps: float = 0.0,
        min_answers: int = 1,
        max_workers: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(n_workers, **kwargs)
        self.max_workers = check_max_workers(max_workers, self.n_arms)
        if not 0.0 < q < 1.0:
            raise ConfigError(f"q must lie in (0, 1), got {q}", "try q=0.1")
        if not (math.isfinite(eps) and eps >= 0.0):
            raise ConfigError(f"eps must be a finite number >= 0, got {eps}", "try eps=0.05")
        if not (isinstance(min_answers, int | np.integer) and min_answers >= 1):
            raise ConfigError(
                f"min_answers must be a whole number >= 1, got {min_answers}", "try 1 or 4"
            )
        if not (self.lower < self.threshold - eps and self.threshold + eps < self.upper):
            raise ConfigError(
                f"{self.name} needs threshold +- eps strictly inside the reward range "
                f"({self.lower}, {self.upper}), got threshold {self.threshold}, eps {eps}",
                "lower eps, or move the bar off the end of the range",
            )
        self.q = float(q)
        self.eps = float(eps)
        self.min_answers = int(min_answers)
        self.evidence = BettingEProcess(
            self.n_arms,
            (self.threshold + self.eps - self.lower) / self.width,
            above_bar=(self.threshold - self.eps - self.lower) / self.width,
        )
        self.settled_below = np.zeros(self.n_arms, dtype=bool)  # final decisions
        self.settled_above = np.zeros(self.n_arms, dtype=bool)
        self.banned = self.settled_below.copy()  # the current lists (settled or not)
        self.accepted = self.settled_above.copy()
        self.log_e_below: FloatArray = np.zeros(self.n_arms)
        self.log_e_above: FloatArray = np.zeros(self.n_arms)

    # ------------------------------------------------------------------- open pools
    def _on_joined(self, arms: IntArray) -> None:
        super()._on_joined(arms)
        count = arms.size
        self.evidence.grow(count)
        for name in ("settled_below", "settled_above", "banned", "accepted"):
            setattr(self, name, grown(getattr(self, name), count, False))
        self.log_e_below = grown(self.log_e_below, count, 0.0)
        self.log_e_above = grown(self.log_e_above, count, 0.0)

    def _on_asked_for(self, ask: Ask) -> None:
        """A stream's question for one worker settles the lists like any ask that does not
        wait: it is journaled, so a replay settles at the same moment."""
        self.settled_below |= self.banned
        self.settled_above |= self.accepted

    def verdicts(self) -> NDArray[np.int8]:
        """+1 settled accepted, -1 settled banned, 0 otherwise (only settled lists are final)."""
        self._ensure_fresh()
        above = self.settled_above.astype(np.int8)
        return np.where(self.settled_below, np.int8(-1), above).astype(np.int8, copy=False)

    @property
    def decided(self) -> BoolArray:
        """Workers on either list (as of the last refresh), settled or not."""
        return self.banned | self.accepted

    @property
    def settled(self) -> BoolArray:
        """Workers whose decision is final (its e-values frozen)."""
        return self.settled_below | self.settled_above

    # ------------------------------------------------------------------ the contract
    def _on_asked(self, ask: Ask) -> None:
        """Unless the ask said WAIT, settle the lists it used."""
        if not ask.wait:
            self.settled_below |= self.banned
            self.settled_above |= self.accepted

    def _on_answers(self, pull_ids: IntArray, arms: IntArray, rewards: FloatArray) -> None:
        super()._on_answers(pull_ids, arms, rewards)
        live = ~self.settled[arms]  # a settled worker's evidence is frozen
        scaled = np.clip((rewards[live] - self.lower) / self.width, 0.0, 1.0)
        self.evidence.update_many(arms[live], scaled)

    # ------------------------------------------------------------------ subclass steps
    def _refresh(self) -> None:
        super()._refresh()
        self.log_e_below = self.evidence.log_e_below()
        self.log_e_above = self.evidence.log_e_above()
        banned, accepted = self._lists()
        # Settled workers stay in the e-BH sets by themselves (see the class docstring); the
        # union only makes sure a final decision is never shown as anything else.
        self.banned, self.accepted = banned | self.settled_below, accepted | self.settled_above

    def _lists(self) -> tuple[BoolArray, BoolArray]:
        """The e-BH ban and accept sets, made disjoint (see the class docstring)."""
        eligible = self.stats.count >= self.min_answers
        may_ban = eligible & ~self.settled_above
        may_accept = eligible & ~self.settled_below
        e_below, e_above = _exp(self.log_e_below), _exp(self.log_e_above)
        while True:
            banned = self._e_bh(np.where(may_ban, e_below, 0.0))
            accepted = self._e_bh(np.where(may_accept, e_above, 0.0))
            both = banned & accepted
            if not both.any():
                return banned, accepted
            goes_above = both & (self.log_e_above >= self.log_e_below)
            may_ban &= ~goes_above
            may_accept &= ~(both & ~goes_above)

    def _e_bh(self, e_values: FloatArray) -> BoolArray:
        """e-BH at level q over the roster (absent workers: e-value 0)."""
        absent = np.zeros(self._roster - self.n_arms)
        return e_bh(np.concatenate([e_values, absent]), self.q)[: self.n_arms]

    def _condition_met(self) -> bool:
        return bool(self.decided.all())

    def _can_progress(self) -> bool:
        return bool((self.available & ~self.decided).any())

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        return np.where(self.decided[arms], math.inf, effective)

    def _schedule(self, limit: int) -> IntArray:
        """``_index`` (fewest effective pulls first, ties to the lowest index), filled in one
        vectorised step rather than one heap pop per pull."""
        arms = np.flatnonzero(self.available & ~self.decided).astype(np.int64)
        effective = (self.stats.count + self.pending)[arms]
        return water_fill(arms, effective, int(effective.max(initial=0)) + limit, limit)

    # ------------------------------------------------------------------------- result
    def _cut(self, members: BoolArray) -> float:
        """``n / (q k)`` for a list of k members: the e-value every member reaches."""
        k = int(members.sum())
        return self._roster / (self.q * k) if k else math.inf

    def _decide(self, arm: int, leaning: Decision) -> tuple[Decision, str]:
        for members, decision, verb, log_e in (
            (self.banned, Decision.BELOW, "banned", self.log_e_below),
            (self.accepted, Decision.ABOVE, "accepted", self.log_e_above),
        ):
            if members[arm]:
                return decision, (
                    f"{verb} by e-BH at q = {self.q:g} (e = {_show(log_e[arm])} >= "
                    f"{self._cut(members):.4g} = n / (q k), k = {int(members.sum())}); "
                    "interval informational"
                )
        strongest = max(float(self.log_e_below[arm]), float(self.log_e_above[arm]))
        reason = f"e-values short of the e-BH cut (largest e = {_show(strongest)})"
        if self.stats.count[arm] < self.min_answers:
            reason = f"fewer than min_answers = {self.min_answers} answers"
        unavailable = self._availability_reason(arm)
        if unavailable is not None:
            return Decision.UNDECIDED, f"{reason}; {unavailable}"
        if self.finished:
            return Decision.UNDECIDED, f"{reason} ({self.stop_reason})"
        return Decision.UNDECIDED, reason

    def _describe(self) -> Result:
        result = super()._describe()
        extra = {
            **result.extra,
            "q": self.q,
            "eps": self.eps,
            "ban_cut": _finite(self._cut(self.banned)),
            "accept_cut": _finite(self._cut(self.accepted)),
            # What the lists' promise allows, in workers (the report's "mistakes").
            "wrong_bans_at_most": self.q * int(self.banned.sum()),
            "bad_accepted_at_most": self.q * int(self.accepted.sum()),
            "log_e_below": self.log_e_below.tolist(),
            "log_e_above": self.log_e_above.tolist(),
        }
        # A decided worker leans the way it was decided, even if answers that arrived after
        # its evidence froze moved its estimate across the bar.
        workers = tuple(
            w if w.decision is Decision.UNDECIDED else replace(w, leaning=w.decision)
            for w in result.workers
        )
        return replace(result, workers=workers, extra=extra)


def _exp(log_values: FloatArray) -> FloatArray:
    with np.errstate(over="ignore"):
        return np.exp(log_values)


def _show(log_e: float) -> str:
    """An e-value for people: 37.2, 1.2e+05, or e^812 past the float range."""
    return f"{math.exp(log_e):.3g}" if log_e < 700.0 else f"e^{log_e:.0f}"


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
