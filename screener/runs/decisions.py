"""A run's decisions as a platform acts on them: its "decided" events read back in order,
followed while the run goes on, and its block list (each worker's standing decision).

Every run that journals decisions is read the same way: `screener run`'s and the gate's.
A run journaled before runs had decided events (a finished one, with none) gets its
decisions derived from its final result, dated when it finished, as that run would have
journaled them then. The words and what each question's decisions mean:
``screener.algorithms.verdicts``.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TextIO

from screener.algorithms import Verdict
from screener.errors import JournalError
from screener.files import open_output
from screener.journal import Event, EventKind, Journal
from screener.orchestrator import DecisionStream
from screener.runs.results import load_result
from screener.runs.stored import GATE_ORACLE

__all__ = [
    "BLOCK_LIST_COLUMNS",
    "DecisionFollower",
    "DecisionLines",
    "RunDecision",
    "block_list",
    "run_decisions",
    "write_block_list",
]

#: The block list's columns: one row per worker, the shape of a platform's block or qualify
#: upload (docs/running.md: "The block list").
BLOCK_LIST_COLUMNS = ("worker", "decision", "reason", "when")
#: How long a follower waits between two looks at the journal, and between two checks, when
#: nothing new came, that the run has not crashed (its process gone without a word).
POLL_SECONDS = 0.5
CRASH_CHECK_SECONDS = 5.0


@dataclass(frozen=True)
class RunDecision:
    """One decision of a run: its position ``seq`` in the run's decision stream, the worker,
    ``decision`` (banned, accepted or reopened), why, and ``at`` (unix seconds).

    Examples
    --------
    >>> from screener.orchestrator.decisions import decided_event
    >>> event = decided_event(0.0, 2, "ann", Verdict.BANNED, 0, "below the bar")
    >>> decision = RunDecision.of(event)
    >>> decision.to_dict()
    {'worker': 'ann', 'decision': 'banned', 'reason': 'below the bar', 'seq': 0, 'at': 0.0}
    >>> decision.block_row()
    ('ann', 'banned', 'below the bar', '1970-01-01T00:00:00Z')
    """

    seq: int
    worker: str
    decision: str
    reason: str
    at: float

    @classmethod
    def of(cls, event: Event) -> RunDecision:
        """The decision a "decided" event records."""
        try:
            response = json.loads(event.response or "")
            seq, reason = int(response["seq"]), str(response["reason"])
        except (ValueError, KeyError, TypeError):
            raise JournalError(
                f"decided event {event.id} has a damaged response {event.response!r}"
            ) from None
        return cls(seq, str(event.worker), str(event.detail), reason, event.at)

    def to_dict(self) -> dict[str, Any]:
        """The decision as a line of `screener run --decisions` (and `decisions --json`)."""
        return {
            "worker": self.worker,
            "decision": self.decision,
            "reason": self.reason,
            "seq": self.seq,
            "at": self.at,
        }

    @property
    def when(self) -> str:
        """``at`` as an ISO 8601 time in UTC, to the second."""
        moment = datetime.fromtimestamp(self.at, UTC).replace(microsecond=0)
        return moment.isoformat().replace("+00:00", "Z")

    def block_row(self) -> tuple[str, str, str, str]:
        """The decision as a row of the block list (``BLOCK_LIST_COLUMNS``)."""
        return self.worker, self.decision, self.reason, self.when


def run_decisions(db: str, run_id: str) -> list[RunDecision]:
    """The decisions of run ``run_id`` in the order they were made (RunNotFoundError when
    there is no such run)."""
    with Journal(db, read_only=True) as journal:
        record = journal.get_run(run_id)
        events = journal.events(run_id, kinds=(EventKind.DECIDED, EventKind.FINISHED))
    decided = [RunDecision.of(event) for event in events if event.kind is EventKind.DECIDED]
    finished = [event for event in events if event.kind is EventKind.FINISHED]
    if decided or not finished or record.oracle.get("name") == GATE_ORACLE:
        return decided
    return _derived(db, run_id, finished[-1].at)


def _derived(db: str, run_id: str, at: float) -> list[RunDecision]:
    """The decided events a finished run without any would have journaled when it finished."""
    record, result = load_result(db, run_id)
    workers = record.pool["workers"]
    stream = DecisionStream(workers, record.params)
    return [RunDecision.of(event) for event in stream.final(result, at)]


def block_list(decisions: Sequence[RunDecision]) -> list[RunDecision]:
    """Each worker's standing decision, in the order those were made: its last, unless
    that reopened it (screened again: neither banned nor accepted now).

    Examples
    --------
    >>> made = [RunDecision(0, "ann", "accepted", "", 1.0),
    ...         RunDecision(1, "bob", "banned", "", 2.0),
    ...         RunDecision(2, "ann", "banned", "audit", 3.0)]
    >>> [(d.worker, d.decision) for d in block_list(made)]
    [('bob', 'banned'), ('ann', 'banned')]
    """
    last = {decision.worker: decision for decision in decisions}
    standing = [d for d in last.values() if d.decision != Verdict.REOPENED]
    return sorted(standing, key=lambda decision: decision.seq)


def write_block_list(
    decisions: Sequence[RunDecision], path: str | Path, layout: Literal["csv", "json"]
) -> None:
    """Write ``decisions`` as a block list (``BLOCK_LIST_COLUMNS``, ``when`` in ISO 8601
    UTC): CSV with a header, or a JSON array of objects; ``-`` is standard output.

    Examples
    --------
    >>> target = folder / "blocks.csv"
    >>> write_block_list([RunDecision(0, "ann", "banned", "below", 0.0)], target, "csv")
    >>> print(target.read_text(), end="")
    worker,decision,reason,when
    ann,banned,below,1970-01-01T00:00:00Z
    """
    with open_output(path, what="the block list") as out:
        if layout == "json":
            rows = [dict(zip(BLOCK_LIST_COLUMNS, d.block_row(), strict=True)) for d in decisions]
            out.write(json.dumps(rows, indent=2) + "\n")
            return
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(BLOCK_LIST_COLUMNS)
        writer.writerows(decision.block_row() for decision in decisions)


class DecisionLines:
    """A sink for a run's decided events (``start_run(on_decided=...)``): each decision a
    JSON line on ``stream`` (``RunDecision.to_dict``), flushed as it comes, so that a reader
    at the other end acts on it at once.

    Examples
    --------
    >>> import io
    >>> from screener.orchestrator.decisions import decided_event
    >>> lines = DecisionLines(io.StringIO())
    >>> lines([decided_event(0.0, 0, "ann", Verdict.BANNED, 0, "below")])
    >>> lines.stream.getvalue()
    '{"worker": "ann", "decision": "banned", "reason": "below", "seq": 0, "at": 0.0}\\n'
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, events: Sequence[Event]) -> None:
        self.write([RunDecision.of(event) for event in events])

    def write(self, decisions: Sequence[RunDecision]) -> None:
        """Write ``decisions``, one line each, and flush."""
        for decision in decisions:
            self.stream.write(json.dumps(decision.to_dict()) + "\n")
        self.stream.flush()


