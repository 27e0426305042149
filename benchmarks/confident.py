"""Fixed-confidence thresholding: the confidence sequences of ``ConfidentThresholding`` compared.

``ConfidentThresholding`` (not from a paper: "who is above my bar, with confidence 1 - delta?")
stops when every worker's anytime interval lies on one side of the bar. Four interval families
at the same delta (each worker's share ``delta / n``): ``hoeffding`` and ``kl`` (a union bound
over each worker's count, level ``6 delta / (pi^2 n t^2)`` per end), ``mixture`` (the Beta
mixture of Howard et al. 2021) and ``betting`` (Waudby-Smith & Ramdas 2024, with a mixture
backstop). This measures what each costs in gold questions, on paired runs (run r of every
family sees the same answer stream), all with the same schedule.

Instances (delta = 0.05):

- ``task-pool``: the accuracies of ``examples/task-pool/workers.csv`` (0.2 to 0.96), bar 0.75;
- ``lsa-setup-1``: Tao et al. 2019's Setup 1 (0.2 ... 0.8), bar 0.5;
- ``good-crowd``: 45 workers uniform on [0.8, 0.98] and 5 on [0.4, 0.6] (seed 5), bar 0.7.

Answers are 0/1 (``--rewards bernoulli``, the instances of BENCHMARKS.md) or graded
(``--rewards beta``: Beta-distributed scores with those means).

Usage::

    python -m benchmarks.confident --quick    # 5 paired runs per instance
    python -m benchmarks.confident            # 100 paired runs
    python -m benchmarks.confident --quick --schedule evidence --rewards beta
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness import machine_info, markdown_table, run_in_processes, write_json
from benchmarks.instances import threshold_setup
from screener import BernoulliRewards, BetaRewards, Decision, StopReason, simulate
from screener.algorithms.thresholding import (
    ConfidentInterval,
    ConfidentSchedule,
    ConfidentThresholding,
)
from screener.crowd import load_pool_csv

__all__ = ["INSTANCES", "INTERVALS", "main", "run_one"]

DELTA = 0.05
TASK_POOL = Path(__file__).resolve().parents[1] / "examples" / "task-pool" / "workers.csv"
INTERVALS: tuple[ConfidentInterval, ...] = ("hoeffding", "kl", "mixture", "betting")
#: The new families, each compared with the union-bound ones.
NEW: tuple[ConfidentInterval, ...] = ("mixture", "betting")
BASELINES: tuple[ConfidentInterval, ...] = ("hoeffding", "kl")


def _good_crowd() -> np.ndarray:
    rng = np.random.default_rng(5)
    return np.concatenate([rng.uniform(0.8, 0.98, 45), rng.uniform(0.4, 0.6, 5)])


#: name -> (means, bar)
INSTANCES: dict[str, tuple[np.ndarray, float]] = {
    "task-pool": (np.asarray(load_pool_csv(TASK_POOL).require_accuracies()), 0.75),
    "lsa-setup-1": (threshold_setup(1), 0.5),
    "good-crowd": (_good_crowd(), 0.7),
}


def run_one(task: tuple[str, ConfidentInterval, ConfidentSchedule, str, int]) -> dict[str, Any]:
    """One run to the stopping condition: pulls and whether any decision was wrong."""
    name, interval, schedule, rewards, seed = task
    means, bar = INSTANCES[name]
    algorithm = ConfidentThresholding(
        means.size, threshold=bar, delta=DELTA, interval=interval, schedule=schedule
    )
    model = BernoulliRewards(means, seed=seed) if rewards == "bernoulli" else BetaRewards(
        means, seed=seed
    )  # fmt: skip
    result = simulate(algorithm, model, batch=means.size)
    decided_above = {w.arm for w in result.workers if w.decision is Decision.ABOVE}
    wrong = decided_above != {int(i) for i in np.flatnonzero(means >= bar)}
    return {
        "instance": name,
        "interval": interval,
        "schedule": schedule,
        "rewards": rewards,
        "seed": seed,
        "pulls": result.total_pulls,
        "wrong": wrong,
        "met": result.stop_reason is StopReason.CONDITION_MET,
    }


def _pulls(records: Sequence[dict[str, Any]], name: str, interval: str) -> np.ndarray:
    chosen = [r for r in records if r["instance"] == name and r["interval"] == interval]
    return np.array([r["pulls"] for r in sorted(chosen, key=lambda r: r["seed"])])


def format_report(records: Sequence[dict[str, Any]]) -> str:
    rows = []
    for name, (means, bar) in INSTANCES.items():
        pulls = {interval: _pulls(records, name, interval) for interval in INTERVALS}
        wrong = [
            sum(r["wrong"] for r in records if r["instance"] == name and r["interval"] == i)
            for i in INTERVALS
        ]
        ratios = [
            f"{np.median(pulls[new] / pulls[old]):.2f}x"
            for new in NEW
            for old in BASELINES
        ]  # fmt: skip
        rows.append([
            name, means.size, f"{bar:g}", pulls["kl"].size,
            *(f"{pulls[i].mean():,.0f}" for i in INTERVALS), *ratios,
            "/".join(str(w) for w in wrong),
        ])  # fmt: skip
    header = ["instance", "workers", "bar", "runs",
              *(f"{i} pulls" for i in INTERVALS),
              *(f"{new} / {old}" for new in NEW for old in BASELINES),
              "wrong runs (" + "/".join(INTERVALS) + ")"]  # fmt: skip
    return markdown_table(header, rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 runs per instance")
    parser.add_argument("--runs", type=int, default=None, help="paired runs per instance")
    parser.add_argument("--schedule", choices=("settle", "evidence"), default="settle")
    parser.add_argument("--rewards", choices=("bernoulli", "beta"), default="bernoulli")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args(argv)
    runs = args.runs if args.runs is not None else (5 if args.quick else 100)
    schedule: ConfidentSchedule = args.schedule
    tasks = [
        (name, interval, schedule, args.rewards, seed)
        for name in INSTANCES
        for interval in INTERVALS
        for seed in range(runs)
    ]
    records, wall = run_in_processes("confident", run_one, tasks, args.processes)
    report = format_report(records)
    mode = "quick" if args.quick else "full"
    path = write_json(f"confident-{mode}", {"machine": machine_info(), "wall": wall,
                                            "records": records})  # fmt: skip
    print(
        f"ConfidentThresholding, delta = {DELTA}, {runs} paired runs per instance, "
        f"schedule {args.schedule}, {args.rewards} answers (ratios: median of paired runs)\n"
    )
    print(report)
    print(f"\nwall {wall:.0f} s; results: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
