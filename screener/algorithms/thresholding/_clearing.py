"""The bars of ``ConfidentThresholding`` and ``t*``, the answer count at which a worker's
interval clears them: the projection its "settle" schedule orders workers by."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from screener.algorithms.thresholding._intervals import IntervalFamily
from screener.arrays import FloatArray
from screener.stats import Divergence, clearing_count, divergence
from screener.stats.tables import PairTable

__all__ = ["HOPE", "ClearingKey", "clearing_counts", "clearing_table"]

#: How far (in standard errors) the "settle" schedule moves a mean away from the bar.
HOPE = 0.5


@dataclass(frozen=True)
class ClearingKey:
    """The bars on [0, 1] (``threshold -+ eps``) with what ``t*`` depends on besides the
    answers: the side's centre, the divergence, min_answers, and the interval family the
    schedule projects with."""

    low_bar: float
    high_bar: float
    centre: float
    min_answers: int
    family: IntervalFamily

    @property
    def kind(self) -> Divergence:
        return self.family.divergence_kind

    def log_inverse(self, sums: FloatArray, counts: FloatArray) -> FloatArray:
        return self.family.schedule_log_inverse(sums, counts)

    def side_evidence(
        self, means: FloatArray, counts: FloatArray, log_inverse: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """``D(mean, bar) - budget / t`` for the bar below (ABOVE side) and above (BELOW
        side) of the mean; ``-inf`` on the wrong side; >= 0 once the interval at count t
        reaches past that bar (NaN-free: workers without answers get -inf)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            allowed = log_inverse / counts
            low = divergence(self.kind, means, np.full_like(means, self.low_bar))
            high = low
            if self.high_bar != self.low_bar:
                high = divergence(self.kind, means, np.full_like(means, self.high_bar))
            above = np.where(means >= self.low_bar, low - allowed, -math.inf)
            below = np.where(means < self.high_bar, high - allowed, -math.inf)
        return np.asarray(above, dtype=np.float64), np.asarray(below, dtype=np.float64)


def clearing_counts(
    p: FloatArray, s: FloatArray, t: FloatArray, key: ClearingKey
) -> tuple[FloatArray, FloatArray]:
    """``t*`` at the mean p (rewards in [0, 1]: sum s of t answers) and at the hopeful mean,
    HOPE standard errors away from the bar (see ConfidentThresholding, "settle")."""
    with np.errstate(divide="ignore", invalid="ignore"):
        error = HOPE * np.sqrt((s + 0.5) * (t - s + 0.5)) / ((t + 1.0) * np.sqrt(t))
    hopeful = np.where(p >= key.centre, np.minimum(p + error, 1.0), np.maximum(p - error, 0.0))
    both = clearing_count(
        np.concatenate([p, hopeful]), key.low_bar, key.high_bar, key.log_inverse, key.kind
    )
    both = np.maximum(both, key.min_answers)  # no decision comes before min_answers
    return both[: p.size], both[p.size :]


def _clearing_of_pairs(
    sums: FloatArray, counts: FloatArray, key: ClearingKey
) -> tuple[FloatArray, FloatArray]:
    with np.errstate(divide="ignore", invalid="ignore"):
        means = np.clip(sums / counts, 0.0, 1.0)
    return clearing_counts(means, sums, counts, key)


@functools.lru_cache(maxsize=16)
def clearing_table(key: ClearingKey) -> PairTable:
    """``t*`` per (sum, count), shared by every worker and run with the same key."""
    return PairTable(functools.partial(_clearing_of_pairs, key=key), 2)
