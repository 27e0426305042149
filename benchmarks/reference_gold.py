"""The naive O(n^2)-per-refresh GOLD (Ban & He, KDD 2020): a reference for tests and timing.

``NaiveGOLD`` re-checks every pair of arms and recomputes every connected component at each
refresh, where ``screener.algorithms.ksigma.gold.GOLD`` re-checks only pairs at arms with new
answers and splits only communities that lost an edge. It also applies the terminal test on its own,
arm by arm, from plain community counts (``< n (1 - rho)``, or ``<=`` with ``inclusive=True``,
the same constructor option as GOLD's). Both must make the same pulls.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from numpy.typing import NDArray

from screener.algorithms.ksigma import GOLD, NeighbourGraph
from screener.arrays import IntArray

__all__ = ["NaiveGOLD", "components"]


def components(adjacency: NDArray[np.bool_], members: NDArray[np.bool_]) -> NDArray[np.int64]:
    """Connected components by plain breadth-first search over adjacency lists."""
    labels = np.full(members.size, -1, dtype=np.int64)
    neighbours = [np.flatnonzero(row).tolist() for row in adjacency]
    label = 0
    for start in np.flatnonzero(members).tolist():
        if labels[start] >= 0:
            continue
        labels[start] = label
        queue = deque([start])
        while queue:
            for other in neighbours[queue.popleft()]:
                if labels[other] < 0:
                    labels[other] = label
                    queue.append(other)
        label += 1
    return labels


class NaiveGOLD(GOLD):
    """Reference: every pair re-checked and every component recomputed at each refresh."""

    def _cut_edges(self, graph: NeighbourGraph, rows: IntArray) -> bool:
        members = graph.members
        gap = np.abs(self.means[:, None] - self.means[None, :])
        reach = self.b * (self.radii[:, None] + self.radii[None, :])
        keep = ~(gap > reach) & members[:, None] & members[None, :]
        graph.adjacency &= keep  # never re-adds: an edge stays only if it was there
        graph.labels = components(graph.adjacency, members)
        return True

    def _mark_terminal(self, total: int) -> None:
        assert self.graph is not None
        labels = self.graph.labels.tolist()
        for arm, label in enumerate(labels):
            if label < 0 or self.terminal[arm]:
                continue
            size = labels.count(label)
            small = size <= self.minority if self.inclusive else size < self.minority
            if small:
                self.rounds[arm] = total
                self.terminal[arm] = True
