"""The crowd prior as an ask/tell algorithm: its parameters, its schedule, its result."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._test_setups import AROUND_MEANS, SMALL_BUDGET, AlgorithmSetup
from screener.algorithms.result import Result
from screener.algorithms.thresholding._base import take_changes
from screener.algorithms.thresholding.crowd_prior._checks import (
    check_pilot,
    checked_costs,
    checked_robust,
)
from screener.algorithms.thresholding.crowd_prior._judging import (
    ACCEPTED,
    BANNED,
    UNDECIDED,
    PriorJudging,
)
from screener.algorithms.thresholding.crowd_prior._posterior import (
    PosteriorSummary,
    summarise_posterior,
)
from screener.algorithms.thresholding.crowd_prior._queue import FewestFirst
from screener.algorithms.thresholding.crowd_prior._reasons import (
    BAYES_GUARANTEE,
    decided_evidence,
    misfit_warnings,
    open_evidence,
    own_evidence,
    promise,
)
from screener.algorithms.worker_result import Decision
from screener.arrays import FloatArray, IntArray
from screener.checks import check_count, check_flag
from screener.errors import ConfigError

__all__ = ["CrowdPrior"]

_VERDICTS = np.array([0, -1, 1], dtype=np.int8)  # verdicts() by state


class CrowdPrior(PriorJudging):
    """Empirical-Bayes screening against a bar (see the package docstring for both modes).

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
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup({"threshold": 0.6, **SMALL_BUDGET}),
        AlgorithmSetup(
            {"threshold": 0.6, "pilot": 3, "max_answers": 10, **SMALL_BUDGET},
            means=AROUND_MEANS,
            label="pilot",
        ),
    )
    fixed_budget = False
    decisions_final = True
    needs_answers = False
    pull_each_first = False
    guarantee: ClassVar[str | None] = BAYES_GUARANTEE

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
        self.costs = checked_costs(q, false_ban, missed_bad, question)
        check_count("min_answers", min_answers, 1)
        check_count("max_answers", max_answers, min_answers, "it must be at least min_answers")
        if not self.lower < self.threshold < self.upper:
            raise ConfigError(
                f"the bar must lie strictly inside the reward range, got {self.threshold}",
                "give e.g. threshold=0.6",
            )
        self.robust = checked_robust(prior, contamination, robust, cost_mode=self.costs is not None)
        if not 0.0 <= fit_check < 1.0:
            raise ConfigError(f"fit_check must lie in [0, 1), got {fit_check}", "try 0.05")
        check_pilot(pilot, min_answers)
        self.prior_family = prior
        self.contamination = float(contamination)
        self.fit_check = float(fit_check)
        self.pilot = pilot
        self.reconsider = check_flag("reconsider", reconsider)
        self.q = float(q)
        self.min_answers = int(min_answers)
        self.max_answers = int(max_answers)
        self.bar = (self.threshold - self.lower) / self.width
        self._means_stale = True
        self._start()

    def _param_value(self, name: str) -> Any:
        # The costs are kept together (all given or none); the prior's family by name.
        if name in ("question", "false_ban", "missed_bad"):
            unset = 1.0 if name == "question" else None
            return unset if self.costs is None else getattr(self.costs, name)
        return self.prior_family if name == "prior" else super()._param_value(name)

    # ------------------------------------------------------------------ the schedule
    def _refresh(self) -> None:
        # The means are the result's alone (the schedule and the decisions read the counts),
        # so they are recomputed when a result reads them: an ask between answers costs the
        # same at any number of workers.
        self._forget_derived()
        self._means_stale = True

    def _fresh_means(self) -> FloatArray:
        if self._means_stale:
            super()._refresh()
            self._means_stale = False
        return self.means

    @property
    def prob_below(self) -> FloatArray:
        """Each worker's probability of being under the bar under the fitted prior (read
        by the result only, so computed when read, not after every answer)."""
        return self._posterior_summary().prob_below

    def _posterior_summary(self) -> PosteriorSummary:
        """What the result shows of each worker's posterior, from one pass over it."""
        if self._summary is None:
            successes, counts = self._scaled_successes(), self.stats.count
            self._summary = summarise_posterior(
                self.prior, successes, counts, bar=self.bar, q=self.q
            )
        return self._summary

    def n_undecided(self) -> int:
        # _decide and _decide_unanswered: undecided exactly while the state says so.
        return self._undecided

    def _condition_met(self) -> bool:
        return self._undecided == 0

    def _audits(self, arm: int) -> bool:
        """With ``reconsider``, an accepted worker's audit answers may still ban it, and an
        undecided one at ``max_answers`` may still be decided by them."""
        state = int(self.state[arm])
        at_cap = state == UNDECIDED and self.stats.count[arm] >= self.max_answers
        return self.reconsider and (state == ACCEPTED or at_cap)

    def _decided_now(self) -> NDArray[np.bool_]:
        return np.asarray(self.state != UNDECIDED)

    def verdicts(self) -> NDArray[np.int8]:
        """+1 accepted, -1 banned, 0 undecided (decisions are final, answers or none)."""
        return _VERDICTS[self.state]

    def verdicts_of(self, arms: IntArray) -> NDArray[np.int8]:
        return _VERDICTS[self.state[arms]]

    def verdict_changes(self) -> IntArray | None:
        """The workers decided since the last call, each once, in index order (None at the
        first call: from then on each decision is kept for the next)."""
        changed, self._changed = take_changes(self._changed)
        return changed

    def _open(self) -> NDArray[np.bool_]:
        """Workers to ask: undecided, under max_answers and, while a pilot runs, in it."""
        open_ = self._undecided_under_bound()
        return open_ & self.in_pilot if self.piloting else open_

    def _can_progress(self) -> bool:
        return (self._askable_in_pilot if self.piloting else self._askable) > 0

    def _horizon(self) -> NDArray[np.int64]:
        """Up to ``min_answers`` answers, or the next one, for an open worker (see the
        class docstring, "Under concurrency")."""
        upto = np.minimum(np.maximum(self.stats.count + 1, self.min_counts), self.max_answers)
        return np.where(self._open(), upto, 0)

    def _index_schedule(self, limit: int) -> IntArray:
        """The index's picks (fewest answers first, then the lowest index, among the open
        workers with nothing in flight) from a queue kept per answer (``FewestFirst``), not
        from every worker's key; while a pilot runs, from every worker's key."""
        if self.piloting:
            return super()._index_schedule(limit)
        if self._queue is None:
            askable = np.flatnonzero(self.available & self._open() & (self.pending == 0))
            counts = self.stats.count[askable].tolist()
            self._queue = FewestFirst(self.max_answers, zip(askable.tolist(), counts, strict=True))
        return np.array(self._queue.picks(limit, self._askable_now), dtype=np.int64)

    def _askable_now(self, arm: int, count: int) -> bool:
        """Whether the schedule may ask ``arm`` (with ``count`` answers) now."""
        return bool(
            self.pending[arm] == 0
            and self.available[arm]
            and self.state[arm] == UNDECIDED
            and self.stats.count[arm] == count
        )

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        in_flight = effective > self.stats.count[arms]
        eligible = self._open_at(arms) & ~in_flight
        return np.where(eligible, effective, math.inf)

    # ------------------------------------------------------------------------- result
    def _above(self) -> NDArray[np.bool_]:
        return np.asarray(self.prob_below < 0.5, dtype=np.bool_)

    def _leaning(self, arm: int) -> Decision:
        """A decided worker's reason does not rest on its leaning, so ``explain`` need not
        compute every worker's posterior (``prob_below``) for it: a stream explains each
        decision as it is made."""
        if self.state[arm] != UNDECIDED:
            return Decision.BELOW if self.state[arm] == BANNED else Decision.ABOVE
        return super()._leaning(arm)

    def _estimate(self) -> tuple[FloatArray, FloatArray | None]:
        """The posterior mean (the prior's without answers), with the worker's own share
        correct beside it."""
        mean = self._posterior_summary().mean
        return self.lower + self.width * mean, self._fresh_means()

    def _interval(self) -> tuple[FloatArray, FloatArray]:
        """A central posterior interval of probability 1 - 2q (posterior mode's q)."""
        summary = self._posterior_summary()
        return self.lower + self.width * summary.low, self.lower + self.width * summary.high

    def _decide(self, arm: int, leaning: Decision) -> tuple[Decision, str]:
        state = int(self.state[arm])
        if state != UNDECIDED and self.own_decided[arm]:
            return self._decided_on_own_answers(arm, banned=state == BANNED)
        if state != UNDECIDED:
            banned = state == BANNED
            evidence = decided_evidence(
                self._below(), float(self.decided_at[arm]), banned=banned, q=self.q,
                cost_mode=self.costs is not None, robust=bool(self.robust),
            )  # fmt: skip
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

    def _decided_on_own_answers(self, arm: int, *, banned: bool) -> tuple[Decision, str]:
        count = int(self.stats.count[arm])
        right = (float(self.stats.total[arm]) - self.lower * count) / self.width
        why = own_evidence(count, right, self.threshold, self.q, banned=banned)
        return (
            (Decision.BELOW, f"banned: {why}") if banned else (Decision.ABOVE, f"accepted: {why}")
        )

    def _below(self) -> str:
        return f"P(below {self.threshold:g})"

    def _open_evidence(self, arm: int) -> str:
        """Why an undecided worker is not decided yet, in the terms its decision would take."""
        span = self._span(arm) if self.costs is None and self.robust else None
        p_bad = float(self.prob_below[arm])
        cost_mode = self.costs is not None
        return open_evidence(self._below(), p_bad, q=self.q, cost_mode=cost_mode, span=span)

    def _span(self, arm: int) -> tuple[float, float]:
        """The range of an undecided worker's P(below) over the region's priors, from its own
        answers alone (every worker's, per undecided worker, made the result quadratic). One
        call per distinct (successes, answers), not one for all workers: BLAS sums a row of a
        matrix in another order than a lone row, so the span's last bits would move; workers
        with the same answers share it (a few hundred pairs among thousands of workers)."""
        one = slice(arm, arm + 1)
        successes, counts = self._scaled_successes(one), self.stats.count[one]
        key = (float(successes[0]), int(counts[0]))
        if key not in self._spans:
            lowest, highest = self.region.prob_below_range(successes, counts, self.bar)
            self._spans[key] = (float(lowest[0]), float(highest[0]))
        return self._spans[key]

    def _decide_unanswered(self, arm: int) -> tuple[Decision, str]:
        if self.state[arm] == UNDECIDED:
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
            "expected_wrong_bans": float(np.nansum(1.0 - self.decided_at[self.state == BANNED])),
            "expected_missed_bad": float(np.nansum(self.decided_at[self.state == ACCEPTED])),
            "pilot_workers": int(self.in_pilot.sum()),
            "decided_unasked": int(((self.state != UNDECIDED) & (self.stats.count == 0)).sum()),
            **self.fit.summary(),
            "bans_before_misfit": self.bans_before_misfit,
            "warnings": [
                *result.extra.get("warnings", ()),
                *misfit_warnings(self.fit, self.bans_before_misfit),
            ],
        }
        guarantee = promise(
            cost_mode=self.costs is not None,
            robust=bool(self.robust),
            two_beta=self.fit.in_force == "two-beta",
            pilot=None if self.in_pilot.all() else int(self.in_pilot.sum()),
        )
        return replace(result, guarantee=guarantee, extra=extra)
