"""A gate run's snapshots: the whole ``Gate`` after a journaled event, so that a resume or a
report replays only the events after it.

A snapshot is the pickled pair (gate, when each of its decisions was made), stored through
the journal as a run's is (``Journal.save_snapshot``: one per run, replaced by the next, its
digest naming the screener version and the bytes' SHA-256) and read back through the same
allow-list as an algorithm's state (``screener.algorithms.snapshot``), extended to the
classes defined in ``screener.gate``, ``screener.bank`` and ``screener.money``: bytes read
from a database are not trusted to name code, so a forged snapshot can build those classes
and nothing else.

``GateSession`` takes one when ``snapshot_due`` says so, of the gate after exactly the batch
of events it has just committed (``screener.gate_service.session``). ``rebuild_gate`` is the
one way a gate run is rebuilt: from its latest snapshot when the digest, the allow-list, the
run's settings and the replay of every later event (checked as ``replay_gate`` checks) all
agree, else by replaying the whole journal. A bad snapshot never refuses a resume.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from screener.algorithms import Algorithm
from screener.algorithms.snapshot import AllowListUnpickler, unpickled
from screener.errors import SnapshotError
from screener.gate import Gate
from screener.gate_service.journaled import replay_gate
from screener.journal import Event, Journal, Snapshot

__all__ = [
    "SNAPSHOT_EVENTS",
    "RebuiltGate",
    "SnapshotSchedule",
    "dump_gate",
    "load_gate",
    "rebuild_gate",
    "snapshot_due",
]

#: The fewest journaled events between two snapshots of a gate: with ``snapshot_due``'s
#: second term (twice the gate's workers), pickling, which pauses the gate about 4.5 us a
#: worker, stays a few percent at most of the time it serves those events.
SNAPSHOT_EVENTS = 10_000
#: The packages and modules whose classes a gate's snapshot may name, beside an algorithm's
#: (``screener.money``: the settings' ``Prices``).
_GATE_PACKAGES = ("screener.gate.", "screener.bank.")
_GATE_MODULES = frozenset({"screener.money"})


def snapshot_due(events: int, workers: int, every: int = SNAPSHOT_EVENTS) -> bool:
    """Whether ``events`` journaled since the last snapshot call for another, for a gate of
    ``workers``: at least ``every`` of them (0: never) and twice the workers, so that the
    pause of pickling the gate, which grows with its workers, is paid once in as many events.

    Examples
    --------
    >>> snapshot_due(10_000, 1_000), snapshot_due(150_000, 100_000), snapshot_due(5, 0, every=0)
    (True, False, False)
    """
    return every > 0 and events >= max(every, 2 * workers)


class SnapshotSchedule:
    """When a served gate is snapshotted: after at least ``every`` events (``snapshot_due``;
    0: never), counted from ``since`` already journaled since the last snapshot."""

    def __init__(self, every: int = SNAPSHOT_EVENTS, since: int = 0) -> None:
        self.every, self.since = every, since

    def take(self, events: int, gate: Gate, made: Sequence[float]) -> bytes | None:
        """The gate's snapshot when one is due after ``events`` more; None otherwise. A gate
        that cannot be pickled serves on without snapshots (a resume replays everything)."""
        self.since += events
        if not snapshot_due(self.since, len(gate.workers), self.every):
            return None
        self.since = 0
        try:
            return dump_gate(gate, made)
        except SnapshotError:
            self.every = 0
            return None


def dump_gate(gate: Gate, made: Sequence[float]) -> bytes:
    """The gate and the times its decisions were made, as a snapshot's bytes."""
    try:
        return pickle.dumps((gate, list(made)), protocol=5)
    except (pickle.PicklingError, TypeError, AttributeError) as error:
        raise SnapshotError(
            f"the gate's state cannot be stored: {error}",
            "the gate run replays its journal instead of reading a snapshot",
        ) from None


