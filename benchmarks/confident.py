"""Fixed-confidence thresholding: Chernoff (KL) against Hoeffding anytime intervals.

``ConfidentThresholding`` (not from a paper: "who is above my bar, with confidence 1 - delta?")
stops when every worker's anytime interval lies on one side of the bar. Both intervals use the
same union bound (level ``6 delta / (pi^2 n t^2)`` per side after a worker's t-th answer), so
both carry the same guarantee; the KL one is never wider. This measures what that buys in
gold questions, on paired runs (run r of both modes sees the same answer stream).

Instances (Bernoulli answers, delta = 0.05):

- ``task-pool``: the accuracies of ``examples/task-pool/workers.csv`` (0.2 to 0.96), bar 0.75;
- ``lsa-setup-1``: Tao et al. 2019's Setup 1 (0.2 ... 0.8), bar 0.5;
- ``good-crowd``: 45 workers uniform on [0.8, 0.98] and 5 on [0.4, 0.6] (seed 5), bar 0.7.

Usage::

    python benchmarks/confident.py --quick    # 10 paired runs per instance, ~90 CPU seconds
    python benchmarks/confident.py            # 100 paired runs, ~15 CPU minutes
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import machine_info, markdown_table, run_in_processes, write_json
from screener import BernoulliRewards, Decision, StopReason, simulate
from screener.algorithms.thresholding import ConfidentThresholding
from screener.pool import load_pool_csv

__all__ = ["INSTANCES", "main", "run_one"]

DELTA = 0.05
TASK_POOL = Path(__file__).resolve().parents[1] / "examples" / "task-pool" / "workers.csv"
INTERVALS = ("hoeffding", "kl")


def _good_crowd() -> np.ndarray:
    rng = np.random.default_rng(5)
    return np.concatenate([rng.uniform(0.8, 0.98, 45), rng.uniform(0.4, 0.6, 5)])


#: name -> (means, bar)
INSTANCES: dict[str, tuple[np.ndarray, float]] = {
    "task-pool": (np.asarray(load_pool_csv(TASK_POOL).require_accuracies()), 0.75),
    "lsa-setup-1": (np.array([0.2, 0.25, 0.3, 0.35, 0.45, 0.55, 0.65, 0.7, 0.75, 0.8]), 0.5),
    "good-crowd": (_good_crowd(), 0.7),
}


def run_one(task: tuple[str, str, int]) -> dict[str, Any]:
    """One run to the stopping condition: pulls and whether any decision was wrong."""
    name, interval, seed = task
    means, bar = INSTANCES[name]
    algorithm = ConfidentThresholding(means.size, threshold=bar, delta=DELTA, interval=interval)
    result = simulate(algorithm, BernoulliRewards(means, seed=seed), batch=means.size)
    decided_above = {w.arm for w in result.workers if w.decision is Decision.ABOVE}
    wrong = decided_above != {int(i) for i in np.flatnonzero(means >= bar)}
    return {
        "instance": name,
        "interval": interval,
        "seed": seed,
        "pulls": result.total_pulls,
        "wrong": wrong,
        "met": result.stop_reason is StopReason.CONDITION_MET,
    }


def format_report(records: Sequence[dict[str, Any]]) -> str:
    rows = []
    for name, (means, bar) in INSTANCES.items():
        pulls = {
            interval: np.array(
                [r["pulls"] for r in sorted(records, key=lambda r: r["seed"])
                 if r["instance"] == name and r["interval"] == interval]
            )
            for interval in INTERVALS
        }  # fmt: skip
        wrong = {
            i: sum(r["wrong"] for r in records if r["instance"] == name and r["interval"] == i)
            for i in INTERVALS
        }
        ratio = pulls["kl"] / pulls["hoeffding"]
        rows.append([
            name, means.size, f"{bar:g}", pulls["kl"].size,
            f"{pulls['hoeffding'].mean():,.0f}", f"{pulls['kl'].mean():,.0f}",
            f"{np.median(ratio):.2f}x", f"{ratio.min():.2f}x-{ratio.max():.2f}x",
            f"{wrong['hoeffding']}/{wrong['kl']}",
        ])  # fmt: skip
    header = ["instance", "workers", "bar", "runs", "Hoeffding pulls", "KL pulls",
              "KL / Hoeffding (median)", "range", "wrong runs (H/KL)"]  # fmt: skip
    return markdown_table(header, rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 runs per instance")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args(argv)
    runs = 10 if args.quick else 100
    tasks = [(name, i, seed) for name in INSTANCES for i in INTERVALS for seed in range(runs)]
    records, wall = run_in_processes("confident", run_one, tasks, args.processes)
    report = format_report(records)
    mode = "quick" if args.quick else "full"
    path = write_json(f"confident-{mode}", {"machine": machine_info(), "wall": wall,
                                            "records": records})  # fmt: skip
    print(f"ConfidentThresholding, delta = {DELTA}, {runs} paired runs per instance\n")
    print(report)
    print(f"\nwall {wall:.0f} s; results: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
