"""What GOLD's ranking lets it decide about each worker (Ban & He, KDD 2020).

Decisions. The ranking (``S`` ascending, never-terminal arms last, ``rank`` and ``score``) is
what the theorem guarantees. Because of the stopping rule the set of terminal arms is never an
outlier group by itself, so the per-worker decisions use only what the ranking implies. Let
``T_1 < T_2 < ...`` be the distinct terminal rounds and ``P_k`` the arms terminal by ``T_k``.
An outlier group is one of the prefixes ``P_k`` with ``|P_k| < n (1 - rho)`` (whenever the order
of Theorem 5.1 holds), so it contains ``P_1`` and is contained in ``P_k*``, the largest prefix
with fewer than ``n (1 - rho)`` arms. When the condition holds: OUTLIER for ``P_1`` (terminal at
the first terminal round), NORMAL for every arm outside ``P_k*`` (never terminal, or terminal
once ``n (1 - rho)`` or more arms were), UNDECIDED (leaning OUTLIER) for ``P_k* - P_1``. If the
first terminal round already isolated ``n (1 - rho)`` or more arms no outlier group can exist
(again when the order holds) and every arm is NORMAL. Before the condition holds every worker
is UNDECIDED, leaning OUTLIER when terminal.
"""

from __future__ import annotations

import math

import numpy as np

from screener.algorithms._checks import label_heuristic
from screener.algorithms.base import Algorithm
from screener.algorithms.ksigma.neighbour_graph import NeighbourGraph
from screener.algorithms.result import Result
from screener.algorithms.worker_result import Decision, WorkerResult
from screener.arrays import BoolArray, FloatArray, IntArray

__all__ = ["GoldRanking"]


class GoldRanking(Algorithm):
    """GOLD's result: workers ranked by terminal round, decided as far as the ranking allows
    (the module docstring); GOLD keeps the graph and the rounds this reads."""

    eps: float
    rho: float
    delta: float
    b: float
    #: ``n (1 - rho)``: an outlier group has fewer members (at most, when ``inclusive``).
    minority: float
    inclusive: bool
    means: FloatArray
    radii: FloatArray
    #: Workers whose community once had fewer than ``minority`` members, and that round.
    terminal: BoolArray
    rounds: IntArray
    graph: NeighbourGraph | None
    _heuristic: str | None

    def _small(self, sizes: IntArray) -> BoolArray:
        """Which community (or prefix) sizes count as small: ``< n (1 - rho)``, or ``<=``."""
        if self.inclusive:
            return np.asarray(sizes <= self.minority, dtype=bool)
        return np.asarray(sizes < self.minority, dtype=bool)

    def _describe(self) -> Result:
        condition_met = self._condition_met()
        first, cutoff = self._prefix_rounds()
        order = sorted(range(self.n_arms), key=self._rank_key)
        lines = tuple(
            self._worker_line(arm, rank, condition_met, first, cutoff)
            for rank, arm in enumerate(order, start=1)
        )
        graph = self.graph
        result = self._result(
            lines,
            extra={
                "eps": self.eps,
                "rho": self.rho,
                "delta": self.delta,
                "b": self.b,
                "minority": self.minority,
                "inclusive": self.inclusive,
                "terminal": int(self.terminal.sum()),
                "communities": None if graph is None else graph.n_communities,
                "first_round": first,
                "outlier_cutoff_round": cutoff,
            },
        )
        return label_heuristic(result, self._heuristic)

    def _rank_key(self, arm: int) -> tuple[int, int, int]:
        if self.terminal[arm]:
            return (0, int(self.rounds[arm]), arm)
        return (1, 0, arm)

    def _prefix_rounds(self) -> tuple[int | None, int | None]:
        """The first terminal round and the last round whose prefix has < n (1 - rho) arms
        (``<=`` when inclusive)."""
        rounds, counts = np.unique(self.rounds[self.terminal], return_counts=True)
        if rounds.size == 0:
            return None, None
        below = self._small(np.cumsum(counts))
        cutoff = int(rounds[np.flatnonzero(below)[-1]]) if below.any() else None
        return int(rounds[0]), cutoff

    def _worker_line(
        self, arm: int, rank: int, condition_met: bool, first: int | None, cutoff: int | None
    ) -> WorkerResult:
        count = int(self.stats.count[arm])
        pending = int(self.pending[arm])
        in_graph = self.graph is not None and bool(self.graph.members[arm])
        terminal = bool(self.terminal[arm])
        round_ = int(self.rounds[arm])
        score = float(round_) if terminal else None
        in_prefix = terminal and cutoff is not None and round_ <= cutoff
        leaning = (
            Decision.OUTLIER if in_prefix or (terminal and not condition_met) else (Decision.NORMAL)
        )
        decision, reason = self._decide(arm, condition_met, in_graph, first, cutoff)
        if count == 0:
            estimate, low, high = math.nan, self.lower, self.upper
        else:
            estimate = float(self.means[arm])
            radius = float(self.radii[arm])
            low, high = max(estimate - radius, self.lower), min(estimate + radius, self.upper)
        return WorkerResult(
            arm, estimate, low, high, count, pending, decision, leaning, reason, rank, score,
        )  # fmt: skip

    def _decide(
        self, arm: int, condition_met: bool, in_graph: bool, first: int | None, cutoff: int | None
    ) -> tuple[Decision, str]:
        away = self._availability_reason(arm)
        if self.graph is not None and not in_graph:
            return Decision.UNDECIDED, f"{away or 'left'}; no answers, kept out of the graph"
        terminal = bool(self.terminal[arm])
        round_ = int(self.rounds[arm])
        if not condition_met:
            terminal_count = int(self.terminal.sum())
            status = f"terminal at round {round_}" if terminal else "not terminal"
            why = (
                f"{status}; {terminal_count} terminal workers, the stopping rule needs "
                f"n (1 - rho) = {self.minority:g}"
            )
            if 0 < self.stats.count[arm] < self.min_answers:
                why = f"{why}; {self._too_few_reason}"
            return Decision.UNDECIDED, f"{away}; {why}" if away else why
        if self.stats.count[arm] < self.min_answers:  # it left before min_answers answers
            few = self._too_few_reason
            return Decision.UNDECIDED, f"{away}; {few}" if away else few
        large = self._large_words
        if not terminal:
            return Decision.NORMAL, f"never left a community of {large} workers"
        if cutoff is None:
            return Decision.NORMAL, (
                f"terminal at round {round_} together with {large} workers: no outlier group"
            )
        if round_ == first:
            return Decision.OUTLIER, f"terminal at round {round_}, the first separation"
        if round_ <= cutoff:
            too_many = "more than n (1 - rho)" if self.inclusive else "n (1 - rho)"
            return Decision.UNDECIDED, (
                f"terminal at round {round_}, after the first separation and before "
                f"{too_many} workers were: an outlier only with the first ones (see the rank)"
            )
        return Decision.NORMAL, f"terminal at round {round_}, once {large} workers were terminal"

    @property
    def _large_words(self) -> str:
        """How many workers are too many for an outlier group, in words."""
        return "more than n (1 - rho)" if self.inclusive else "n (1 - rho) or more"
