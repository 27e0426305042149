"""Immutable results: what an algorithm concluded about each worker, and how sure it is."""

from __future__ import annotations

import dataclasses
import enum
import json
import operator
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from screener.algorithms.result_html import result_html
from screener.algorithms.worker_result import (
    WORKER_FIELDS,
    Decision,
    Threshold,
    WorkerResult,
    json_float,
)
from screener.errors import ConfigError

if TYPE_CHECKING:
    import pandas

__all__ = ["Result", "StopReason"]


class StopReason(enum.StrEnum):
    """Why a run ended: its stopping condition held (its promise applies), or it ran out
    of budget or of workers to ask (only the decided workers carry the promise).

    Examples
    --------
    >>> StopReason.BUDGET_SPENT.value
    'budget spent'
    """

    CONDITION_MET = "condition met"
    BUDGET_SPENT = "budget spent"
    WORKERS_EXHAUSTED = "workers exhausted"


@dataclass(frozen=True, slots=True)
class Result:
    """A snapshot of an algorithm's conclusions; taking one never changes the algorithm.

    Examples
    --------
    >>> from screener import BernoulliRewards, RoundRobin, simulate, synthetic_pool
    >>> pool = synthetic_pool(10, 1, seed=3)
    >>> algorithm = RoundRobin(len(pool), k=1.5, direction="low", seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(pool.accuracies, seed=1)).named(pool.workers)
    >>> result.condition_met, result.stop_reason.value, result.total_pulls
    (True, 'condition met', 7930)
    >>> [result.name(arm) for arm in result.outliers]
    ['w08']
    >>> result.to_dict()["workers"][0]["worker"]  # ranked: the most outlying first
    'w08'
    """

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
    #: The workers' names by arm, once the result is tied to a pool (``named``); else empty.
    names: tuple[str, ...] = ()
    #: The journaled run this result belongs to, where there is one.
    run_id: str | None = None

    def named(self, names: Sequence[str], run_id: str | None = None) -> Result:
        """This result with the workers' names (one per arm) and the run id attached."""
        if len(names) != len(self.workers):
            raise ConfigError(
                f"{len(names)} names for {len(self.workers)} workers",
                "give one name per worker, in arm order (e.g. pool.workers)",
            )
        return replace(self, names=tuple(names), run_id=run_id)

    def name(self, arm: int) -> str | None:
        return self.names[arm] if self.names else None

    @property
    def finished(self) -> bool:
        return self.stop_reason is not None

    @property
    def condition_met(self) -> bool:
        """True when the algorithm stopped because its stopping condition held."""
        return self.stop_reason is StopReason.CONDITION_MET

    @property
    def fixed_budget_spent(self) -> bool:
        """True when a fixed-budget algorithm stopped as it is meant to: its budget spent."""
        fixed = bool(self.extra.get("fixed_budget"))
        return fixed and self.stop_reason is StopReason.BUDGET_SPENT

    @property
    def completed(self) -> bool:
        """True when the run ended the way its algorithm means to end: the stopping condition
        held, or a fixed-budget algorithm spent its budget. False when it stopped short (a
        budget cut a fixed-confidence run, the workers ran out of questions) or is running."""
        return self.condition_met or self.fixed_budget_spent

    @property
    def ending(self) -> str | None:
        """What ended the run, in words (None while it runs): the stop reason, with "workers
        exhausted" told apart by what stopped the undecided workers being asked: the
        per-worker question cap, running out of gold questions, or leaving."""
        if self.stop_reason is not StopReason.WORKERS_EXHAUSTED:
            return None if self.stop_reason is None else self.stop_reason.value
        cap = self.extra.get("max_questions_per_worker")
        stuck = Counter(_stuck(w, cap) for w in self.workers if w.decision is Decision.UNDECIDED)
        labels = {
            "cap": (f"at the cap of {cap} questions", "per-worker question cap reached"),
            "exhausted": ("out of gold questions", "workers out of gold questions"),
            "unavailable": ("left", "workers left"),
            "other": ("with nothing left to ask", "workers exhausted"),
        }
        parts = [f"{stuck[kind]:,} {labels[kind][0]}" for kind in labels if stuck[kind]]
        title = labels[next(iter(stuck))][1] if len(stuck) == 1 else "workers exhausted"
        return f"{title}: {', '.join(parts)}" if parts else title

    def status(self, state: str | None = None) -> str:
        """Whether the run stopped, and if so whether its promise holds, in one sentence.

        ``state``: a stored run's lifecycle when it has not finished ("running", "paused",
        "interrupted", "crashed" or "failed: why", as ``screener runs`` shows); None for a
        result read from a live algorithm."""
        if self.fixed_budget_spent:
            return f"budget spent (fixed-budget algorithm): {self.guarantee}"
        if self.stop_reason is None:
            return f"{_unfinished(state)} before its stopping condition: decisions are provisional"
        if self.condition_met:
            promise = self.guarantee or "heuristic stopping rule, no statistical guarantee"
            levels = [
                f"{name} = {self.params[name]}"
                for name in _LEVELS
                if name in self.params and re.search(rf"\b{name}\b", promise)
            ]
            if self.guarantee and levels:
                promise += f" ({', '.join(levels)})"
            return f"stopping condition met: {promise}"
        return (
            f"CONDITION NOT MET ({self.ending}): undecided workers show "
            "the current best guess under 'leaning'; it carries no guarantee"
        )

    def arms_with(self, decision: Decision) -> tuple[int, ...]:
        return tuple(w.arm for w in self.workers if w.decision is decision)

    @property
    def outliers(self) -> tuple[int, ...]:
        """Workers decided to be outliers, sorted by arm."""
        return tuple(sorted(self.arms_with(Decision.OUTLIER)))

    @property
    def banned(self) -> tuple[int, ...]:
        """Workers decided to be blocked, sorted by arm (``result.name(arm)`` names them):
        below the bar (thresholding, crowd-prior, platform rules), or outliers on the low side
        (k-sigma with ``direction="low"``). Empty for the best K and for outliers on the high
        side or either side: those questions ban no one (``screener.algorithms.verdicts``).
        Undecided workers are neither banned nor accepted."""
        return self._with_verdict("banned")

    @property
    def accepted(self) -> tuple[int, ...]:
        """Workers decided to qualify, sorted by arm: above the bar, normal (not outlying)
        under a low-side k-sigma question, or selected among the best K. A worker outside the
        best K is not accepted, nor banned: it may still be a good one. Empty for outliers on
        the high side or either side. Undecided workers are neither banned nor accepted."""
        return self._with_verdict("accepted")

    def _with_verdict(self, verdict: str) -> tuple[int, ...]:
        words = self.words()
        return tuple(sorted(w.arm for w in self.workers if words[w.decision] == verdict))

    def word(self, decision: Decision) -> str:
        """The one word reports show for ``decision`` in this run: banned, accepted, not
        selected, outlier, normal or undecided (``screener.algorithms.verdicts.decision_word``)."""
        # imported here: verdicts reads the algorithms' base, which imports this module
        from screener.algorithms.verdicts import decision_word

        return decision_word(decision, self.params)

    def words(self) -> dict[Decision, str]:
        """``word`` of every decision, for loops over the workers to look up."""
        return {decision: self.word(decision) for decision in Decision}

    def word_counts(self) -> dict[str, int]:
        """Workers per shown word (``word``), the banned first, undecided last and always."""
        from screener.algorithms.verdicts import WORD_ORDER

        shown = self.words()
        words = Counter(shown[w.decision] for w in self.workers)
        words["undecided"] += 0
        return {word: words[word] for word in sorted(words, key=WORD_ORDER.index)}

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
                "estimate": json_float(threshold.estimate),
                "lower": json_float(threshold.lower),
                "upper": json_float(threshold.upper),
            },
            "extra": dict(self.extra),
            "run_id": self.run_id,
            "workers": [{"worker": self.name(w.arm), **w.to_dict()} for w in self.ranking],
        }

    def to_json(self) -> str:
        """The result exactly, as JSON that ``from_json`` reads back (infinite and undefined
        numbers included, as JavaScript's Infinity and NaN), without names or run id."""
        # Field by field, not dataclasses.asdict: that deep-copies every worker's line, which
        # costs seconds at 100,000 workers; json.dumps meets the lines through _plain_json.
        record = {name: getattr(self, name) for name in _STORED_FIELDS}
        record["format"] = _JSON_FORMAT
        return json.dumps(record, default=_plain_json, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Result | None:
        """A result written by ``to_json``; None when the text is not one (another format,
        damaged), so that a caller can rebuild the result another way."""
        try:
            record = json.loads(text)
            if record.pop("format") != _JSON_FORMAT:
                return None
            threshold, stop = record.pop("threshold"), record.pop("stop_reason")
            workers = tuple(_worker_from_record(w) for w in record.pop("workers"))
            return cls(
                **record,
                workers=workers,
                stop_reason=None if stop is None else StopReason(stop),
                threshold=None if threshold is None else Threshold(**threshold),
                names=(),
                run_id=None,
            )
        except (ValueError, TypeError, KeyError, AttributeError):
            return None

    def __repr__(self) -> str:
        counts = ", ".join(f"{n:,} {word}" for word, n in self.word_counts().items())
        banned = [self.name(arm) or str(arm) for arm in self.banned]
        listed = ", ".join(banned[:_REPR_NAMES]) + (" ..." if len(banned) > _REPR_NAMES else "")
        run = f", run {self.run_id}" if self.run_id else ""
        ending = self.ending or "not finished"
        return (
            f"<Result {self.algorithm}: "
            + (f"banned {listed}; " if banned else "")
            + f"{len(self.workers):,} workers ({counts}); {ending}; "
            f"{self.total_pulls:,} answers{run}>"
        )

    def _repr_html_(self) -> str:
        """A notebook's view: the status and counts, then the first ``HTML_ROWS`` workers."""
        return result_html(self)

    def counts(self) -> dict[str, int]:
        """Workers per decision: each decision the result gives, and undecided always."""
        decisions = Counter(w.decision for w in self.workers)
        return {d.value: decisions[d] for d in Decision if decisions[d] or d is Decision.UNDECIDED}

    def to_dataframe(self) -> pandas.DataFrame:
        """One row per worker, ranked, indexed by rank (pandas, the optional
        ``crowd-screener[pandas]`` extra). The columns (``WORKER_FIELDS``):

        - rank (the index): the position in the algorithm's ranking, from 1
        - worker: the worker's name (None when the result is not named)
        - arm: the worker's position in the pool, from 0 (the bandit's arm)
        - decision: what the run decided, in the word reports show (``word``): banned,
          accepted, or undecided; "not selected" (outside the best K, not banned), and
          "outlier" or "normal" for outliers on the high side or either side, which ban no one.
          The JSON and CSV reports keep the algorithm's own word there (below, above, ...).
        - leaning: the decision the answers lean to so far, in the same words (no guarantee)
        - estimate: the worker's accuracy (mean reward) as the algorithm estimates it
        - lower: the low end of the estimate's interval (the same kind of number)
        - upper: its high end (lower <= estimate <= upper)
        - share: the share of its answers that were right, where the estimate is another
          number (crowd-prior's posterior mean); else None
        - pulls: gold questions answered
        - pending: gold questions asked, not answered yet
        - score: the algorithm's ranking key, where it has one: the estimate's distance from
          the threshold or bar (k-sigma, thresholding), the terminal round (GOLD)
        - reason: the condition that decided, or what is missing
        """
        try:
            import pandas
        except ImportError:
            raise ConfigError(
                "Result.to_dataframe needs pandas, which is not installed",
                "pip install 'crowd-screener[pandas]'",
            ) from None
        rows, words = self.to_dict()["workers"], self.words()
        for row in rows:
            row["decision"] = words[_DECISIONS[row["decision"]]]
            row["leaning"] = words[_DECISIONS[row["leaning"]]]
        frame = pandas.DataFrame.from_records(rows, columns=_FRAME_COLUMNS)
        return frame.set_index("rank")


_FRAME_COLUMNS = tuple(WORKER_FIELDS)
#: Most banned workers the repr names.
_REPR_NAMES = 10
#: Parameters that set a promise's error level, named beside it in the status line when the
#: promise's text uses them.
_LEVELS = ("delta", "q", "eps")

#: Bump when ``Result.to_json``'s layout changes: older stored results are then rebuilt.
#: 2: workers carry ``share``, and crowd-prior's estimate is its posterior mean.
_JSON_FORMAT = 2


def away(reason: str) -> str | None:
    """'exhausted' (out of gold questions), 'unavailable' (left otherwise) or None, read off
    a worker's reason: the algorithms say "unavailable: ..." where leaving is part of it."""
    if "unavailable: " not in reason:
        return None
    return "exhausted" if "unavailable: exhausted" in reason else "unavailable"


def _stuck(line: WorkerResult, cap: object) -> str:
    """Why an undecided worker was not asked again: 'cap', 'exhausted', 'unavailable', 'other'."""
    if isinstance(cap, int) and line.pulls >= cap:
        return "cap"
    return away(line.reason) or "other"


def _unfinished(state: str | None) -> str:
    """How a stored run that did not finish stopped, from its lifecycle state."""
    if state is None:
        return "not finished"
    if state.startswith("failed"):
        return f"failed ({state.removeprefix('failed').lstrip(': ') or 'an error'})"
    return {
        "running": "still running",
        "interrupted": "interrupted (screener run --resume continues it)",
        "crashed": "crashed (screener run --resume continues it)",
        "paused": "paused: its process is stopped or not renewing its lease",
    }.get(state, state)


def _worker_from_record(record: dict[str, Any]) -> WorkerResult:
    decision, leaning = _DECISIONS[record.pop("decision")], _DECISIONS[record.pop("leaning")]
    return WorkerResult(**record, decision=decision, leaning=leaning)


def _plain_json(value: object) -> object:
    """json.dumps fallback: a worker's line and the threshold as their fields (what
    ``dataclasses.asdict`` made of them), and what algorithms put in params and extra: numpy
    scalars and arrays, read-only mappings, dataclasses."""
    if type(value) is WorkerResult:
        return dict(zip(_WORKER_FIELD_NAMES, _worker_values(value), strict=True))
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    if isinstance(value, Mapping):
        return dict(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


#: What ``to_json`` keeps of a result: every field but the pool's names and the run id.
_STORED_FIELDS = tuple(
    f.name for f in dataclasses.fields(Result) if f.name not in ("names", "run_id")
)
_WORKER_FIELD_NAMES = tuple(f.name for f in dataclasses.fields(WorkerResult))
_worker_values = operator.attrgetter(*_WORKER_FIELD_NAMES)
#: Decisions by their value: a dictionary lookup, cheaper than the enum's call per worker.
_DECISIONS = {decision.value: decision for decision in Decision}
