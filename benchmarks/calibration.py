"""Is the crowd prior's Bayesian promise kept? Claimed against realised wrong decisions.

``crowd-prior`` bans a worker when, under the crowd prior it fits from all answers so far, the
worker is below the bar with posterior probability at least 1 - q (and accepts at most q). Its
promise: the expected share of wrong bans is at most q *when the crowd follows the fitted
prior*. This benchmark measures, per dataset of ``$SCREENER_DATA/gold_answers`` (binary answers;
workers with at least 30 answers, bar 0.6):

- simulated crowds whose accuracies are drawn (with replacement) from the dataset's empirical
  worker accuracies, answers Bernoulli, as many workers as the dataset has: the prior family may
  misfit the real distribution, but nothing else differs from the model;
- the real replays: each worker's own answers without replacement, in seeded orders.

For each: bans per run, the claimed share of wrong bans (the algorithm's own posterior sum,
``expected_wrong_bans`` / bans), the realised share (bans of workers at or above the bar / bans,
pooled over runs), and the same two for acceptances (bad workers accepted / acceptances).

Usage::

    SCREENER_DATA=../shared/data python -m benchmarks.calibration            # ~2 min on 2 cores
    python -m benchmarks.calibration --seeds 5 --datasets EBCC_ACT_SP --methods crowd-prior:q=0.05

Writes ``benchmarks/results/calibration.json``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

from benchmarks.harness import machine_info, markdown_table, run_in_processes, write_json  # noqa: E402
from benchmarks.realdata import capped_rewards, dataset_answers, parse_method, population  # noqa: E402
from screener.algorithms import Decision, create_algorithm  # noqa: E402
from screener.simulation import BernoulliRewards, simulate  # noqa: E402
from screener.simulation.rewards import RewardModel  # noqa: E402

BAR = 0.6
MODES = ("simulated", "replay")
DEFAULT_METHODS = (
    "crowd-prior:q=0.1",  # robust over the Beta hyperparameter region (the default)
    "crowd-prior:q=0.1,robust=0",  # the fitted Beta alone
    "crowd-prior:q=0.1,contamination=0.2",
    "crowd-prior:q=0.1,prior=npmle",
)
#: Datasets with fewer workers of 30+ answers than this are left out (no crowd to fit).
MIN_WORKERS = 10


@dataclass(frozen=True)
class Task:
    dataset: str
    path: str
    mode: str
    method: str
    seed: int


@dataclass(frozen=True)
class Tally:
    """One run's decisions against the truth, and what the algorithm claimed about them."""

    task: Task
    bans: int
    wrong_bans: int
    claimed_wrong_bans: float
    accepts: int
    wrong_accepts: int
    claimed_wrong_accepts: float


def run_task(task: Task) -> Tally:
    workers, records = population(dataset_answers(task.path), "30+")
    truth = np.array([r.mean() for r in records])
    rewards: RewardModel
    if task.mode == "simulated":
        rng = np.random.default_rng(task.seed)
        truth = rng.choice(truth, size=truth.size, replace=True)
        rewards = BernoulliRewards(truth, seed=task.seed)
    else:
        rewards = capped_rewards(workers, records, task.seed, cap=10_000)
    method = parse_method(task.method)
    params = {**method.build_params(BAR, None), "seed": task.seed}
    result = simulate(create_algorithm(method.algorithm, truth.size, params), rewards)
    decision = np.array([w.decision for w in sorted(result.workers, key=lambda w: w.arm)])
    banned, accepted = decision == Decision.BELOW, decision == Decision.ABOVE
    good = truth >= BAR
    return Tally(
        task,
        bans=int(banned.sum()),
        wrong_bans=int((banned & good).sum()),
        claimed_wrong_bans=float(result.extra["expected_wrong_bans"]),
        accepts=int(accepted.sum()),
        wrong_accepts=int((accepted & ~good).sum()),
        claimed_wrong_accepts=float(result.extra["expected_missed_bad"]),
    )


