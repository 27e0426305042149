"""`screener gate --items` and `screener labels` as real processes: a bad items file refused
in one line with nothing written; items registered at start, journaled, not registered twice
on --resume; the final labels of a real run in each format; the requester's loop of the
README (a gate, the stand-in registering its items, `screener labels`)."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from gate_helpers import kinds, start_gate, stop_gate
from test_gate_command import _refused, in_process, screener
from test_gate_items import _work
from test_standin import made_dataset

from screener.gate_service.client import GateClient
from screener.testing.doubles.arrivals import StandInSettings
from screener.testing.doubles.platform import TaskStream

FLAGS = ["--policy", "share", "--gold-every", "2", "--audit-rate", "0", "--confidence", "0.9"]

BAD_FILES = [
    ("items.csv", "name,cap\nt1,3\n", "header is item[,cap][,priority]"),
    ("items.csv", "item,cap\nt1,0\n", "items.csv, line 2: an item's cap must be a whole number"),
    ("items.csv", "item,priority\nt1,high\n", "line 2: an item's priority must be a finite"),
    ("items.csv", "item\nt1\nt2\nt1\n", "line 4: item 't1' is named twice"),
    ("items.csv", "item,cap\n", "items.csv: no items"),
    ("items.jsonl", '{"item": "t1"}\n{"item": "t2", "size": 3}\n', "items.jsonl, line 2"),
    ("items.jsonl", '{"item": "t1"\n', "items.jsonl, line 1 is not JSON"),
    ("missing.csv", None, "no items file at"),
]


@pytest.mark.parametrize(("name", "text", "words"), BAD_FILES)
def test_a_bad_items_file_is_one_line_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str | None, words: str
) -> None:
    monkeypatch.delenv("SCREENER_GATE_TOKEN", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    if text is not None:
        (tmp_path / name).write_text(text)
    code, out, err = in_process(work, "gate", "--items", str(tmp_path / name))
    _refused(work, code, out, err, words)


@pytest.mark.subprocess
def test_a_bad_items_file_is_refused_by_the_real_command(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "items.csv").write_text("item,cap\nt1,-2\n")
    done = screener(work, "gate", "--items", str(tmp_path / "items.csv"), "--confidence", "0.9")
    _refused(work, done.returncode, done.stdout, done.stderr, "cap must be a whole number")
    done = screener(work, "gate", "--confidence", "1.5")
    _refused(work, done.returncode, done.stdout, done.stderr, "confidence must be")


@pytest.mark.subprocess
async def test_items_at_start_and_the_final_labels_of_the_run(tmp_path: Path) -> None:
    (tmp_path / "items.csv").write_text("item,cap,priority\n" + "".join(
        f"t{i},3,{i % 2}\n" for i in range(8)))  # fmt: skip
    process, url = start_gate(tmp_path, "--items", "items.csv", *FLAGS)
    async with GateClient(url) as client:
        for r in range(60):
            await _work(client, f"w{r % 5}", f"r{r}")
        streamed, _ = await client.final_labels()
        status = await client.status()
    code, err = stop_gate(process)
    assert code == 130, err
    assert "8 items registered (8 in all)" in err
    run_id = status["run"]
    last = {entry["item"]: entry for entry in streamed}
    table = _labels(tmp_path, run_id, "csv")
    rows = list(csv.DictReader(io.StringIO(table)))
    assert [row["item"] for row in rows] == [f"t{i}" for i in range(8)]
    for row in rows:
        entry = last.get(row["item"])
        if entry is None or entry["state"] == "reopened":
            assert row["state"] == "open"
            continue
        got = (row["label"], float(row["confidence"]), int(row["labels"]), int(row["given"]),
               row["state"])  # fmt: skip
        fields = ("label", "confidence", "labels", "given", "state")
        assert got == tuple(entry[field] for field in fields)
        assert float(row["money"]) == pytest.approx(entry["money"])
    assert sum(row["state"] != "open" for row in rows) == status["items"]["done"] > 0
    data = json.loads(_labels(tmp_path, run_id, "json"))
    assert data["run"] == run_id
    assert [r["item"] for r in data["labels"]] == [f"t{i}" for i in range(8)]
    crowd = list(csv.reader(io.StringIO(_labels(tmp_path, run_id, "crowd-kit"))))
    done = [[row["item"], row["label"]] for row in rows if row["state"] != "open"]
    assert crowd == [["task", "agg_label"], *done]
    # Resumed with the same file: nothing registered twice, nothing journaled for it.
    process, url = start_gate(tmp_path, "--resume", run_id, "--items", "items.csv")
    code, err = stop_gate(process)
    assert code == 130 and "0 items registered (8 in all)" in err, err
    assert kinds(str(tmp_path / "screener.db"), run_id)["registered"] == 1
    unknown = screener(tmp_path, "labels", "nope")
    lines = unknown.stderr.strip().splitlines()
    assert unknown.returncode == 2 and len(lines) == 1 and "no run 'nope'" in lines[0]


def _labels(folder: Path, run_id: str, layout: str) -> str:
    done = screener(folder, "labels", run_id, "--format", layout)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.subprocess
def test_the_requesters_loop_end_to_end(tmp_path: Path) -> None:
    """The README's loop: a gate, the stand-in registering its items, `screener labels`."""
    data = made_dataset(workers=10, items=40)
    truth = data.gold or {}
    lines = [
        f"{w},{r.item},{r.answer},{truth[r.item]}"
        for w, records in zip(data.workers, data.records, strict=True)
        for r in records
    ]
    (tmp_path / "made.csv").write_text("worker,item,answer,gold\n" + "\n".join(lines) + "\n")
    process, url = start_gate(tmp_path, *FLAGS, "--db", "loop.db")
    try:
        standin = screener(tmp_path, "standin", "made.csv", "--gate", url, "--register-items",
                           "--json")  # fmt: skip
    finally:
        code, err = stop_gate(process)
    assert standin.returncode == 0 and code == 130, standin.stderr + err
    report = json.loads(standin.stdout)
    run_id, items = report["gate"]["run"], report["gate"]["items"]
    done = screener(tmp_path, "labels", run_id, "--db", "loop.db", "-o", "labels.csv")
    assert done.returncode == 0, done.stderr
    assert "collude" in done.stderr  # every export says what it may get wrong
    checked = re.search(r"checked against ([\d,]+) gold settlements", done.stderr)
    assert checked and int(checked[1].replace(",", "")) > 0  # the stand-in names gold items
    rows = list(csv.DictReader((tmp_path / "labels.csv").open()))
    tasks = TaskStream(data, StandInSettings().stream()).recorded  # the items it registered
    assert [row["item"] for row in rows] == sorted(tasks) and items["registered"] == len(tasks)
    assert all(int(row["given"]) <= tasks[row["item"]] for row in rows)
    assert sum(row["state"] != "open" for row in rows) == items["done"] > 0
    right = [row["label"] == truth[row["item"]] for row in rows if row["state"] != "open"]
    assert sum(right) / len(right) > 0.8
