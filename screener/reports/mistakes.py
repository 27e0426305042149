"""What a result may have got wrong, in workers: the mistakes its own method expects or
allows (every mode that can estimate them), and, where the truth is known (a simulated pool,
a dataset's share correct), the tally of the mistakes it made.

A report shows both beside its decisions, so that no promise stands alone above a truth that
disagrees with it; undecided workers are counted apart, never as decided either way.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from screener.algorithms import Result, Verdict, verdict_of
from screener.crowd import WorkerPool
from screener.simulation import ksigma_outliers

__all__ = [
    "TRUTH_SOURCES",
    "Tally",
    "expected_mistakes",
    "mistake_lines",
    "mistakes_json",
    "truth_tally",
]

#: What a pool's accuracies are, by the answer source that ran: only these are a truth a
#: report may judge by (each named by where it comes from).
TRUTH_SOURCES = {
    "simulated": "the simulated truth",
    "dataset": "the dataset's share correct",
}


@dataclass(frozen=True)
class Tally:
    """The decisions against the truth: how many bad (truly under the bar, or truly k-sigma
    outliers on the low side) and good workers the run banned, accepted or left undecided."""

    source: str
    bad: int
    good: int
    bad_banned: int
    good_banned: int
    bad_accepted: int
    bad_undecided: int

    @property
    def wrong(self) -> int:
        """Mistakes made: good workers banned and bad workers accepted."""
        return self.good_banned + self.bad_accepted

    def sentence(self) -> str:
        """The tally in words.

        Examples
        --------
        >>> Tally("the simulated truth", 2, 28, 2, 0, 0, 0).sentence()
        'by the simulated truth: 2 of 2 bad workers banned, 0 of 28 good workers banned'
        >>> Tally("the simulated truth", 2, 28, 1, 1, 1, 0).sentence()[24:]
        '1 of 2 bad workers banned (1 accepted), 1 of 28 good workers banned'
        """
        kept = []
        if self.bad_accepted:
            kept.append(f"{self.bad_accepted:,} accepted")
        if self.bad_undecided:
            kept.append(f"{self.bad_undecided:,} undecided")
        missed = f" ({', '.join(kept)})" if kept else ""
        return (
            f"by {self.source}: {self.bad_banned:,} of {self.bad:,} bad workers banned{missed}, "
            f"{self.good_banned:,} of {self.good:,} good workers banned"
        )


def truth_tally(result: Result, pool: WorkerPool, oracle: str | None) -> Tally | None:
    """The tally of ``result`` against ``pool``'s accuracies, when ``oracle`` (the answer
    source's name) makes them a truth and the question bans anyone: against a bar, the
    workers under it are bad; the low k-sigma outliers of the accuracies otherwise."""
    source = TRUTH_SOURCES.get(oracle or "")
    if source is None or pool.accuracies is None:
        return None
    bad = _truly_bad(result, np.asarray(pool.accuracies, dtype=np.float64))
    if bad is None:
        return None
    verdicts = [verdict_of(w.decision, result.params) for w in result.workers]
    arms = np.array([w.arm for w in result.workers], dtype=np.int64)
    banned = np.array([v is Verdict.BANNED for v in verdicts], dtype=bool)
    accepted = np.array([v is Verdict.ACCEPTED for v in verdicts], dtype=bool)
    is_bad = bad[arms]
    return Tally(
        source,
        bad=int(is_bad.sum()),
        good=int((~is_bad).sum()),
        bad_banned=int((banned & is_bad).sum()),
        good_banned=int((banned & ~is_bad).sum()),
        bad_accepted=int((accepted & is_bad).sum()),
        bad_undecided=int((~banned & ~accepted & is_bad).sum()),
    )


def _truly_bad(result: Result, accuracies: np.ndarray[Any, Any]) -> np.ndarray[Any, Any] | None:
    """Which workers the question's truth calls bad; None when it bans no one."""
    params = result.params
    if result.threshold is not None and result.threshold.given:
        return np.asarray(accuracies < result.threshold.estimate)
    if params.get("direction") == "low" and "k" in params and params.get("k") is not None:
        bad = np.zeros(accuracies.size, dtype=bool)
        bad[list(ksigma_outliers(accuracies, float(params["k"]), "low"))] = True
        return bad
    return None


def expected_mistakes(result: Result) -> str:
    """What the method itself says it may have got wrong, in workers: its estimate (the
    crowd prior's posterior sums), its bound (a false-discovery rate's share of each list)
    or, without either, why there is none."""
    extra = result.extra
    if "expected_wrong_bans" in extra and "expected_missed_bad" in extra:
        return (
            f"expected {_count(extra['expected_wrong_bans'])} wrong bans and "
            f"{_count(extra['expected_missed_bad'])} bad workers accepted, if the fitted "
            "crowd prior holds"
        )
    if "wrong_bans_at_most" in extra and "bad_accepted_at_most" in extra:
        return (
            f"at most a share {extra['q']:g} of each list in expectation: about "
            f"{_count(extra['wrong_bans_at_most'])} wrong bans and "
            f"{_count(extra['bad_accepted_at_most'])} wrong acceptances"
        )
    if result.guarantee is None:
        return "no estimate: a heuristic or platform rule, with no statistical promise"
    return "no estimate in workers; the promise in the status line bounds them"


def mistake_lines(result: Result, pool: WorkerPool, oracle: str | None) -> list[str]:
    """The report's lines on mistakes: expected, then (where known) by the truth."""
    lines = [f"mistakes: {expected_mistakes(result)}"]
    tally = truth_tally(result, pool, oracle)
    if tally is not None:
        lines.append(f"mistakes made: {tally.sentence()}")
    return lines


def mistakes_json(result: Result, pool: WorkerPool, oracle: str | None) -> dict[str, Any]:
    """The same for ``--json``: the sentence, and the tally's counts (None without truth)."""
    tally = truth_tally(result, pool, oracle)
    return {
        "expected": expected_mistakes(result),
        "by_truth": None if tally is None else {**asdict(tally), "wrong": tally.wrong},
    }


def _count(value: Any) -> str:
    return f"{float(value):,.1f}"
