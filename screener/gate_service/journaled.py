"""What the journal records of a gate run, and the gate rebuilt from it.

A gate run is a run (``RunSpec``) whose oracle is ``{"name": "gate"}``, whose ``config``
holds the ``GateSettings`` (``{"gate": ...}``) and their secret gold key (``"gold_key"``),
and whose ``pool`` holds the gold question bank, if any (``{"workers": [], "bank": ...}``).
The gold key is in the run database because a resume must name its gold questions as the
first gate did (the database holds the ids handed out anyway); it is kept out of the
settings every output shows (``GateSettings.to_dict``: status, reports, logs). A run
journaled before gold keys has none: its gate keeps the sequential ids ``g0, g1, ...``.

Its events are the calls that changed the gate, each with what it returned, in the order the
gate served them. A call that changes nothing is not journaled (its reply waits, as every
reply does, until what came before it is committed): a refused request (a 4xx), a repeated
request id (``next`` and labels: the first reply again), a ``duplicate`` or ``late`` answer
(the gate ignores it), a second label of an item without a request id, a leave of a worker
the gate does not know or who left already. The gate rebuilt from the journal is therefore
the gate that served, request memory included. The events:

* ``requested``: ``Gate.next``: ``worker``, ``detail`` the request id (None without one),
  ``question`` the bank's question of a gold reply, ``response`` JSON
  ``{"kind", "gold", "reason"}``, with ``"item"`` when the reply names an item and
  ``"candidates"`` when the platform named the items it can show the worker (journals
  written before items hold neither);
* ``registered``: ``Gate.add_items``: ``response`` JSON ``[[item, cap, priority], ...]``, the
  items the call registered (those registered already are left out: they changed nothing);
* ``answered``: ``Gate.answer``: ``worker`` (the gold question's, which the answer named),
  ``detail`` the gold id, ``question`` the bank's question or the gold item the platform
  named, ``reward`` as given and ``response`` the raw answer as JSON (either may be None;
  with both, the answer is the worker's label of ``question``, for the gold check);
  ``duplicate`` and ``late`` are the answers the gate ignored, as journals written before
  this rule hold them;
* ``labelled``: ``Gate.tell_label``: ``worker``, ``detail`` the item, ``response`` JSON
  ``{"label", "request_id", "outcome"}``;
* ``unavailable``: ``Gate.leave``: ``worker``, ``detail`` the reason;
* ``outside``: ``Gate.tell_outside`` (a shard of a pool told the other shards' crowd
  evidence): ``response`` JSON ``[[successes, answers, workers], ...]``;
* ``decided``, after the call that made the decision, in the same transaction: the one
  decided event of every run (``screener.orchestrator.decided_event``), ``arm`` the worker's
  current one; its ``at`` is when the decision was made.

The gate is pure and deterministic, so ``replay_gate`` makes the same calls in the same order
on a fresh gate and checks that every reply, outcome and decision is the one journaled: a
journal that disagrees (another screener version, a damaged file) is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from screener.algorithms import Verdict
from screener.bank import GoldBank
from screener.errors import JournalError, JournalMismatchError, ScreenerError
from screener.gate import AnswerOutcome, Decided, Gate, GateSettings, LabelOutcome, Reply
from screener.gate_service.protocol import AnswerItem
from screener.journal import Event, EventKind, RunRecord, RunSpec
from screener.orchestrator import decided_event
from screener.runs.stored import GATE_ORACLE
from screener.stats.prior.evidence import Pairs, expand_pairs

__all__ = [
    "answer_event",
    "decision_events",
    "gate_spec",
    "items_event",
    "label_event",
    "leave_event",
    "outside_event",
    "replay_gate",
    "request_event",
    "run_gate",
]

_OUTCOME_KINDS = {
    AnswerOutcome.ACCEPTED: EventKind.ANSWERED,
    AnswerOutcome.DUPLICATE: EventKind.DUPLICATE,
    AnswerOutcome.LATE: EventKind.LATE,
}
_ANSWER_KINDS = frozenset(_OUTCOME_KINDS.values())
#: Where a gate run's config keeps the secret its gold ids are made with.
_GOLD_KEY = "gold_key"
_GOLD_IDS = "gold_ids"


def gate_spec(settings: GateSettings, bank: GoldBank | None) -> RunSpec:
    """The run that serves a gate with these settings and this bank."""
    pool: dict[str, Any] = {"workers": [], "source": "gate"}
    if bank is not None:
        pool["bank"] = bank.to_dict()
    return RunSpec(
        algorithm=settings.algorithm,
        params=dict(settings.params),
        seed=settings.seed,
        oracle={"name": GATE_ORACLE},
        pool=pool,
        config={"gate": settings.to_dict(), _GOLD_KEY: settings.gold_key},
    )


def run_gate(record: RunRecord) -> Gate:
    """A fresh gate with the settings and bank of gate run ``record``."""
    if record.oracle.get("name") != GATE_ORACLE or "gate" not in record.config:
        raise JournalError(
            f"run {record.id} is not a gate run", "give the id of a run `screener gate` started"
        )
    # no key stored: a run journaled before gold keys, whose ids were sequential; no
    # gold_ids: one journaled before sealed ids, whose ids were hashed
    stored = {_GOLD_IDS: "hashed", **record.config["gate"], _GOLD_KEY: record.config.get(_GOLD_KEY)}
    settings = GateSettings.from_dict(stored)
    bank = record.pool.get("bank")
    return Gate(settings, None if bank is None else GoldBank.from_dict(bank))


#: A registered item as ``Gate.add_items`` takes it: (item, cap, priority).
ItemTuple = tuple[str, int | None, float]


# ------------------------------------------------------------------ calls to events
def request_event(
    gate: Gate,
    reply: Reply,
    request_id: str | None,
    at: float,
    candidates: Sequence[str] | None = None,
) -> Event:
    """The event of a request the gate served (``candidates``: the items the platform named)."""
    return Event(
        kind=EventKind.REQUESTED, at=at, worker=reply.worker, arm=gate.workers[reply.worker].arm,
        detail=request_id, question=reply.question, response=_reply_json(reply, candidates),
    )  # fmt: skip


def items_event(items: Sequence[ItemTuple], at: float) -> Event:
    """The event of items just registered (what ``Gate.add_items`` returned)."""
    return Event(kind=EventKind.REGISTERED, at=at, response=json.dumps([list(i) for i in items]))


def answer_event(gate: Gate, given: AnswerItem, at: float) -> Event:
    """The event of an answer the gate used (the only answers journaled): the bank's
    question, else the gold item the platform named."""
    record = gate.gold(given.gold)
    assert record is not None  # the gate has just used it
    return Event(
        kind=EventKind.ANSWERED, at=at, worker=record.worker, detail=given.gold,
        question=record.question or given.item, reward=given.reward,
        response=None if given.answer is None else json.dumps(given.answer),
    )  # fmt: skip


def label_event(
    worker: str, item: str, label: object, request_id: str | None, outcome: LabelOutcome, at: float
) -> Event:
    body = {"label": label, "request_id": request_id, "outcome": outcome.value}
    return Event(
        kind=EventKind.LABELLED, at=at, worker=worker, detail=item, response=json.dumps(body)
    )


def leave_event(worker: str, reason: str, at: float) -> Event:
    return Event(kind=EventKind.UNAVAILABLE, at=at, worker=worker, detail=reason)


def outside_event(pairs: Pairs, at: float) -> Event:
    """The event of crowd evidence told from outside the gate (``Gate.tell_outside``)."""
    return Event(kind=EventKind.OUTSIDE, at=at, response=json.dumps([list(p) for p in pairs]))


def decision_events(gate: Gate, decisions: Sequence[Decided], at: float) -> list[Event]:
    """The ``decided`` events of decisions just made (the worker's current arm: the one a
    reopened screening gave it)."""
    return [
        decided_event(
            at, gate.workers[d.worker].arm, d.worker, Verdict(d.decision), d.seq, d.reason
        )
        for d in decisions
    ]


# ------------------------------------------------------------------ events to calls
def replay_gate(gate: Gate, events: Iterable[Event], made: Sequence[float] = ()) -> list[float]:
    """Make the calls of ``events`` (a gate run's, in journal order) on ``gate``, checking
    each against what was journaled; return when each decision was made. ``gate`` is fresh,
    or a snapshot's (``screener.gate_service.snapshots``: ``events`` are those after it,
    ``made`` the times of its decisions). JournalMismatchError at the first disagreement."""
    made = list(made)
    for event in events:
        try:
            _replay_one(gate, event, made)
        except JournalMismatchError:
            raise
        except ScreenerError as error:
            raise _mismatch(event, f"the gate refuses it: {error}") from None
    if len(made) != len(gate.decisions):
        raise _mismatch(
            None, f"the gate made {len(gate.decisions)} decisions, the journal holds {len(made)}"
        )
    return made


def _replay_one(gate: Gate, event: Event, made: list[float]) -> None:
    kind = event.kind
    if kind is EventKind.REQUESTED:
        journaled = json.loads(event.response or "{}")
        candidates = journaled.get("candidates")
        reply = gate.next(_text(event.worker, event), event.detail, candidates)
        now = _reply_json(reply, candidates)
        if json.loads(now) != journaled or reply.question != event.question:
            raise _mismatch(event, f"the gate now replies {now}")
    elif kind is EventKind.REGISTERED:
        items = [(str(i), c, float(p)) for i, c, p in json.loads(event.response or "[]")]
        if len(gate.add_items(items)) != len(items):
            raise _mismatch(event, "the gate had registered some of these items already")
    elif kind in _ANSWER_KINDS:
        raw = None if event.response is None else json.loads(event.response)
        gold = _text(event.detail, event)
        worker = _text(event.worker, event)  # the answer was checked against it when served
        item = None if raw is None else event.question  # as answer_event wrote it
        outcome = gate.answer(gold, worker=worker, reward=event.reward, answer=raw, item=item)
        if _OUTCOME_KINDS[outcome] is not kind:
            raise _mismatch(event, f"the gate now calls the answer {outcome.value}")
    elif kind is EventKind.LABELLED:
        body = json.loads(event.response or "{}")
        told = gate.tell_label(
            _text(event.worker, event), _text(event.detail, event), body.get("label"),
            body.get("request_id"),
        )  # fmt: skip
        if told.value != body.get("outcome"):
            raise _mismatch(event, f"the gate now calls the label {told.value}")
    elif kind is EventKind.UNAVAILABLE:
        gate.leave(_text(event.worker, event), event.detail or "left")
    elif kind is EventKind.OUTSIDE:
        gate.tell_outside(*expand_pairs(json.loads(event.response or "[]")))
    elif kind is EventKind.DECIDED:
        seq = len(made)
        if seq >= len(gate.decisions) or not _same_decision(gate.decisions[seq], event):
            raise _mismatch(event, f"the gate did not make decision {seq} so")
        made.append(event.at)


def _same_decision(decision: Decided, event: Event) -> bool:
    recorded = json.loads(event.response or "{}")
    return (
        decision.worker == event.worker
        and decision.decision == event.detail
        and recorded == {"seq": decision.seq, "reason": decision.reason}
    )


def _reply_json(reply: Reply, candidates: Sequence[str] | None) -> str:
    """What a ``requested`` event keeps of the reply and of the request's candidates."""
    found: dict[str, Any] = {"kind": reply.kind.value, "gold": reply.gold, "reason": reply.reason}
    if reply.item is not None:
        found["item"] = reply.item
    if candidates is not None:
        found["candidates"] = list(candidates)
    return json.dumps(found)


def _text(value: str | None, event: Event) -> str:
    if value is None:
        raise _mismatch(event, "a field the call needs is empty")
    return value


def _mismatch(event: Event | None, why: str) -> JournalMismatchError:
    where = "at its end" if event is None else f"at event {event.id} ({event.kind.value})"
    return JournalMismatchError(
        f"the journal of this gate run disagrees with the gate {where}: {why}",
        "resume it with the screener version that wrote it",
    )
