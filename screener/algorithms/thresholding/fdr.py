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
from screener.algorithms.thresholding._base import take_changes
from screener.algorithms.thresholding._roster import RosterThresholding, check_max_workers
from screener.algorithms.thresholding._round_robin import RoundRobinQueue
from screener.algorithms.worker_result import Decision
from screener.arrays import BoolArray, FloatArray, IntArray, grown
from screener.errors import ConfigError
from screener.stats import BettingEProcess
from screener.stats.ebh_set import EBHSet

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

    The lists follow the answers so far; a worker on a list is not asked again.
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

    Cost: an answer and an ask cost the same at any number of workers (issue 50). The lists
    are kept as the e-values move, each side's candidates sorted (``EBHSet``: the same sets
    ``e_bh`` gives on every worker's values, by the same float cuts), and the round robin is a
    heap of the undecided workers (``RoundRobinQueue``); only a worker whose evidence, count or
    settlement moved, or whose value lies between a list's old and new cut, is looked at.
    The result, ``verdicts()`` and ``decided`` still read every worker.

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
        self._start_books()
        self._touched.clear()  # no worker has answers yet: none is a candidate

    def _start_books(self) -> None:
        """The state that keeps the lists from the changes (see ``_refresh``), for the
        arrays above; every worker is entered again at the next refresh."""
        self._ebh = (EBHSet(self._roster, self.q), EBHSet(self._roster, self.q))
        self._touched: set[int] = set(range(self.n_arms))  # to enter again at the refresh
        self._dual: set[int] = set()  # candidates of both lists (eps > 0 only)
        self._fresh: tuple[set[int], set[int]] = (
            set(np.flatnonzero(self.banned & ~self.settled_below).tolist()),
            set(np.flatnonzero(self.accepted & ~self.settled_above).tolist()),
        )  # listed, not settled: the next ask settles them
        self._listed = [int(self.banned.sum()), int(self.accepted.sum())]
        decided = self.banned | self.accepted
        self._n_decided = int(decided.sum())
        self._n_open = int((self.available & ~decided).sum())
        effective = (self.stats.count + self.pending).tolist()
        self._queue = RoundRobinQueue()
        for arm in np.flatnonzero(self.available & ~decided).tolist():
            self._queue.enter(arm, effective[arm])
        self._changes: list[int] | None = None  # settled since ``verdict_changes`` looked
        self._dirty = True

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if "_ebh" not in state:  # pickled when every refresh recomputed the lists
            for stale in ("log_e_below", "log_e_above"):
                self.__dict__.pop(stale, None)
            self._start_books()

    # ------------------------------------------------------------------- open pools
    def _on_joined(self, arms: IntArray) -> None:
        super()._on_joined(arms)
        count = arms.size
        self.evidence.grow(count)
        for name in ("settled_below", "settled_above", "banned", "accepted"):
            setattr(self, name, grown(getattr(self, name), count, False))
        self._n_open += count
        for arm in arms.tolist():
            self._queue.enter(arm, 0)

    def _on_asked_for(self, ask: Ask) -> None:
        """A stream's question for one worker settles the lists like any ask that does not
        wait: it is journaled, so a replay settles at the same moment."""
        self._settle()

    def verdicts(self) -> NDArray[np.int8]:
        """+1 settled accepted, -1 settled banned, 0 otherwise (only settled lists are final)."""
        self._ensure_fresh()
        return _verdicts(self.settled_below, self.settled_above)

    def verdicts_of(self, arms: IntArray) -> NDArray[np.int8]:
        self._ensure_fresh()
        return _verdicts(self.settled_below[arms], self.settled_above[arms])

    def verdict_changes(self) -> IntArray | None:
        """The workers settled since the last call, each once, in index order (None at the
        first call: from then on each settlement is kept for the next)."""
        changed, self._changes = take_changes(self._changes)
        return changed

    @property
    def decided(self) -> BoolArray:
        """Workers on either list (as of the last refresh), settled or not."""
        return self.banned | self.accepted

    @property
    def settled(self) -> BoolArray:
        """Workers whose decision is final (its e-values frozen)."""
        return self.settled_below | self.settled_above

    @property
    def log_e_below(self) -> FloatArray:
        """Each worker's natural-log e-value against "accuracy >= threshold + eps"."""
        return self.evidence.log_e_below()

    @property
    def log_e_above(self) -> FloatArray:
        """Each worker's natural-log e-value against "accuracy <= threshold - eps"."""
        return self.evidence.log_e_above()

    # ------------------------------------------------------------------ the contract
    def _on_asked(self, ask: Ask) -> None:
        """Unless the ask said WAIT, settle the lists it used."""
        if not ask.wait:
            self._settle()

    def _settle(self) -> None:
        """Make the listed workers' decisions final (``settled_below |= banned``, above
        alike); each leaves the other list's candidates at the next refresh."""
        sides = (self.settled_below, self.settled_above)
        for settled, fresh in zip(sides, self._fresh, strict=True):
            if not fresh:
                continue
            settled[list(fresh)] = True
            self._touched |= fresh
            if self._changes is not None:
                self._changes += fresh
            fresh.clear()

    def _on_answers(self, pull_ids: IntArray, arms: IntArray, rewards: FloatArray) -> None:
        super()._on_answers(pull_ids, arms, rewards)
        live = ~(self.settled_below[arms] | self.settled_above[arms])  # evidence frozen
        scaled = np.clip((rewards[live] - self.lower) / self.width, 0.0, 1.0)
        self.evidence.update_many(arms[live], scaled)
        self._touched.update(arms[live].tolist())

    def _on_released(self, pull_id: int, arm: int) -> None:
        self._queue.enter(arm, self._effective(arm))

    def _on_unavailable(self, arm: int) -> None:
        if not (self.banned[arm] or self.accepted[arm]):
            self._n_open -= 1

    def _on_returned(self, arm: int) -> None:
        if not (self.banned[arm] or self.accepted[arm]):
            self._n_open += 1
            self._queue.enter(arm, self._effective(arm))

    # ------------------------------------------------------------------ subclass steps
    def _refresh(self) -> None:
        """The lists, from what changed since the last refresh: the workers whose evidence,
        answer count or settlement moved are entered again in each side's ``EBHSet``, both
        sets are solved and made disjoint (``_resolve_conflicts``), and only the workers
        whose standing may have moved are listed again: those entered, and those between
        each list's old and new cut. The lists are what ``e_bh`` on every worker's values
        gives (settled workers stay in the sets by themselves, see the class docstring; the
        union with them only makes sure a final decision is never shown as anything else).
        The means are left to the result (``_describe``), which is the one to read them."""
        cuts = [ebh.threshold for ebh in self._ebh]
        touched, self._touched = self._touched, set()
        self._enter(sorted(touched))
        excluded = self._resolve_conflicts()
        self._touched |= excluded  # candidates again at the next refresh
        for side, ebh in enumerate(self._ebh):
            moved = set(ebh.between(cuts[side], ebh.threshold)) | touched | excluded
            self._relist(side, moved)

    def _enter(self, arms: list[int]) -> None:
        """Each of ``arms`` in each side's set with its e-value, when it is a candidate there:
        ``min_answers`` answers, and not settled on the other side."""
        if not arms:
            return
        rows = np.asarray(arms, dtype=np.int64)
        log_below, log_above = self.evidence.log_e_of(rows)
        e_below, e_above = _exp(log_below).tolist(), _exp(log_above).tolist()
        eligible = (self.stats.count[rows] >= self.min_answers).tolist()
        below, above = self._ebh
        for arm, fit, low, high in zip(arms, eligible, e_below, e_above, strict=True):
            below.enter(arm, low if fit and not self.settled_above[arm] else None)
            above.enter(arm, high if fit and not self.settled_below[arm] else None)
            if below.value(arm) is not None and above.value(arm) is not None:
                self._dual.add(arm)
            else:
                self._dual.discard(arm)

    def _resolve_conflicts(self) -> set[int]:
        """Solve both sets; a worker in both goes to the side with the larger e-value (a tie
        to ABOVE) and leaves the other side's candidates, and both are solved again until
        they are disjoint (see the class docstring). The workers taken out, for this
        refresh only."""
        below, above = self._ebh
        excluded: set[int] = set()
        while True:
            below.solve()
            above.solve()
            both = sorted(a for a in self._dual if below.contains(a) and above.contains(a))
            if not both:
                return excluded
            log_below, log_above = self.evidence.log_e_of(both)
            for arm, goes_above in zip(both, (log_above >= log_below).tolist(), strict=True):
                (below if goes_above else above).enter(arm, None)
                self._dual.discard(arm)
                excluded.add(arm)

    def _relist(self, side: int, arms: set[int]) -> None:
        """The standing on ``side`` (0: banned, 1: accepted) of ``arms``, from its set."""
        ebh, fresh = self._ebh[side], self._fresh[side]
        settled = self.settled_below if side == 0 else self.settled_above
        listed, other = (self.banned, self.accepted) if side == 0 else (self.accepted, self.banned)
        for arm in arms:
            member = ebh.contains(arm)
            if member and not settled[arm]:
                fresh.add(arm)
            else:
                fresh.discard(arm)
            now = member or bool(settled[arm])
            if now == listed[arm]:
                continue
            listed[arm] = now
            self._listed[side] += 1 if now else -1
            if other[arm]:
                continue  # decided before and after (it moved between the lists)
            self._n_decided += 1 if now else -1
            if self.available[arm]:
                self._n_open += -1 if now else 1
            if not now:
                self._queue.enter(arm, self._effective(arm))

    def _condition_met(self) -> bool:
        return self._n_decided == self.n_arms

    def _can_progress(self) -> bool:
        return self._n_open > 0

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        return np.where(self.banned[arms] | self.accepted[arms], math.inf, effective)

    def _schedule(self, limit: int) -> IntArray:
        """``_index`` (fewest effective pulls first, ties to the lowest index), from the heap
        of the open workers (``RoundRobinQueue``): a batch costs its pulls, not the pool."""
        count, pending = self.stats.count, self.pending  # one view each, not one a pick

        def effective(arm: int) -> int:
            return int(count[arm] + pending[arm])

        return np.asarray(self._queue.take(limit, self._is_open, effective), dtype=np.int64)

    def _is_open(self, arm: int) -> bool:
        return bool(self.available[arm]) and not (self.banned[arm] or self.accepted[arm])

    def _effective(self, arm: int) -> int:
        return int(self.stats.count[arm] + self.pending[arm])

    # ------------------------------------------------------------------------- result
    def _cut(self, side: int) -> float:
        """``n / (q k)`` for a list of k members: the e-value every member reaches."""
        k = self._listed[side]
        return self._roster / (self.q * k) if k else math.inf

    def _leaning(self, arm: int) -> Decision:
        mean = self.stats.total[arm] / self.stats.count[arm]
        return Decision.ABOVE if mean >= self.threshold else Decision.BELOW

    def _decide(self, arm: int, leaning: Decision) -> tuple[Decision, str]:
        log_e = self.evidence.log_e_of([arm])
        for side, members, decision, verb in (
            (0, self.banned, Decision.BELOW, "banned"),
            (1, self.accepted, Decision.ABOVE, "accepted"),
        ):
            if members[arm]:
                return decision, (
                    f"{verb} by e-BH at q = {self.q:g} (e = {_show(float(log_e[side][0]))} >= "
                    f"{self._cut(side):.4g} = n / (q k), k = {self._listed[side]}); "
                    "interval informational"
                )
        strongest = max(float(log_e[0][0]), float(log_e[1][0]))
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
        super()._refresh()  # the means and gaps the result shows
        result = super()._describe()
        extra = {
            **result.extra,
            "q": self.q,
            "eps": self.eps,
            "ban_cut": _finite(self._cut(0)),
            "accept_cut": _finite(self._cut(1)),
            # What the lists' promise allows, in workers (the report's "mistakes").
            "wrong_bans_at_most": self.q * self._listed[0],
            "bad_accepted_at_most": self.q * self._listed[1],
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


def _verdicts(settled_below: BoolArray, settled_above: BoolArray) -> NDArray[np.int8]:
    above = settled_above.astype(np.int8)
    return np.where(settled_below, np.int8(-1), above).astype(np.int8, copy=False)


def _exp(log_values: FloatArray) -> FloatArray:
    with np.errstate(over="ignore"):
        return np.exp(log_values)


def _show(log_e: float) -> str:
    """An e-value for people: 37.2, 1.2e+05, or e^812 past the float range."""
    return f"{math.exp(log_e):.3g}" if log_e < 700.0 else f"e^{log_e:.0f}"


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
