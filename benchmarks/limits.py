"""How far can any screening go on each real dataset? An oracle bound for issue 12's targets.

Issue 12 asks, on 80% of the datasets, for a method that (T1) costs less than the best platform
rule at every cost setting while asking at most half that rule's questions, and (T2) asks at
most half the Toloka rule's questions with no more false bans and no more missed bad workers.
This script asks whether ANY per-worker sequential policy can, in the most favourable model
there is: the requester knows the crowd exactly.

Model (stated, not hidden): each worker of the population (30+ answers) has accuracy p_i =
its share correct over all its answers (the benchmark's truth); its gold answers are
Bernoulli(p_i), independent (realdata.py replays the recorded answers without replacement:
close to this while a worker has used few of its answers, and the half-budget regime these
targets are about is at most 15 questions of 30 or more). The prior is the population's
empirical distribution of p_i, known exactly: what an empirical-Bayes method (crowd-prior)
could at best learn from the other workers. Under that prior the Bayes-optimal stopping rule
(``screener.stats.stopping_table``, backward induction on the answer lattice, at most
``--cap`` questions) minimises ``questions x price + false bans x c_ban + missed bad x c_miss``
per worker over EVERY policy that asks one worker's questions one at a time; sweeping the
price (T1) or the two error prices (T2) traces the lowest achievable error at each expected
number of questions, and mixing two policies (a coin per worker) fills in the convex hull.

The rules are run in the same model (``simulate`` with ``BernoulliRewards``, ``--seeds``
runs), so both sides of each comparison see the same answers' distribution.

Reads: per dataset and cost setting, the best rule's questions and cost against the lowest
cost any policy reaches with at most half those questions (T1: ``oracle / rule`` < 1 is
possible at all), and per Toloka configuration whether any policy meets T2. A dataset where
the oracle fails cannot be won by any method in this model.

Usage::

    SCREENER_DATA=../shared/data python -m benchmarks.limits [--bar 0.6|p20] [--seeds 100]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.harness import machine_info, markdown_table, run_in_processes, write_json
from benchmarks.realcrowds import (
    COSTS,
    bar_value,
    cost_key,
    dataset_answers,
    datasets,
    population,
)
from screener.algorithms import Decision, create_algorithm
from screener.simulation import BernoulliRewards, simulate
from screener.stats.prior import GridPrior, StoppingCosts, StoppingTable, stopping_table

__all__ = [
    "Operating",
    "doing_nothing_cost",
    "empirical_prior",
    "evaluate_policy",
    "main",
    "oracle_cost",
    "oracle_points",
    "rule_points",
]

FloatArray = NDArray[np.float64]
RULES = tuple(f"toloka-rule:accept_after={n}" for n in (10, 20, 30)) + tuple(
    f"quiz:quiz_size={q}" for q in (5, 10, 20)
)
#: Question prices swept for T1 (errors priced as the cost setting says).
PRICES = np.geomspace(0.02, 2000.0, 61)
#: Error prices swept for T2 (a question costs 1).
ERROR_PRICES = np.geomspace(0.3, 3e4, 31)


@dataclass(frozen=True)
class Operating:
    """What a policy does per worker on average: questions, false-ban and missed-bad rates."""

    questions: float
    false_ban: float
    missed_bad: float

    def cost(self, good_share: float, c_ban: float, c_miss: float) -> float:
        """Expected cost per worker, as realdata.py scores it."""
        errors = c_ban * self.false_ban * good_share + c_miss * self.missed_bad * (1 - good_share)
        return self.questions + errors


def evaluate_policy(table: StoppingTable, accuracies: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Exact P(ban) and expected questions of each worker under ``table`` (forward pass over
    the answer lattice: the probability of reaching each state, split by its action)."""
    reach = np.ones((accuracies.size, 1))
    p = accuracies[:, None]
    banned = np.zeros(accuracies.size)
    questions = np.zeros(accuracies.size)
    for n in range(table.horizon + 1):
        s = np.arange(n + 1)
        action = table.action[s, n - s]
        banned += reach[:, action == StoppingTable.BAN].sum(axis=1)
        if n == table.horizon:
            break
        going = reach * (action == StoppingTable.CONTINUE)
        questions += going.sum(axis=1)
        reach = np.zeros((accuracies.size, n + 2))
        reach[:, 1:] += going * p
        reach[:, :-1] += going * (1 - p)
    return banned, questions


def empirical_prior(accuracies: FloatArray) -> GridPrior:
    """The crowd's accuracy distribution, known exactly: its workers' accuracies, equally
    weighted (clipped off 0 and 1, where the likelihood has no room)."""
    values, counts = np.unique(np.clip(accuracies, 1e-9, 1 - 1e-9), return_counts=True)
    return GridPrior(values, counts / counts.sum())


