"""Faithful dataset replay through the real CLI (issue 11): a dataset run's export carries the
real items and answers, in screener's long format and in crowd-kit's, both replay to the same
rewards, crowd-kit fits on them, and `screener invalidate` works on an item."""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import assert_ran

from screener.bank import Scoring, score_answer

#: Real processes (the screener command, a browser, ...): the full suite only.
pytestmark = pytest.mark.subprocess

Rows = list[dict[str, str]]


def screener(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "screener", *args],
        capture_output=True, text=True, timeout=300, cwd=cwd,
    )  # fmt: skip


def ok(*args: str, cwd: Path) -> str:
    done = screener(*args, cwd=cwd)
    if args[0] == "run":
        assert_ran(done.returncode, done.stdout, done.stderr)
    else:
        assert done.returncode == 0, done.stderr
    return done.stdout


def last_run(folder: Path, db: str = "screener.db") -> str:
    return str(json.loads(ok("runs", "--db", db, "--json", cwd=folder))[-1]["id"])


def write(path: Path, header: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def read(path: Path) -> Rows:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def write_dataset(path: Path, seed: int = 0, *, clean: bool = False) -> None:
    """Ten workers answering 12 of 40 items each, right with their accuracy. Unless ``clean``,
    each also answers item i0 twice more (the shared data keeps repeated answers) and some
    answers differ from gold in case only (matched case-insensitively)."""
    rng = np.random.default_rng(seed)
    gold = {f"i{j}": str(rng.choice(["cat", "dog", "bird"])) for j in range(40)}
    rows = []
    for w in range(10):
        accuracy = 0.35 + 0.06 * w
        items = rng.choice(40, size=12, replace=False)
        for j in items if clean else [*items, 0, 0]:
            key = gold[f"i{j}"]
            answer = key if rng.random() < accuracy else "fish"
            if not clean and rng.random() < 0.2:
                answer = answer.title()
            rows.append((f"w{w}", f"i{j}", answer, key))
    write(path, ("worker", "item", "answer", "gold"), rows)


def by_worker(rows: Rows, *columns: str) -> dict[str, list[tuple[str, ...]]]:
    found: defaultdict[str, list[tuple[str, ...]]] = defaultdict(list)
    for row in rows:
        found[row["worker"]].append(tuple(row[c] for c in columns))
    return dict(found)


def replay_file(folder: Path, db: str, *options: str) -> Rows:
    """Replay an exported file, every record once in file order, and export what it got."""
    ok("run", "--oracle", "dataset", "-O", "replacement=false", "-O", "shuffle=false",
       *options, "-a", "uniform-thresholding", "-p", "threshold=0.5", "--budget", "100000",
       "--db", db, "--quiet", cwd=folder)  # fmt: skip
    ok("export", last_run(folder, db), "-o", f"{db}.csv", "--db", db, cwd=folder)
    return read(folder / f"{db}.csv")


@pytest.fixture(scope="module")
def dataset_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A finished dataset run without replacement, and its long export (answers.csv)."""
    folder = tmp_path_factory.mktemp("dataset-run")
    write_dataset(folder / "data.csv")
    ok("run", "--oracle", "dataset", "-O", "path=data.csv", "-O", "replacement=false",
       "-a", "rr", "--k", "1.0", "--seed", "4", "--quiet", cwd=folder)  # fmt: skip
    run = last_run(folder)
    ok("export", run, "-o", "answers.csv", cwd=folder)
    return folder, run


def test_the_export_carries_the_real_items_and_answers(dataset_run: tuple[Path, str]) -> None:
    folder, _ = dataset_run
    data, exported = read(folder / "data.csv"), read(folder / "answers.csv")
    assert exported
    real = Counter((r["worker"], r["item"], r["answer"], r["gold"]) for r in data)
    got = Counter((r["worker"], r["item"], r["answer"], r["gold"]) for r in exported)
    assert got <= real  # every row is an answer a worker gave, repeated ones at most as often
    for row in exported:
        case_insensitive = score_answer(Scoring.CASE_INSENSITIVE, row["gold"], 0, row["answer"])
        assert float(row["score"]) == case_insensitive
    with sqlite3.connect(folder / "screener.db") as conn:
        journaled = conn.execute(
            "SELECT worker, question, response FROM events WHERE kind = 'answered' ORDER BY id"
        ).fetchall()
    assert journaled == [(r["worker"], r["item"], json.dumps(r["answer"])) for r in exported]


def test_both_exports_replay_to_the_same_answers_per_worker(
    dataset_run: tuple[Path, str],
) -> None:
    folder, run = dataset_run
    exported = read(folder / "answers.csv")
    shown = screener("export", run, "-o", "ck.csv", "--format", "crowd-kit", cwd=folder)
    assert shown.returncode == 0 and shown.stdout == ""  # the note is on stderr, data in files
    assert shown.stderr.strip().endswith("their gold to ck.gold.csv")
    labels, gold = read(folder / "ck.csv"), read(folder / "ck.gold.csv")
    assert [(r["task"], r["worker"], r["label"]) for r in labels] == [
        (r["item"], r["worker"], r["answer"]) for r in exported
    ]
    assert {r["task"]: r["true_label"] for r in gold} == {r["item"]: r["gold"] for r in exported}
    assert len(gold) == len({r["item"] for r in exported})

    columns = ("item", "answer", "gold", "score")
    expected = by_worker(exported, *columns)
    assert by_worker(replay_file(folder, "long.db", "-O", "path=answers.csv"), *columns) == expected
    crowd_kit = replay_file(folder, "ck.db", "-O", "path=ck.csv", "-O", "gold=ck.gold.csv")
    assert by_worker(crowd_kit, *columns) == expected


# crowd-kit 1.4 calls DataFrame.eval(inplace=True), which pandas 3.1 deprecates.
@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.eval")
def test_crowd_kit_fits_on_the_export(tmp_path: Path) -> None:
    """crowd-kit compares labels exactly and counts a worker's repeated label for a task once:
    on data without either (lower case, one answer per item, as Zheng_d_Duck) its gold-based
    skills are the workers' accuracies in the export."""
    pd = pytest.importorskip("pandas")
    aggregation = pytest.importorskip(
        "crowdkit.aggregation", reason="crowd-kit is an extra: pip install '.[crowd-kit]'"
    )
    write_dataset(tmp_path / "data.csv", seed=3, clean=True)
    ok("run", "--oracle", "dataset", "-O", "path=data.csv", "-O", "replacement=false",
       "-a", "rr", "--k", "1.0", "--quiet", cwd=tmp_path)  # fmt: skip
    run = last_run(tmp_path)
    ok("export", run, "-o", "answers.csv", cwd=tmp_path)
    ok("export", run, "-o", "fit.csv", "--format", "crowd-kit", cwd=tmp_path)
    answers = pd.read_csv(tmp_path / "fit.csv")
    true_labels = pd.read_csv(tmp_path / "fit.gold.csv").set_index("task")["true_label"]
    majority = aggregation.MajorityVote().fit_predict(answers)
    assert set(majority.index) == set(answers["task"])
    skills = aggregation.GoldMajorityVote().fit(answers, true_labels).skills_
    accuracy = defaultdict(list)
    for row in read(tmp_path / "answers.csv"):
        accuracy[row["worker"]].append(float(row["score"]))
    assert len(set(accuracy)) == 10
    assert {str(w): float(s) for w, s in skills.items()} == pytest.approx(
        {w: float(np.mean(scores)) for w, scores in accuracy.items()}
    )
    weighted = aggregation.MajorityVote().fit_predict(answers, skills=skills)
    assert set(weighted.index) == set(majority.index)


def test_invalidating_an_item_changes_exactly_its_answers(tmp_path: Path) -> None:
    write_dataset(tmp_path / "data.csv", seed=1)
    ok("run", "--oracle", "dataset", "-O", "path=data.csv", "-O", "replacement=false",
       "-a", "rr", "--k", "1.0", "--quiet", cwd=tmp_path)  # fmt: skip
    run = last_run(tmp_path)
    ok("export", run, "-o", "before.csv", cwd=tmp_path)
    before = read(tmp_path / "before.csv")
    asked = Counter(r["item"] for r in before)
    rescored, dropped = (item for item, _ in asked.most_common(2))
    said = ok("invalidate", run, rescored, "--key", "FISH", "--reason", "typo", cwd=tmp_path)
    assert f"its {asked[rescored]} answer(s) are rescored against key 'FISH'" in said
    said = json.loads(ok("invalidate", run, dropped, "--json", cwd=tmp_path))
    assert (said["question"], said["answers"], said["key"]) == (dropped, asked[dropped], None)
    assert isinstance(said["decision_changes"], list)
    written = json.loads(ok("export", run, "-o", "after.csv", "--json", cwd=tmp_path))
    assert written == {"run_id": run, "answers": len(before) - asked[dropped],
                       "path": "after.csv", "gold_path": None}  # fmt: skip
    after = read(tmp_path / "after.csv")
    untouched = [r for r in before if r["item"] not in (rescored, dropped)]
    assert [r for r in after if r["item"] != rescored] == untouched
    changed = [r for r in after if r["item"] == rescored]
    assert [(r["worker"], r["answer"]) for r in changed] == [
        (r["worker"], r["answer"]) for r in before if r["item"] == rescored
    ]
    for row in changed:
        assert row["gold"] == "FISH"
        assert float(row["score"]) == float(row["answer"].lower() == "fish")


def test_what_a_run_without_raw_answers_cannot_do_is_one_line(tmp_path: Path) -> None:
    graded = [(f"w{w}", f"i{j}", "0.5", "0.6", 0.9 - 0.1 * w) for w in range(3) for j in range(8)]
    write(tmp_path / "graded.csv", ("worker", "item", "answer", "gold", "score"), graded)
    ok("run", "--oracle", "dataset", "-O", "path=graded.csv", "-O", "replacement=false",
       "-a", "rr", "--interval", "hoeffding", "--quiet", cwd=tmp_path)  # fmt: skip
    run = last_run(tmp_path)
    for args, message in [
        (("invalidate", run, "i3", "--key", "0.5"), "have no raw answer to rescore"),
        (("export", run, "-o", "x.csv", "--format", "crowd-kit"), "crowd-kit needs labels"),
    ]:
        done = screener(*args, cwd=tmp_path)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert message in done.stderr
    assert "answer(s) are dropped" in ok("invalidate", run, "i3", cwd=tmp_path)
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "x.gold.csv").exists()


