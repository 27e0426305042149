"""One truth per number, in every format: a crowd-prior run's table, CSV, JSON and HTML (real
subprocess runs on a real SQLite file) each show every worker's estimate inside its own
interval, and a reason that states the condition its decision rests on."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from test_report_html import screener

from screener.algorithms import Decision
from screener.algorithms.verdicts import decision_word
from screener.stats.confseq import mixture_bounds

#: Real processes (the screener command, a browser, ...): the full suite only.
pytestmark = pytest.mark.subprocess

Q = 0.1  # crowd-prior's default: a ban needs P(below) >= 0.9, an acceptance <= 0.1
BAR = 0.6


@pytest.fixture(scope="module")
def formats(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """Every format's rows as (worker, decision, estimate, lower, upper, reason)."""
    folder = tmp_path_factory.mktemp("formats")
    pool, db, page = folder / "pool.csv", folder / "runs.db", folder / "run.html"
    rows = "".join(f"w{i:02d},{0.45 if i % 5 == 0 else 0.8 + 0.005 * i:.3f}\n" for i in range(40))
    pool.write_text(f"worker,accuracy\n{rows}", encoding="utf-8")
    run = screener("run", str(pool), "-a", "crowd-prior", "-p", f"threshold={BAR}",
                   "--db", str(db), "--json", "--html", str(page))  # fmt: skip
    run_id = json.loads(run.stdout)["run_id"]
    table = screener("report", run_id, "--db", str(db)).stdout
    as_csv = screener("report", run_id, "--db", str(db), "--format", "csv").stdout
    return {
        "json": [_from_json(w) for w in json.loads(run.stdout)["workers"]],
        "csv": [_from_json(row) for row in csv.DictReader(io.StringIO(as_csv))],
        "table": list(_table_rows(table)),
        "html": list(_html_rows(page.read_text(encoding="utf-8"))),
    }


def _number(value: Any) -> float | None:
    return None if value in (None, "", "-") else float(value)


#: The JSON and CSV reports keep the algorithm's word for a decision (below, above), the table
#: and the page show the run's (banned, accepted): rows are compared in the shown words.
_SHOWN = {decision.value: decision_word(decision, {}) for decision in Decision}


def _from_json(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("estimate", "lower", "upper")
    decision = _SHOWN.get(row["decision"], row["decision"])
    return {"worker": row["worker"], "decision": decision, "reason": row["reason"],
            **{key: _number(row[key]) for key in keys}}  # fmt: skip


_ROW = re.compile(
    r"^\s*\d+\s+(?P<worker>\S+)\s+(?P<decision>banned|accepted|undecided)\s+"
    r"(?:(?:banned|accepted)\s+)?"
    r"(?P<estimate>[\d.-]+)\s+\[(?P<lower>[\d.-]+), (?P<upper>[\d.-]+)\]\s+[\d.-]+\s+[\d,]+\s+"
    r"(?P<reason>.+)$"
)


def _table_rows(text: str) -> Iterator[dict[str, Any]]:
    """The table's rows, each reason read from its note when the row shows '[n]'."""
    lines = text.splitlines()
    notes = dict(re.findall(r"^\[(\d+)\] (.+)$", text, flags=re.MULTILINE))
    start = next(i for i, line in enumerate(lines) if line.startswith("rank"))
    for line in lines[start + 1 :]:
        if not line:
            break
        found = _ROW.match(line)
        assert found, line
        row: dict[str, Any] = found.groupdict()
        note = re.fullmatch(r"\[(\d+)\]", row["reason"])
        row["reason"] = notes[note.group(1)] if note else row["reason"]
        yield _from_json(row)


def _html_rows(page: str) -> Iterator[dict[str, Any]]:
    """The rows the page's table and plot are drawn from (its embedded worker data)."""
    found = re.search(r'<script type="application/json" id="worker-data">(.+?)</script>', page)
    assert found
    data = json.loads(found.group(1).replace("<\\/", "</"))
    for i, name in enumerate(data["name"]):
        yield {
            "worker": name, "decision": data["decisions"][data["decision"][i]],
            "estimate": data["estimate"][i], "lower": data["lower"][i],
            "upper": data["upper"][i], "reason": data["reasons"][data["reason"][i]],
        }  # fmt: skip


@pytest.mark.parametrize("kind", ["table", "csv", "json", "html"])
def test_every_estimate_lies_in_its_interval(
    formats: dict[str, list[dict[str, Any]]], kind: str
) -> None:
    rows = formats[kind]
    assert len(rows) == 40
    for row in rows:
        assert row["estimate"] is not None, row
        # The table rounds to 3 decimals, the page to 4: compare at that precision.
        assert row["lower"] - 1e-3 <= row["estimate"] <= row["upper"] + 1e-3, row


@pytest.mark.parametrize("kind", ["table", "csv", "json", "html"])
def test_every_reason_states_the_condition_its_decision_rests_on(
    formats: dict[str, list[dict[str, Any]]], kind: str
) -> None:
    rows = formats[kind]
    assert {row["decision"] for row in rows} >= {"accepted", "banned"}  # the cases under test
    for row in rows:
        reason, decision = row["reason"], row["decision"]
        below = rf"P\(below {BAR:g}\)"
        own = re.match(r"(banned|accepted): its own (\d+) answers \(([\d.]+) right\)", reason)
        if own:  # decided on its own answers, whatever the prior: the interval clears the bar
            low, high = mixture_bounds(float(own[3]), int(own[2]), Q)
            assert (own[1] == decision) and (high < BAR if own[1] == "banned" else low >= BAR)
            assert f"wrong with probability at most {Q:g}" in reason, row
        elif decision == "banned":
            found = re.match(rf"banned: {below} at least ([\d.]+) .*\(needs >= ([\d.]+)\)", reason)
            assert found and float(found[1]) >= float(found[2]) == 1 - Q, row
        elif decision == "accepted":
            found = re.match(rf"accepted: {below} at most ([\d.]+) .*\(needs <= ([\d.]+)\)", reason)
            assert found and float(found[1]) <= float(found[2]) == Q, row
        else:  # the range over the priors clears neither level
            found = re.match(rf"{below} from ([\d.]+) to ([\d.]+) over the crowd priors", reason)
            assert found and float(found[1]) < 1 - Q and float(found[2]) > Q, row


def test_the_formats_agree_worker_by_worker(formats: dict[str, list[dict[str, Any]]]) -> None:
    by_worker = {kind: {row["worker"]: row for row in rows} for kind, rows in formats.items()}
    for worker, row in by_worker["json"].items():
        for kind in ("table", "csv", "html"):
            other = by_worker[kind][worker]
            assert (other["decision"], other["reason"]) == (row["decision"], row["reason"])
            assert other["estimate"] == pytest.approx(row["estimate"], abs=1e-3), kind