def doing_nothing_cost(accuracies: FloatArray, bar: float, c_ban: float, c_miss: float) -> float:
    """The cheaper of the two policies that ask nothing, per worker: accept everyone (a miss
    for each bad worker) or ban everyone (a false ban for each good one)."""
    bad = float((accuracies < bar).mean())
    return min(c_miss * bad, c_ban * (1.0 - bad))


def oracle_cost(accuracies: FloatArray, bar: float, cap: int, c_ban: float, c_miss: float) -> float:
    """The lowest expected cost per worker (a question costs 1) that ANY policy asking one
    worker's questions one at a time reaches, knowing the crowd exactly (the module's model):
    the Bayes-optimal stopping table's expected cost at the start, under the empirical prior.
    Asking nothing is one of the policies it weighs, so it is at most ``doing_nothing_cost``;
    equal means no policy can beat doing nothing, in this model."""
    table = stopping_table(
        empirical_prior(accuracies), bar, StoppingCosts(1.0, c_ban, c_miss), horizon=cap,
        min_answers=0,
    )  # fmt: skip
    return float(table.cost[0, 0])


def oracle_points(
    accuracies: FloatArray, bar: float, cap: int, prices: Sequence[tuple[float, float, float]]
) -> list[Operating]:
    """The Bayes-optimal policy's operating point at each (question, c_ban, c_miss) price,
    under the exact empirical prior of ``accuracies``."""
    prior = empirical_prior(accuracies)
    bad = accuracies < bar
    points = []
    for question, c_ban, c_miss in prices:
        table = stopping_table(
            prior, bar, StoppingCosts(question, c_ban, c_miss), horizon=cap, min_answers=0
        )
        banned, asked = evaluate_policy(table, accuracies)
        points.append(
            Operating(
                float(asked.mean()),
                float(banned[~bad].mean()) if (~bad).any() else 0.0,
                float((1 - banned[bad]).mean()) if bad.any() else 0.0,
            )
        )
    return points


def rule_points(accuracies: FloatArray, bar: float, seeds: int) -> dict[str, Operating]:
    """Each rule configuration's operating point, averaged over ``seeds`` Bernoulli runs."""
    bad = accuracies < bar
    found = {}
    for text in RULES:
        name, _, setting = text.partition(":")
        key, _, value = setting.partition("=")
        questions = false_bans = missed = 0.0
        for seed in range(seeds):
            params = {"threshold": bar, key: int(value), "seed": seed}
            algorithm = create_algorithm(name, accuracies.size, params)
            result = simulate(algorithm, BernoulliRewards(accuracies, seed=seed))
            lines = sorted(result.workers, key=lambda w: w.arm)
            banned = np.array([w.decision is Decision.BELOW for w in lines])
            questions += sum(w.pulls for w in lines) / accuracies.size
            false_bans += banned[~bad].mean() if (~bad).any() else 0.0
            missed += (~banned[bad]).mean() if bad.any() else 0.0
        found[text] = Operating(questions / seeds, false_bans / seeds, missed / seeds)
    return found


def lowest_cost(points: Sequence[Operating], budget: float, cost: Any) -> float:
    """The lowest ``cost(point)`` over mixtures of two points asking at most ``budget``
    questions per worker (cost is linear in the point, so a mixture's is the mix of costs)."""
    q = np.array([p.questions for p in points])
    c = np.array([cost(p) for p in points])
    best = float(c[q <= budget].min()) if (q <= budget).any() else math.inf
    under, over = np.flatnonzero(q <= budget), np.flatnonzero(q > budget)
    for i in under:  # the mix of i and j that spends exactly the budget
        share = (budget - q[i]) / (q[over] - q[i])
        if share.size:
            best = min(best, float((c[i] + share * (c[over] - c[i])).min()))
    return best


def dominates(points: Sequence[Operating], rule: Operating, budget: float) -> bool:
    """Whether a point or a two-point mixture asks at most ``budget`` questions with no more
    false bans and no more missed bad workers than ``rule``."""
    array = np.array([(p.questions, p.false_ban, p.missed_bad) for p in points])
    target = np.array([budget, rule.false_ban, rule.missed_bad]) + 1e-12
    shares = np.linspace(0.0, 1.0, 101)[:, None, None]
    for row in array[array[:, 0] <= target[0]]:  # a mix of two over budget stays over it
        mixed = shares * row + (1 - shares) * array[None, :, :]
        if (mixed <= target).all(axis=2).any():
            return True
    return False


@dataclass(frozen=True)
class Task:
    name: str
    path: str
    bar: str  # "0.6" or "p20", as in realdata.py
    cap: int
    seeds: int


