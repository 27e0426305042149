"""ADE's estimates and decisions (Zhang et al. 2020, Algorithm 1): theta from threshold pairs,
each worker's mean from its arm-round answers, and the decisions against theta's interval.

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

Why sharing samples (``ADE``'s ``share_samples``) keeps the guarantee. Think of each
worker's answers as an i.i.d. stack, consumed in the order answers enter the estimates;
which answer enters next depends on counts and timing, never on the answered values. Then
y_i is the mean of the first m_i entries of i's stack, whatever kind of round asked for
them. A threshold pair is the next two unused entries of J's stack with J drawn from a
generator that only ever draws J, so the s-th pair is a fixed function of independent draws
and the pairs form an i.i.d. sequence with the mean mu and the product-estimator expectation
that Lemmas 1-3 assume; mu_hat, sigma_hat^2 and U_sigma are prefix means of it. Sharing
makes the two estimators dependent, which a union bound does not mind. What changes is the
index: a count can now exceed the round index t (a threshold round adds two answers to one
worker; free pairs add to m_theta without a round), so every radius uses ``delta_max(t, m)``
in place of ``delta_t``, m the count it is about. Each event is then contained in the event
"the prefix mean of m entries leaves its Hoeffding radius at level delta_m", and summing
over m spends exactly the paper's sum over t, so Theorem 1's union bound and delta hold
unchanged. (Free pairs do not advance t: counting them would inflate log(1/delta_t) for
nothing.) The arm-vs-threshold rule is the paper's, with the planned counts and these
levels.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np
from numpy.typing import NDArray

from screener.algorithms.ksigma.rule import KSigmaRule
from screener.arrays import FloatArray, IntArray
from screener.stats import ade_level

__all__ = ["UNDECIDED", "ADEDecisions"]

_Groups = tuple[IntArray, FloatArray, FloatArray]
#: A worker's decision, as ``ADEDecisions.decision`` holds it.
UNDECIDED, NORMAL, OUTLIER = 0, 1, 2
_MOVED_AT_MOST = 256  # moved workers folded in one by one before a full pass is cheaper


class ADEDecisions(KSigmaRule):
    """ADE's estimates, radii and decisions, updated once per completed round (the module
    docstring); ``ADE`` plans the rounds and feeds them in (``_add_pair``,
    ``_add_arm_answers``, then ``_update``)."""

    #: Every answer of a worker also feeds theta's pairs, and the levels follow the counts.
    share_samples: bool

    def __init__(self, n_workers: int, **kwargs: Any) -> None:
        super().__init__(n_workers, **kwargs)
        a, b, n = self.lower, self.upper, self.n_arms
        self.big_r = b - a
        self.big_r2 = b * b - a * a
        self._sigma_scale = self.big_r2 + 2.0 * b * self.big_r
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
        self._open: bool | None = None  # some undecided worker is available (None: unknown)
        self.completed = 0
        self.m_theta = 0
        self.m_arm_rounds = 0
        self._s1 = 0.0
        self._s2 = 0.0
        self._s12 = 0.0
        self.theta_radius = math.inf
        self.arm_sum = np.zeros(n, dtype=np.float64)
        self.arm_count = np.zeros(n, dtype=np.int64)
        self.decision = np.zeros(n, dtype=np.int8)
        self.u_sigma = math.inf
        self.sigma2 = math.nan
        self.level = ade_level(self.delta, n, 1)
        self._radii = np.full(n, np.inf)
        #: Each worker's arm-round answers not yet in a threshold pair (shared mode).
        self._unpaired: list[deque[float]] = [deque() for _ in range(n)]

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
        """delta_t, or delta_max(t, count) when samples are shared (the module docstring)."""
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
            if self.decision[arm] != UNDECIDED or count < self.min_answers:
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
        ``_decide``'s. The radii of the rest are computed when read.
        """
        assert self._open_groups is not None
        counts, lowest, highest = self._open_groups
        radius = self._radii_at(counts)
        floors, ceilings = [lowest + radius], [highest - radius]
        if self._moved:
            arms = np.fromiter(self._moved, dtype=np.int64, count=len(self._moved))
            count = self.arm_count[arms]
            mean = self.means[arms]  # brought up to date by _fold_moved
            open_ = (self.decision[arms] == UNDECIDED) & (count >= self.min_answers)
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
        undecided = (self.decision == UNDECIDED) & (counts >= self.min_answers)
        low, high = self.theta - self.theta_radius, self.theta + self.theta_radius
        normal = undecided & (self.means + radii <= low)
        outlier = undecided & ~normal & (self.means - radii >= high)
        self.decision[normal] = NORMAL
        self.decision[outlier] = OUTLIER
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
