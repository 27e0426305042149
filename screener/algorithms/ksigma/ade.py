"""Adaptive Double Exploration (ADE) of Zhang et al. (2020), Algorithm 1.

Two kinds of round. A *threshold round* draws a worker uniformly at random and pulls it twice;
its pair (x1, x2) feeds ``mu_hat = mean(x1)`` and
``sigma_hat^2 = |mean(x1 x2) - mean(x1) mean(x2)|`` and so ``theta_hat = mu_hat + k sigma_hat``.
An *arm round* pulls every still-undecided worker once; by default only arm-round answers
feed the worker means y_i and only threshold pairs feed theta, as in the paper's Algorithm 1.
``share_samples=True`` implements the paper's closing remark of Section 4 (both kinds of
sample feed both estimators); see :class:`ADE` for how and why it keeps the guarantee.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

import numpy as np

from screener.algorithms._checks import IntervalKind
from screener.algorithms._test_setups import BUDGET, OUTLIER_MEANS, AlgorithmSetup
from screener.algorithms.ask_tell import Ask
from screener.algorithms.ksigma.ade_decisions import OUTLIER, UNDECIDED, ADEDecisions
from screener.algorithms.ksigma.rule import Direction
from screener.algorithms.result import Result
from screener.algorithms.worker_result import Decision, WorkerResult
from screener.arrays import FloatArray, IntArray
from screener.checks import check_flag
from screener.errors import ConfigError
from screener.stats import QuantileRule

__all__ = ["ADE"]

RoundKind = Literal["threshold", "arm"]

_PLANNED, _ANSWERED, _DROPPED = 0, 1, 2
#: The k-sigma interval options, which ADE's own radii leave unused: their defaults (what its
#: runs are stored with) pass, anything else is refused rather than ignored.
_NOT_USED = {"interval": "mixture", "quantile": "normal"}


@dataclass(slots=True)
class _Round:
    kind: RoundKind
    arms: list[int]
    carried: list[float] = field(default_factory=list)  # shared mode: answers already in hand
    values: list[float] = field(default_factory=list)
    states: list[int] = field(default_factory=list)
    remaining: int = 0
    abandoned: bool = False

    def __post_init__(self) -> None:
        self.values = [math.nan] * len(self.arms)
        self.states = [_PLANNED] * len(self.arms)
        self.remaining = len(self.arms)


class ADE(ADEDecisions):
    """ADE: trade threshold rounds (one random worker, pulled twice) against arm rounds.



    Pending pulls. Only completed rounds count: answers of a round are held until all of its
    pulls are back, then the round enters the estimates, t advances by one, U_sigma and the
    decisions are updated (in the order rounds complete, inside ``tell``, so taking results
    never changes behaviour). ``_schedule`` plans whole rounds and hands their pulls out in
    order, so a batch may end inside a round and the next ask continues it. A new round is
    chosen from the radii of the arrived answers, but with m_theta and m_a counting the
    rounds already planned (in flight included), i.e. many pulls in flight interleave the two
    kinds as if the planned rounds had been answered; threshold round when r_a <= r_theta.
    Until the initial threshold and arm rounds have completed (U_sigma unknown) nothing
    beyond them is planned (WAIT). Pairs are matched by pull id, so answers may arrive in any
    order; a released pull is re-asked by the base class to the same worker and inherits the
    released pull's place in its round, keeping a pair intact. Arm-round pulls not yet handed
    out are skipped when their worker got decided meanwhile.

    Workers that leave: threshold rounds draw from the workers still available (uniform over
    all n while everybody is), a threshold round whose worker left before answering both
    pulls is dropped, and an arm round completes without the pulls of a departed worker.

    Sharing samples (``share_samples=True``, off by default). The paper remarks (end of
    Section 4) that both kinds of sample can feed both estimators, saving up to half the
    pulls, without saying how. Here: (1) every answer of worker i, from either kind of round,
    enters y_i and m_i; (2) every arm-round answer of worker i also joins i's queue of
    *unpaired* answers, and a threshold round that draws worker J first takes J's two oldest
    unpaired answers as its pair, pulling J only for what is missing (0, 1 or 2 pulls; a
    round needing none completes at once, inside ``ask``, without a pull). Threshold-round
    answers are always consumed by their own pair.

    Why this keeps the guarantee, and how the levels follow the counts: see
    ``screener.algorithms.ksigma.ade_decisions``, which also holds the radii, the decision
    rule and how delta is spent.

    Examples
    --------
    On six simulated workers (one worker far above the rest):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.2, 0.25, 0.3, 0.3, 0.35, 0.95]
    >>> algorithm = ADE(6, k=1.5, budget=3000, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('budget spent', 3000)
    >>> [w.arm for w in sorted(result.workers, key=lambda w: w.rank)][:2]  # most outlying first
    [5, 3]
    """

    name = "ade"
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup({"k": 1.0, **BUDGET}, means=OUTLIER_MEANS),
        AlgorithmSetup(
            {"k": 1.0, "share_samples": True, **BUDGET}, means=OUTLIER_MEANS, label="shared"
        ),
    )

    def __init__(
        self,
        n_workers: int,
        *,
        k: float = 2.0,
        delta: float = 0.1,
        direction: Direction = "high",
        share_samples: bool = False,
        min_answers: int = 1,
        interval: IntervalKind = "mixture",
        quantile: QuantileRule = "normal",
        **common: Any,
    ) -> None:
        _refuse_unused(interval=interval, quantile=quantile)
        super().__init__(
            n_workers, k=k, delta=delta, direction=direction, min_answers=min_answers, **common
        )
        if self.lower < 0:
            raise ConfigError(
                f"ADE needs rewards in [a, b] with a >= 0, got lower={self.lower}",
                "shift the rewards so that lower >= 0",
            )
        self.interval: IntervalKind = interval
        self.quantile: QuantileRule = quantile
        self.share_samples = check_flag("share_samples", share_samples)
        n = self.n_arms
        self._pool: list[int] | None = None  # the available workers (cached)
        self._rounds: list[_Round] = []
        self._queue: deque[tuple[int, int]] = deque()
        self._unassigned: dict[int, deque[tuple[int, int]]] = {}
        self._slot_of: dict[int, tuple[int, int]] = {}
        self._planned_theta = 0
        self._planned_arm = 0
        self.active = np.ones(n, dtype=bool)  # the undecided workers, as of the last refresh

    # --------------------------------------------------------------------- pull ids
    def _on_asked(self, ask: Ask) -> None:
        unassigned, slot_of = self._unassigned, self._slot_of
        for pull_id, arm in enumerate(ask.arms.tolist(), start=ask.first_id):
            slot_of[pull_id] = unassigned[arm].popleft()

    def _on_released(self, pull_id: int, arm: int) -> None:
        slot = self._slot_of.pop(pull_id)
        if self.available[arm]:
            self._unassigned.setdefault(arm, deque()).append(slot)
        else:
            self._drop(slot)

    def _on_unavailable(self, arm: int) -> None:
        self._pool = self._open = None
        for slot in self._unassigned.pop(arm, deque()):
            self._drop(slot)

    # -------------------------------------------------------------------- estimates
    def _on_answers(self, pull_ids: IntArray, arms: IntArray, rewards: FloatArray) -> None:
        rewards = self._screened(rewards)
        self.stats.update_many(arms, rewards)
        for pull_id, reward in zip(pull_ids.tolist(), rewards.tolist(), strict=True):
            index, slot = self._slot_of.pop(pull_id)
            rnd = self._rounds[index]
            rnd.values[slot] = reward
            rnd.states[slot] = _ANSWERED
            rnd.remaining -= 1
            if rnd.remaining == 0:
                self._complete(rnd)

    def _drop(self, slot: tuple[int, int]) -> None:
        rnd = self._rounds[slot[0]]
        if rnd.states[slot[1]] != _PLANNED:
            return
        rnd.states[slot[1]] = _DROPPED
        rnd.remaining -= 1
        if rnd.kind == "threshold":
            rnd.abandoned = True
        if rnd.remaining == 0:
            self._complete(rnd)

    def _complete(self, rnd: _Round) -> None:
        answered = [s == _ANSWERED for s in rnd.states]
        if rnd.abandoned or not (any(answered) or rnd.carried):
            if rnd.carried:  # give the pair's answers in hand back, oldest first
                self._unpaired[rnd.arms[0]].extendleft(reversed(rnd.carried))
            return
        values = [v for v, ok in zip(rnd.values, answered, strict=True) if ok]
        if rnd.kind == "threshold":
            self._add_pair(*rnd.carried, *values)
            if self.share_samples:
                self._add_arm_answers(rnd.arms, values, pairable=False)
        else:
            self.m_arm_rounds += 1
            arms = [arm for arm, ok in zip(rnd.arms, answered, strict=True) if ok]
            self._add_arm_answers(arms, values, pairable=self.share_samples)
        self.completed += 1
        self._update()

    def _refresh(self) -> None:
        self.active = self.decision == UNDECIDED

    def _condition_met(self) -> bool:
        return not bool((self.decision == UNDECIDED).any())

    def _can_progress(self) -> bool:
        if self._open is None:
            self._open = bool(((self.decision == UNDECIDED) & self.available).any())
        return self._open

    # --------------------------------------------------------------------- schedule
    def _schedule(self, limit: int) -> IntArray:
        arms: list[int] = []
        while len(arms) < limit and self._next_slot():
            index, slot = self._queue.popleft()
            rnd = self._rounds[index]
            arm = rnd.arms[slot]
            skip = not self.available[arm] or (
                rnd.kind == "arm" and self.decision[arm] != UNDECIDED
            )
            if skip:
                self._drop((index, slot))
                continue
            self._unassigned.setdefault(arm, deque()).append((index, slot))
            arms.append(arm)
        return np.array(arms, dtype=np.int64)

    def _next_slot(self) -> bool:
        """Plan rounds until a pull is queued; False when none should start before answers."""
        while not self._queue:
            if self._decisions_stale:  # free pairs moved theta: decide before planning on
                self._decisions_stale = False
                self._refresh_decisions()
                self._dirty = True
            if not (self._can_progress() and self._plan_round()):
                return False
        return True

    def _plan_round(self) -> bool:
        """Queue the pulls of a new round; False when none should start before answers."""
        kind: RoundKind
        if self._planned_theta == 0:
            kind = "threshold"
        elif self._planned_arm == 0:
            kind = "arm"
        elif self.m_theta == 0 or self.m_arm_rounds == 0:
            return False  # U_sigma is unknown until both initial rounds are back
        elif self._arm_radius(self._planned_arm) <= self._theta_radius(self._planned_theta):
            kind = "threshold"
        else:
            kind = "arm"
        if kind == "threshold":
            if self._pool is None:
                self._pool = np.flatnonzero(self.available).tolist()
            pool = self._pool
            if not pool:
                return False
            arm = pool[self.rng.integers(len(pool))]
            self._planned_theta += 1
            carried = self._take_unpaired(arm)
            if len(carried) == 2:
                self._add_pair(*carried)  # a free pair: no pull, no new round index
                self._update_threshold()
                self._decisions_stale = True
                return True
            index = len(self._rounds)
            self._rounds.append(_Round(kind, [arm] * (2 - len(carried)), carried))
            self._queue.extend((index, slot) for slot in range(2 - len(carried)))
            return True
        else:
            members = np.flatnonzero((self.decision == UNDECIDED) & self.available).tolist()
            if not members:
                return False
            self._planned_arm += 1
        index = len(self._rounds)
        self._rounds.append(_Round(kind, members))
        self._queue.extend((index, slot) for slot in range(len(members)))
        return True

    def _take_unpaired(self, arm: int) -> list[float]:
        """Up to two of the worker's oldest arm-round answers not yet in a pair (shared mode)."""
        queue = self._unpaired[arm]
        return [queue.popleft() for _ in range(min(2, len(queue)))]

    # ----------------------------------------------------------------------- result
    def _worker_line(self, arm: int, condition_met: bool) -> WorkerResult:
        if self.arm_count[arm] == 0:
            reason = self._availability_reason(arm) or "no arm-round answers yet"
            return self._unanswered_line(arm, reason)
        mean, radius = float(self.means[arm]), float(self.radii[arm])
        state = int(self.decision[arm])
        if state == UNDECIDED:
            decision = Decision.UNDECIDED
            above = math.isfinite(self.theta) and mean > self.theta
            leaning = Decision.OUTLIER if above else Decision.NORMAL
            reason = self._availability_reason(arm) or self._undecided_reason(arm)
        else:
            decision = Decision.OUTLIER if state == OUTLIER else Decision.NORMAL
            leaning = decision
            reason = self._decided_reason(condition_met)
        ends = (mean - radius, mean + radius)
        return self._answered_line(arm, mean, ends, decision, leaning, reason)

    def _undecided_reason(self, arm: int) -> str:
        if self.arm_count[arm] < self.min_answers:  # the answers y_i rests on
            return f"{self._too_few_reason} behind its estimate"
        return "interval overlaps the threshold's"

    def _describe(self) -> Result:
        result = super()._describe()
        extra = {
            **result.extra,
            "rounds": self.completed,
            "threshold_rounds": self.m_theta,
            "arm_rounds": self.m_arm_rounds,
            "u_sigma": self.u_sigma if math.isfinite(self.u_sigma) else None,
        }
        return replace(result, extra=extra)


def _refuse_unused(**given: str) -> None:
    """Refuse the k-sigma interval options ADE does not use, unless left at their defaults."""
    ignored = [f"{name}={value!r}" for name, value in given.items() if value != _NOT_USED[name]]
    if ignored:
        raise ConfigError(
            f"ADE uses the paper's Hoeffding radii, so {', '.join(ignored)} would be ignored",
            "--interval and --quantile do not apply to ade: drop them",
        )
