"""Write the example files: a simulated pool and a small task pool with its run file.

    python examples/make_examples.py

- ``pool30.csv``: 30 simulated workers, 2 of them spammers (low accuracy), for
  ``screener run examples/pool30.csv``.
- ``task-pool/``: 10 annotators (``workers.csv``, with the accuracy the simulation gives each),
  a bank of 300 gold questions of four kinds of scoring (``questions.csv``, and the same bank
  as ``questions.json``) and ``run.toml``, which asks "who is above a 75% accuracy bar?" with
  a delta guarantee: ``screener run --config examples/task-pool/run.toml``.

The output is deterministic (fixed seeds), so the committed files are what this script writes.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from screener import synthetic_pool

HERE = Path(__file__).resolve().parent
TASK_POOL = HERE / "task-pool"

#: Simulated accuracies of the task pool's annotators: four clearly above the 0.75 bar, two
#: close to it (the bank may run out before they are decided), four clearly below.
ANNOTATORS = {
    "ana": 0.96, "bo": 0.93, "chen": 0.91, "dee": 0.88, "eli": 0.79,
    "fay": 0.72, "gus": 0.6, "hal": 0.55, "ivo": 0.5, "jo": 0.2,
}  # fmt: skip
SENTIMENT = ("positive", "negative", "neutral")
REVIEWS = (
    ("Arrived broken and support never answered.", "negative"),
    ("Does exactly what it says, happy with it.", "positive"),
    ("It is a phone case. It holds the phone.", "neutral"),
    ("Best purchase this year, my kids love it!", "positive"),
    ("Stopped working after two days.", "negative"),
    ("Delivered on Tuesday.", "neutral"),
)


def write_pool30() -> None:
    pool = synthetic_pool(30, 2, seed=7)
    rows = zip(pool.workers, pool.require_accuracies(), strict=True)
    _write_csv(HERE / "pool30.csv", ["worker", "accuracy"], rows)


def gold_questions(count: int = 300, seed: int = 3) -> list[dict[str, object]]:
    """``count`` questions cycling through the four scoring rules, with seeded contents."""
    rng = np.random.default_rng(seed)
    questions: list[dict[str, object]] = []
    for index in range(count):
        kind = ("numeric", "case-insensitive", "graded", "exact")[index % 4]
        qid = f"q{index + 1:03d}"
        if kind == "numeric":
            a, b = (int(v) for v in rng.integers(10, 99, size=2))
            questions.append(_question(qid, f"What is {a} + {b}?", a + b, "numeric", 0))
        elif kind == "case-insensitive":
            text, label = REVIEWS[int(rng.integers(len(REVIEWS)))]
            payload = f"Sentiment of: {text} ({'/'.join(SENTIMENT)})"
            questions.append(_question(qid, payload, label, "case-insensitive", ""))
        elif kind == "graded":
            stars = int(rng.integers(1, 6))
            payload = f"How many stars (1-5) would this review give? {REVIEWS[stars % 6][0]}"
            # Score 1 - |answer - key| / 4: one star off still earns 0.75.
            questions.append(_question(qid, payload, stars, "graded", 4))
        else:
            code = "".join(rng.choice(list("ABCDEFGHJKLMNPQRSTUVWXYZ23456789"), size=6))
            questions.append(_question(qid, f"Type this code exactly: {code}", code, "exact", ""))
    return questions


def _question(
    qid: str, payload: str, key: object, scoring: str, tolerance: object
) -> dict[str, object]:
    return {"id": qid, "payload": payload, "key": key, "scoring": scoring, "tolerance": tolerance}


RUN_FILE = """\
# Who among these annotators answers at least 75% of gold questions right?
# screener run --config examples/task-pool/run.toml
workers = "workers.csv"        # worker,accuracy (the accuracy drives the simulation only)
questions = "questions.csv"    # id,payload,key,scoring,tolerance; never asked twice per worker
algorithm = "confident-thresholding"
seed = 11

[params]
threshold = 0.75               # the accuracy bar
delta = 0.05                   # every decision is right with probability >= 95%

[run]
concurrency = 8
"""


def write_task_pool() -> None:
    TASK_POOL.mkdir(exist_ok=True)
    _write_csv(TASK_POOL / "workers.csv", ["worker", "accuracy"], ANNOTATORS.items())
    questions = gold_questions()
    columns = ["id", "payload", "key", "scoring", "tolerance"]
    _write_csv(TASK_POOL / "questions.csv", columns, ([q[c] for c in columns] for q in questions))
    json_bank = [{k: v for k, v in q.items() if v != ""} for q in questions]
    text = json.dumps(json_bank, indent=1, ensure_ascii=False) + "\n"
    (TASK_POOL / "questions.json").write_text(text, encoding="utf-8")
    (TASK_POOL / "run.toml").write_text(RUN_FILE, encoding="utf-8")


def _write_csv(path: Path, header: list[str], rows: Iterable[Iterable[object]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


if __name__ == "__main__":
    write_pool30()
    write_task_pool()
