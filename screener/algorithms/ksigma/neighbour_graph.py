"""GOLD's neighbourhood graph (Ban & He, KDD 2020): arms are neighbours while their means are
within ``b`` times the sum of their radii; edges are only ever removed.

Efficiency: between refreshes only the arms that received answers get new estimates; every
other radius stays (the mixture radius depends on the arm's count only) or widens (``delta'``
falls with ``T`` and the paper's radii grow as the level falls), and neither removes an edge,
so only pairs at changed arms are re-checked (vectorised over the other endpoint), and
components are recomputed only inside communities that lost an edge. Workers that left before
their first answer are kept out of the graph (never terminal).
"""

from __future__ import annotations

import numpy as np

from screener.arrays import BoolArray, FloatArray, IntArray

__all__ = ["NeighbourGraph"]


class NeighbourGraph:
    """The neighbourhood graph of the member arms: edges are only ever removed.

    ``adjacency`` is a symmetric boolean matrix (no self loops, no edges at non-members) and
    ``labels`` the community (connected component) of every member arm, -1 for non-members.
    """

    def __init__(self, members: BoolArray) -> None:
        self.members = np.asarray(members, dtype=bool).copy()
        self.adjacency = np.outer(self.members, self.members)
        np.fill_diagonal(self.adjacency, False)
        self.labels = np.where(self.members, 0, -1).astype(np.int64)
        self._next_label = 1

    def remove_edges(self, rows: IntArray, means: FloatArray, radii: FloatArray, b: float) -> bool:
        """Remove the edges at ``rows`` whose arms are no longer neighbours; True if any went.

        Only pairs with an endpoint in ``rows`` are checked (vectorised over the other end).
        Communities that lost an edge are split into their connected components.
        """
        rows = rows[self.members[rows]]
        rows = rows[self._may_lose_an_edge(rows, means, radii, b)]
        if rows.size == 0:
            return False
        gap = np.abs(means[rows, None] - means[None, :])
        reach = b * (radii[rows, None] + radii[None, :])
        cut = self.adjacency[rows] & (gap > reach)
        if not cut.any():
            return False
        row_index, other = np.nonzero(cut)
        arm = rows[row_index]
        self.adjacency[arm, other] = False
        self.adjacency[other, arm] = False
        for label in np.unique(self.labels[arm]).tolist():
            self._split(np.flatnonzero(self.labels == label))
        return True

    def _may_lose_an_edge(
        self, rows: IntArray, means: FloatArray, radii: FloatArray, b: float
    ) -> BoolArray:
        """False for the rows whose edges surely all stay, found in O(n) (the check of a
        row is O(n)). A row's neighbours are in its community, so its gap to each is at most
        its gap to the community's extreme means, and ``b (beta_i + beta_j)`` is at least
        ``b (beta_i + least beta)``; rounding is monotone, so these hold for the floats the
        check compares, and the row's check would cut nothing. An unanswered member's NaN
        mean spoils its community's bounds: its rows are checked."""
        members = np.flatnonzero(self.members)
        labels, size = self.labels[members], self._next_label
        low, high, least = np.full(size, np.inf), np.full(size, -np.inf), np.full(size, np.inf)
        with np.errstate(invalid="ignore"):  # a NaN mean: its community is checked
            np.minimum.at(low, labels, means[members])
            np.maximum.at(high, labels, means[members])
            np.minimum.at(least, labels, radii[members])
            own = self.labels[rows]
            far = np.maximum(means[rows] - low[own], high[own] - means[rows])
        return np.asarray(~(far <= b * (radii[rows] + least[own])))

    def community_sizes(self) -> IntArray:
        """The size of every arm's community (0 for non-members)."""
        member_labels = self.labels[self.members]
        counts = np.bincount(member_labels, minlength=self._next_label)
        sizes = np.zeros(self.labels.size, dtype=np.int64)
        sizes[self.members] = counts[member_labels]
        return sizes

    @property
    def n_communities(self) -> int:
        return int(np.unique(self.labels[self.members]).size)

    def _split(self, nodes: IntArray) -> None:
        """Relabel the connected components of ``nodes`` (breadth first over the matrix)."""
        sub = self.adjacency[np.ix_(nodes, nodes)]
        unvisited = np.ones(nodes.size, dtype=bool)
        first = True
        while unvisited.any():
            component = np.zeros(nodes.size, dtype=bool)
            component[int(np.argmax(unvisited))] = True
            frontier = component.copy()
            while frontier.any():
                frontier = sub[frontier].any(axis=0) & ~component
                component |= frontier
            unvisited &= ~component
            if not first:  # the first component keeps the old label
                self.labels[nodes[component]] = self._next_label
                self._next_label += 1
            first = False
