"""A gate run's decisions out of its journal, as `screener run`'s are: read back in order
(`screener decisions`), followed until the gate stops, as a block list, and its banned
workers' task labels dropped (`export --format crowd-kit --labels`)."""

from __future__ import annotations

import csv
import random
from pathlib import Path

from gate_helpers import serving

from screener.gate_service.client import GateClient
from screener.runs.decisions import DecisionFollower, block_list, run_decisions
from screener.runs.logged import export_kept_labels

CROWD = {"ann": 0.95, "bob": 0.1, "cy": 0.9, "dee": 0.2}


async def test_a_gate_runs_decisions_come_out_as_a_runs_do(tmp_path: Path) -> None:
    db, draw = str(tmp_path / "gate.db"), random.Random(0)
    async with serving(db) as (session, url), GateClient(url) as client:
        for round_ in range(30):
            for worker, accuracy in CROWD.items():
                reply = await client.next(worker, f"{worker}:{round_}")
                if reply["kind"] == "gold":
                    await client.answer(
                        str(reply["gold"]),
                        worker=str(reply["worker"]),
                        reward=float(draw.random() < accuracy),
                    )
        streamed, _ = await client.decisions()
    run_id = session.run_id
    made = run_decisions(db, run_id)
    assert [(d.seq, d.worker, d.decision, d.reason) for d in made] == [
        (d["seq"], d["worker"], d["decision"], d["reason"]) for d in streamed
    ]
    follower = DecisionFollower(db, run_id, poll=0.01)
    assert list(follower) == made and follower.ended is not None  # the gate has stopped
    standing = {d.worker: d.decision for d in block_list(made)}
    assert standing == {"ann": "accepted", "bob": "banned", "cy": "accepted", "dee": "banned"}

    labels = tmp_path / "labels.csv"
    rows = [("task", "worker", "label")] + [
        (f"t{task}", worker, "a") for task in range(5) for worker in [*CROWD, "eve"]
    ]
    with labels.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    kept = export_kept_labels(db, run_id, labels, tmp_path / "kept.csv")
    with (tmp_path / "kept.csv").open(newline="") as handle:
        written = [tuple(row) for row in csv.reader(handle)]
    assert written == [row for row in rows if row[1] not in ("bob", "dee")]
    assert (kept.kept, kept.dropped, kept.banned_workers, kept.unscreened_workers) == (15, 10, 2, 1)
