"""Immutable results: what an algorithm concluded about each worker, and how sure it is."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Decision", "Result", "StopReason", "Threshold", "WorkerResult"]


class Decision(enum.StrEnum):
    OUTLIER = "outlier"
    NORMAL = "normal"
    ABOVE = "above"
    BELOW = "below"
    SELECTED = "selected"
    REJECTED = "rejected"
    UNDECIDED = "undecided"


class StopReason(enum.StrEnum):
    CONDITION_MET = "condition met"
    BUDGET_SPENT = "budget spent"
    WORKERS_EXHAUSTED = "workers exhausted"


@dataclass(frozen=True, slots=True)
class Threshold:
    """A threshold estimate with its confidence interval (k-sigma algorithms)."""

    estimate: float
    lower: float
    upper: float


@dataclass(frozen=True, slots=True)
class WorkerResult:
    """One worker's line in a result.

    ``decision`` is only OUTLIER/NORMAL/... when the algorithm's own evidence supports it;
    ``leaning`` is the current best answer even when it does not (for reports under a spent
    budget). ``score`` is the algorithm's ranking key where it has one (GOLD's round).
    """

    arm: int
    estimate: float
    lower: float
    upper: float
    pulls: int
    pending: int
    decision: Decision
    leaning: Decision
    reason: str
    rank: int
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "estimate": _json_float(self.estimate),
            "lower": _json_float(self.lower),
            "upper": _json_float(self.upper),
            "pulls": self.pulls,
            "pending": self.pending,
            "decision": self.decision.value,
            "leaning": self.leaning.value,
            "reason": self.reason,
            "rank": self.rank,
            "score": None if self.score is None else _json_float(self.score),
        }


@dataclass(frozen=True, slots=True)
class Result:
    """A snapshot of an algorithm's conclusions; taking one never changes the algorithm."""

    algorithm: str
    params: Mapping[str, Any]
    workers: tuple[WorkerResult, ...]
    stop_reason: StopReason | None
    guarantee: str | None
    total_pulls: int
    pending_pulls: int
    released_pulls: int
    threshold: Threshold | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return self.stop_reason is not None

    @property
    def condition_met(self) -> bool:
        """True when the algorithm stopped because its stopping condition held."""
        return self.stop_reason is StopReason.CONDITION_MET

    def arms_with(self, decision: Decision) -> tuple[int, ...]:
        return tuple(w.arm for w in self.workers if w.decision is decision)

    @property
    def outliers(self) -> tuple[int, ...]:
        """Workers decided to be outliers, sorted by arm."""
        return tuple(sorted(self.arms_with(Decision.OUTLIER)))

    @property
    def ranking(self) -> tuple[WorkerResult, ...]:
        return tuple(sorted(self.workers, key=lambda w: w.rank))

    def to_dict(self) -> dict[str, Any]:
        threshold = self.threshold
        return {
            "algorithm": self.algorithm,
            "params": dict(self.params),
            "stop_reason": None if self.stop_reason is None else self.stop_reason.value,
            "condition_met": self.condition_met,
            "guarantee": self.guarantee,
            "total_pulls": self.total_pulls,
            "pending_pulls": self.pending_pulls,
            "released_pulls": self.released_pulls,
            "threshold": None
            if threshold is None
            else {
                "estimate": _json_float(threshold.estimate),
                "lower": _json_float(threshold.lower),
                "upper": _json_float(threshold.upper),
            },
            "extra": dict(self.extra),
            "workers": [w.to_dict() for w in self.ranking],
        }


def _json_float(value: float) -> float | None:
    return value if math.isfinite(value) else None
