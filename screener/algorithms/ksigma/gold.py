"""GOLD: Generic OutLier Detection (Ban & He, KDD 2020), as a pending-aware ask/tell algorithm.

Definitions (paper, Section 4): arms i and j are *neighbours* while
``|y_i - y_j| <= b (beta_i + beta_j)`` with ``b = (1 + e^(1/16) + eps) / (1 - e^(1/16) + eps)``
and radii ``beta`` (the paper's at the level ``delta' = 6 delta / (pi^2 n T^2)``, ``T`` the
number of answers so far; by default anytime radii at ``delta / n``: see ``GOLD``). The
neighbourhood graph is complete once every arm has an answer; from then on edges are only ever
removed (a removed edge never comes back, the paper's ``UpdateG``). Communities are the
connected components. An arm becomes *terminal* the first time its community has fewer than
``n (1 - rho)`` arms; its score ``S`` is the round ``T`` at which that happened.

Reading of the stopping rule (Algorithm 1, line 13, and "terminal status of the algorithm"):
stop as soon as at least ``n (1 - rho)`` arms are terminal, ``|Psi^| >= n (1 - rho)``. An
(eps, rho)-outlier group has *fewer* than ``n (1 - rho)`` members (Constraint 2), so the run
always ends after at least one normal arm has split off too; that is what certifies the order of
Theorem 5.1: with probability at least 1 - delta every arm of an outlier group has a smaller
``S`` than every normal arm. The paper's pseudo-code checks the rule only after a full sweep;
here it is checked lazily at every ``ask`` (an earlier stop is still after the first normal
arm turned terminal, so the theorem's order holds at it). ``n (1 - rho)`` is computed as
``round(n * (1 - rho), 9)`` so that e.g. ``20 * (1 - 0.9)`` counts as exactly 2.


Pending pulls: the schedule is round robin over the available non-terminal arms, so asking
again while answers are outstanding simply continues the cycle (terminal arms are never asked
again). The graph, the terminal rounds and the stopping rule use only answers that arrived, and
are evaluated lazily at each ``ask`` (or ``result``) like the rest of the library: with batches
of B answers between asks, the graph sees them all at the refresh, with ``T`` the count of
answers so far. With ``ask(1)`` and immediate answers the run is the paper's loop (except that
terminal arms are skipped at once instead of at the end of the sweep).

``min_answers`` (default 1, the paper's behaviour). The graph, the terminal rounds and the
ranking are GOLD's own, untouched: only the decisions wait. A terminal worker with fewer than
``min_answers`` answers keeps being asked (round robin with the non-terminal ones; its terminal
round, and so its rank, does not change), and the stopping rule also needs every available
worker in the graph to have ``min_answers`` answers. A worker that left with fewer stays
UNDECIDED. (Starting the graph only after ``min_answers`` answers each would not do: the
first look at a late graph can cut normal workers off in the same round as the outliers,
while the order of Theorem 5.1 rests on edges being examined from the first answers on.)
Extra answers only add to T, which the levels already sum over, so the promise stands.

Inclusive reading (``inclusive=True``, off by default). Section 6.1 injects exactly
``(1 - rho) n`` outliers, a group that Definition 3.2 excludes (it leaves exactly ``rho n``
normal arms, Constraint 2 asks for more); with the terminal test as written such a group never
turns terminal as a whole community. With ``inclusive=True`` an arm becomes terminal the first
time its community has *at most* ``n (1 - rho)`` arms; the stopping rule is unchanged
(``|Psi^| >= n (1 - rho)``), so a group of exactly ``n (1 - rho)`` arms stops the run as soon as
it is terminal, with no normal arm split off. Everything stated with "fewer than" above reads
"at most" (outlier groups are the prefixes ``P_k`` with ``|P_k| <= n (1 - rho)``, ``P_k*`` the
largest such, NORMAL outside it), and ``n (1 - rho) >= 1`` is enough for rho. When
``n (1 - rho)`` is not an integer the two readings are the same algorithm (community sizes are
integers); the option matters only at integer ``n (1 - rho)``.

Guarantee of the inclusive reading. Let ``m = n (1 - rho)``. Suppose ``G`` satisfies
Constraint (1) (with respect to ``N_u``, ``N_l``), ``|G| <= m`` (``|N_u| + |N_l| >= rho n``) and
each of ``N_u``, ``N_l`` is empty or has MORE than ``m`` arms. Then with probability at least
1 - delta every arm of ``G`` ranks before every normal arm, as in Theorem 5.1: on the event of
Lemma 5.2, Lemma 5.5 (which uses Constraint (1) only) gives a round ``T*`` at which no arm of
``G`` has a neighbour in ``N_u`` or ``N_l`` while ``N_u`` still lies in one community and so does
``N_l``. Edges are only removed, so up to ``T*`` every normal arm's community contains its whole
side: more than ``m`` arms, not terminal. At ``T*`` every community holding an arm of ``G``
holds arms of ``G`` only, at most ``|G| <= m``: every arm of ``G`` is terminal by ``T*``. So
``S[j] <= T* < S[i]`` for ``j`` in ``G`` and every normal ``i``. The stop cannot come first
either: before ``T*`` only arms of ``G`` are terminal, so ``|Psi^| >= m`` then means all of
``G`` is terminal (``|G| = m``); with ``|G| < m`` the stop waits for a normal arm as before.
For an upper or lower group the side condition holds by itself (the one side has
``n - |G| >= rho n > m`` arms since rho > 0.5); for an intermediate group it is needed and is
strict: Constraint (2) relaxed to "each side empty or at least ``m``" is NOT enough. A side of
exactly ``m`` normal arms is, once cut from ``G``, a community of ``m`` arms and turns terminal
at the same round as ``G`` or before it (e.g. when ``G`` separates from that side first), and
the run may stop with that side ranked first. (The strict reading tolerates such a side, since
``m`` arms are not fewer than ``m``.)
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from screener.algorithms._checks import (
    IntervalKind,
    check_delta,
    check_interval_options,
    heuristic_note,
)
from screener.algorithms._test_setups import BUDGET, OUTLIER_MEANS, AlgorithmSetup
from screener.algorithms.ksigma.cursor import RoundRobinCursor
from screener.algorithms.ksigma.gold_ranking import GoldRanking
from screener.algorithms.ksigma.neighbour_graph import NeighbourGraph
from screener.arrays import BoolArray, FloatArray, IntArray
from screener.checks import check_flag
from screener.errors import ConfigError
from screener.stats import (
    QuantileRule,
    gold_level,
    hoeffding_radius,
    mixture_radius,
    normal_quantile,
    scaled_agresti_coull_radius,
)

__all__ = ["EPS_LOWER_BOUND", "GOLD", "gold_b", "minority_size"]


_E16 = math.exp(1.0 / 16.0)
#: GOLD needs ``eps > e^(1/16) - 1`` (about 0.0645) for ``b`` to be positive and above 1.
EPS_LOWER_BOUND = _E16 - 1.0
_NO_ROUND = -1


def gold_b(eps: float) -> float:
    """The neighbour coefficient ``b = (1 + e^(1/16) + eps) / (1 - e^(1/16) + eps)`` (Eq. 3)."""
    if not (math.isfinite(eps) and eps > EPS_LOWER_BOUND):
        raise ConfigError(
            f"GOLD needs eps > e^(1/16) - 1 = {EPS_LOWER_BOUND:.4f}, got {eps}",
            "the paper's experiments use eps=2.5 or eps=5",
        )
    return (1.0 + _E16 + eps) / (1.0 - _E16 + eps)


def minority_size(n_arms: int, rho: float) -> float:
    """``n (1 - rho)``, rounded to 9 decimals so that float noise cannot move a comparison."""
    return round(n_arms * (1.0 - rho), 9)


class GOLD(GoldRanking):
    """GOLD (Ban & He 2020, Algorithm 1): rank workers so that (eps, rho)-outliers come first.

    Parameters: ``eps`` (> e^(1/16) - 1, about 0.0645), ``rho`` in (0.5, 1) with
    ``n (1 - rho) > 1`` (``>= 1`` when inclusive), ``delta`` in (0, 1), ``interval``
    ("mixture", the default, or the paper's "hoeffding" for any bounded reward and
    "agresti-coull", a heuristic for 0/1 rewards) and ``quantile`` for the paper's two:
    "normal" (default) uses the sound two-sided level delta' (Agresti-Coull
    ``z = Phi^-1(1 - delta'/2)``, Hoeffding ``R sqrt(log(2/delta') / (2 m))``); "paper" the
    paper's formulas (``z = erf^-1(1 - delta')``, ``R sqrt(log(1/delta') / (2 m))``), narrower
    than their level claims (labelled "heuristic: delta is not guaranteed" in the result, as
    Agresti-Coull is). ``inclusive`` (default False): terminal when the community has at
    most ``n (1 - rho)`` arms instead of fewer, for Section 6.1's groups of exactly
    ``n (1 - rho)`` arms; the guarantee then needs each non-empty normal side to have more than
    ``n (1 - rho)`` arms (see the module docstring). ``min_answers`` (default 1): no worker is
    decided on fewer answers (see the module docstring).

    How delta is spent. Lemma 5.2's event is ``|y_i - mu_i| <= beta_i`` for every arm at every
    T, both ends, since the neighbour test ``|y_i - y_j| <= b (beta_i + beta_j)`` leans on
    either end of either arm; Lemmas 5.3-5.5 then compare the rounds at which pairs of arms
    separate through one radius function of the count (and T) shared by all arms, which
    data-dependent radii are not (a KL interval, narrower near 0 and 1, could let two normal
    arms there separate before an outlier leaves them: the proof does not cover it).

    * ``interval="mixture"`` (default): ``beta_i = R mixture_radius(m_i, delta / n)``, the
      Pinsker cover of the Beta-mixture confidence sequence (``screener.stats``): a data-free
      radius that holds at every count of arm i at once with probability >= 1 - delta / n.
      No union over T; n arms at ``delta / n`` is exactly delta.
    * ``interval="hoeffding"``: ``delta' = 6 delta / (pi^2 n T^2)`` per arm after T answers,
      ``delta' / 2`` per end with ``quantile="normal"``: summed over the n arms and T >= 1
      exactly delta. (``quantile="paper"`` puts ``delta'`` on each end: 2 delta in all.)
    * ``interval="agresti-coull"``: two-sided at ``delta'`` only under the normal
      approximation, and its radii depend on the data: a heuristic.

    See the module docstring for the stopping rule and pending pulls, and
    ``screener.algorithms.ksigma.gold_ranking`` for the decisions.

    Examples
    --------
    On six simulated workers (one worker far above the rest):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.2, 0.25, 0.3, 0.3, 0.35, 0.95]
    >>> algorithm = GOLD(6, rho=0.8, budget=3000, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('budget spent', 3000)
    >>> [w.arm for w in sorted(result.workers, key=lambda w: w.rank)][:2]  # most outlying first
    [5, 0]
    """

    name = "gold"
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (
        AlgorithmSetup({"rho": 0.7, **BUDGET}, means=OUTLIER_MEANS),
    )
    min_workers: ClassVar[int] = 3
    fixed_roster: ClassVar[str | None] = (
        "an (eps, rho)-outlier is an outlier against the whole crowd's accuracies, so a "
        "worker who joins changes who the outliers are"
    )
    guarantee: ClassVar[str | None] = (
        "if an (eps, rho)-outlier group exists, with probability at least 1 - delta every "
        "member ranks before every normal worker"
    )

    def __init__(
        self,
        n_workers: int,
        *,
        eps: float = 2.5,
        rho: float = 0.9,
        delta: float = 0.1,
        interval: IntervalKind = "mixture",
        quantile: QuantileRule = "normal",
        inclusive: bool = False,
        min_answers: int = 1,
        **common: Any,
    ) -> None:
        super().__init__(n_workers, **common)
        self._set_min_answers(min_answers)
        self.b = gold_b(eps)
        if not 0.5 < rho < 1.0:
            raise ConfigError(f"rho must lie in (0.5, 1), got {rho}", "the paper uses rho=0.9")
        self.inclusive = check_flag("inclusive", inclusive)
        minority = minority_size(self.n_arms, rho)
        self._check_room(minority, rho)
        check_delta(delta)
        check_interval_options(interval, quantile)
        self.eps = float(eps)
        self.rho = float(rho)
        self.delta = float(delta)
        self.interval: IntervalKind = interval
        self.quantile: QuantileRule = quantile
        self._heuristic = heuristic_note(interval, paper_quantile=quantile == "paper")
        self.minority = minority
        self.width = self.upper - self.lower
        n = self.n_arms
        self.means = np.full(n, np.nan)
        self.radii = np.full(n, np.inf)
        self.terminal = np.zeros(n, dtype=bool)
        self.rounds = np.full(n, _NO_ROUND, dtype=np.int64)
        self.graph: NeighbourGraph | None = None
        self._changed = np.zeros(n, dtype=bool)
        self._cursor = RoundRobinCursor()

    def _check_room(self, minority: float, rho: float) -> None:
        """An outlier group of one arm must fit: ``1 < n (1 - rho)``, or ``<=`` when inclusive."""
        if minority >= 1.0 if self.inclusive else minority > 1.0:
            return
        group = "at most" if self.inclusive else "fewer than"
        bound = "<=" if self.inclusive else "<"
        raise ConfigError(
            f"with {self.n_arms} workers and rho={rho}, n (1 - rho) = {minority} leaves no "
            f"room for an outlier (a group must have {group} n (1 - rho) members)",
            f"use rho {bound} {1.0 - 1.0 / self.n_arms:.4g} or more workers",
        )

    # ------------------------------------------------------------------ subclass steps
    def _on_answers(self, pull_ids: IntArray, arms: IntArray, rewards: FloatArray) -> None:
        self.stats.update_many(arms, rewards)
        self._changed[arms] = True

    def _refresh(self) -> None:
        total = self.stats.n_samples
        self.means = self.stats.means()
        self.radii = self._arm_radii(total)
        if self.graph is None:
            sampled = self.stats.count > 0
            if not bool((sampled | ~self.available).all()) or not sampled.any():
                return
            # Every worker still in the pool has an answer: the graph starts complete, and
            # workers that left unanswered stay out of it.
            self.graph = NeighbourGraph(sampled)
            self._changed = sampled.copy()
            self._mark_terminal(total)
        rows = np.flatnonzero(self._changed)
        self._changed[:] = False
        if self._cut_edges(self.graph, rows):
            self._mark_terminal(total)

    def _cut_edges(self, graph: NeighbourGraph, rows: IntArray) -> bool:
        """Remove the edges that stopped being neighbours; True when some edge went."""
        return graph.remove_edges(rows, self.means, self.radii, self.b)

    def _mark_terminal(self, total: int) -> None:
        assert self.graph is not None
        small = self.graph.members & self._small(self.graph.community_sizes())
        new = small & ~self.terminal
        self.rounds[new] = total
        self.terminal |= new

    def _arm_radii(self, total_pulls: int) -> FloatArray:
        """Every arm's radius after ``total_pulls`` answers (the class docstring)."""
        counts = self.stats.count
        if self.interval == "mixture":  # a function of the count: redo the arms answered
            radii = self.radii.copy()
            changed = self._changed
            radii[changed] = self.width * mixture_radius(counts[changed], self.delta / self.n_arms)
            return radii
        level = gold_level(self.delta, self.n_arms, total_pulls)
        paper = self.quantile == "paper"
        if self.interval == "hoeffding":
            return hoeffding_radius(counts, level if paper else level / 2.0, self.width)
        # erf^-1(1 - level) = Phi^-1(1 - level / 2) / sqrt(2) = normal_quantile(2 level, "paper").
        z = normal_quantile(2.0 * level, "paper") if paper else normal_quantile(level, "normal")
        return scaled_agresti_coull_radius(self.stats.total, counts, z, self.lower, self.width)

    def _condition_met(self) -> bool:
        if self.graph is None or int(self.terminal.sum()) < self.minority:
            return False
        # Decisions wait for min_answers answers from every worker that can still give them.
        return not bool((self.graph.members & self.available & self._too_few_answers()).any())

    def _askable(self) -> BoolArray:
        """Non-terminal workers, and terminal ones still below min_answers."""
        return self.available & (~self.terminal | self._too_few_answers())

    def _can_progress(self) -> bool:
        return bool(self._askable().any())

    def _schedule(self, limit: int) -> IntArray:
        return self._cursor.take(np.flatnonzero(self._askable()), limit)
