"""What the eps-top-k algorithms share: their checks, the round-robin top-up of a round
(``water_fill``), the choice of the largest means, and the shape of their results (ranked by
mean; SELECTED / REJECTED once final, else UNDECIDED with the leaning)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from screener.algorithms.base import Algorithm
from screener.algorithms.result import Result, StopReason
from screener.algorithms.worker_result import Decision, WorkerResult
from screener.arrays import FloatArray, IntArray
from screener.errors import ConfigError

__all__ = [
    "SelectionAlgorithm",
    "check_eps",
    "check_k",
    "rank_key",
    "ranked",
    "top_by_mean",
    "water_fill",
]


class SelectionAlgorithm(Algorithm):
    """Base of the eps-top-k algorithms: select k workers of a fixed crowd, judged by the
    aggregate regret (the best k workers' mean total minus the selected workers')."""

    min_workers: ClassVar[int] = 2
    fixed_roster: ClassVar[str | None] = (
        "the best K are the best K of a given crowd: a worker who joins may displace them"
    )

    #: How many workers to select.
    k: int

    def _selection_result(
        self, lines: list[WorkerResult], eps: float | None, extra: dict[str, Any]
    ) -> Result:
        """The result: ``lines`` ranked by mean, ``extra`` after ``k`` and ``eps`` (the
        tolerated regret per selected worker; None where not given)."""
        return self._result(ranked(lines), extra={"k": self.k, "eps": eps, **extra})

    def _final_when(self, fixed_budget: bool) -> bool:
        """Whether the decisions are final: the stopping condition held, or a fixed-budget
        run spent its budget."""
        reason = self.stop_reason
        return reason is StopReason.CONDITION_MET or (
            fixed_budget and reason is StopReason.BUDGET_SPENT
        )

    def _line(
        self, arm: int, mean: float, bounds: tuple[float, float], selected: bool, final: bool,
        reason: str,
    ) -> WorkerResult:  # fmt: skip
        """One worker's line: a decision only when final, the leaning always."""
        leaning = Decision.SELECTED if selected else Decision.REJECTED
        unavailable = self._availability_reason(arm)
        if unavailable is not None:
            reason += f"; {unavailable}"
        return WorkerResult(
            arm, mean, bounds[0], bounds[1], int(self.stats.count[arm]), int(self.pending[arm]),
            leaning if final else Decision.UNDECIDED, leaning, reason, 0,
        )  # fmt: skip


def water_fill(arms: IntArray, effective: IntArray, target: int, limit: int) -> IntArray:
    """The first ``limit`` pulls of repeated "fewest effective pulls first" (ties: low index).

    Every arm needs pulls at levels ``effective_i, ..., target - 1``; repeated ask(1) takes them
    in (level, arm) order. A bisection finds the level L below which at most ``limit`` pulls
    lie; those, plus the first few arms at level L, are the batch, in (level, arm) order.
    """
    if arms.size == 0:
        return np.empty(0, dtype=np.int64)

    def below(level: int) -> int:
        return int(np.maximum(np.minimum(level, target) - effective, 0).sum())

    lo, hi = int(effective.min()), target  # below(lo) == 0 <= limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if below(mid) <= limit:
            lo = mid
        else:
            hi = mid - 1
    per_arm = np.maximum(np.minimum(lo, target) - effective, 0)
    starts = effective.copy()
    extra = limit - int(per_arm.sum())
    if extra > 0 and lo < target:
        at_level = np.flatnonzero(effective <= lo)[:extra]
        per_arm[at_level] += 1
    counts = per_arm.astype(np.int64)
    picked = np.repeat(arms, counts)
    offsets = np.arange(picked.size, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    levels = np.repeat(starts, counts) + offsets
    return picked[np.lexsort((picked, levels))].astype(np.int64)


def rank_key(line: WorkerResult) -> tuple[float, int]:
    """Mean descending; workers without answers last; ties by worker index."""
    estimate = line.estimate if math.isfinite(line.estimate) else -math.inf
    return (-estimate, line.arm)


def check_k(k: int, n_workers: int) -> int:
    """k must be an integer with 1 <= k < n ."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k < n_workers:
        raise ConfigError(
            f"k must be an integer with 1 <= k < {n_workers} (the number of workers), got {k!r}",
            "pass the number of workers to select, e.g. k=1",
        )
    return int(k)


def check_eps(eps: float) -> float:
    """eps must be a finite number > 0 ."""
    if not (math.isfinite(eps) and eps > 0):
        raise ConfigError(
            f"eps must be a finite number > 0, got {eps}",
            "give the tolerated average regret per selected worker, e.g. eps=0.05",
        )
    return float(eps)


def top_by_mean(values: FloatArray, candidates: IntArray, count: int) -> IntArray:
    """The ``count`` candidates with the largest values (NaN last; ties: lowest index).

    ``candidates`` must be in ascending order (as ``np.flatnonzero`` gives them): the stable
    sort then breaks ties by index.
    """
    keys = values[candidates]
    keys = np.where(np.isnan(keys), -math.inf, keys)
    order = np.argsort(-keys, kind="stable")[:count]
    return np.asarray(candidates[order], dtype=np.int64)


def ranked(lines: list[WorkerResult]) -> tuple[WorkerResult, ...]:
    """Lines ranked by mean, descending (the top-k algorithms' order)."""
    ordered = sorted(lines, key=rank_key)
    return tuple(replace(w, rank=position) for position, w in enumerate(ordered, start=1))
