"""The final labels of a gate run (``screener labels``): its gate rebuilt from the journal
(``rebuild_gate``: the snapshot and the calls after it, or every call, each checked), one row
per registered item.

Rules: a done item's row is its last entry in the final-label stream (``FinalLabel``: state
``settled`` or ``capped``); an item not done (never settled, or reopened by a ban) is listed
too, with state ``open`` and its current top label and confidence (``ItemState``). Rows are
in registration order. The crowd-kit format keeps the done items only, as crowd-kit's
aggregation output names its columns (``task,agg_label``).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass
from typing import Any, Literal

from screener.gate import Gate
from screener.gate_service import rebuild_gate, run_gate
from screener.journal import Journal

__all__ = [
    "CAVEAT",
    "FORMATS",
    "FinalRow",
    "check_note",
    "final_rows",
    "load_final_labels",
    "render_final_labels",
]

#: What the confidence may get wrong, said with every export.
CAVEAT = (
    "confidence is the one-coin posterior checked against gold (the share of items that "
    "mislead the crowd, from gold answers that name their item and raw answer): it assumes "
    "gold is like the tasks, and cannot see workers who collude on tasks only (docs/gate-api.md)"
)

LabelsFormat = Literal["csv", "json", "crowd-kit"]
FORMATS: tuple[LabelsFormat, ...] = ("csv", "json", "crowd-kit")
_DONE = ("settled", "capped")


@dataclass(frozen=True, slots=True)
class FinalRow:
    """One item's final label: ``labels`` the labels counted, ``given`` every label paid for,
    ``money`` what they cost, ``state`` settled, capped or open."""

    item: str
    label: str | None
    confidence: float
    labels: int
    given: int
    money: float
    state: str


def load_final_labels(db: str, run_id: str) -> tuple[list[FinalRow], str]:
    """Gate run ``run_id`` of ``db`` rebuilt from its journal: its rows (module docstring) and
    what its gold check says of their confidence (``check_note``). RunNotFoundError for an
    unknown run; JournalError for a run that is not a gate's; JournalMismatchError for a
    journal the gate disagrees with."""
    with Journal(db, read_only=True) as journal:
        record = journal.get_run(run_id)
        gate = rebuild_gate(journal, run_id, run_gate(record)).gate
    return final_rows(gate), check_note(gate)


def check_note(gate: Gate) -> str:
    """How many gold settlements checked the confidence, how many were wrong, and the share
    of misleading items the gate took from them (``screener.gate.calibration``), then the
    same for labels the crowd did not settle; with no check, that the prior's share stands
    and what to send for a check."""
    check = gate.items.check
    if not check.checks:
        settled = (
            f"no gold settlement checked the confidence: the prior's {check.misleading:.0%} "
            "of misleading items stands (send gold answers with the worker's raw answer, and "
            "the gold item without a bank)"
        )
    else:
        settled = (
            f"confidence checked against {check.checks:,} gold settlements ({check.wrong:,} "
            f"wrong): misleading items taken as {check.misleading:.1%}"
        )
    unsettled = check.unsettled
    if not unsettled.checks:
        return (
            f"{settled}; labels the crowd did not settle: no gold item reached the cap "
            f"unsettled, the prior's {unsettled.mean:.0%} stands"
        )
    return (
        f"{settled}; labels the crowd did not settle: {unsettled.checks:,} gold checks "
        f"({unsettled.wrong:,} wrong), misleading taken as {unsettled.mean:.1%}"
    )


def final_rows(gate: Gate) -> list[FinalRow]:
    """One row per registered item of ``gate`` (module docstring)."""
    last = {entry.item: entry for entry in gate.final_labels()}
    rows = []
    for state in gate.items.items.values():
        entry = last.get(state.item)
        if state.done and entry is not None and entry.state in _DONE:
            fields = asdict(entry)
            del fields["seq"]
            rows.append(FinalRow(**fields))
        else:
            money = state.given * gate.items.task_price
            confidence = gate.items.printed(state.confidence)
            rows.append(FinalRow(state.item, state.label, confidence, state.counted,
                                 state.given, money, "open"))  # fmt: skip
    return rows


def render_final_labels(rows: list[FinalRow], layout: LabelsFormat, run_id: str) -> str:
    """``rows`` as CSV (every column), JSON (``{"run", "labels": [...]}``) or crowd-kit's
    ``task,agg_label`` CSV of the done items."""
    if layout == "json":
        data: dict[str, Any] = {"run": run_id, "labels": [asdict(row) for row in rows]}
        return json.dumps(data, indent=2) + "\n"
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if layout == "crowd-kit":
        writer.writerow(["task", "agg_label"])
        writer.writerows([row.item, row.label] for row in rows if row.state in _DONE)
        return out.getvalue()
    writer.writerow(["item", "label", "confidence", "labels", "given", "money", "state"])
    for row in rows:
        writer.writerow([
            row.item, "" if row.label is None else row.label, repr(row.confidence),
            row.labels, row.given, repr(round(row.money, 10)), row.state,
        ])  # fmt: skip
    return out.getvalue()
