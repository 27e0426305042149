"""The anytime interval families of ``ConfidentThresholding`` and how each spends a worker's
share of delta."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from screener.arrays import FloatArray
from screener.stats import (
    BettingCS,
    Divergence,
    anytime_log_inverse,
    max_clearing_count,
    mixture_log_inverse,
    mixture_log_inverse_max,
)

__all__ = ["BACKSTOP_SHARE", "CONFIDENT_INTERVALS", "ConfidentInterval", "IntervalFamily"]

#: Interval families of ConfidentThresholding (``interval=``).
ConfidentInterval = Literal["betting", "mixture", "kl", "hoeffding"]
CONFIDENT_INTERVALS: tuple[ConfidentInterval, ...] = ("betting", "mixture", "kl", "hoeffding")
#: Share of each worker's level that ``interval="betting"`` leaves to its mixture backstop.
BACKSTOP_SHARE = 0.1


@dataclass(frozen=True)
class IntervalFamily:
    """An interval family with delta spread over ``roster`` workers: each worker's share is
    ``delta / roster``. The budgets are in KL form, ``{q : t D(S/t, q) <= b}`` on rewards in
    [0, 1]: a union bound over the worker's own count for "kl" and "hoeffding", the
    Beta-mixture sequence for "mixture", and for "betting" the mixture backstop's."""

    interval: ConfidentInterval
    delta: float
    roster: int

    def betting_sequences(
        self, n_arms: int, low_bar: float, high_bar: float
    ) -> tuple[BettingCS | None, BettingCS | None]:
        """For "betting": the sequence on a grid of candidate means, which draws the interval
        of the result and does its work only when read, and the one at the two bars, which
        the decisions read after every answer (a rejected bar rejects every candidate beyond
        it). BettingCS takes the two-sided level and spends half of it on each end."""
        if self.interval != "betting":
            return None, None
        level = 2.0 * self.betting_level
        grid = np.concatenate([np.linspace(0.0, 1.0, 201), [low_bar, high_bar]])
        bars = [low_bar, high_bar]
        return BettingCS(n_arms, level, grid=grid), BettingCS(n_arms, level, grid=bars)

    @property
    def worker_level(self) -> float:
        """Each worker's share of delta (the shares sum to delta over the roster)."""
        return self.delta / self.roster

    @property
    def mixture_level(self) -> float:
        share = BACKSTOP_SHARE if self.interval == "betting" else 1.0
        return share * self.worker_level

    @property
    def betting_level(self) -> float:
        """Each end's level of the betting sequence (capped below 1/2 per end: only a single
        worker at delta > 0.55 meets the cap)."""
        return min((1.0 - BACKSTOP_SHARE) * self.worker_level, 0.49)

    @property
    def divergence_kind(self) -> Divergence:
        return "quadratic" if self.interval == "hoeffding" else "kl"

    def log_inverse(self, sums: FloatArray, counts: FloatArray) -> FloatArray:
        """The budget of the decisions."""
        if self.interval in ("kl", "hoeffding"):
            return anytime_log_inverse(counts, self.delta, self.roster)
        return mixture_log_inverse(sums, counts, self.mixture_level)

    def log_inverse_max(self, counts: FloatArray) -> FloatArray:
        """The largest budget over all sums at each count."""
        if self.interval in ("kl", "hoeffding"):
            return anytime_log_inverse(counts, self.delta, self.roster)
        return mixture_log_inverse_max(counts, self.mixture_level)

    def schedule_log_inverse(self, sums: FloatArray, counts: FloatArray) -> FloatArray:
        """The budget the schedule projects with (the mixture at the full level for betting)."""
        if self.interval == "betting":
            return mixture_log_inverse(sums, counts, self.worker_level)
        return self.log_inverse(sums, counts)

    def bound_on_questions(self, low_bar: float, high_bar: float, min_answers: int) -> int | None:
        """The count past which a worker's interval fits between the bars whatever its
        answers (None: never)."""
        bound = max_clearing_count(low_bar, high_bar, self.log_inverse_max, self.divergence_kind)
        return None if bound is None else max(bound, min_answers)

    def worker_levels(self) -> dict[str, float]:
        """How each worker's share is split between the sequences its decisions use."""
        if self.interval == "betting":
            return {"betting": self.betting_level, "mixture backstop": self.mixture_level}
        if self.interval == "mixture":
            return {"mixture": self.worker_level}
        return {"union bound over counts": self.worker_level}

    def statement(self) -> str:
        """What the intervals are, said with their levels: anytime sequences at ``delta / n``
        per end, or for the whole interval with the mixture; their decisions need one end
        each."""
        level = self.worker_level
        if self.interval == "mixture":
            return (
                f"anytime: each worker's interval holds at every answer count at once with "
                f"probability >= 1 - delta / n = {1 - level:.6g}"
            )
        return (
            f"anytime, two-sided: each end of a worker's interval holds at every answer count "
            f"with probability >= 1 - delta / n = {1 - level:.6g}, so the interval with "
            f">= 1 - 2 delta / n = {1 - 2 * level:.6g} (a decision needs one end)"
        )
