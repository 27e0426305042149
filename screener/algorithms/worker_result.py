"""One worker's line in a result: what an algorithm concluded about it, and how sure it is."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["WORKER_FIELDS", "Decision", "Threshold", "WorkerResult", "json_float"]


class Decision(enum.StrEnum):
    """What an algorithm concluded about one worker: outlier / normal (k-sigma question),
    above / below the bar (thresholding), selected / rejected (top K), or undecided.

    Examples
    --------
    Decisions compare equal to their names, as the JSON report writes them:

    >>> Decision.OUTLIER == "outlier", Decision("below") is Decision.BELOW
    (True, True)
    """

    OUTLIER = "outlier"
    NORMAL = "normal"
    ABOVE = "above"
    BELOW = "below"
    SELECTED = "selected"
    REJECTED = "rejected"
    UNDECIDED = "undecided"


@dataclass(frozen=True, slots=True)
class Threshold:
    """A threshold estimate with its confidence interval (k-sigma algorithms), or the bar a
    requester gave (thresholding algorithms: estimate, lower and upper all the bar).

    Examples
    --------
    A bar given by the requester is its own interval:

    >>> from screener.algorithms import ConfidentThresholding
    >>> bar = ConfidentThresholding(4, threshold=0.6).result().threshold
    >>> bar.estimate, bar.given
    (0.6, True)
    """

    estimate: float
    lower: float
    upper: float

    @property
    def given(self) -> bool:
        """True for a bar the requester gave, not an estimate."""
        return self.lower == self.upper == self.estimate


@dataclass(frozen=True, slots=True)
class WorkerResult:
    """One worker's line in a result (``WORKER_FIELDS`` says what each field means).

    ``decision`` is only OUTLIER/NORMAL/... when the algorithm's own evidence supports it;
    ``leaning`` is the current best answer even when it does not (for reports under a spent
    budget). ``estimate`` and ``[lower, upper]`` are numbers of one kind: the interval is
    the estimate's, and holds it. ``share`` is the worker's own share correct when the
    estimate is another kind of number (crowd-prior's posterior mean), else None.
    ``score`` is the algorithm's ranking key where it has one (GOLD's round).

    Examples
    --------
    >>> from screener import BernoulliRewards, RoundRobin, simulate
    >>> result = simulate(RoundRobin(6, k=1.5, seed=0),
    ...                   BernoulliRewards([0.2, 0.25, 0.3, 0.3, 0.35, 0.95], seed=1))
    >>> line = result.workers[0]  # ranked: the most outlying first
    >>> line.arm, line.decision.value, line.pulls, round(line.estimate, 2)
    (5, 'outlier', 121, 0.98)
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
    share: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "estimate": json_float(self.estimate),
            "lower": json_float(self.lower),
            "upper": json_float(self.upper),
            "share": None if self.share is None else json_float(self.share),
            "pulls": self.pulls,
            "pending": self.pending,
            "decision": self.decision.value,
            "leaning": self.leaning.value,
            "reason": self.reason,
            "rank": self.rank,
            "score": None if self.score is None else json_float(self.score),
        }


#: What each column of a worker's line means, in the order tables show them (the data frame
#: and the CSV report).
WORKER_FIELDS: Mapping[str, str] = {
    "rank": "position in the algorithm's ranking, from 1 (the data frame's index)",
    "worker": "the worker's name",
    "arm": "the worker's position in the pool, from 0 (the bandit's arm)",
    "decision": "what the algorithm concluded, or undecided",
    "leaning": "the side the answers lean to so far, for a worker not decided (no guarantee)",
    "estimate": "the worker's accuracy (mean reward) as the algorithm estimates it",
    "lower": "lower end of the estimate's interval (the same kind of number)",
    "upper": "upper end of the estimate's interval",
    "share": "the share of its answers that were right, where the estimate is another number",
    "pulls": "gold questions answered",
    "pending": "gold questions asked and not answered yet",
    "score": (
        "the algorithm's ranking key, where it has one: the estimate's distance from the "
        "threshold or bar (k-sigma, thresholding), the terminal round (GOLD)"
    ),
    "reason": "the condition that decided, or what is missing",
}


def json_float(value: float) -> float | None:
    """A number as JSON has it: None for infinite and undefined ones."""
    return value if math.isfinite(value) else None
