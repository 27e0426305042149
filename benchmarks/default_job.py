"""The default job on the embedded demo (issue 51): spammers banned, good workers banned and
questions per worker over seeded runs, beside the crowd prior's cost mode (the old default),
the fdr settings around the default, and a bound: the Bayes-optimal stopping rule that knows
the demo crowd's 30 accuracies (as its prior, each worker one of them at random), computed
exactly on the answer lattice, at the costs that reach 96.5% and 98.4% of the spammers.

    python -m benchmarks.default_job [--seeds 300]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import screener
from screener.algorithms import create_algorithm
from screener.reports.mistakes import truth_tally
from screener.runs.settings import DEFAULT_ALGORITHM, DEFAULT_JOB
from screener.stats.prior import GridPrior, StoppingCosts, StoppingTable, stopping_table

#: (label, algorithm, parameters): the default first, then what it was chosen over.
CONFIGURATIONS: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("default", DEFAULT_ALGORITHM, dict(DEFAULT_JOB)),
    ("fdr eps=0.075", "fdr-thresholding", {**DEFAULT_JOB, "eps": 0.075}),
    ("fdr eps=0.1", "fdr-thresholding", {**DEFAULT_JOB, "eps": 0.1}),
    ("crowd-prior cost mode (old default)", "crowd-prior",
     {"threshold": 0.6, "false_ban": 30, "missed_bad": 100, "contamination": 0.2, "pilot": 20}),
    ("crowd-prior --error bayes", "crowd-prior", {"threshold": 0.6}),
)  # fmt: skip
#: Lagrange costs (false ban, missed bad) of the bound's two rows, a question costing 1.
BOUND_COSTS = ((150.0, 1600.0), (150.0, 3200.0))
BAR = 0.6
HORIZON = 300


def measured(algorithm: str, params: dict[str, object], seeds: int) -> tuple[float, ...]:
    """(share of spammers banned, good workers banned a run, questions a worker, seconds)."""
    pool = screener.demo_pool()
    assert pool.accuracies is not None
    caught = bad = good_banned = questions = 0
    started = time.perf_counter()
    for seed in range(seeds):
        run = create_algorithm(algorithm, len(pool), {**params, "seed": seed})
        result = screener.simulate(run, screener.BernoulliRewards(pool.accuracies, seed=seed))
        tally = truth_tally(result, pool, "simulated")
        assert tally is not None
        caught, bad = caught + tally.bad_banned, bad + tally.bad
        good_banned += tally.good_banned
        questions += result.total_pulls
    seconds = time.perf_counter() - started
    return caught / bad, good_banned / seeds, questions / seeds / len(pool), seconds


def oracle_bound(false_ban: float, missed_bad: float) -> tuple[float, float, float]:
    """The Bayes-optimal rule under the true crowd, in expectation (exact): (share of
    spammers banned, good workers banned a run, questions a worker)."""
    pool = screener.demo_pool()
    assert pool.accuracies is not None
    accuracies = np.sort(np.asarray(pool.accuracies))
    prior = GridPrior(accuracies, np.full(accuracies.size, 1.0 / accuracies.size))
    table = stopping_table(prior, BAR, StoppingCosts(1.0, false_ban, missed_bad), horizon=HORIZON)
    banned_bad = banned_good = questions = 0.0
    for p in accuracies:
        ban, asked = _paths(table, float(p))
        questions += asked
        if p < BAR:
            banned_bad += ban
        else:
            banned_good += ban
    n_bad = int((accuracies < BAR).sum())
    return banned_bad / n_bad, banned_good, questions / accuracies.size


def _paths(table: StoppingTable, p: float) -> tuple[float, float]:
    """P(banned) and the expected questions of a worker of accuracy p under ``table``:
    the probability of each lattice point reached, pushed forward one answer at a time."""
    reach = np.zeros(HORIZON + 2)  # by successes, at n answers
    reach[0] = 1.0
    banned = asked = 0.0
    for n in range(HORIZON + 1):
        s = np.arange(n + 1)
        action = table.action[s, n - s]
        mass = reach[: n + 1]
        banned += float(mass[action == StoppingTable.BAN].sum())
        going = np.where(action == StoppingTable.CONTINUE, mass, 0.0) if n < HORIZON else 0 * mass
        asked += float(going.sum())
        reach = np.zeros(HORIZON + 2)
        reach[1 : n + 2] += going * p
        reach[: n + 1] += going * (1.0 - p)
    return banned, asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=300)
    args = parser.parse_args()
    print(f"the embedded demo (30 workers, spammers at 0.455 and 0.531, bar {BAR}), "
          f"{args.seeds} seeds\n")  # fmt: skip
    print("| configuration | spammers banned | good banned a run | questions a worker | s |")
    print("|---|--:|--:|--:|--:|")
    for label, algorithm, params in CONFIGURATIONS:
        share, good, per_worker, seconds = measured(algorithm, params, args.seeds)
        print(f"| {label} | {share:.1%} | {good:.3f} | {per_worker:.1f} | {seconds:.1f} |")
    for false_ban, missed_bad in BOUND_COSTS:
        share, good, per_worker = oracle_bound(false_ban, missed_bad)
        label = f"bound: Bayes-optimal knowing the crowd (costs {false_ban:g} / {missed_bad:g})"
        print(f"| {label} | {share:.1%} | {good:.3f} | {per_worker:.1f} | exact |")


if __name__ == "__main__":
    main()
