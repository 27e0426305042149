"""Screening under a crowd prior (empirical Bayes): ban or accept each worker against a bar as
soon as the crowd's answers make the decision probable enough, or cheap enough.

Real workers answer a few dozen gold questions at most, far too few for a family-wise
frequentist guarantee. What a requester can use is how the crowd itself is distributed: most
crowds are mostly good workers plus a tail of spammers, and that is visible after a few
answers from everyone. ``CrowdPrior`` fits the distribution of worker accuracy from all the
answers so far (a Beta by default, ``screener.stats.prior.fit_beta_prior``), gives each worker the
posterior probability of being below the bar, and decides:

* posterior mode (default): BAN when ``P(accuracy < bar) >= 1 - q``, ACCEPT when it is at most
  ``q``. Each decision is wrong with posterior probability at most q, so when the prior fits
  the expected share of good workers among the banned (and of bad among the accepted) is at
  most q: a Bayesian promise, not a frequentist one. By default (``robust=0.95``) the
  probability must clear the level under every Beta prior the answers cannot rule out (the
  95% likelihood-ratio region of its mean and concentration, ``beta_prior_region``), not only
  under the best-fitting one: after three answers per worker a crowd's dispersion is barely
  identified, and decisions taken under the fitted Beta alone were wrong 2.3-3.8 times as
  often as they claimed (BENCHMARKS.md, calibration); robust ones were wrong less often than
  claimed on both real replays and simulated crowds. ``robust=0`` decides under the fit alone.
* cost mode (``false_ban`` and ``missed_bad`` given, a question costing ``question``): the
  Bayes-optimal stopping rule under the prior (``screener.stats.stopping_table``): a worker is
  asked again only while the expected saving in mistakes is worth the price of a question.

Whether the crowd fits the prior is checked as the answers come (``PriorChoice``, in
``screener.stats.prior_choice``): a posterior predictive check of every answer against the
prior's prediction, at a few looks during the run and a final one, with a false alarm at most
``fit_check`` (0.05) per run on a crowd the prior fits. A Beta holds no crowd of "mostly good
plus a block of spammers"; with ``prior="auto"`` (the default) a look at which the Beta fails
the check and a mixture of two Betas fits better by BIC moves the decisions to come to the
two-Beta prior (robust over its own likelihood-ratio region,
``screener.stats.prior_mixture``). The first look the prior in force fails raises the misfit
flag: the result's ``extra`` says when (``prior_misfit_at_answers``, ``bans_before_misfit``)
and carries it in ``warnings`` for the report to show above the decisions. Most of the
check's power comes late: most workers are decided after three to six answers, before the
answers can tell a crowd's shape (BENCHMARKS.md, "The crowd prior's fit").

A pilot (``pilot=m``) buys the crowd's distribution first: only m workers (a seeded random
choice) are asked, each at least ``min_answers`` times, until every one of them is decided or at
``max_answers``. Then the prior is refit from their answers and the other workers are judged
under it before any question: where the crowd is good enough (or bad enough) for the costs or
the q stated, a worker outside the pilot is accepted (or banned) on the prior alone, asked
nothing; otherwise it is asked, with no minimum, until its own answers decide it. In cost
mode that decision before any question is taken only when every Beta prior the pilot's answers
cannot rule out (the 95% likelihood-ratio region, as ``robust``) agrees on it. Without a
pilot (the default) every worker is asked at least ``min_answers`` times. What a pilot saves is
the questions the oracle bound of issue 12 shows a known crowd would not ask (BENCHMARKS.md,
"What any method could reach"); what it risks is a prior fitted on m workers: the decisions on
the prior alone are as right as the pilot is representative of the crowd.

Decisions are final (a ban is acted on when it is made): a decided worker is not asked again
and keeps its decision when later answers of other workers move the prior. The prior is refit
from the whole answer table after every n_workers answers (every m during a pilot, and once at
its end) and a worker is judged when its own answer arrives (the workers outside a pilot also
at its end), so the decisions are a function of the order of the answers alone, and a replay of
the journal makes the same decisions. No worker is decided before the answers identify a crowd
prior (two workers with two answers each, ``prior_identified``): until then the prior is the
uniform placeholder, which no answer has ruled in, and a worker who reaches ``min_answers``
meanwhile is judged at the refit that first identifies one.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._checks import check_choice, check_count, check_flag
from screener.algorithms.result import Decision, Result
from screener.algorithms.thresholding import ThresholdingAlgorithm, _grown
from screener.arrays import FloatArray, IntArray
from screener.errors import ConfigError
from screener.stats.prior import (
    GridPrior,
    PriorSet,
    StoppingCosts,
    StoppingTable,
    first_actions,
    prior_identified,
    stopping_table,
)
from screener.stats.prior_choice import FAMILIES, PriorChoice
from screener.stats.running import ArmRuns

__all__ = ["CrowdPrior"]

#: The default level of the hyperparameter region decisions must hold over (posterior mode).
ROBUST_LEVEL = 0.95
_UNDECIDED = 0
_BANNED = 1
_ACCEPTED = 2
_FAMILY_NAMES = {"beta": "Beta prior", "two-beta": "two-Beta prior", "npmle": "grid prior"}
_VERDICTS = np.array([0, -1, 1], dtype=np.int8)  # verdicts() by state


class CrowdPrior(ThresholdingAlgorithm):
    """Empirical-Bayes screening against a bar (see the module docstring for both modes).

    Parameters: ``threshold`` (the bar, in reward units), ``q`` (posterior error allowed per
    decision, posterior mode), ``false_ban`` / ``missed_bad`` / ``question`` (costs, cost
    mode: give both of the first two), ``min_answers`` (no decision before that many answers;
    default 3, as the platforms' rules), ``max_answers`` (no worker gets more questions: the
    bound printed to the requester; in posterior mode a worker still unsure there stays
    UNDECIDED, in cost mode the rule decides at the bound), ``prior`` ("auto": the Beta, or
    the two-Beta mixture while the Beta fails the fit check and the mixture fits better;
    "beta": the Beta only; "npmle": the grid maximum-likelihood prior), ``contamination``
    (share of the uniform mixed into the prior), ``robust`` (level of the hyperparameter
    region every posterior-mode decision must hold over; default 0.95 with the Beta prior, 0
    otherwise; cost mode takes none), ``pilot`` (how many workers, chosen at random by
    ``seed``, are screened before the others may be decided on the fitted prior alone;
    default none: everyone gets ``min_answers``), ``reconsider`` (answers to audit
    questions, ``ask_for(arm, audit=True)``, of an accepted worker are judged too, and ban it
    when all its answers call for a ban under the same rule, each ban keeping the promise;
    those of an undecided worker at ``max_answers`` may decide it: audits go past that bound;
    default off: decisions are final), ``fit_check`` (false-alarm level, per run, of the
    predictive check of the prior; 0 turns the check off, and with it the two-Beta prior).

    Schedule: one question in flight per worker (the decision follows each answer), fewest
    answers first, ties to the lowest index; decided workers and workers at ``max_answers``
    are not asked again; while a pilot runs, only its workers are asked. Graded rewards enter
    the likelihood with fractional successes.

    Under concurrency: when every undecided worker has a question in flight and the window
    has room, a worker with fewer than ``min_answers`` answers and questions in flight gets
    more, up to ``min_answers`` in all: no decision comes before them, so each is needed
    whatever the answers in flight say. Beyond ``min_answers`` any answer may decide (the
    prior moves with other workers' answers, so no later count is sure), so one question at
    a time. The fill goes to the worker with the fewest questions in flight first (then the
    fewest answers, then the lowest index); one question at a time, or a batch with nothing
    in flight and no more room than undecided workers, the pulls are exactly as before.

    Examples
    --------
    On six simulated workers (three workers under the bar of 0.5, three over it):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.2, 0.35, 0.45, 0.65, 0.75, 0.9]
    >>> algorithm = CrowdPrior(6, threshold=0.5, max_answers=60, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('workers exhausted', 185)
    >>> [w.decision.value for w in sorted(result.workers, key=lambda w: w.arm)]
    ['below', 'undecided', 'undecided', 'above', 'above', 'above']
    """

    name = "crowd-prior"
    fixed_budget = False
    decisions_final = True
    needs_answers = False
    pull_each_first = False
    guarantee: ClassVar[str | None] = (
        "Bayesian: if worker accuracies follow the crowd prior fitted from the answers, each "
        "ban or acceptance is wrong with posterior probability at most q, so the expected "
        "share of wrong bans is at most q; no frequentist guarantee"
    )
    robust_guarantee: ClassVar[str] = (
        "Bayesian, robust: each ban or acceptance is wrong with posterior probability at most "
        "q under every Beta crowd prior the answers do not rule out (likelihood-ratio region), "
        "so the expected share of wrong bans is at most q if accuracies are Beta-distributed "
        "across the crowd; no frequentist guarantee"
    )
    mixture_guarantee: ClassVar[str] = (
        "Bayesian, robust: each ban or acceptance is wrong with posterior probability at most "
        "q under every two-Beta crowd prior the answers do not rule out (likelihood-ratio "
        "region, on a lattice around the fit), so the expected share of wrong bans is at most "
        "q if accuracies follow a mixture of two Betas across the crowd; no frequentist "
        "guarantee"
    )
    cost_guarantee: ClassVar[str] = (
        "Bayes-optimal stopping: minimises the expected cost per worker (questions, false "
        "bans, missed bad workers) when worker accuracies follow the fitted crowd prior; no "
        "frequentist guarantee"
    )

    def __init__(
        self,
        n_workers: int,
        *,
        threshold: float,
        q: float = 0.1,
        false_ban: float | None = None,
        missed_bad: float | None = None,
        question: float = 1.0,
        min_answers: int = 3,
        max_answers: int = 40,
        prior: str = "auto",
        contamination: float = 0.0,
        robust: float | None = None,
        pilot: int | None = None,
        reconsider: bool = False,
        fit_check: float = 0.05,
        **kwargs: Any,
    ) -> None:
        super().__init__(n_workers, threshold=threshold, **kwargs)
        if not 0.0 < q < 0.5:
            raise ConfigError(f"q must lie in (0, 0.5), got {q}", "try q=0.1")
        if (false_ban is None) != (missed_bad is None):
            raise ConfigError(
                "cost mode needs both false_ban and missed_bad",
                "give both, e.g. -p false_ban=30 -p missed_bad=30, or neither",
            )
        for label, value in (("false_ban", false_ban), ("missed_bad", missed_bad)):
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise ConfigError(f"{label} must be a finite cost >= 0, got {value}")
        if not (math.isfinite(question) and question > 0):
            raise ConfigError(f"question must be a finite cost > 0, got {question}", "try 1")
        check_count("min_answers", min_answers, 1)
        check_count("max_answers", max_answers, min_answers, "it must be at least min_answers")
        if not self.lower < self.threshold < self.upper:
            raise ConfigError(
                f"the bar must lie strictly inside the reward range, got {self.threshold}",
                "give e.g. threshold=0.6",
            )
        check_choice("prior", prior, FAMILIES)
        self.prior_family = prior
        if not 0.0 <= contamination < 1.0:
            raise ConfigError(f"contamination must lie in [0, 1), got {contamination}", "try 0.2")
        self.contamination = float(contamination)
        if robust is None:  # the default: robust where it applies
            robust = ROBUST_LEVEL if prior != "npmle" and false_ban is None else 0.0
        if not 0.0 <= robust < 1.0:
            raise ConfigError(f"robust must lie in [0, 1), got {robust}", "try robust=0.95")
        if robust and (prior == "npmle" or false_ban is not None):
            raise ConfigError(
                "robust decisions need the Beta prior and the posterior mode",
                "drop robust, or use prior=auto or beta without false_ban / missed_bad",
            )
        self.robust = float(robust)
        if not 0.0 <= fit_check < 1.0:
            raise ConfigError(f"fit_check must lie in [0, 1), got {fit_check}", "try 0.05")
        self.fit_check = float(fit_check)
        if pilot is not None:
            check_count("pilot", pilot, 2, "the prior is fitted on at least two workers")
            if min_answers < 2:
                raise ConfigError(
                    "a pilot needs min_answers >= 2: its answers fit the crowd's dispersion",
                    "give min_answers=3 (the default), or drop pilot",
                )
        self.pilot = pilot
        self.reconsider = check_flag("reconsider", reconsider)
        self.q = float(q)
        self.costs = (
            None
            if false_ban is None or missed_bad is None
            else StoppingCosts(float(question), float(false_ban), float(missed_bad))
        )
        self.min_answers = int(min_answers)
        self.max_answers = int(max_answers)
        self.bar = (self.threshold - self.lower) / self.width
        self.state = np.zeros(self.n_arms, dtype=np.int8)
        self._prob_below: FloatArray | None = None  # computed when read (``prob_below``)
        self.decided_at: FloatArray = np.full(self.n_arms, math.nan)
        self.prior = GridPrior.uniform()
        uniform = self.prior
        #: The family in force, the predictive checks and the misfit flag (``PriorChoice``).
        self.fit = PriorChoice(
            prior, horizon=self.max_answers, level=self.fit_check, contamination=self.contamination
        )
        #: Bans made before the misfit flag was raised (None while it is not).
        self.bans_before_misfit: int | None = None
        #: The priors every decision must hold under (robust > 0); the fitted one alone else.
        self.region = PriorSet(uniform.grid, uniform.weights[:, None])
        self.table: StoppingTable | None = None
        #: The pilot's workers (everyone without a pilot) and whether it is still running.
        self.in_pilot = np.ones(self.n_arms, dtype=bool)
        if pilot is not None and pilot < self.n_arms:
            self.in_pilot[:] = False
            self.in_pilot[self.rng.permutation(self.n_arms)[:pilot]] = True
        self.piloting = not self.in_pilot.all()
        #: Answers before a worker may be decided: min_answers in the pilot, none outside it.
        self.min_counts = np.where(self.in_pilot, self.min_answers, 0).astype(np.int64)
        self._period = int(self.in_pilot.sum())  # answers between two refits
        self._since_refit = 0
        #: Whether the last refit's answers identify a crowd prior (``prior_identified``).
        self.identified = False
        if self.costs is not None:
            self._refit()

    def _param_value(self, name: str) -> Any:
        # The costs are kept together (all given or none); the prior's family by name.
        if name in ("question", "false_ban", "missed_bad"):
            unset = 1.0 if name == "question" else None
            return unset if self.costs is None else getattr(self.costs, name)
        return self.prior_family if name == "prior" else super()._param_value(name)

    # ------------------------------------------------------------------ decisions
    def scaled_successes(self) -> FloatArray:
        """Each worker's successes on [0, 1] (fractional for graded answers)."""
        return self._scaled_successes()

    def _scaled_successes(self) -> FloatArray:
        counts = self.stats.count
        return np.asarray((self.stats.total - self.lower * counts) / self.width)

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
                length = min(length, max(1, int(self._pilot_open().sum()) - 1))
            stop = min(arms.size, start + length)
            successes, counts = self._counts_after(arms[start:stop], rewards[start:stop])
            scaled = (rewards[start:stop] - self.lower) / self.width
            self.fit.record(successes - scaled, counts - 1, scaled)
            self.stats.update_many(arms[start:stop], rewards[start:stop])
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
        self._finish_if_over()

    def _finish_if_over(self) -> None:
        """Once no worker can be asked again, refit on every answer for the final look at the
        prior's fit (``PriorChoice``); it may judge workers held back for want of a fit."""
        if not self.fit.over and not self._can_progress():
            self._refit(final=True)

    def _pilot_open(self) -> NDArray[np.bool_]:
        """Pilot workers that can still be asked (undecided, under max_answers, available)."""
        return self.in_pilot & self.available & self._undecided_under_bound()

    def _pilot_settled(self) -> bool:
        return not self._pilot_open().any()

    def _end_pilot(self) -> None:
        """Refit on the pilot's answers and judge every other worker before its first question."""
        self.piloting = False
        self._period = self.n_arms
        self._refit()
        self._judge_unasked(np.flatnonzero(~self.in_pilot & (self.state == _UNDECIDED)))

    def _judge_unasked(self, arms: IntArray) -> None:
        """Decide workers without answers on the crowd prior alone, where it settles them."""
        if arms.size == 0 or not self.identified:
            return
        if not self._prior_alone_decides():
            return
        zeros = np.zeros(arms.size)
        self._judge(arms, zeros, zeros.astype(np.int64))

    # ------------------------------------------------------------------- open pools
    def _on_joined(self, arms: IntArray) -> None:
        """A newcomer is one of the pilot's workers while the pilot has room (or when there
        is no pilot: everyone then gets ``min_answers``); after that it is judged on the
        prior fitted so far before its first question, and from its own answers with no
        minimum. While a pilot of the starting roster runs, newcomers wait with the other
        workers outside it."""
        super()._on_joined(arms)
        self.fit.reopen()  # the run goes on: another final look when it next can go no further
        count = arms.size
        self.state = _grown(self.state, count, _UNDECIDED)
        self.decided_at = _grown(self.decided_at, count, math.nan)
        room = count if self.pilot is None else max(0, self.pilot - int(self.in_pilot.sum()))
        joins_pilot = np.arange(count) < room
        if self.piloting:  # a pilot of the starting roster is running: it is full
            joins_pilot[:] = False
        self.in_pilot = np.concatenate([self.in_pilot, joins_pilot])
        minimum = np.where(joins_pilot, self.min_answers, 0).astype(np.int64)
        self.min_counts = np.concatenate([self.min_counts, minimum])
        if not self.piloting:
            self._period = self.n_arms
            self._judge_unasked(arms[~joins_pilot])

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
        region = self.fit.region(self._scaled_successes(), self.stats.count, level=ROBUST_LEVEL)
        region = region.contaminated(self.contamination)
        actions = first_actions(region, self.bar, self.costs, horizon=self.max_answers)
        return bool(actions[0] != StoppingTable.CONTINUE and (actions == actions[0]).all())

    def _on_unavailable(self, arm: int) -> None:
        if self.piloting and self._pilot_settled():
            self._end_pilot()
        self._finish_if_over()

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
        self.identified = prior_identified(counts)
        fitted = self.fit.refit(successes, counts, final=final)
        self.prior = fitted.contaminated(self.contamination)
        if self.fit.misfit is not None and self.bans_before_misfit is None:
            self.bans_before_misfit = int((self.state == _BANNED).sum())
        if final and not (waiting and self.identified):
            return  # the run is over: nothing left to decide under the new fit
        if self.robust:
            region = self.fit.region(successes, counts, level=self.robust)
            self.region = region.contaminated(self.contamination)
        if self.costs is not None:
            self.table = stopping_table(
                self.prior, self.bar, self.costs, horizon=self.max_answers,
                min_answers=int(self.min_counts.min(initial=self.min_answers)),
            )  # fmt: skip
        if waiting and self.identified:  # judge the workers held back for want of a fit
            held = np.flatnonzero(counts >= np.maximum(self.min_counts, 1))
            self._judge(held, successes[held], counts[held])

    def _judge(self, arms: IntArray, successes: FloatArray, counts: NDArray[np.int64]) -> None:
        """Decide each undecided worker at the first of its answers here that allows it (and,
        with ``reconsider``, ban an accepted one whose answers, audits included, now call
        for a ban under the same rule)."""
        state = self.state[arms]
        accepted = state == _ACCEPTED if self.reconsider else np.zeros(arms.size, dtype=bool)
        open_ = ((state == _UNDECIDED) | accepted) & (counts >= self.min_counts[arms])
        if not self.identified or not open_.any():
            return
        arms, successes, counts = arms[open_], successes[open_], counts[open_]
        accepted = accepted[open_]
        p_bad = self.prior.prob_below(successes, counts, self.bar)
        if self.table is None and self.robust:
            lowest, highest = self.region.prob_below_range(successes, counts, self.bar)
            ban, accept = lowest >= 1.0 - self.q, highest <= self.q
            p_bad = np.where(ban, lowest, np.where(accept, highest, p_bad))  # the worst case
        elif self.table is None:
            ban, accept = p_bad >= 1.0 - self.q, p_bad <= self.q
        else:
            action = self.table.lookup(successes, counts)[0]
            ban, accept = action == StoppingTable.BAN, action == StoppingTable.ACCEPT
        accept &= ~accepted  # an accepted worker reconsidered can only be banned
        decided = np.flatnonzero(ban | accept)
        _, first = np.unique(arms[decided], return_index=True)
        rows = decided[first]
        self.state[arms[rows]] = np.where(ban[rows], _BANNED, _ACCEPTED)
        self.decided_at[arms[rows]] = p_bad[rows]

    def _refresh(self) -> None:
        super()._refresh()
        self._prob_below = None

    @property
    def prob_below(self) -> FloatArray:
        """Each worker's probability of being under the bar under the fitted prior (read
        by the result only, so computed when read, not after every answer)."""
        if self._prob_below is None:
            successes, counts = self._scaled_successes(), self.stats.count
            self._prob_below = self.prior.prob_below(successes, counts, self.bar)
        return self._prob_below

    def n_undecided(self) -> int:
        # _decide and _decide_unanswered: undecided exactly while the state says so.
        return int(np.count_nonzero(self.state == _UNDECIDED))

    def _condition_met(self) -> bool:
        return bool((self.state != _UNDECIDED).all())

    def _audits(self, arm: int) -> bool:
        """With ``reconsider``, an accepted worker's audit answers may still ban it, and an
        undecided one at ``max_answers`` may still be decided by them."""
        state = int(self.state[arm])
        at_cap = state == _UNDECIDED and self.stats.count[arm] >= self.max_answers
        return self.reconsider and (state == _ACCEPTED or at_cap)

    def _decided_now(self) -> NDArray[np.bool_]:
        return np.asarray(self.state != _UNDECIDED)

    def verdicts(self) -> NDArray[np.int8]:
        """+1 accepted, -1 banned, 0 undecided (decisions are final, answers or none)."""
        return _VERDICTS[self.state]

    def _undecided_under_bound(self) -> NDArray[np.bool_]:
        return np.asarray((self.state == _UNDECIDED) & (self.stats.count < self.max_answers))

    def _open(self) -> NDArray[np.bool_]:
        """Workers to ask: undecided, under max_answers and, while a pilot runs, in it."""
        open_ = self._undecided_under_bound()
        return open_ & self.in_pilot if self.piloting else open_

    def _can_progress(self) -> bool:
        return bool((self.available & self._open()).any())

    def _horizon(self) -> NDArray[np.int64]:
        """Up to ``min_answers`` answers, or the next one, for an open worker (see the
        class docstring, "Under concurrency")."""
        upto = np.minimum(np.maximum(self.stats.count + 1, self.min_counts), self.max_answers)
        return np.where(self._open(), upto, 0)

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        in_flight = effective > self.stats.count[arms]
        eligible = self._open()[arms] & ~in_flight
        return np.where(eligible, effective, math.inf)

    # ------------------------------------------------------------------------- result
    def _above(self) -> NDArray[np.bool_]:
        return np.asarray(self.prob_below < 0.5, dtype=np.bool_)

    def _leaning(self, arm: int) -> Decision:
        """A decided worker's reason does not rest on its leaning, so ``explain`` need not
        compute every worker's posterior (``prob_below``) for it: a stream explains each
        decision as it is made."""
        if self.state[arm] != _UNDECIDED:
            return Decision.BELOW if self.state[arm] == _BANNED else Decision.ABOVE
        return super()._leaning(arm)

    def _posterior(self) -> FloatArray:
        """Each worker's posterior weights on the prior's grid (the prior itself without
        answers)."""
        return self.prior.posterior(self._scaled_successes(), self.stats.count)

    def _estimate(self) -> tuple[FloatArray, FloatArray | None]:
        """The posterior mean, with the worker's own share correct beside it."""
        mean = self._posterior() @ self.prior.grid
        return self.lower + self.width * mean, self.means

    def _interval(self) -> tuple[FloatArray, FloatArray]:
        """A central posterior interval of probability 1 - 2q (posterior mode's q)."""
        cumulative = np.cumsum(self._posterior(), axis=1)
        grid = self.prior.grid
        low = grid[np.minimum((cumulative < self.q).sum(axis=1), grid.size - 1)]
        high = grid[np.minimum((cumulative < 1.0 - self.q).sum(axis=1), grid.size - 1)]
        return self.lower + self.width * low, self.lower + self.width * high

    def _decide(self, arm: int, leaning: Decision) -> tuple[Decision, str]:
        state = int(self.state[arm])
        if state != _UNDECIDED:
            banned = state == _BANNED
            evidence = self._decided_evidence(float(self.decided_at[arm]), banned)
            if self.stats.count[arm] == 0:
                evidence += ", on the prior alone (no question asked)"
            verdict = (Decision.BELOW, "banned") if banned else (Decision.ABOVE, "accepted")
            return verdict[0], f"{verdict[1]}: {evidence}"
        why = [self._open_evidence(arm)]
        if self.stats.count[arm] < self.min_counts[arm]:
            why.append(f"fewer than min_answers = {self.min_answers} answers")
        if self.stats.count[arm] >= self.max_answers:
            why.append(f"at the cap of {self.max_answers} questions")
        unavailable = self._availability_reason(arm)
        if unavailable is not None:
            why.append(unavailable)
        return Decision.UNDECIDED, "; ".join(why)

    def _below(self) -> str:
        return f"P(below {self.threshold:g})"

    def _decided_evidence(self, p_bad: float, banned: bool) -> str:
        """The condition that decided: the probability it held at (the worst case over the
        region when robust) against the level it had to clear."""
        if self.costs is not None:
            return (
                f"the Bayes-optimal stopping rule under the costs decided "
                f"({self._below()} = {p_bad:.3f} under the fitted crowd prior)"
            )
        need = f">= {1.0 - self.q:g}" if banned else f"<= {self.q:g}"
        if self.robust:
            bound = "at least" if banned else "at most"
            return (
                f"{self._below()} {bound} {p_bad:.3f} under every crowd prior the answers "
                f"allow (needs {need})"
            )
        return f"{self._below()} = {p_bad:.3f} under the fitted crowd prior (needs {need})"

    def _open_evidence(self, arm: int) -> str:
        """Why an undecided worker is not decided yet, in the terms its decision would take."""
        p_bad = float(self.prob_below[arm])
        if self.costs is not None:
            return (
                f"the stopping rule asks for more answers ({self._below()} = {p_bad:.3f} "
                "under the fitted crowd prior)"
            )
        levels = f"a ban needs >= {1.0 - self.q:g}, an acceptance <= {self.q:g}"
        if not self.robust:
            return f"{self._below()} = {p_bad:.3f} under the fitted crowd prior: {levels}"
        successes = self._scaled_successes()[arm : arm + 1]
        lowest, highest = self.region.prob_below_range(
            successes, self.stats.count[arm : arm + 1], self.bar
        )
        return (
            f"{self._below()} from {lowest[0]:.3f} to {highest[0]:.3f} over the crowd "
            f"priors the answers allow: {levels} under all of them"
        )

    def _decide_unanswered(self, arm: int) -> tuple[Decision, str]:
        if self.state[arm] == _UNDECIDED:
            return super()._decide_unanswered(arm)
        return self._decide(arm, Decision.UNDECIDED)

    @property
    def max_questions_per_worker(self) -> int:
        return self.max_answers

    def _describe(self) -> Result:
        result = super()._describe()
        extra = {
            **result.extra,
            "estimate": (
                "posterior mean under the fitted crowd prior, with its central "
                f"{1.0 - 2.0 * self.q:.0%} posterior interval; share: the worker's own "
                "share of answers right"
            ),
            "prior_mean": self.lower + self.width * self.prior.mean(),
            "prior_share_below": float(self.prior.weights[self.prior.grid < self.bar].sum()),
            "expected_wrong_bans": float(np.nansum(1.0 - self.decided_at[self.state == _BANNED])),
            "expected_missed_bad": float(np.nansum(self.decided_at[self.state == _ACCEPTED])),
            "pilot_workers": int(self.in_pilot.sum()),
            "decided_unasked": int(((self.state != _UNDECIDED) & (self.stats.count == 0)).sum()),
            **self.fit.summary(),
            "bans_before_misfit": self.bans_before_misfit,
            "warnings": [*result.extra.get("warnings", ()), *self._warnings()],
        }
        guarantee = self.robust_guarantee if self.robust else str(self.guarantee)
        if self.costs is not None:
            guarantee = self.cost_guarantee
        if not self.in_pilot.all():
            guarantee += (
                f"; the prior was fitted on a pilot of {int(self.in_pilot.sum())} workers and "
                "the others may be decided on it alone, without a question"
            )
        return replace(result, guarantee=self._with_fit(guarantee), extra=extra)

    def _with_fit(self, guarantee: str) -> str:
        """The promise where the two-Beta prior is in force: its own region's."""
        if self.fit.in_force == "two-beta" and guarantee.startswith(self.robust_guarantee):
            return self.mixture_guarantee + guarantee[len(self.robust_guarantee) :]
        return guarantee

    def _warnings(self) -> list[str]:
        """The misfit flag, for the report to show above the decisions (``extra["warnings"]``)."""
        misfit = self.fit.misfit
        if misfit is None:
            return []
        family = _FAMILY_NAMES[misfit.family]
        then = ""
        if self.fit.in_force == "two-beta":
            then = (
                "; the two-Beta prior fits better and is in force from "
                f"{self.fit.two_beta_from:,} answers"
            )
        return [
            f"THE CROWD DOES NOT FIT THE PRIOR: the {family} failed its predictive check "
            f"(p = {misfit.check.p_value:.2g} < {misfit.level:.2g}) at "
            f"{misfit.check.answers:,} answers, after {self.bans_before_misfit} bans; the "
            f"decisions' promise assumes the prior fits{then}"
        ]
