"""The report of a gate run (one `screener gate` journaled): the gate rebuilt from its journal,
its standing decisions over the algorithm's estimates, and what it served.

A gate has no stopping condition: it decides worker by worker while the platform calls it,
and each decision stands from when it was made (an audit may reopen or ban an accepted
worker later). Its report therefore says how the gate stands, never whether a condition was
met; each worker's decision is the gate's standing one (the block list's), which may be the
gate's own (an audit, ``--tenure``, ``--bans``) where the algorithm's result has none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from screener.algorithms import Decision, Result, Verdict, WorkerResult
from screener.crowd import WorkerPool
from screener.errors import RunNotFoundError
from screener.gate_service import rebuild_gate, run_gate
from screener.journal import Event, EventKind, Journal, RunRecord
from screener.money import money
from screener.reports.data import render_csv, render_json
from screener.reports.summary import Only
from screener.reports.text import render_table
from screener.runs.decisions import RunDecision, block_list
from screener.runs.stored import GATE_ORACLE, run_state

__all__ = ["GateRun", "is_gate_run", "load_gate_run", "render_gate_run"]

#: The gate's verdicts as the algorithm's decisions against the bar (``Result.word`` shows them
#: as banned, accepted and undecided again).
_AS_DECISION = {
    Verdict.BANNED: Decision.BELOW,
    Verdict.ACCEPTED: Decision.ABOVE,
    Verdict.REOPENED: Decision.UNDECIDED,
}


@dataclass(frozen=True)
class GateRun:
    """A gate run as its report shows it: the result (the algorithm's, each worker's decision
    the gate's standing one), the workers who asked (by arm; a worker screened again after an
    audit reopened it is named ``worker#2``), the gate's counts and money
    (``Gate.summary``), its lifecycle state, and how many of its standing bans the algorithm's
    result does not make (the gate's own: no estimate of their mistakes)."""

    record: RunRecord
    result: Result
    pool: WorkerPool | None  # None until two workers have asked
    served: dict[str, Any]
    state: str
    own_bans: int

    def status(self) -> str:
        """How the gate stands, in one sentence (in place of a stopping condition)."""
        serving = {
            "running": "serving",
            "paused": "paused: its process is stopped or not renewing its lease",
        }.get(self.state, f"stopped ({self.state}; `screener gate --resume {self.record.id}` "
                          "serves it again)")  # fmt: skip
        return (
            f"gate {serving}: it decides worker by worker as answers come, with no stopping "
            "condition; each decision stands from when it was made"
        )

    def lines(self) -> list[str]:
        """What the gate served and what its decisions rest on, for the report's head."""
        served, cost = self.served, self.served["money"]
        statuses = ", ".join(f"{n:,} {name}" for name, n in served["workers"].items() if n)
        lines = [
            f"gate: {served['requests']:,} requests served: {served['gold']:,} gold questions, "
            f"{served['tasks']:,} real tasks; {served['decisions']:,} decisions made",
            f"gate workers: {statuses or 'none yet'}",
            f"gate cost: {money(cost['total'])} ({money(cost['gold'])} gold, "
            f"{money(cost['tasks'])} tasks)",
        ]
        if self.own_bans:
            lines.append(
                f"gate's own bans: {self.own_bans:,} (audits, --tenure, --bans): the algorithm's "
                "expected mistakes do not count them"
            )
        return lines


def is_gate_run(db: str, run_id: str | None) -> bool:
    """Whether run ``run_id`` (None: the latest) of ``db`` is a gate run; False when there is
    no such run (the caller's own loading says so)."""
    with Journal(db, read_only=True) as journal:
        chosen = run_id or journal.latest_run_id()
        try:
            record = None if chosen is None else journal.get_run(chosen)
        except RunNotFoundError:
            return False
    return record is not None and record.oracle.get("name") == GATE_ORACLE


def load_gate_run(db: str, run_id: str | None = None) -> GateRun:
    """Gate run ``run_id`` (None: the latest) of ``db``, its gate rebuilt from its latest
    snapshot and the events after it, or from the whole journal (``rebuild_gate``), checked
    call by call (JournalMismatchError where they disagree)."""
    with Journal(db, read_only=True) as journal:
        chosen = run_id or journal.latest_run_id()
        assert chosen is not None  # is_gate_run said so
        record = journal.get_run(chosen)
        gate = rebuild_gate(journal, chosen, run_gate(record)).gate
        decided = journal.events(chosen, kinds=[EventKind.DECIDED])
    standing = _standing_by_arm(decided)
    computed = gate.result()  # the algorithm's, before the gate's standing decisions
    result = replace(computed, workers=tuple(_as_standing(w, standing) for w in computed.workers))
    own = sum(
        1
        for w in computed.workers
        if w.arm in standing and standing[w.arm].decision == Verdict.BANNED
        and w.decision is not Decision.BELOW
    )  # fmt: skip
    pool = WorkerPool(result.names, source="gate") if len(result.names) >= 2 else None
    return GateRun(record, result, pool, gate.summary(), run_state(db, chosen), own)


def _standing_by_arm(events: list[Event]) -> dict[int, RunDecision]:
    """Each worker's standing decision (``block_list``), under the arm it held when that was
    made: a worker screened again after an audit reopened it decides on a new arm."""
    decided = [e for e in events if e.kind is EventKind.DECIDED]
    arms = {e.worker: e.arm for e in decided}
    standing = block_list([RunDecision.of(e) for e in decided])
    return {arm: d for d in standing if (arm := arms[d.worker]) is not None}


def _as_standing(line: WorkerResult, standing: dict[int, RunDecision]) -> WorkerResult:
    """The worker's line with the gate's standing decision and its reason (undecided, with
    the algorithm's leaning, where the gate has none)."""
    decision = standing.get(line.arm)
    if decision is None:
        return replace(line, decision=Decision.UNDECIDED)
    return replace(line, decision=_AS_DECISION[Verdict(decision.decision)], reason=decision.reason)


def render_gate_run(
    run: GateRun, layout: str, *, width: int | None, only: Only | None, limit: int | None
) -> str:
    """The report of a gate run in ``layout`` (table, json or csv: as ``screener report``'s
    ``--format``); the JSON adds ``gate``, what it served (``Gate.summary``)."""
    result, pool = run.result, run.pool
    if pool is None:
        return f"gate run {run.record.id}: fewer than two workers have asked for work yet\n"
    if layout == "csv":
        return render_csv(result, pool, only=only, limit=limit)
    if layout == "json":
        data = render_json(result, pool, run.record.id, only=only, limit=limit, status=run.status())
        data["gate"] = {**run.served, "own_bans": run.own_bans}
        return json.dumps(data, indent=2) + "\n"
    text = render_table(result, pool, run.record.id, width=width, only=only, limit=limit,
                        status=run.status(), notes=run.lines())  # fmt: skip
    return text + "\n"