def load_gate(data: bytes, method: type[Algorithm]) -> tuple[Gate, list[float]]:
    """The gate and decision times ``dump_gate`` wrote, of a gate whose method is a
    ``method`` (whose module the allow-list adds, as for a run's algorithm); SnapshotError
    when the bytes are not such a pair or name anything outside the allow-list (module
    docstring).

    Examples
    --------
    >>> import os
    >>> from screener.algorithms import CrowdPrior
    >>> try:
    ...     load_gate(pickle.dumps((os.getcwd, [])), CrowdPrior)
    ... except SnapshotError as error:
    ...     print(error)
    the stored state names posix.getcwd, which is not allowed
    """
    state = unpickled(data, method, _GateLoader)
    if not (isinstance(state, tuple) and len(state) == 2 and type(state[0]) is Gate):
        raise SnapshotError(f"the stored state is a {type(state).__name__}, not a gate's")
    gate, made = state
    if not (isinstance(made, list) and all(type(at) is float for at in made)):
        raise SnapshotError("the stored decision times are not a list of times")
    if len(made) != len(gate.decisions):
        raise SnapshotError(
            f"the stored gate has {len(gate.decisions)} decisions, {len(made)} times"
        )
    return gate, made


@dataclass(frozen=True)
class RebuiltGate:
    """A gate run's gate rebuilt from its journal, when each of its decisions was made, the
    events replayed, and whether it started from the run's snapshot."""

    gate: Gate
    made: list[float]
    replayed: int
    from_snapshot: bool


def rebuild_gate(journal: Journal, run_id: str, fresh: Gate) -> RebuiltGate:
    """Gate run ``run_id`` rebuilt (module docstring); ``fresh`` is ``run_gate`` of its record,
    replayed from the start when the snapshot cannot be used. JournalMismatchError when the
    whole journal disagrees with the gate."""
    restored = _restored(journal.snapshot(run_id), fresh)
    rebuilt = None if restored is None else _from_snapshot(journal, run_id, *restored)
    if rebuilt is not None:
        return rebuilt
    made, replayed = _replayed(journal, run_id, fresh, [], 0)
    return RebuiltGate(fresh, made, replayed, from_snapshot=False)


def _from_snapshot(
    journal: Journal, run_id: str, gate: Gate, made: list[float], after: int
) -> RebuiltGate | None:
    """The snapshot's gate with the events after it replayed; None when they disagree with
    it (then the whole journal is replayed)."""
    try:
        made, replayed = _replayed(journal, run_id, gate, made, after)
    except Exception:  # a snapshot the later events disagree with, however it shows
        return None
    return RebuiltGate(gate, made, replayed, from_snapshot=True)


def _replayed(
    journal: Journal, run_id: str, gate: Gate, made: list[float], after: int
) -> tuple[list[float], int]:
    """``replay_gate`` of the run's events after event ``after``, read a page at a time
    (``Journal.event_pages``: a resume holds one page, not the whole tail, whose objects
    would be freed in among the gate's and leave its memory fragmented); the decision
    times and the number of events replayed."""
    replayed = 0

    def events() -> Iterator[Event]:
        nonlocal replayed
        for page in journal.event_pages(run_id, after_id=after):
            replayed += len(page)
            yield from page

    return replay_gate(gate, events(), made), replayed


def _restored(snapshot: Snapshot | None, fresh: Gate) -> tuple[Gate, list[float], int] | None:
    """The snapshot's gate, its decision times and the id of the last event it covers; None
    when there is none, or it is damaged, another version's, or not of this run's settings."""
    if snapshot is None or not snapshot.intact:
        return None
    try:
        gate, made = load_gate(snapshot.state, type(fresh.method))
    except SnapshotError:
        return None
    if gate.settings != fresh.settings:
        return None
    return gate, made, snapshot.event_id


class _GateLoader(AllowListUnpickler):
    """The algorithms' allow-list (a gate's algorithm is one), and the classes defined in the
    gate's packages; a name imported into one of them (``screener.bank.questions.Path``) is
    not one of its classes."""

    def find_class(self, module: str, name: str) -> Any:
        if module.startswith(_GATE_PACKAGES) or module in _GATE_MODULES:
            found = pickle.Unpickler.find_class(self, module, name)
            if isinstance(found, type) and found.__module__ == module:
                return found
            raise SnapshotError(f"the stored state names {module}.{name}, which is not allowed")
        return super().find_class(module, name)
