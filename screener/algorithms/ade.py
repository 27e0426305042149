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
from numpy.typing import NDArray

from screener.algorithms._checks import check_flag
from screener.algorithms.base import Ask
from screener.algorithms.ksigma import Direction, KSigmaAlgorithm
from screener.algorithms.result import Decision, Result, WorkerResult
from screener.arrays import FloatArray, IntArray
from screener.errors import ConfigError
from screener.stats import ade_level

__all__ = ["ADE"]

RoundKind = Literal["threshold", "arm"]
_Groups = tuple[IntArray, FloatArray, FloatArray]

_PLANNED, _ANSWERED, _DROPPED = 0, 1, 2
_MOVED_AT_MOST = 256  # moved workers folded in one by one before a full pass is cheaper
_UNDECIDED, _NORMAL, _OUTLIER = 0, 1, 2
#: The k-sigma base's interval options, which ADE's own radii leave unused: their defaults
#: (what its runs are stored with) pass, anything else is refused rather than ignored.
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


class ADE(KSigmaAlgorithm):
    """ADE: trade threshold rounds (one random worker, pulled twice) against arm rounds.

    Radii, with R = b - a, R' = b^2 - a^2 (rewards in [a, b], a >= 0) and t the round index:

    * ``delta_t = 3 delta / ((n + 4) pi^2 t^2)``, where t is the number of COMPLETED rounds
      plus one (Algorithm 1 updates with t = 3 after its two initial rounds);
    * ``eps_sigma = (R' + 2 b R) sqrt(log(6 / delta_t) / (2 m_theta))``;
      ``U_sigma = min`` over completed rounds of ``sigma_hat^2 + eps_sigma``;
    * ``r_theta = R sqrt(log(1/delta_t) / (2 m_theta))
      + sqrt(2) k (R' + 2 b R) / sqrt(U_sigma) sqrt(log(6/delta_t) / (2 m_theta))``.
      Lemma 4 writes log(1/delta_t) in both terms, Lemmas 2-3 (which Lemma 4's proof uses)
      have log(6/delta_t) in eps_sigma. We take the conservative form: r_theta = r_mu +
      k r_sigma with r_mu from Lemma 1 (log(1/delta_t)) and r_sigma = sqrt(2/U) eps_sigma
      from Lemma 3 (log(6/delta_t)); U_sigma uses the same eps_sigma;
    * ``r_i = R sqrt(log(1/delta_t) / (2 m_i))``, m_i the arm-round answers of worker i.

    Worker i is decided normal once ``y_i + r_i <= theta_hat - r_theta`` and an outlier once
    ``y_i - r_i >= theta_hat + r_theta``, and not before y_i rests on ``min_answers`` answers
    (default 1, the paper's: any answer); decisions are final (checked once per completed
    round) and decided workers leave later arm rounds, so a worker below ``min_answers`` stays
    in them. The run stops when all are decided. ``min_answers`` changes no radius and no
    level, so it leaves the guarantee as it is.

    How delta is spent (the paper's Lemmas 1-5, unchanged here): at round t, each worker's
    interval is charged ``2 delta_t`` (both ends, Lemma 5; a decision only ever needs one of
    them), theta's ``8 delta_t`` (``2 delta_t`` for mu_hat, Lemma 1, and ``6 delta_t`` for
    sigma_hat, Lemma 3 and Eq. (17)): ``2 (n + 4) delta_t`` in all, which sums to delta over
    t >= 1 exactly.

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

    Why the guarantee survives. Think of each worker's answers as an i.i.d. stack, consumed
    in the order answers enter the estimates; which answer enters next depends on counts and
    timing, never on the answered values. Then y_i is the mean of the first m_i entries of
    i's stack, whatever kind of round asked for them. A threshold pair is the next two
    unused entries of J's stack with J drawn from a generator that only ever draws J, so the
    s-th pair is a fixed function of independent draws and the pairs form an i.i.d.
    sequence with the mean mu and the product-estimator expectation that Lemmas 1-3 assume;
    mu_hat, sigma_hat^2 and U_sigma are prefix means of it. Sharing makes the two
    estimators dependent, which a union bound does not mind. What changes is the index: a
    count can now exceed the round index t (a threshold round adds two answers to one
    worker; free pairs add to m_theta without a round), so every radius uses
    ``delta_max(t, m)`` in place of ``delta_t``, m the count it is about. Each event is then
    contained in the event "the prefix mean of m entries leaves its Hoeffding radius at level
    delta_m", and summing over m spends exactly the paper's sum over t, so Theorem 1's
    union bound and delta hold unchanged. (Free pairs do not advance t: counting them would
    inflate log(1/delta_t) for nothing.) The arm-vs-threshold rule is the paper's, with the
    planned counts and these levels.

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
    min_workers: ClassVar[int] = 2

    def __init__(
        self,
        n_workers: int,
        *,
        k: float = 2.0,
        delta: float = 0.1,
        direction: Direction = "high",
        share_samples: bool = False,
        min_answers: int = 1,
        **common: Any,
    ) -> None:
        ignored = [f"{name}={common[name]!r}" for name in _NOT_USED if name in common
                   and common[name] != _NOT_USED[name]]  # fmt: skip
        if ignored:
            raise ConfigError(
                f"ADE uses the paper's Hoeffding radii, so {', '.join(ignored)} would be ignored",
                "--interval and --quantile do not apply to ade: drop them",
            )
        super().__init__(
            n_workers,
            k=k,
            delta=delta,
            direction=direction,
            min_answers=min_answers,
            **common,
        )
        if self.lower < 0:
            raise ConfigError(
                f"ADE needs rewards in [a, b] with a >= 0, got lower={self.lower}",
                "shift the rewards so that lower >= 0",
            )
        # The radii are the paper's Hoeffding bounds whatever ``interval`` and ``quantile``
        # say (the k-sigma base's options): no heuristic label for the result.
        self._heuristic = None
        a, b = self.lower, self.upper
        self.big_r = b - a
        self.big_r2 = b * b - a * a
        self._sigma_scale = self.big_r2 + 2.0 * b * self.big_r
        self.share_samples = check_flag("share_samples", share_samples)
        n = self.n_arms
        self._unpaired: list[deque[float]] = [deque() for _ in range(n)]
        self._decisions_stale = False
        #: (counts, lowest means, highest means) of the undecided workers eligible for a
        #: decision at the last full ``_decide``, one entry per distinct count, and the
        #: workers whose answers moved since (see ``_quiet_round``).
        self._open_groups: _Groups | None = None
        self._moved: set[int] = set()
        #: Bounds on ``mean + radius`` (below) and ``mean - radius`` (above) of every such
        #: worker, good until the next full pass, and the workers that moved since they were
        #: last drawn (see ``_quiet_round``).
        self._floor, self._ceiling = -math.inf, math.inf
        self._unfolded: list[int] = []
        self._slack = 1e-12 * (1.0 + abs(self.upper))
        self._radii_stale = False
        #: Caches of two per-round questions, cleared when a decision or availability moves.
        self._pool: list[int] | None = None  # the available workers
        self._open: bool | None = None  # some undecided worker is available
        self._rounds: list[_Round] = []
        self._queue: deque[tuple[int, int]] = deque()
        self._unassigned: dict[int, deque[tuple[int, int]]] = {}
        self._slot_of: dict[int, tuple[int, int]] = {}
        self._planned_theta = 0
        self._planned_arm = 0
        self.completed = 0
        self.m_theta = 0
        self.m_arm_rounds = 0
        self._s1 = 0.0
        self._s2 = 0.0
        self._s12 = 0.0
        self.arm_sum = np.zeros(n, dtype=np.float64)
        self.arm_count = np.zeros(n, dtype=np.int64)
        self.decision = np.zeros(n, dtype=np.int8)
        self.u_sigma = math.inf
        self.sigma2 = math.nan
        self.level = ade_level(self.delta, n, 1)
        self.means = np.full(n, np.nan)
        self._radii = np.full(n, np.inf)

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
        if self.direction == "low":
            rewards = self.lower + self.upper - rewards
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

    def _add_pair(self, x1: float, x2: float) -> None:
        self.m_theta += 1
        self._s1 += x1
        self._s2 += x2
        self._s12 += x1 * x2

    def _add_arm_answers(self, arms: list[int], values: list[float], *, pairable: bool) -> None:
        self._moved.update(arms)
        self._unfolded.extend(arms)
        for arm, value in zip(arms, values, strict=True):
            self.arm_sum[arm] += value
            self.arm_count[arm] += 1
            if pairable:
                self._unpaired[arm].append(value)

    def _level_at(self, count: int) -> float:
        """delta_t, or delta_max(t, count) when samples are shared (see the class docstring)."""
        if not self.share_samples or count <= self.completed + 1:
            return self.level
        return ade_level(self.delta, self.n_arms, count)

    def _update(self) -> None:
        """Estimates, radii and decisions at round index t = completed rounds + 1."""
        self.level = ade_level(self.delta, self.n_arms, self.completed + 1)
        self._update_threshold()
        self._refresh_decisions()

    def _refresh_decisions(self) -> None:
        if not self._quiet_round():
            self._decide()

    def _quiet_round(self) -> bool:
        """True when the decisions stand as they are, found without a pass over every worker.

        First in O(1): a worker is decided normal when ``mean + radius <= theta - r_theta``
        (an outlier when ``mean - radius >= theta + r_theta``), and a radius only grows as
        the round index t grows (its level falls), so ``_floor``, the least ``mean + radius``
        of the undecided workers when last computed, stays a lower bound until a worker's
        answers move, and ``_ceiling`` likewise an upper bound; moved workers are folded in
        (``_fold_moved``). Clear of both by a margin far above any rounding, nobody is
        decided. Otherwise ``_exact_quiet`` answers exactly as ``_decide`` would.
        """
        if self._open_groups is None or self.m_theta == 0 or len(self._moved) > _MOVED_AT_MOST:
            return False
        low, high = self.theta - self.theta_radius, self.theta + self.theta_radius
        self._fold_moved()
        if self._floor - self._slack > low and self._ceiling + self._slack < high:
            self._radii_stale = True
            return True
        return self._exact_quiet(low, high)

    def _fold_moved(self) -> None:
        """Widen the bounds by the workers whose answers moved since they were last drawn
        (and bring their means up to date)."""
        for arm in self._unfolded:
            count = int(self.arm_count[arm])
            self.means[arm] = mean = float(self.arm_sum[arm]) / count  # it has answers: it moved
            if self.decision[arm] != _UNDECIDED or count < self.min_answers:
                continue
            radius = self._arm_radius(count)  # _radii_at's, up to rounding
            self._floor = min(self._floor, mean + radius)
            self._ceiling = max(self._ceiling, mean - radius)
        self._unfolded.clear()

    def _exact_quiet(self, low: float, high: float) -> bool:
        """``_quiet_round``'s exact answer, and fresh bounds when nobody is decided.

        The radius depends on a worker's count alone (given t), so for each count shared by
        the undecided workers of the last full ``_decide`` the extreme means are checked, and
        the few workers whose answers moved since (a threshold round's worker when samples
        are shared) one by one. The sums are the ones ``_decide`` makes for those workers
        (same float operations, rounding is monotone), so the answer is exactly
        ``_decide``'s. The radii of the rest are computed when read. Most rounds are
        threshold rounds of two pulls, and a pass over every worker was most of their cost.
        """
        assert self._open_groups is not None
        counts, lowest, highest = self._open_groups
        radius = self._radii_at(counts)
        floors, ceilings = [lowest + radius], [highest - radius]
        if self._moved:
            arms = np.fromiter(self._moved, dtype=np.int64, count=len(self._moved))
            count = self.arm_count[arms]
            mean = self.means[arms]  # brought up to date by _fold_moved
            open_ = (self.decision[arms] == _UNDECIDED) & (count >= self.min_answers)
            radius = self._radii_at(count)[open_]
            floors.append(mean[open_] + radius)
            ceilings.append(mean[open_] - radius)
        floor, ceiling = np.concatenate(floors), np.concatenate(ceilings)
        if bool((floor <= low).any() or (ceiling >= high).any()):
            return False
        self._set_bounds(floor, ceiling)
        self._radii_stale = True
        return True

    def _set_bounds(self, floors: FloatArray, ceilings: FloatArray) -> None:
        self._floor = float(floors.min()) if floors.size else math.inf
        self._ceiling = float(ceilings.max()) if ceilings.size else -math.inf

    @property
    def radii(self) -> FloatArray:
        """Each worker's radius at the current level (inf before its first arm answer)."""
        if self._radii_stale:
            self._radii = self._compute_radii(self.arm_count)
            self._radii_stale = False
        return self._radii

    def _update_threshold(self) -> None:
        m = self.m_theta
        if m == 0:
            return
        mu = self._s1 / m
        self.sigma2 = abs(self._s12 / m - mu * (self._s2 / m))
        eps = self._sigma_scale * math.sqrt(math.log(6.0 / self._level_at(m)) / (2.0 * m))
        self.u_sigma = min(self.u_sigma, self.sigma2 + eps)
        self.theta = mu + self.k * math.sqrt(self.sigma2)
        self.theta_radius = self._theta_radius(m)

    def _decide(self) -> None:
        self._decisions_stale = self._radii_stale = False
        self._moved.clear()
        self._unfolded.clear()
        counts = self.arm_count
        with np.errstate(divide="ignore", invalid="ignore"):
            self.means = np.where(counts > 0, self.arm_sum / counts, np.nan)
        self._radii = radii = self._compute_radii(counts)
        self._open_groups = None
        if self.m_theta == 0:
            return
        undecided = (self.decision == _UNDECIDED) & (counts >= self.min_answers)
        low, high = self.theta - self.theta_radius, self.theta + self.theta_radius
        normal = undecided & (self.means + radii <= low)
        outlier = undecided & ~normal & (self.means - radii >= high)
        self.decision[normal] = _NORMAL
        self.decision[outlier] = _OUTLIER
        self._open = None
        still = undecided & ~normal & ~outlier
        self._open_groups = self._group_by_count(still)
        self._set_bounds((self.means + radii)[still], (self.means - radii)[still])

    def _compute_radii(self, counts: IntArray) -> FloatArray:
        """Every worker's radius at round index t (inf before its first arm answer)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(counts > 0, self._radii_at(counts), np.inf)

    def _radii_at(self, counts: IntArray) -> FloatArray:
        """The radius at each of these counts (all positive) at round index t."""
        log1: FloatArray | float
        if self.share_samples:
            levels = 3.0 * self.delta / ((self.n_arms + 4) * math.pi**2)
            t = self.completed + 1
            log1 = -np.log(levels / np.maximum(counts, t).astype(np.float64) ** 2)
        else:
            log1 = math.log(1.0 / self.level)
        radii: FloatArray = self.big_r * np.sqrt(log1 / (2.0 * counts))
        return radii

    def _group_by_count(self, members: NDArray[np.bool_]) -> _Groups:
        """(distinct counts, lowest mean, highest mean) of ``members`` (see ``_quiet_round``)."""
        counts, means = self.arm_count[members], self.means[members]
        if counts.size == 0:
            return counts, means, means
        order = np.lexsort((means, counts))
        counts, means = counts[order], means[order]
        first = np.r_[True, counts[1:] != counts[:-1]]
        last = np.r_[first[1:], True]
        return counts[first], means[first], means[last]

    def _threshold_interval(self) -> tuple[float, float]:
        """theta's interval is ADE's own, ``theta -+ r_theta`` (Lemma 4), the one its decisions
        use; the k-sigma base's range over the workers' box does not apply."""
        if self.m_theta == 0:
            return -math.inf, math.inf
        return self.theta - self.theta_radius, self.theta + self.theta_radius

    def _theta_radius(self, m_theta: int) -> float:
        level = self._level_at(m_theta)
        log1 = math.log(1.0 / level)
        log6 = math.log(6.0 / level)
        r_mu = self.big_r * math.sqrt(log1 / (2.0 * m_theta))
        r_sigma = math.sqrt(2.0 / self.u_sigma) * self._sigma_scale
        return r_mu + self.k * r_sigma * math.sqrt(log6 / (2.0 * m_theta))

    def _arm_radius(self, m_arm: int) -> float:
        return self.big_r * math.sqrt(math.log(1.0 / self._level_at(m_arm)) / (2.0 * m_arm))

    def _refresh(self) -> None:
        self.active = self.decision == _UNDECIDED

    def _condition_met(self) -> bool:
        return not bool((self.decision == _UNDECIDED).any())

    def _can_progress(self) -> bool:
        if self._open is None:
            self._open = bool(((self.decision == _UNDECIDED) & self.available).any())
        return self._open

    # --------------------------------------------------------------------- schedule
    def _schedule(self, limit: int) -> IntArray:
        arms: list[int] = []
        while len(arms) < limit and self._next_slot():
            index, slot = self._queue.popleft()
            rnd = self._rounds[index]
            arm = rnd.arms[slot]
            skip = not self.available[arm] or (
                rnd.kind == "arm" and self.decision[arm] != _UNDECIDED
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
            members = np.flatnonzero((self.decision == _UNDECIDED) & self.available).tolist()
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
        pending = int(self.pending[arm])
        pulls = int(self.stats.count[arm])
        if self.arm_count[arm] == 0:
            reason = self._availability_reason(arm) or "no arm-round answers yet"
            return WorkerResult(
                arm, math.nan, self.lower, self.upper, pulls, pending,
                Decision.UNDECIDED, Decision.UNDECIDED, reason, 0,
            )  # fmt: skip
        mean, radius = float(self.means[arm]), float(self.radii[arm])
        state = int(self.decision[arm])
        if state == _UNDECIDED:
            decision = Decision.UNDECIDED
            above = math.isfinite(self.theta) and mean > self.theta
            leaning = Decision.OUTLIER if above else Decision.NORMAL
            reason = self._availability_reason(arm) or self._undecided_reason(arm)
        else:
            decision = Decision.OUTLIER if state == _OUTLIER else Decision.NORMAL
            leaning = decision
            reason = self._decided_reason(condition_met)
        low, high = sorted(
            (self._to_reward_scale(mean - radius), self._to_reward_scale(mean + radius))
        )
        return WorkerResult(
            arm, self._to_reward_scale(mean), max(low, self.lower), min(high, self.upper),
            pulls, pending, decision, leaning, reason, 0, self._score(arm),
        )  # fmt: skip

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