class DecisionFollower:
    """The decisions of a run as they are journaled, until the run ends: iterate over it
    (it looks at the journal every ``poll`` seconds); then ``ended`` says how the run ended
    ("finished: ...", the reason it stopped, or "crashed").

    A run ends with its "finished" event, a "stopped" one (Ctrl-C, an error; a resume would
    continue it), or when its process is gone without a word (its lease expired).

    Examples
    --------
    >>> from screener.journal import RunSpec
    >>> from screener.orchestrator.decisions import decided_event
    >>> spec = RunSpec("crowd-prior", {}, 0, {"name": "simulated"}, {"workers": ["ann"]}, {})
    >>> with Journal(db) as journal:
    ...     run_id = journal.create_run(spec)
    ...     journal.append(run_id, [decided_event(1.0, 0, "ann", Verdict.BANNED, 0, "below"),
    ...                             Event(kind=EventKind.FINISHED, at=2.0, detail="condition met")])
    >>> follower = DecisionFollower(db, run_id)
    >>> [d.worker for d in follower], follower.ended
    (['ann'], 'finished: condition met')
    """

    def __init__(self, db: str, run_id: str, poll: float = POLL_SECONDS) -> None:
        self.db = db
        self.run_id = run_id
        self.poll = poll
        self.ended: str | None = None

    def __iter__(self) -> Iterator[RunDecision]:
        with Journal(self.db, read_only=True) as journal:
            journal.get_run(self.run_id)
            after, quiet_since = 0, time.monotonic()
            while self.ended is None:
                events = journal.events(self.run_id, after_id=after, kinds=_FOLLOWED)
                for event in events:
                    if event.kind is EventKind.DECIDED:
                        yield RunDecision.of(event)
                if events:
                    after = events[-1].id or after
                    self.ended = _ending(events)
                    quiet_since = time.monotonic()
                elif time.monotonic() - quiet_since >= CRASH_CHECK_SECONDS:
                    self.ended = self._crashed(journal)
                    quiet_since = time.monotonic()
                if self.ended is None:
                    time.sleep(self.poll)

    def _crashed(self, journal: Journal) -> str | None:
        """ "crashed" when the run's process is gone without a word, else None."""
        summary = next(run for run in journal.runs() if run.id == self.run_id)
        return "crashed" if summary.state == "crashed" else None


#: The events a follower reads: decisions, and what starts or ends a process's work.
_FOLLOWED = (EventKind.DECIDED, EventKind.RESUMED, EventKind.STOPPED, EventKind.FINISHED)


def _ending(events: Sequence[Event]) -> str | None:
    """How the run ended, if the last of these events ends it (a resume after a stop does
    not)."""
    last = next((e for e in reversed(events) if e.kind is not EventKind.DECIDED), None)
    if last is None or last.kind is EventKind.RESUMED:
        return None
    if last.kind is EventKind.FINISHED:
        return f"finished: {last.detail}" if last.detail else "finished"
    return last.detail or "stopped"
