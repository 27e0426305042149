"""Is the crowd prior's Bayesian promise kept? Claimed against realised wrong decisions.

``crowd-prior`` bans a worker when, under the crowd prior it fits from all answers so far, the
worker is below the bar with posterior probability at least 1 - q (and accepts at most q). Its
promise: the expected share of wrong bans is at most q *when the crowd follows the fitted
prior*. This benchmark measures, per crowd (a dataset of ``$SCREENER_DATA``, binary or graded,
and a population of its workers: those with at least 30 answers, and all of them, as
``benchmarks.realdata``; at least 10 workers), bar 0.6:

- simulated crowds whose accuracies are drawn (with replacement) from the dataset's empirical
  worker accuracies, answers Bernoulli, as many workers as the dataset has: the prior family may
  misfit the real distribution, but nothing else differs from the model;
- the real replays: each worker's own answers without replacement, in seeded orders.

For each: the bans (pooled over runs), the claimed share of wrong bans (the algorithm's own
posterior sum, ``expected_wrong_bans`` / bans), the realised share (bans of workers at or above
the bar / bans), the same two for acceptances (bad workers accepted / acceptances), and the
prior's fit check: in how many runs it raised the misfit flag, how many bans came before the
flag, in how many runs the two-Beta prior was in force at the end.

The target (issue 34): the realised wrong-ban share at most q + 0.05 on every crowd with at
least 10 bans, or the misfit flagged first (before the crowd's first ban, in every run with
one). The summary lines count both.

Usage::

    SCREENER_DATA=../shared/data python -m benchmarks.calibration            # ~3 min on 2 cores
    python -m benchmarks.calibration --seeds 5 --datasets EBCC_ACT_SP --methods crowd-prior:q=0.05
    python -m benchmarks.calibration --populations all --modes replay        # the issue's crowds

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
from benchmarks.realcrowds import capped_rewards, dataset_answers, datasets, population  # noqa: E402
from benchmarks.realdata import parse_method  # noqa: E402
from screener.algorithms import Decision, create_algorithm  # noqa: E402
from screener.simulation import BernoulliRewards, simulate  # noqa: E402
from screener.simulation.rewards import RewardModel  # noqa: E402

BAR = 0.6
MODES = ("simulated", "replay")
POPULATIONS = ("30+", "all")
#: Crowds with at least this many bans (over all runs) are held to the target.
TARGET_BANS = 10
DEFAULT_METHODS = (
    "crowd-prior:q=0.1",  # robust over the Beta hyperparameter region (the default)
    "crowd-prior:q=0.1,robust=0",  # the fitted Beta alone
    "crowd-prior:q=0.1,contamination=0.2",
    "crowd-prior:q=0.1,prior=npmle",
)
#: Crowds with fewer workers than this are left out (no crowd to fit).
MIN_WORKERS = 10


@dataclass(frozen=True)
class Task:
    dataset: str
    path: str
    population: str
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
    misfit: bool
    bans_before_misfit: int  # all the run's bans when the flag was not raised
    two_beta: bool


def run_task(task: Task) -> Tally:
    workers, records = population(dataset_answers(task.path), task.population)
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
    extra = result.extra
    before = extra.get("bans_before_misfit")
    return Tally(
        task,
        bans=int(banned.sum()),
        wrong_bans=int((banned & good).sum()),
        claimed_wrong_bans=float(extra["expected_wrong_bans"]),
        accepts=int(accepted.sum()),
        wrong_accepts=int((accepted & ~good).sum()),
        claimed_wrong_accepts=float(extra["expected_missed_bad"]),
        misfit=bool(extra.get("prior_misfit", False)),
        bans_before_misfit=int(banned.sum()) if before is None else int(before),
        two_beta=extra.get("prior_family") == "two-beta",
    )


def _share(part: float, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def _ratio(part: float, whole: int) -> float | None:
    return part / whole if whole else None


def _crowd_key(tally: Tally) -> tuple[str, str, str, str]:
    return tally.task.dataset, tally.task.population, tally.task.method, tally.task.mode


def table(tallies: Sequence[Tally]) -> tuple[str, list[dict[str, Any]]]:
    """One row per (dataset, population, method, mode), pooled over seeds."""
    rows, data = [], []
    ordered = sorted(tallies, key=_crowd_key)
    for (dataset, pop, method, mode), group in itertools.groupby(ordered, key=_crowd_key):
        runs = list(group)
        bans, accepts = sum(t.bans for t in runs), sum(t.accepts for t in runs)
        wrong_bans = sum(t.wrong_bans for t in runs)
        flagged = [t for t in runs if t.misfit]
        row = {
            "dataset": dataset, "population": pop, "method": method, "mode": mode,
            "runs": len(runs), "bans": bans, "wrong_bans": wrong_bans,
            "claimed_wrong_ban_share": _ratio(sum(t.claimed_wrong_bans for t in runs), bans),
            "wrong_ban_share": _ratio(wrong_bans, bans),
            "claimed_wrong_accept_share":
                _ratio(sum(t.claimed_wrong_accepts for t in runs), accepts),
            "wrong_accept_share": _ratio(sum(t.wrong_accepts for t in runs), accepts),
            "misfit_runs": len(flagged),
            "bans_before_misfit": sum(t.bans_before_misfit for t in flagged),
            "bans_in_flagged_runs": sum(t.bans for t in flagged),
            "flagged_first": all(t.misfit and t.bans_before_misfit == 0
                                 for t in runs if t.bans),
            "two_beta_runs": sum(t.two_beta for t in runs),
        }  # fmt: skip
        data.append(row)
        rows.append([
            dataset, pop, method.removeprefix("crowd-prior:"), mode, str(bans),
            _share(sum(t.claimed_wrong_bans for t in runs), bans), _share(wrong_bans, bans),
            _share(sum(t.claimed_wrong_accepts for t in runs), accepts),
            _share(sum(t.wrong_accepts for t in runs), accepts),
            f"{len(flagged)}/{len(runs)}",
            f"{row['bans_before_misfit']}/{row['bans_in_flagged_runs']}" if flagged else "-",
            f"{row['two_beta_runs']}/{len(runs)}",
        ])  # fmt: skip
    header = ["dataset", "answers", "method", "crowd", "bans", "claimed wrong/bans",
              "wrong/bans", "claimed bad/accepts", "bad/accepts", "misfit flagged",
              "bans before the flag / in flagged runs", "two-Beta at end"]  # fmt: skip
    return markdown_table(header, rows), data


def summary(data: Sequence[dict[str, Any]], margin: float = 0.05) -> list[str]:
    """Per method, crowd and population: on how many crowds the realised wrong-ban share
    stays within q + margin (crowds with no ban left out), and the target: on every crowd
    with at least TARGET_BANS bans, within q + margin or flagged first."""
    lines = []
    key = lambda row: (row["method"], row["mode"], row["population"])  # noqa: E731
    for (method, mode, pop), group in itertools.groupby(sorted(data, key=key), key=key):
        q = float(dict(parse_method(method).params).get("q", 0.1))
        rated = [row for row in group if row["wrong_ban_share"] is not None]
        kept = [row for row in rated if row["wrong_ban_share"] <= q + margin]
        worst = max(rated, key=lambda row: row["wrong_ban_share"], default=None)
        tail = "" if worst is None else (
            f"; worst {worst['dataset']} {worst['wrong_bans']}/{worst['bans']}")  # fmt: skip
        held = [row for row in rated if row["bans"] >= TARGET_BANS]
        missed = [f"{row['dataset']} {row['wrong_bans']}/{row['bans']}"
                  + (" (flagged first)" if row["flagged_first"] else "")
                  for row in held if row["wrong_ban_share"] > q + margin]  # fmt: skip
        unflagged = [m for m in missed if not m.endswith("(flagged first)")]
        bans, wrong = sum(row["bans"] for row in rated), sum(row["wrong_bans"] for row in rated)
        lines.append(
            f"- {method}, {mode} crowds, {pop} answers: {wrong}/{bans} bans wrong "
            f"({_share(wrong, bans)}); wrong-ban share <= q + {margin:g} = {q + margin:.2f} "
            f"on {len(kept)}/{len(rated)} crowds with bans{tail}; target (every crowd with >= "
            f"{TARGET_BANS} bans within it, or flagged first): "
            f"{'met' if not unflagged else 'NOT met'} on {len(held)} crowds"
            + (f", above: {', '.join(missed)}" if missed else "")
        )
    return lines


def crowds(root: Path, names: Sequence[str] | None, populations: Sequence[str]
           ) -> list[tuple[str, Path, str]]:  # fmt: skip
    """The (dataset, file, population) crowds with at least MIN_WORKERS workers."""
    return [
        (name, path, pop)
        for name, path in datasets(root, names)
        for pop in populations
        if len(population(dataset_answers(str(path)), pop)[0]) >= MIN_WORKERS
    ]


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10, help="runs per crowd, method, mode")
    parser.add_argument("--datasets", nargs="*", help="file stems to run")
    parser.add_argument("--populations", nargs="*", default=list(POPULATIONS), choices=POPULATIONS)
    parser.add_argument("--modes", nargs="*", default=list(MODES), choices=MODES)
    parser.add_argument("--methods", nargs="*", default=list(DEFAULT_METHODS))
    parser.add_argument("--processes", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--name", default="calibration", help="results/NAME.json to write")
    args = parser.parse_args(argv)
    root = os.environ.get("SCREENER_DATA")
    if not root:
        raise SystemExit("set SCREENER_DATA to the folder of the real datasets (../shared/data)")
    chosen = crowds(Path(root), args.datasets, args.populations)
    tasks = [
        Task(name, str(path), pop, mode, method, seed)
        for (name, path, pop), mode, method, seed
        in itertools.product(chosen, args.modes, args.methods, range(args.seeds))
    ]  # fmt: skip
    tallies, wall = run_in_processes("calibration", run_task, tasks, args.processes)
    text, data = table(tallies)
    lines = summary(data)
    print(text, *lines, f"\n{len(tasks)} runs on {len(chosen)} crowds, {wall:.0f} s wall",
          sep="\n")  # fmt: skip
    payload = {"machine": machine_info(), "wall_seconds": wall, "argv": list(argv or sys.argv[1:]),
               "rows": data, "summary": lines}  # fmt: skip
    write_json(args.name, payload)
    return payload


if __name__ == "__main__":
    main()
