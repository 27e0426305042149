"""The crowd prior's judging of the answer stream: the refits, each worker's decision as its
answer arrives, the pilot (the rules are the package docstring's)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from screener.algorithms.thresholding._base import ThresholdingAlgorithm
from screener.algorithms.thresholding.crowd_prior._checks import ROBUST_LEVEL
from screener.algorithms.thresholding.crowd_prior._posterior import PosteriorSummary
from screener.algorithms.thresholding.crowd_prior._queue import FewestFirst
from screener.arrays import BoolArray, FloatArray, IntArray, grown
from screener.stats.confseq import mixture_bounds
from screener.stats.prior import (
    GridPrior,
    PriorSet,
    StoppingCosts,
    StoppingTable,
    first_actions,
    prior_identified,
    stopping_table,
)
from screener.stats.prior.evidence import check_outside
from screener.stats.prior_choice import PriorChoice
from screener.stats.running import ArmRuns

__all__ = ["ACCEPTED", "BANNED", "UNDECIDED", "PriorJudging"]

#: A worker's state: its decision, final once taken.
UNDECIDED, BANNED, ACCEPTED = 0, 1, 2
_EVERY_WORKER = slice(None)
#: What is derived from the answers and the prior for the result (``_forget_derived``).
_DERIVED = ("_summary", "_spans")


class PriorJudging(ThresholdingAlgorithm):
    """Decisions under a crowd prior refit from the answers, judged answer by answer in the
    order ``tell`` accepted them. The subclass (``CrowdPrior``) sets the parameters below
    from its constructor, then calls ``_start``."""

    q: float
    costs: StoppingCosts | None
    robust: float
    prior_family: str
    contamination: float
    fit_check: float
    pilot: int | None
    reconsider: bool
    min_answers: int
    max_answers: int
    #: The bar on [0, 1].
    bar: float

    def _start(self) -> None:
        """The state before any answer: no decision, the uniform placeholder prior, the
        pilot's workers drawn (cost mode: the stopping table under the placeholder)."""
        self.state = np.zeros(self.n_arms, dtype=np.int8)
        self._forget_derived()
        self.decided_at: FloatArray = np.full(self.n_arms, math.nan)
        #: Decided by its own answers alone (anytime interval at level q), whatever the prior.
        self.own_decided = np.zeros(self.n_arms, dtype=bool)
        self.prior = GridPrior.uniform()
        uniform = self.prior
        #: The family in force, the predictive checks and the misfit flag (``PriorChoice``).
        self.fit = PriorChoice(
            self.prior_family,
            horizon=self.max_answers,
            level=self.fit_check,
            contamination=self.contamination,
        )
        #: Bans made before the misfit flag was raised (None while it is not).
        self.bans_before_misfit: int | None = None
        #: The priors every decision must hold under (robust > 0); the fitted one alone else.
        self.region = PriorSet(uniform.grid, uniform.weights[:, None])
        self.table: StoppingTable | None = None
        #: The pilot's workers (everyone without a pilot) and whether it is still running.
        self.in_pilot = np.ones(self.n_arms, dtype=bool)
        if self.pilot is not None and self.pilot < self.n_arms:
            self.in_pilot[:] = False
            self.in_pilot[self.rng.permutation(self.n_arms)[: self.pilot]] = True
        self.piloting = not self.in_pilot.all()
        self._pilot_size = int(self.in_pilot.sum())
        self._undecided = self.n_arms
        # Workers that can be asked (undecided, under max_answers, available), all and in the
        # pilot: kept per change of the arms a step touches, so no ask reads every worker.
        self._askable = self._askable_in_pilot = 0
        self._recount(np.arange(self.n_arms), +1)
        #: Arms decided since ``verdict_changes`` last looked (None: no one looks yet).
        self._changed: list[int] | None = None
        #: The askable workers by answers (built at the first ask after a pilot).
        self._queue: FewestFirst | None = None
        #: Answers before a worker may be decided: min_answers in the pilot, none outside it.
        self.min_counts = np.where(self.in_pilot, self.min_answers, 0).astype(np.int64)
        self._period = int(self.in_pilot.sum())  # answers between two refits
        self._since_refit = 0
        #: Whether the last refit's answers identify a crowd prior (``prior_identified``).
        self.identified = False
        #: Evidence of workers outside the run (``tell_outside``): in the fit, never arms.
        self.outside_successes: FloatArray = np.zeros(0)
        self.outside_counts: IntArray = np.zeros(0, dtype=np.int64)
        if self.costs is not None:
            self._refit()

    def _forget_derived(self) -> None:
        """Drop what the result derives from the answers and the prior, computed again when
        read: the posterior's summary (``prob_below``) and undecided workers' spans."""
        self._summary: PosteriorSummary | None = None
        #: P(below)'s range over the region, by (successes, answers) (robust reasons).
        self._spans: dict[tuple[float, int], tuple[float, float]] = {}

    def __getstate__(self) -> dict[str, object]:
        """The state without what is derived (``_forget_derived``): a snapshot neither
        stores it (four floats a worker) nor depends on how it is kept."""
        state = dict(self.__dict__)
        for name in _DERIVED:
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("outside_successes", np.zeros(0))  # a snapshot before it
        self.__dict__.setdefault("outside_counts", np.zeros(0, dtype=np.int64))
        self._forget_derived()

    def tell_outside(self, successes: object, counts: object) -> None:
        """The (successes on [0, 1], answers) of workers outside this run (another shard's
        of a pool), replacing those told before: from the next refit on, which this call
        makes, the prior is fitted on them beside the run's own workers (the fit, the region,
        ``prior_identified``); they are never arms, nor asked, nor decided."""
        self.outside_successes, self.outside_counts = check_outside(successes, counts)
        self._refit()

    def _fit_evidence(
        self, successes: FloatArray, counts: NDArray[np.int64]
    ) -> tuple[FloatArray, NDArray[np.int64]]:
        """The own workers' (successes, counts), the outside evidence after them."""
        if self.outside_counts.size == 0:
            return successes, counts
        return (np.concatenate([successes, self.outside_successes]),
                np.concatenate([counts, self.outside_counts]))  # fmt: skip

    def scaled_successes(self) -> FloatArray:
        """Each worker's successes on [0, 1] (fractional for graded answers)."""
        return self._scaled_successes()

    def _scaled_successes(self, arms: slice = _EVERY_WORKER) -> FloatArray:
        """Successes on [0, 1] of every worker, or of the ``arms`` slice alone (the same
        floats: element by element)."""
        counts = self.stats.count[arms]
        return np.asarray((self.stats.total[arms] - self.lower * counts) / self.width)

    def _on_answers(self, pull_ids: IntArray, arms: IntArray, rewards: FloatArray) -> None:
        # As if one answer at a time, in the order tell accepted them: the prior is refit
        # after every n_workers answers (the answer that completes them is judged under the
        # new fit) and a worker is judged when its own answer arrives, so the decisions depend
        # on the answer order only, never on when ask or result is called (a replay of the
        # journal makes exactly the same decisions). Between two refits the prior is fixed,
        # so a stretch of answers is judged in one pass. The answer that settles a pilot's
        # last worker ends it (and refits): an answer settles at most one worker, so with k
        # pilot workers open the next k - 1 answers cannot, and go in one stretch.
        start = 0
        while start < arms.size:
            refit_in = self._period - self._since_refit
            length = refit_in
            if self.piloting:
                length = min(length, max(1, self._askable_in_pilot - 1))
            stop = min(arms.size, start + length)
            successes, counts = self._counts_after(arms[start:stop], rewards[start:stop])
            scaled = (rewards[start:stop] - self.lower) / self.width
            self.fit.record(successes - scaled, counts - 1, scaled)
            touched = _distinct(arms[start:stop])
            self._recount(touched, -1)
            self.stats.update_many(arms[start:stop], rewards[start:stop])
            self._recount(touched, +1)
            self._since_refit += stop - start
            if stop - start == refit_in:  # the stretch's last answer completes the period
                last = stop - start - 1
                self._judge(arms[start : stop - 1], successes[:last], counts[:last])
                self._refit()
                self._judge(arms[stop - 1 : stop], successes[last:], counts[last:])
            else:
                self._judge(arms[start:stop], successes, counts)
            if self.piloting and self._pilot_settled():
                self._end_pilot()
            start = stop
        self._queue_again(_distinct(arms))
        self._finish_if_over()

    def _queue_again(self, arms: IntArray) -> None:
        """Put ``arms`` back in the schedule's queue where they may be asked again."""
        if self._queue is None or self.piloting:
            return
        for arm, count in zip(arms.tolist(), self.stats.count[arms].tolist(), strict=True):
            if count < self.max_answers:
                self._queue.push(arm, count)  # checked when it comes up

    def _finish_if_over(self) -> None:
        """Once no worker can be asked again, refit on every answer for the final look at the
        prior's fit (``PriorChoice``); it may judge workers held back for want of a fit."""
        if not self.fit.over and not self._can_progress():
            self._refit(final=True)

    def _pilot_settled(self) -> bool:
        """No pilot worker can still be asked (undecided, under max_answers, available)."""
        return self._askable_in_pilot == 0

    def _recount(self, arms: IntArray, sign: int) -> None:
        """Add (+1) or take out (-1) ``arms`` (distinct) from the askable counts: around a
        step that changes them, out before it and in after it."""
        open_ = (
            self.available[arms]
            & (self.state[arms] == UNDECIDED)
            & (self.stats.count[arms] < self.max_answers)
        )
        self._askable += sign * int(np.count_nonzero(open_))
        self._askable_in_pilot += sign * int(np.count_nonzero(open_ & self.in_pilot[arms]))

    def tallies(self) -> tuple[int, int, int]:
        """(undecided, askable, askable in the pilot) as kept step by step; equal to
        ``recounted_tallies`` at every step (the tests check it against numpy)."""
        return self._undecided, self._askable, self._askable_in_pilot

    def recounted_tallies(self) -> tuple[int, int, int]:
        """The same three counts read from every worker's arrays."""
        open_ = self.available & self._undecided_under_bound()
        undecided = int(np.count_nonzero(self.state == UNDECIDED))
        return undecided, int(open_.sum()), int((open_ & self.in_pilot).sum())

    def _end_pilot(self) -> None:
        """Refit on the pilot's answers and judge every other worker before its first question."""
        self.piloting = False
        self._queue = None  # every worker outside the pilot may be asked now: built anew
        self._period = self.n_arms
        self._refit()
        self._judge_unasked(np.flatnonzero(~self.in_pilot & (self.state == UNDECIDED)))

    def _judge_unasked(self, arms: IntArray, *, joined: bool = False) -> None:
        """Decide workers without answers on the crowd prior alone, where it settles them;
        ``joined``: workers who joined after the start, accepted so but never banned. Their
        prior was fitted on the workers who came first, and arrival order can go with quality
        (spammers first); a ban on it alone would turn away every worker after them unasked,
        and no answer would ever show the prior wrong. An acceptance is checked by the gate's
        first gold question and the audits."""
        if arms.size == 0 or not self.identified:
            return
        if not self._prior_alone_decides():
            return
        zeros = np.zeros(arms.size)
        self._judge(arms, zeros, zeros.astype(np.int64), bans=not joined)

    def _on_joined(self, arms: IntArray) -> None:
        """A newcomer is one of the pilot's workers while the pilot has room (or when there
        is no pilot: everyone then gets ``min_answers``); after that it is judged on the
        prior fitted so far before its first question, and from its own answers with no
        minimum. While a pilot of the starting roster runs, newcomers wait with the other
        workers outside it."""
        super()._on_joined(arms)
        self.fit.reopen()  # the run goes on: another final look when it next can go no further
        count = arms.size
        self.state = grown(self.state, count, UNDECIDED)
        self.decided_at = grown(self.decided_at, count, math.nan)
        self.own_decided = grown(self.own_decided, count, False)
        room = count if self.pilot is None else max(0, self.pilot - self._pilot_size)
        joins_pilot = np.arange(count) < room
        if self.piloting:  # a pilot of the starting roster is running: it is full
            joins_pilot[:] = False
        first = self.in_pilot.size
        self.in_pilot = grown(self.in_pilot, count, False)
        self.in_pilot[first:] = joins_pilot
        self.min_counts = grown(self.min_counts, count, 0)
        self.min_counts[first:] = np.where(joins_pilot, self.min_answers, 0)
        self._pilot_size += int(joins_pilot.sum())
        self._undecided += count
        self._recount(arms, +1)
        if not self.piloting:
            self._period = self.n_arms
            self._judge_unasked(arms[~joins_pilot], joined=True)
            self._queue_again(arms)

    def _prior_alone_decides(self) -> bool:
        """Cost mode: whether every Beta prior of the 95% likelihood-ratio region (as
        ``robust``, with the contamination) takes the same decision before any answer. A
        pilot of a few workers all right on their few answers fits a Beta with no tail below
        the bar; a decision on the prior alone should not rest on that fit alone. (Posterior
        mode: ``_judge`` holds each decision over the region when ``robust`` is set.)"""
        if self.costs is None:
            return True
        if self.table is None or self.table.action[0, 0] == StoppingTable.CONTINUE:
            return False  # the fitted prior (the region's first) asks: no agreement to check
        successes, counts = self._fit_evidence(self._scaled_successes(), self.stats.count)
        region = self.fit.region(successes, counts, level=ROBUST_LEVEL)
        region = region.contaminated(self.contamination)
        actions = first_actions(region, self.bar, self.costs, horizon=self.max_answers)
        return bool(actions[0] != StoppingTable.CONTINUE and (actions == actions[0]).all())

    def _on_unavailable(self, arm: int) -> None:
        self._available_changed(arm, -1)
        if self.piloting and self._pilot_settled():
            self._end_pilot()
        self._finish_if_over()

    def _on_returned(self, arm: int) -> None:
        self._available_changed(arm, +1)
        self._queue_again(np.array([arm], dtype=np.int64))

    def _available_changed(self, arm: int, sign: int) -> None:
        """``arm`` left (-1) or came back (+1): the askable counts follow."""
        if self.state[arm] == UNDECIDED and self.stats.count[arm] < self.max_answers:
            self._askable += sign
            self._askable_in_pilot += sign * int(self.in_pilot[arm])

    def _counts_after(
        self, arms: IntArray, rewards: FloatArray
    ) -> tuple[FloatArray, NDArray[np.int64]]:
        """Each answer's worker's (scaled successes, count) just after it, in answer order."""
        if arms.size == 1:  # one answer (a stream's): no grouping to do
            count = self.stats.count[arms] + 1
            total = self.stats.total[arms] + rewards
            return (total - self.lower * count) / self.width, count
        runs = ArmRuns(arms)
        arms = runs.arms_of_rows
        counts = self.stats.count[arms] + runs.rank + 1
        totals = self.stats.total[arms] + runs.cumsum(rewards[runs.order])
        successes = np.empty(counts.size)
        successes[runs.order] = (totals - self.lower * counts) / self.width
        answered = np.empty(counts.size, dtype=np.int64)
        answered[runs.order] = counts
        return successes, answered

    def _refit(self, *, final: bool = False) -> None:
        self._since_refit = 0
        successes, counts = self._scaled_successes(), self.stats.count
        waiting = not self.identified
        fit_successes, fit_counts = self._fit_evidence(successes, counts)
        self.identified = prior_identified(fit_counts)
        fitted = self.fit.refit(fit_successes, fit_counts, final=final)
        self.prior = fitted.contaminated(self.contamination)
        if self.fit.misfit is not None and self.bans_before_misfit is None:
            self.bans_before_misfit = int((self.state == BANNED).sum())
        if final and not (waiting and self.identified):
            return  # the run is over: nothing left to decide under the new fit
        if self.robust:
            region = self.fit.region(fit_successes, fit_counts, level=self.robust)
            self.region = region.contaminated(self.contamination)
        if self.costs is not None:
            self.table = stopping_table(
                self.prior, self.bar, self.costs, horizon=self.max_answers,
                min_answers=int(self.min_counts.min(initial=self.min_answers)),
            )  # fmt: skip
        if waiting and self.identified:  # judge the workers held back for want of a fit
            held = np.flatnonzero(counts >= np.maximum(self.min_counts, 1))
            self._judge(held, successes[held], counts[held])

    def _judge(
        self,
        arms: IntArray,
        successes: FloatArray,
        counts: NDArray[np.int64],
        *,
        bans: bool = True,
    ) -> None:
        """Decide each undecided worker at the first of its answers here that allows it (and,
        with ``reconsider``, ban an accepted one whose answers, audits included, now call
        for a ban under the same rule); ``bans=False``: acceptances only."""
        state = self.state[arms]
        accepted = state == ACCEPTED if self.reconsider else np.zeros(arms.size, dtype=bool)
        open_ = ((state == UNDECIDED) | accepted) & (counts >= self.min_counts[arms])
        if not open_.any():
            return
        arms, successes, counts = arms[open_], successes[open_], counts[open_]
        accepted = accepted[open_]
        # A worker's own answers, where they settle it alone, are never outvoted by the prior.
        low, high = mixture_bounds(successes, counts, self.q)
        own_ban, own_accept = high < self.bar, low >= self.bar
        p_bad: FloatArray | None = None  # each answer's P(bad) to record, if known here
        if self.identified:
            ban, accept, p_bad = self._prior_rule(successes, counts)
            ban, accept = own_ban | (ban & ~own_accept), own_accept | (accept & ~own_ban)
        else:
            ban, accept = own_ban, own_accept
        accept &= ~accepted  # an accepted worker reconsidered can only be banned
        if not bans:
            ban = np.zeros_like(accept)
        decided = np.flatnonzero(ban | accept)
        if decided.size == 0:
            return
        _, first = np.unique(arms[decided], return_index=True)
        rows = decided[first]
        newly = arms[rows][~accepted[rows]]  # first decisions (not a reconsidered one's ban)
        self._recount(newly, -1)
        self._undecided -= newly.size
        self.state[arms[rows]] = np.where(ban[rows], BANNED, ACCEPTED)
        self.own_decided[arms[rows]] = (own_ban | own_accept)[rows]
        if self._changed is not None:
            self._changed += arms[rows].tolist()
        if p_bad is None:  # the table decided: P(bad) is recorded, so needed only now
            # Of every answer here, not of the decided ones alone: numpy's exp may round an
            # element differently when the array around it changes.
            p_bad = self.prior.prob_below(successes, counts, self.bar)
        self.decided_at[arms[rows]] = p_bad[rows]

    def _prior_rule(
        self, successes: FloatArray, counts: NDArray[np.int64]
    ) -> tuple[BoolArray, BoolArray, FloatArray | None]:
        """(ban, accept, P(bad) to record or None) of each answer under the crowd prior."""
        if self.table is None and self.robust:
            lowest, highest = self.region.prob_below_range(successes, counts, self.bar)
            ban, accept = lowest >= 1.0 - self.q, highest <= self.q
            return ban, accept, np.where(ban, lowest, highest)  # the worst case, where decided
        if self.table is None:
            p_bad = self.prior.prob_below(successes, counts, self.bar)
            return p_bad >= 1.0 - self.q, p_bad <= self.q, p_bad
        action = self.table.lookup(successes, counts)[0]
        return action == StoppingTable.BAN, action == StoppingTable.ACCEPT, None

    def _undecided_under_bound(self) -> NDArray[np.bool_]:
        return np.asarray((self.state == UNDECIDED) & (self.stats.count < self.max_answers))

    def _open_at(self, arms: IntArray) -> NDArray[np.bool_]:
        """``_open`` (the workers to ask) of ``arms`` alone."""
        open_ = (self.state[arms] == UNDECIDED) & (self.stats.count[arms] < self.max_answers)
        return np.asarray(open_ & self.in_pilot[arms] if self.piloting else open_)


def _distinct(arms: IntArray) -> IntArray:
    """``arms`` without repeats (one answer's: as it is)."""
    return arms if arms.size == 1 else np.unique(arms)