def _share(part: float, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def table(tallies: Sequence[Tally]) -> tuple[str, list[dict[str, Any]]]:
    """One row per (dataset, method, mode), pooled over seeds."""
    rows, data = [], []
    key = lambda t: (t.task.dataset, t.task.method, t.task.mode)  # noqa: E731
    for (dataset, method, mode), group in itertools.groupby(sorted(tallies, key=key), key=key):
        runs = list(group)
        bans = sum(t.bans for t in runs)
        accepts = sum(t.accepts for t in runs)
        row = {
            "dataset": dataset, "method": method, "mode": mode, "runs": len(runs),
            "bans_per_run": bans / len(runs),
            "claimed_wrong_ban_share":
                sum(t.claimed_wrong_bans for t in runs) / bans if bans else None,
            "wrong_ban_share": sum(t.wrong_bans for t in runs) / bans if bans else None,
            "claimed_wrong_accept_share":
                sum(t.claimed_wrong_accepts for t in runs) / accepts if accepts else None,
            "wrong_accept_share": sum(t.wrong_accepts for t in runs) / accepts if accepts else None,
        }  # fmt: skip
        data.append(row)
        rows.append([
            dataset, method.removeprefix("crowd-prior:"), mode, f"{bans / len(runs):.1f}",
            _share(sum(t.claimed_wrong_bans for t in runs), bans),
            _share(sum(t.wrong_bans for t in runs), bans),
            _share(sum(t.claimed_wrong_accepts for t in runs), accepts),
            _share(sum(t.wrong_accepts for t in runs), accepts),
        ])  # fmt: skip
    header = ["dataset", "method", "crowd", "bans/run", "claimed wrong/bans", "wrong/bans",
              "claimed bad/accepts", "bad/accepts"]  # fmt: skip
    return markdown_table(header, rows), data


def summary(data: Sequence[dict[str, Any]], margin: float = 0.05) -> list[str]:
    """Per method and crowd: on how many datasets the realised wrong-ban share stays within
    q + margin (datasets with no ban left out)."""
    lines = []
    key = lambda row: (row["method"], row["mode"])  # noqa: E731
    for (method, mode), group in itertools.groupby(sorted(data, key=key), key=key):
        q = float(dict(parse_method(method).params).get("q", 0.1))
        rated = [row for row in group if row["wrong_ban_share"] is not None]
        kept = [row for row in rated if row["wrong_ban_share"] <= q + margin]
        worst = max(rated, key=lambda row: row["wrong_ban_share"], default=None)
        tail = "" if worst is None else f"; worst {worst['dataset']} {worst['wrong_ban_share']:.1%}"
        lines.append(
            f"- {method}, {mode} crowds: wrong-ban share <= q + {margin:g} = {q + margin:.2f} "
            f"on {len(kept)}/{len(rated)} datasets{tail}"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10, help="runs per dataset, method, crowd")
    parser.add_argument("--datasets", nargs="*", help="file stems to run")
    parser.add_argument("--methods", nargs="*", default=list(DEFAULT_METHODS))
    parser.add_argument("--processes", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--name", default="calibration", help="results/NAME.json to write")
    args = parser.parse_args(argv)
    root = os.environ.get("SCREENER_DATA")
    if not root:
        raise SystemExit("set SCREENER_DATA to the folder of the real datasets (../shared/data)")
    files = sorted(Path(root).glob("gold_answers/*.csv"))
    chosen = [f for f in files if not args.datasets or f.stem in args.datasets]
    usable = [
        f for f in chosen if len(population(dataset_answers(str(f)), "30+")[0]) >= MIN_WORKERS
    ]
    tasks = [
        Task(f.stem, str(f), mode, method, seed)
        for f, mode, method, seed
        in itertools.product(usable, MODES, args.methods, range(args.seeds))
    ]  # fmt: skip
    tallies, wall = run_in_processes("calibration", run_task, tasks, args.processes)
    text, data = table(tallies)
    lines = summary(data)
    print(
        text, *lines, f"\n{len(tasks)} runs on {len(usable)} datasets, {wall:.0f} s wall", sep="\n"
    )
    payload = {"machine": machine_info(), "wall_seconds": wall, "argv": list(argv or sys.argv[1:]),
               "rows": data, "summary": lines}  # fmt: skip
    write_json(args.name, payload)
    return payload


if __name__ == "__main__":
    main()