def run_dataset(task: Task) -> dict[str, Any]:
    _, records = population(dataset_answers(task.path), "30+")
    accuracies = np.array([float(np.mean(r)) for r in records])
    if accuracies.size < 2:
        return {"dataset": task.name, "workers": int(accuracies.size)}  # left out, as realdata
    bar = bar_value(task.bar, accuracies)
    good_share = float((accuracies >= bar).mean())
    rules = rule_points(accuracies, bar, task.seeds)
    t1 = {}
    pays = {
        cost_key(b, m): oracle_cost(accuracies, bar, task.cap, b, m)
        < doing_nothing_cost(accuracies, bar, b, m) - 1e-9
        for b, m in COSTS
    }
    for c_ban, c_miss in COSTS:

        def cost(point: Operating, b: float = c_ban, m: float = c_miss) -> float:
            return point.cost(good_share, b, m)

        best_rule = min(rules, key=lambda r: cost(rules[r]))
        points = oracle_points(accuracies, bar, task.cap, [(p, c_ban, c_miss) for p in PRICES])
        rule_cost = cost(rules[best_rule])
        oracle = lowest_cost(points, 0.5 * rules[best_rule].questions, cost)
        t1[cost_key(c_ban, c_miss)] = (best_rule, rule_cost, oracle, oracle / rule_cost)
    sweep = [(1.0, b, m) for b in ERROR_PRICES for m in ERROR_PRICES]
    points = oracle_points(accuracies, bar, task.cap, sweep)
    t2 = {
        name: dominates(points, rules[name], 0.5 * rules[name].questions)
        for name in RULES
        if name.startswith("toloka-rule")
    }
    return {"dataset": task.name, "workers": int(accuracies.size), "bar": bar,
            "bad": int((accuracies < bar).sum()), "rules": {k: vars(v) for k, v in rules.items()},
            "t1": t1, "t2": t2, "pays": pays}  # fmt: skip


def render(rows: Sequence[dict[str, Any]]) -> str:
    keys = [cost_key(b, m) for b, m in COSTS]
    header = ["dataset", "workers", "bad", *[k.replace("ban ", "").replace(" / miss ", "/")
                                              for k in keys], "T1", "T2 N=10/20/30",
              "beats nothing"]  # fmt: skip
    table = []
    for row in sorted(rows, key=lambda r: r["dataset"]):
        ratios = [row["t1"][k][3] for k in keys]
        t2 = "/".join("yes" if row["t2"][name] else "no" for name in sorted(row["t2"],
                      key=lambda n: int(n.rpartition("=")[2])))  # fmt: skip
        pays = f"{sum(row['pays'].values())}/{len(row['pays'])}"
        table.append([row["dataset"], row["workers"], row["bad"],
                      *[f"{r:.2f}" for r in ratios],
                      "possible" if all(r < 1 for r in ratios) else "impossible", t2,
                      pays])  # fmt: skip
    n = len(rows)
    t1_possible = sum(all(row["t1"][k][3] < 1 for k in keys) for row in rows)
    lines = [
        "Oracle / best rule: the lowest expected cost per worker any policy reaches with at "
        "most half the best rule's questions, over the best rule's cost (< 1: T1 possible). "
        "Beats nothing: at how many cost settings any policy is cheaper than the better of "
        "accepting and banning everyone unasked.",
        "",
        markdown_table(header, table),
        "",
        f"T1 possible on {t1_possible}/{n} datasets (issue 12 asks for 80%).",
    ]
    for name in sorted({k for row in rows for k in row["t2"]}, key=lambda s: int(s[-2:])):
        count = sum(row["t2"][name] for row in rows)
        lines.append(f"T2 possible against {name} on {count}/{n} datasets.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bar", choices=("0.6", "p20"), default="0.6", help="as realdata.py")
    parser.add_argument("--seeds", type=int, default=100, help="Bernoulli runs per rule")
    parser.add_argument("--cap", type=int, default=60, help="questions per worker at most")
    parser.add_argument("--datasets", nargs="*", default=None, help="file stems to run")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    data = os.environ.get("SCREENER_DATA")
    if not data:
        raise SystemExit("set SCREENER_DATA to the folder of the real datasets (../shared/data)")
    tasks = [
        Task(name, str(path), args.bar, args.cap, args.seeds)
        for name, path in datasets(Path(data), args.datasets)
    ]
    rows, wall = run_in_processes("limits", run_dataset, tasks, args.processes)
    rows = [row for row in rows if row["workers"] >= 2]
    text = render(rows)
    print(text)
    print(f"\n{len(rows)} datasets, {wall:.0f} s wall on {args.processes} processes")
    payload = {"machine": machine_info(), "argv": list(argv or sys.argv[1:]), "rows": rows}
    write_json("limits", payload)
    return payload


if __name__ == "__main__":
    main()
