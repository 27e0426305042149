"""What the journal records, as plain values: event kinds, events, runs and their summaries."""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

from screener._version import __version__

__all__ = [
    "EVENT_FIELDS",
    "Event",
    "EventKind",
    "RunRecord",
    "RunSpec",
    "RunState",
    "RunSummary",
    "Snapshot",
    "snapshot_digest",
]

#: Where a run is: ended with its result, driven by a live process now, stopped by Ctrl-C,
#: stopped by an error, or left behind by a process that died without a word.
RunState = Literal["finished", "running", "paused", "interrupted", "failed", "crashed"]


class EventKind(enum.StrEnum):
    """What happened; stored as its string value.

    Examples
    --------
    >>> EventKind("answered") is EventKind.ANSWERED, EventKind.STOPPED.value
    (True, 'stopped')
    """

    STARTED = "started"
    RESUMED = "resumed"
    ASKED = "asked"
    ANSWERED = "answered"
    TIMED_OUT = "timed_out"
    FAILED = "failed"
    CANCELLED = "cancelled"
    LATE = "late"
    DUPLICATE = "duplicate"
    UNAVAILABLE = "unavailable"
    RETRIED = "retried"
    INVALIDATED = "invalidated"
    #: A worker decided, as it was decided (journaled before anyone acts on it): ``worker``,
    #: ``arm``, ``detail`` the decision ("banned", "accepted" or "reopened"), ``response``
    #: JSON ``{"seq": its position in the run's decision stream, "reason": why}``. Derived
    #: data: a replay makes the same decisions and writes none.
    DECIDED = "decided"
    #: A gate run: a worker asked for work (``worker``; ``detail`` the request id, if any),
    #: journaled with the gate's reply before it is sent: ``question`` the bank's question,
    #: ``response`` JSON ``{"kind", "gold", "reason"}``. A replay makes the same call and
    #: must get the same reply.
    REQUESTED = "requested"
    #: A gate run: a worker's task label (``Gate.tell_label``): ``worker``, ``detail`` the
    #: item, ``response`` JSON ``{"label", "request_id", "outcome"}``. A replay makes the same
    #: call and must get the same outcome.
    LABELLED = "labelled"
    #: A gate run: task items registered (``Gate.add_items``): ``response`` JSON
    #: ``[[item, cap, priority], ...]``, the items the call registered. A replay registers
    #: them again and must find each of them new.
    REGISTERED = "registered"
    #: A gate run of a pool: crowd evidence from the pool's other shards (``Gate.tell_outside``),
    #: ``response`` JSON ``[[successes, answers, workers], ...]``, replacing the one before.
    #: Journaled before it is used; a replay tells it again at the same point.
    OUTSIDE = "outside"
    #: A process stopped driving the run before its end; detail "interrupted" (Ctrl-C, a
    #: cancelled task) or "failed: <why>". A resume continues it.
    STOPPED = "stopped"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """One journal entry. ``id`` is None until the event has been written and read back.

    Keyword-only: eleven fields, most of them optional, are not read right by position.

    Examples
    --------
    >>> event = Event(
    ...     kind=EventKind.ANSWERED, at=2.0, pull_id=0, arm=0, worker="ann", seq=0, reward=1.0
    ... )
    >>> event.kind.value, event.reward, event.id is None  # no id until written
    ('answered', 1.0, True)
    """

    kind: EventKind
    at: float  # unix seconds
    pull_id: int | None = None
    arm: int | None = None
    worker: str | None = None
    seq: int | None = None
    reward: float | None = None
    detail: str | None = None
    id: int | None = None
    question: str | None = None  # gold question id, when the pool has a question bank
    #: The worker's raw answer as JSON, before scoring; on the finished event, the run's final
    #: result (Result.to_json), which a report reads instead of replaying the run.
    response: str | None = None


#: Event's fields in declaration order: the one list the events table's columns, the
#: journal's insert and its reads are derived from (a test pins the table to it).
EVENT_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Event))


@dataclass(frozen=True)
class RunSpec:
    """Everything that defines a run; the mappings must be JSON-serializable.

    Examples
    --------
    >>> from screener.journal import Event, EventKind, Journal, RunSpec
    >>> spec = RunSpec("wrr", {"k": 2.0}, 0, {"name": "simulated"}, {"workers": ["ann", "bob"]}, {})
    >>> with Journal(db) as journal:
    ...     record = journal.get_run(journal.create_run(spec))
    >>> record.algorithm, record.params
    ('wrr', {'k': 2.0})
    """

    algorithm: str
    params: Mapping[str, Any]
    seed: int
    oracle: Mapping[str, Any]
    pool: Mapping[str, Any]
    config: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class RunRecord(RunSpec):
    """A run as stored: its spec (decoded from JSON) plus what the journal added.

    Examples
    --------
    >>> with Journal(db) as journal:
    ...     record = journal.get_run(journal.create_run(spec))
    >>> from screener import __version__
    >>> record.algorithm, record.pool["workers"], record.screener_version == __version__
    ('wrr', ['ann', 'bob'], True)
    """

    id: str
    created_at: float
    screener_version: str


@dataclass(frozen=True)
class RunSummary:
    """One line of ``screener runs``.

    Examples
    --------
    >>> with Journal(db) as journal:
    ...     run_id = journal.create_run(spec)
    ...     journal.append(run_id, [Event(kind=EventKind.FINISHED, at=2.0, detail="condition met")])
    ...     summary = journal.runs()[0]
    >>> summary.state, summary.status, summary.n_workers
    ('finished', 'finished: condition met', 2)
    """

    id: str
    created_at: float
    algorithm: str
    n_workers: int
    answered: int
    state: RunState
    status: str  # the state, said in a line: "finished: <detail>", "failed: <why>"...
    #: The oracle's name, and the file it reads when it has a ``path`` option (a dataset).
    oracle: str = ""
    source: str | None = None
    #: The final result the run stored (Result.to_json), unless events came after it.
    stored_result: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """A run's stored algorithm state after its events up to ``event_id`` (the bytes of
    ``screener.algorithms.snapshot.dump_state``; ``digest`` says whether they may be used).

    Examples
    --------
    >>> snapshot = Snapshot(event_id=41, digest=snapshot_digest(b"..."), state=b"...")
    >>> snapshot.event_id, snapshot.intact
    (41, True)
    """

    event_id: int
    digest: str
    state: bytes

    @property
    def intact(self) -> bool:
        """Whether the bytes are the ones this screener version stored (``snapshot_digest``)."""
        return self.digest == snapshot_digest(self.state)


#: The layout of a pickled state (an algorithm's, the gate's): raised whenever a class
#: snapshots keep changes the attributes it keeps, so that a reader of another layout replays
#: instead of restoring state it would misread (2: crowd-prior's derived caches left out;
#: 3: the gate's items; 4: its gold check of final labels; 5: a decision as its ``Verdict``;
#: 6: the gold check's unsettled share).
STATE_FORMAT = 6


def snapshot_digest(state: bytes) -> str:
    """What the journal keeps beside a snapshot's bytes: the screener version and state layout
    (``STATE_FORMAT``) that wrote them and their SHA-256, so that a reader can tell damaged
    bytes, or bytes another version or layout pickled, and replay instead.

    Examples
    --------
    >>> snapshot_digest(b"abc") == snapshot_digest(b"abc") != snapshot_digest(b"abd")
    True
    >>> snapshot_digest(b"abc").split(":")[0].endswith(f"+state{STATE_FORMAT}")
    True
    """
    return f"{__version__}+state{STATE_FORMAT}:{hashlib.sha256(state).hexdigest()}"
