"""Fixed-confidence thresholding: ask until every worker's anytime interval lies on one side
of the bar."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._checks import check_delta
from screener.algorithms._test_setups import AROUND_MEANS, SLOW_BAR, AlgorithmSetup
from screener.algorithms.result import Result
from screener.algorithms.thresholding._clearing import ClearingKey, clearing_counts, clearing_table
from screener.algorithms.thresholding._intervals import (
    CONFIDENT_INTERVALS,
    ConfidentInterval,
    IntervalFamily,
)
from screener.algorithms.thresholding._roster import RosterThresholding, check_max_workers
from screener.algorithms.thresholding._scheduler import FirstKeys
from screener.algorithms.worker_result import Decision
from screener.arrays import FloatArray, IntArray, grown
from screener.checks import check_choice, check_count
from screener.errors import ConfigError
from screener.stats import anytime_radius, kl_bounds

__all__ = ["ConfidentSchedule", "ConfidentThresholding"]
#: Schedules of ConfidentThresholding (``schedule=``).
ConfidentSchedule = Literal["settle", "evidence"]
_HOPELESS = 1e15  # "settle" key offset of a worker that cannot clear at its estimate


def settle_in_flight(plugin: FloatArray, answered: IntArray) -> FloatArray:
    """The "settle" schedule's most pulls in flight for a worker: at most half of the
    answers its plug-in projection ``t*`` still needs (it may clear sooner than projected)
    and at most its answers plus one."""
    still_needed = np.ceil((plugin - answered) / 2.0)
    return np.asarray(np.minimum(np.maximum(still_needed, 1.0), answered + 1.0))


def settle_keys(hopeful: FloatArray, answered: IntArray, effective: FloatArray) -> FloatArray:
    """The "settle" schedule's key: answers still needed at the hopeful mean, plus one per
    pull in flight (``effective`` counts them). One at a time this is the order of nearness
    to a decision; a batch spreads over the nearest workers until their keys meet instead of
    piling onto one."""
    keys = hopeful + effective - 2.0 * answered
    return np.asarray(np.where(np.isfinite(keys), keys, _HOPELESS + effective))


class ConfidentThresholding(RosterThresholding):
    """Fixed-confidence thresholding: stop when every worker is on one side of the bar.

    Not from Tao et al. (their setting is a fixed budget): requesters also ask "who is above
    my bar, with 95% confidence, for as few questions as possible?".

    Promise (``(eps, delta)``-PAC): with probability at least 1 - delta, jointly, every
    decided worker whose mean is more than ``eps`` from the threshold is on its correct side
    (with ``eps = 0``, the default, every decided worker). A worker within eps of the bar may
    be put on either side; in exchange, with ``eps > 0`` every worker is decided within
    ``max_questions_per_worker`` answers.

    How delta is spent: each worker gets ``delta / n`` (n workers; the shares sum to delta).
    A worker can only be wrong through the end of its interval that faces its true mean
    (ABOVE needs the lower end to reach ``threshold - eps``, BELOW the upper end to drop below
    ``threshold + eps``), so its share covers the end that matters:

    * ``interval="betting"`` (default): the betting confidence sequence of
      ``screener.stats.BettingCS`` (Waudby-Smith & Ramdas 2024), each end at
      ``0.9 delta / n``, intersected with the Beta-mixture sequence at ``0.1 delta / n``
      (``BACKSTOP_SHARE``). The bets adapt to the data, so the betting interval alone has no
      data-free bound on its width; the backstop gives one (``max_questions_per_worker``).
      Memory: the log capital on a grid of 203 candidate means per worker.
    * ``interval="mixture"``: the conjugate Beta-mixture confidence sequence of
      ``screener.stats.mixture_bounds`` (Howard et al. 2021, sub-Bernoulli, Jeffreys prior)
      at ``delta / n`` for the whole interval: about ``log(n / delta) + 0.5 log t`` nats of
      KL budget after t answers; O(1) memory per worker.
    * ``interval="kl"`` / ``"hoeffding"`` (kept for comparison and reproductions): a union
      bound over the worker's own count, level ``6 delta / (pi^2 n t^2)`` per end after its
      t-th answer (``anytime_log_inverse``, summing to ``delta / n`` over t), with the
      Chernoff-Hoeffding KL interval (``screener.stats.kl_bounds``) or
      ``mean +- R sqrt(log(1 / level) / (2 t))``: about ``log(n / delta) + 2 log t`` nats.

    All are valid for any reward in [lower, upper] (graded too) and at any stopping time.
    Worker i is decided ABOVE when its lower end is at least ``threshold - eps`` and BELOW
    when its upper end is below ``threshold + eps`` (for the KL-type intervals tested
    directly: ``t kl(mean, threshold - eps) >= budget`` with the mean on that side), never
    before it has ``min_answers`` answers; a decided worker is not pulled again. Inside the
    zone both can hold: the side of the estimate then. The decision follows the current
    interval (answers that were in flight when it cleared still count).

    Bound on the questions (``eps > 0``): at count t every KL-type interval lies inside the
    one with the largest budget over all sums, ``b_max(t)``; once that one is narrower than
    the zone wherever the mean lies (``screener.stats.max_clearing_count``), the worker is
    decided whatever its answers, so no worker is ever asked more than that many questions
    (the schedule holds a worker back at the bound, pulls in flight included).

    Schedules (``schedule=``):

    * ``"settle"`` (default): ask where answers settle decisions soonest. After one pull
      each, the undecided worker with the smallest ``t*(p~) - answered + pending``, where
      ``t*(p)`` is the count at which an interval with mean p clears the zone
      (``screener.stats.clearing_count``; the full-level mixture stands in for the betting
      interval) and ``p~`` is the mean moved ``HOPE = 0.5`` standard errors away from the bar
      (``sqrt((S + 1/2)(T - S + 1/2)) / ((T + 1) sqrt T)``), hopeful as in LUCB. One pull at
      a time this settles easy workers first and finishes a worker close to clearing; in a
      batch each pull in flight raises its worker's key by one, so the batch spreads over
      the nearest workers. No worker starves: with T answers its key is at most about
      ``t*(bar +- 1/(4 sqrt T))``, which grows like ``T log T``, so it is asked again before
      workers with many times its answers. A worker waits when its pulls in flight reach
      half the answers the plug-in projection ``t*(mean)`` still needs (it may clear sooner)
      or its answers plus one, or the bound on questions. Ties go to the lowest index.
    * ``"evidence"``: after one pull each, the worker with the
      least evidence against the bar, ``D(mean, bar) - budget / T`` (its KL divergence per
      answer still missing; Hoeffding: how deep the bar sits inside the interval), with
      ``T`` = answered + pending; a worker whose projected interval clears waits.

    Under concurrency: when the schedule leaves room in the window (every undecided worker
    waits for answers in flight), a worker with fewer than ``min_answers`` answers and
    questions gets more, up to ``min_answers`` in all: no decision comes before them, so
    each is needed whatever the answers in flight say. Fewest questions in flight first,
    then fewest answers, then the lowest index; with nothing in flight and room for no more
    than the schedule hands out, the pulls are exactly the schedule's. Beyond ``min_answers``
    no further pull is surely needed by this rule, so the schedule's own limit holds.

    Cost: a refresh tests only the workers with new answers (a worker's interval moves with
    its own answers alone), and a batch looks only at the workers whose keys at their
    current counts are among the ``limit`` smallest (``FirstKeys``: no other worker can be
    picked), so an ask costs its pulls at any number of workers (issue 50). The means, the
    stopping test and the horizon fill still read every worker, in one numpy pass each.

    The means use answered pulls only. Stops with CONDITION_MET when every worker is
    decided. Workers still overlapping when the budget is spent, or made unavailable, stay
    UNDECIDED with the reason.

    Lockstep: ``confident_lockstep`` restates the "settle" step over many runs at once (for
    ``screener plan``); tests/algorithms/thresholding/test_lockstep_confident.py binds the two
    ask by ask, so a change to this step is made there too.

    Examples
    --------
    On six simulated workers (three workers under the bar of 0.5, three over it):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.2, 0.35, 0.45, 0.65, 0.75, 0.9]
    >>> algorithm = ConfidentThresholding(6, threshold=0.5, eps=0.1, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('condition met', 584)
    >>> [w.decision.value for w in sorted(result.workers, key=lambda w: w.arm)]
    ['below', 'below', 'below', 'above', 'above', 'above']
    """

    name = "confident-thresholding"
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup({**SLOW_BAR, "eps": 0.05}, means=AROUND_MEANS),
        AlgorithmSetup(
            {**SLOW_BAR, "interval": "mixture", "eps": 0.02}, means=AROUND_MEANS, label="mixture"
        ),
        AlgorithmSetup(
            {**SLOW_BAR, "delta": 0.1, "min_answers": 10}, means=AROUND_MEANS, label="min-answers"
        ),
        AlgorithmSetup(
            {**SLOW_BAR, "eps": 0.05, "max_workers": 100}, means=AROUND_MEANS, label="open-pool"
        ),
    )
    fixed_budget = False
    #: A decision follows the current interval, which answers still in flight when it
    #: cleared, and released pulls asked again, can move back over the bar.
    verdicts_final = False
    guarantee: ClassVar[str | None] = (
        "every decided worker whose mean is more than eps from the threshold (eps = 0 by "
        "default: every decided worker) is on the correct side of it, jointly, with "
        "probability at least 1 - delta"
    )

    def __init__(
        self,
        n_workers: int,
        *,
        delta: float = 0.05,
        interval: ConfidentInterval = "betting",
        eps: float = 0.0,
        min_answers: int = 1,
        schedule: ConfidentSchedule = "settle",
        max_workers: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(n_workers, **kwargs)
        check_delta(delta, suggestion=0.05)
        self.max_workers = check_max_workers(max_workers, self.n_arms)
        if self._roster == 0:
            raise ConfigError(
                f"{self.name} starting with no workers needs max_workers",
                "give the most workers the pool may ever hold, e.g. max_workers=1000",
            )
        self._check_settings(interval, eps, min_answers, schedule)
        self.delta = float(delta)
        self.interval: ConfidentInterval = interval
        self.eps = float(eps)
        self.min_answers = int(min_answers)
        self.schedule: ConfidentSchedule = schedule
        self.family = IntervalFamily(interval, self.delta, self._roster)
        #: Each worker's share of delta (the shares sum to delta over the roster).
        self.worker_level = self.family.worker_level
        self._low_bar = max((self.threshold - self.eps - self.lower) / self.width, 0.0)
        self._high_bar = min((self.threshold + self.eps - self.lower) / self.width, 1.0)
        self._betting, self._betting_at_bars = self.family.betting_sequences(
            self.n_arms, self._low_bar, self._high_bar
        )
        centre = (self.threshold - self.lower) / self.width
        #: The bars, and everything ``t*`` depends on besides a worker's answers.
        self._clearing = ClearingKey(
            self._low_bar, self._high_bar, centre, self.min_answers, self.family
        )
        self.decided_above = np.zeros(self.n_arms, dtype=bool)
        self.decided_below = np.zeros(self.n_arms, dtype=bool)
        self._clear_plugin = np.full(self.n_arms, math.inf)
        self._clear_hopeful = np.full(self.n_arms, math.inf)
        self._seen = np.full(self.n_arms, -1, dtype=np.int64)
        self._cleared_at = np.zeros(self.n_arms, dtype=np.int64)  # count at the last decision
        self._max_questions = (
            None
            if self.eps == 0.0
            else self.family.bound_on_questions(self._low_bar, self._high_bar, self.min_answers)
        )
        self._first = FirstKeys()  # the schedule looks only at the workers it can pick
        self._unkeyed: set[int] = set(range(self.n_arms))  # to enter before the next batch

    def _check_settings(
        self, interval: ConfidentInterval, eps: float, min_answers: int, schedule: str
    ) -> None:
        check_choice("interval", interval, CONFIDENT_INTERVALS)
        check_choice("schedule", schedule, ("settle", "evidence"))
        if not (isinstance(eps, int | float) and math.isfinite(eps) and 0 <= eps < self.width):
            raise ConfigError(
                f"eps must be a number in [0, {self.width:g}), got {eps!r}",
                "give the indifference zone in reward units, e.g. eps=0.05",
            )
        check_count("min_answers", min_answers, 1, "e.g. min_answers=3")

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if "_first" not in state:  # pickled when each refresh and ask read every worker
            self._first = FirstKeys()
            self._unkeyed = set()
            self._cleared_at = np.full(self.n_arms, -1, dtype=np.int64)  # all, at the refresh
            self._dirty = True

    def _on_joined(self, arms: IntArray) -> None:
        super()._on_joined(arms)
        count = arms.size
        if self._betting is not None and self._betting_at_bars is not None:
            self._betting.grow(count)
            self._betting_at_bars.grow(count)
        self.decided_above = grown(self.decided_above, count, False)
        self.decided_below = grown(self.decided_below, count, False)
        self._clear_plugin = grown(self._clear_plugin, count, math.inf)
        self._clear_hopeful = grown(self._clear_hopeful, count, math.inf)
        self._seen = grown(self._seen, count, -1)
        self._cleared_at = grown(self._cleared_at, count, 0)
        self._enter_keys(arms)

    def _on_released(self, pull_id: int, arm: int) -> None:
        self._enter_keys(np.array([arm], dtype=np.int64))

    def _on_returned(self, arm: int) -> None:
        self._enter_keys(np.array([arm], dtype=np.int64))

    def _decided_now(self) -> NDArray[np.bool_]:
        return self.decided

    def worker_levels(self) -> dict[str, float]:
        """How each worker's share ``delta / n`` is split between the sequences its
        decisions use (n times the sum is delta, at most)."""
        return self.family.worker_levels()

    @property
    def max_questions_per_worker(self) -> int | None:
        """No worker is ever asked more questions than this (None: no bound, eps = 0)."""
        return self._max_questions

    def _scaled(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Means, sums and counts on [0, 1] (NaN means for workers without answers)."""
        counts = self.stats.count.astype(np.float64)
        sums = np.clip((self.stats.total - self.lower * counts) / self.width, 0.0, counts)
        means = np.clip((self.means - self.lower) / self.width, 0.0, 1.0)
        return means, sums, counts

    # ------------------------------------------------------------------------ decisions
    def _refresh(self) -> None:
        """The decisions of the workers with new answers: a worker's interval moves only
        with its own answers (its level is fixed by the roster), so the others' stand, and
        a refresh costs the answers, not the pool (issue 50)."""
        super()._refresh()
        counts = self.stats.count
        changed = np.flatnonzero(counts != self._cleared_at)
        if changed.size:
            self._cleared_at[changed] = counts[changed]
            above, below = self._clears(changed)
            enough = counts[changed] >= self.min_answers
            self.decided_above[changed] = above & enough
            self.decided_below[changed] = below & enough
        if self.schedule == "settle":
            self._update_clearing_counts()
        if changed.size:
            self._enter_keys(changed)  # their keys may have fallen

    def _clears(self, arms: IntArray) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        """Which intervals of ``arms`` lie above ``threshold - eps`` / below
        ``threshold + eps``."""
        if self.interval == "hoeffding":
            radii = anytime_radius(self.stats.count[arms], self.delta, self._roster, self.width)
            means = self.means[arms]
            with np.errstate(invalid="ignore"):
                return (
                    means - radii >= self.threshold - self.eps,
                    means + radii < self.threshold + self.eps,
                )
        means, sums, counts = (values[arms] for values in self._scaled())
        above, below = self._clearing.side_evidence(
            means, counts, self.family.log_inverse(sums, counts)
        )
        above_clear, below_clear = above >= 0.0, below > 0.0
        if self._betting_at_bars is not None:
            lows, highs = self._betting_at_bars.bounds(arms)
            above_clear |= lows >= self._low_bar
            below_clear |= highs < self._high_bar
        return above_clear, below_clear

    @property
    def decided(self) -> NDArray[np.bool_]:
        return self.decided_above | self.decided_below

    def _condition_met(self) -> bool:
        return bool(self.decided.all())

    def _can_progress(self) -> bool:
        return bool((self.available & ~self.decided).any())

    def _on_answers(self, pull_ids: IntArray, arms: IntArray, rewards: FloatArray) -> None:
        super()._on_answers(pull_ids, arms, rewards)
        if self._betting is not None and self._betting_at_bars is not None:
            scaled = np.clip((rewards - self.lower) / self.width, 0.0, 1.0)
            self._betting.update_many(arms, scaled)
            self._betting_at_bars.update_many(arms, scaled)

    # ------------------------------------------------------------------------- schedule
    def _update_clearing_counts(self) -> None:
        """``t*`` at the mean and at the hopeful mean, for workers with new answers (on
        rewards in [0, 1], looked up per (sum, count): ``clearing_table``)."""
        changed = np.flatnonzero(self.stats.count != self._seen)
        if changed.size == 0:
            return
        self._seen[changed] = self.stats.count[changed]
        means, sums, counts = self._scaled()
        key = self._clearing
        if (self.lower, self.upper) == (0.0, 1.0):  # the mean is sum / count: a pair function
            plugin, hopeful = clearing_table(key)(sums[changed], counts[changed])
        else:
            plugin, hopeful = clearing_counts(means[changed], sums[changed], counts[changed], key)
        self._clear_plugin[changed] = plugin
        self._clear_hopeful[changed] = hopeful

    def _index_schedule(self, limit: int) -> IntArray:
        """The index policy's picks among the workers with the ``limit`` smallest keys
        (``FirstKeys``: the same picks as among all), so a batch costs its pulls."""
        if self._unkeyed:
            arms = np.fromiter(sorted(self._unkeyed), dtype=np.int64, count=len(self._unkeyed))
            self._unkeyed.clear()
            self._first.enter(arms, self._keys_now(arms))
        return self._picks_among(np.sort(self._first.smallest(limit, self._keys_now)), limit)

    def _keys_now(self, arms: IntArray) -> FloatArray:
        """The workers' keys at their current counts (+inf: held back, or gone)."""
        effective = (self.stats.count[arms] + self.pending[arms]).astype(np.float64)
        keys = self._priority(arms, effective)
        keys[~self.available[arms]] = math.inf
        return keys

    def _enter_keys(self, arms: IntArray) -> None:
        """``arms``' keys may have fallen: they are entered at the next batch, with the keys
        of that moment (a stream that asks one worker at a time, a gate, never pays for it)."""
        self._unkeyed.update(arms.tolist())

    def _horizon(self) -> NDArray[np.int64]:
        """``min_answers`` for the undecided (see the class docstring, "Under concurrency")."""
        return np.where(self.decided, 0, self.min_answers).astype(np.int64)

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        answered = self.stats.count[arms]
        hold = self.decided[arms]
        if self._max_questions is not None:
            hold = hold | ((effective >= self._max_questions) & (effective > answered))
        waiting = effective > answered
        if self.schedule == "evidence":
            keys, clear = self._evidence_keys(arms, effective)
            return np.where((clear & waiting) | hold, math.inf, keys)
        hold = hold | (effective - answered >= settle_in_flight(self._clear_plugin[arms], answered))
        keys = settle_keys(self._clear_hopeful[arms], answered, effective)
        return np.where(hold, math.inf, keys)

    def _evidence_keys(
        self, arms: IntArray, effective: FloatArray
    ) -> tuple[FloatArray, NDArray[np.bool_]]:
        """The "evidence" schedule: least evidence first, and whether the worker's projected
        interval (at count ``effective``) already clears."""
        if self.interval == "hoeffding":
            radii = anytime_radius(effective, self.delta, self._roster, self.width)
            means = self.means[arms]
            keys = np.maximum(
                means - (self.threshold - self.eps), (self.threshold + self.eps) - means
            ) - radii  # fmt: skip
            return keys, keys > 0.0
        means = np.clip((self.means[arms] - self.lower) / self.width, 0.0, 1.0)
        budget = self.family.schedule_log_inverse(means * effective, effective)
        above, below = self._clearing.side_evidence(means, effective, budget)
        return np.maximum(above, below), (above >= 0.0) | (below > 0.0)

    # --------------------------------------------------------------------------- result
    def _above(self) -> NDArray[np.bool_]:
        """The side a worker is decided on; the estimate's side for the undecided (and for
        a worker inside the zone whose interval clears both bars)."""
        leaning = super()._above()
        return np.asarray(
            np.where(self.decided_above != self.decided_below, self.decided_above, leaning)
        )

    def _interval(self) -> tuple[FloatArray, FloatArray]:
        """The anytime intervals the decisions use, in reward units (the KL ones solved only
        for the result: the decisions test the bars directly)."""
        counts = self.stats.count
        if self.interval == "hoeffding":
            radii = anytime_radius(counts, self.delta, self._roster, self.width)
            return self.means - radii, self.means + radii
        means, sums, scaled_counts = self._scaled()
        budget = self.family.log_inverse(sums, scaled_counts)
        low, high = kl_bounds(means, counts, budget)
        if self._betting is not None:
            bet_low, bet_high = self._betting.bounds()
            low, high = np.maximum(low, bet_low), np.minimum(high, bet_high)
        return self.lower + self.width * low, self.lower + self.width * high

    def _decide(self, arm: int, leaning: Decision) -> tuple[Decision, str]:
        if self.decided[arm]:
            if self.eps == 0.0:
                return leaning, "anytime interval clear of the threshold"
            if leaning is Decision.ABOVE:
                return leaning, "anytime interval above threshold - eps"
            return leaning, "anytime interval below threshold + eps"
        unavailable = self._availability_reason(arm)
        if unavailable is not None:
            return Decision.UNDECIDED, f"interval overlaps the threshold; {unavailable}"
        if self.finished:
            return Decision.UNDECIDED, f"interval overlaps the threshold ({self.stop_reason})"
        if self.stats.count[arm] < self.min_answers:
            return Decision.UNDECIDED, f"fewer than min_answers = {self.min_answers} answers"
        return Decision.UNDECIDED, "interval overlaps the threshold"

    def _describe(self) -> Result:
        result = super()._describe()
        extra = {**result.extra, "eps": self.eps, "intervals": self.interval_statement()}
        return replace(result, extra=extra)

    def n_undecided(self) -> int:
        # _decide: a worker is decided exactly when ``decided`` says so (none without answers).
        self._ensure_fresh()
        return int(np.count_nonzero(~self.decided))

    def interval_statement(self) -> str:
        """What the intervals of the result are, said with their levels (the report shows
        it)."""
        return self.family.statement()