def test_with_replacement_items_come_back_and_a_log_replay_gets_every_answer(
    tmp_path: Path,
) -> None:
    write_dataset(tmp_path / "data.csv", seed=2)
    ok("run", "--oracle", "dataset", "-O", "path=data.csv", "-a", "rr", "--k", "1.0",
       "--budget", "600", "--quiet", cwd=tmp_path)  # fmt: skip
    run = last_run(tmp_path)
    ok("export", run, "-o", "answers.csv", cwd=tmp_path)
    exported = read(tmp_path / "answers.csv")
    data = {(r["worker"], r["item"], r["answer"]) for r in read(tmp_path / "data.csv")}
    assert {(r["worker"], r["item"], r["answer"]) for r in exported} <= data
    per_worker = Counter(r["worker"] for r in exported)
    assert max(per_worker.values()) > 14  # more questions than a worker has records
    report = json.loads(ok("replay", run, "--json", cwd=tmp_path))
    assert report["replay"]["total_pulls"] == report["original"]["total_pulls"] == len(exported)


@pytest.mark.skipif(not os.environ.get("SCREENER_DATA"), reason="SCREENER_DATA is not set")
def test_a_shared_dataset_run_exports_its_real_rows(tmp_path: Path) -> None:
    data = Path(os.environ["SCREENER_DATA"]) / "gold_answers" / "Zheng_d_Duck.csv"
    ok("run", "--oracle", "dataset", "-O", f"path={data}", "-O", "replacement=false",
       "-a", "wrr", "--budget", "500", "--quiet", cwd=tmp_path)  # fmt: skip
    run = last_run(tmp_path)
    ok("export", run, "-o", "answers.csv", cwd=tmp_path)
    ok("export", run, "-o", "ck.csv", "--format", "crowd-kit", cwd=tmp_path)
    exported = read(tmp_path / "answers.csv")
    real = {
        (r["worker"], r["item"], r["answer"], r["gold"], float(r["correct"])) for r in read(data)
    }
    assert len(exported) == 500
    assert {
        (r["worker"], r["item"], r["answer"], r["gold"], float(r["score"])) for r in exported
    } <= real
    assert len(read(tmp_path / "ck.csv")) == 500
