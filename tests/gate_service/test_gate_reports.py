"""`screener report` and `screener runs` on a gate run, as real processes on a real SQLite
file: the gate's standing decisions (its block list), what it served, how it stands (never a
stopping condition, which a gate does not have), and the page refused in one line."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from gate_helpers import events, start_gate, stop_gate
from test_gate_api import drive
from test_gate_command import QUICK_FLAGS, screener

from screener.gate_service.client import GateClient
from screener.journal import EventKind

pytestmark = pytest.mark.subprocess


@pytest.fixture(scope="module")
def gate_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A gate served by `screener gate`, driven by four workers (two good, two spammers) until
    it has decided, then stopped with Ctrl-C: (its folder, the run id)."""
    folder = tmp_path_factory.mktemp("gate-report")
    process, url = start_gate(folder, *QUICK_FLAGS)

    async def crowd() -> str:
        async with GateClient(url) as client:
            await drive(client, 30)
            return str((await client.status())["run"])

    try:
        run_id = asyncio.run(crowd())
    finally:
        stop_gate(process)
    return folder, run_id


def _standing(folder: Path, run_id: str) -> dict[str, str]:
    """The block list the run exports: each decided worker's standing decision."""
    blocks = screener(folder, "export", run_id, "--decisions", "--format", "json")
    assert blocks.returncode == 0, blocks.stderr
    return {row["worker"]: row["decision"] for row in json.loads(blocks.stdout)}


def _asked(folder: Path, run_id: str) -> set[str]:
    requested = events(str(folder / "screener.db"), run_id)
    return {str(e.worker) for e in requested if e.kind is EventKind.REQUESTED}


def test_the_report_shows_the_gates_standing_decisions(gate_run: tuple[Path, str]) -> None:
    folder, run_id = gate_run
    standing = _standing(folder, run_id)
    assert set(standing.values()) == {"banned", "accepted"}  # the cases under test
    done = screener(folder, "report", run_id)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    status = next(line for line in text.splitlines() if line.startswith("status: "))
    assert status.startswith("status: gate stopped (interrupted")
    assert "condition met" not in text.lower() and "CONDITION NOT MET" not in text
    banned = sorted(w for w, d in standing.items() if d == "banned")
    assert re.search(rf"^banned: {', '.join(banned)}$", text, flags=re.MULTILINE)
    rows = re.findall(r"^\s*\d+\s+(\S+)\s+(banned|accepted|undecided)\b", text, re.MULTILINE)
    assert {worker: word for worker, word in rows if word != "undecided"} == standing
    assert {worker for worker, _ in rows} == _asked(folder, run_id)
    banned_n, accepted_n = len(banned), len(standing) - len(banned)
    undecided_n = len(_asked(folder, run_id)) - len(standing)
    counts = f"workers: {banned_n} banned, {accepted_n} accepted, {undecided_n} undecided"
    assert counts in text  # one word per decision, as in the table


def test_the_json_report_carries_the_decisions_and_what_the_gate_served(
    gate_run: tuple[Path, str],
) -> None:
    folder, run_id = gate_run
    done = screener(folder, "report", run_id, "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    standing = _standing(folder, run_id)
    assert sorted(data["banned"]) == sorted(w for w, d in standing.items() if d == "banned")
    assert data["run_id"] == run_id and data["status"].startswith("gate stopped")
    requests = [e for e in events(str(folder / "screener.db"), run_id)
                if e.kind is EventKind.REQUESTED]  # fmt: skip
    assert data["gate"]["requests"] == len(requests)
    made = screener(folder, "decisions", run_id, "--json").stdout.splitlines()
    assert data["gate"]["decisions"] == len(made) >= len(standing)
    assert data["mistakes"]["expected"].startswith("expected ")


def test_runs_lists_a_gate_run_with_its_workers_and_decisions(gate_run: tuple[Path, str]) -> None:
    folder, run_id = gate_run
    listed = screener(folder, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    line = next(run for run in json.loads(listed.stdout) if run["id"] == run_id)
    standing = _standing(folder, run_id)
    asked = _asked(folder, run_id)
    banned = sum(d == "banned" for d in standing.values())
    assert line["n_workers"] == len(asked)
    accepted, undecided = len(standing) - banned, len(asked) - len(standing)
    assert line["decisions"] == {"banned": banned, "accepted": accepted, "undecided": undecided}
    table = screener(folder, "runs").stdout
    row = next(text for text in table.splitlines() if text.startswith(run_id))
    assert f"{banned} banned, {accepted} accepted, {undecided} undecided" in row
    assert re.search(rf"\bgate\s+{len(asked)}\s", row)


def test_a_gate_runs_page_is_refused_in_one_line_writing_nothing(
    gate_run: tuple[Path, str],
) -> None:
    folder, run_id = gate_run
    done = screener(folder, "report", run_id, "--html", "page.html")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "error: a gate run has no HTML page (report it as a table, with --json or --format csv)"
    ]
    assert not (folder / "page.html").exists()
