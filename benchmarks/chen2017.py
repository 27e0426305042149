"""Reproduction of Figures 1-4 of Chen, Chen, Zhang, Zhou, ICML 2017 (Section 3): AdaptiveTopK.

eps-top-K arm identification, fixed-budget version: n = 1000 Bernoulli arms, eps = 0.01,
delta = 0.01, K in {100, 250, 500}. Metric: failure probability, the share of runs whose
aggregate regret ``(1 / K) (sum of the K best means - sum of the selected means)`` exceeds
eps (the regret of Zhou et al. 2014, averaged over K: "mean total within eps K of the best K").
Algorithms: AdaptiveTopK (``fixed_budget=True``), OptMAI ("optmai") and CLUCB-PAC
("clucb-pac"); an algorithm missing from ``screener.algorithms.registry.ALGORITHMS`` is skipped
with a printed note.

Instances (``benchmarks.instances.topk_instance``), each shuffled by a fixed permutation (so
that lowest-index tie breaks favour no group):

* TWOGROUP (Figure 1): the K best arms at 0.7, the rest at 0.3;
* UNIFORM (Figure 3): mu_i = 1 - i / n, i = 1..n;
* SYNTHETIC-p (Figure 2: p = 0.5, Figure 4: p = 6). The paper's formula is garbled in our copy;
  ours: start from the UNIFORM grid u_i = 1 - i / n, take the boundary c = 1 - (K + 1/2) / n
  (midway between the K-th and (K+1)-th arm) and the half-widths h+ = u_1 - c above and
  h- = c - u_n below it, map ``y_i = c + sign(u_i - c) h |(u_i - c) / h|^p`` (h the half-width
  of u_i's side), then rescale y linearly to span [0, 1]. p > 1 pulls every arm towards the
  boundary, p < 1 pushes it away; p = 1 is UNIFORM rescaled to [0, 1] (the paper: SYNTHETIC-1
  "is identical to UNIFORM"), so Figure 3 is run as UNIFORM only.

Budgets: {10, 20, 30, 40, 50, 60, 80, 100, 150, 200} pulls per arm (the paper does not list
its axis; beyond ~100 pulls per arm every algorithm's failure probability is 0).
AdaptiveTopK and CLUCB-PAC never read their budget except to stop, so one run to the
largest budget records the selection (``result()``: the leaning of each worker) at every grid
budget, its asks cut at each grid budget (a batch never straddles one): exactly what a run
with that budget and those asks selects (tests/benchmarks check it). AdaptiveTopK's rounds are
batches that only end when all their answers are in, so asking 50,000 pulls at a time makes
the same pulls as asking one at a time. CLUCB-PAC is the paper's one-pull-at-a-time
algorithm; it asks n pulls at a time and fills each batch with the constant liar's steps
(its default): on 30 runs of a 200-arm instance that stays within noise of the exact
one-at-a-time run, where ``liar=False`` (a batch = one step's M xor M~, as in our runs before
2026-11-27) makes CLUCB-PAC markedly stronger than the paper's algorithm (BENCHMARKS.md).
OptMAI's schedule depends on the budget: one run per budget, ``simulate`` with batch = n.

Seeds: run r of (instance, K) draws from ``BernoulliRewards(means, seed)`` with ``seed`` a fixed
function of (instance, K, r), the same for every algorithm (common random numbers).

Usage::

    python -m benchmarks.chen2017 --quick     # a small subset, well under a minute
    python -m benchmarks.chen2017             # full (~15-20 minutes on 2 cores)
    python -m benchmarks.chen2017 --speed     # pulls per second of AdaptiveTopK at n = 1000
    python -m benchmarks.chen2017 --show benchmarks/results/chen2017-full.json
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from benchmarks import harness
from benchmarks.harness import Report, markdown_table
from benchmarks.instances import TOPK_INSTANCES, topk_instance
from screener import BernoulliRewards, simulate
from screener.algorithms import Algorithm
from screener.algorithms.registry import ALGORITHMS, accepted_parameters, create_algorithm
from screener.algorithms.worker_result import Decision

__all__ = [
    "FULL",
    "QUICK",
    "Plan",
    "aggregate_regret",
    "format_report",
    "run",
    "tasks",
]

INSTANCES = TOPK_INSTANCES
#: Run once to the largest budget (see the docstring); CLUCB-PAC asks n pulls at a time.
ANYTIME = frozenset({"adaptive-topk", "clucb-pac"})
ASK = 50_000  # pulls per ask for AdaptiveTopK (rounds are batches: same pulls as ask(1))
ALGORITHM_NAMES = ("adaptive-topk", "optmai", "clucb-pac")
FIGURE = {"twogroup": 1, "synthetic-0.5": 2, "uniform": 3, "synthetic-6": 4}
Record = dict[str, Any]


# ------------------------------------------------------------------------------ regret
def aggregate_regret(selected: ArrayLike, means: ArrayLike, k: int) -> float:
    """(1 / K) (sum of the K largest means - sum of the selected arms' means)."""
    mu = np.asarray(means, dtype=np.float64)
    best = float(np.sort(mu)[::-1][:k].sum())
    return (best - float(mu[np.asarray(selected, dtype=np.int64)].sum())) / k


def run_seed(instance: str, k: int, run: int) -> int:
    return harness.seed_of(2017, INSTANCES.index(instance), k, run)


# ------------------------------------------------------------------------------ plan
@dataclass(frozen=True, slots=True)
class Plan:
    """What to run: ``runs`` of AdaptiveTopK, ``other_runs`` of OptMAI (one per budget) and
    ``clucb_runs`` of CLUCB-PAC (its liar fill runs at ~30,000 pulls/s)."""

    mode: str
    instances: tuple[str, ...]
    ks: tuple[int, ...]
    per_arm: tuple[int, ...]
    runs: int
    other_runs: int
    clucb_runs: int
    n: int = 1000
    eps: float = 0.01
    delta: float = 0.01
    processes: int = 2
    resume: bool = False  # keep every run in a file and skip those already there


#: Per-arm budgets: every algorithm's failure probability is 0 from ~100 pulls per arm on.
GRID = (10, 20, 30, 40, 50, 60, 80, 100, 150, 200)
QUICK = Plan("quick", INSTANCES, (100, 250, 500), (20, 40, 60, 100), 10, 2, 2)
FULL = Plan("full", INSTANCES, (100, 250, 500), GRID, runs=200, other_runs=200, clucb_runs=200)


@dataclass(frozen=True, slots=True)
class Task:
    algorithm: str
    instance: str
    k: int
    run: int
    budgets: tuple[int, ...]  # checkpoints (anytime) or the one budget
    n: int
    eps: float
    delta: float


def tasks(plan: Plan, available: Sequence[str] | None = None) -> list[Task]:
    """One task per run (all budgets) for ``ANYTIME``; one per run and budget else."""
    names = [a for a in ALGORITHM_NAMES if available is None or a in available]
    budgets = tuple(b * plan.n for b in plan.per_arm)
    out = []
    for name in names:
        for instance in plan.instances:
            for k in plan.ks:
                if name in ANYTIME:
                    runs = plan.runs if name == "adaptive-topk" else plan.clucb_runs
                    out += [
                        Task(name, instance, k, r, budgets, plan.n, plan.eps, plan.delta)
                        for r in range(runs)
                    ]
                else:
                    out += [
                        Task(name, instance, k, r, (b,), plan.n, plan.eps, plan.delta)
                        for r in range(plan.other_runs)
                        for b in budgets
                    ]
    return sorted(out, key=lambda t: -max(t.budgets))


def build(name: str, task: Task, budget: int) -> Algorithm:
    """The algorithm with whichever of k, eps, delta, budget, fixed_budget it accepts."""
    candidates: dict[str, Any] = {
        "k": task.k,
        "eps": task.eps,
        "delta": task.delta,
        "budget": budget,
        "fixed_budget": True,
    }
    accepted = accepted_parameters(ALGORITHMS[name])
    return create_algorithm(name, task.n, {p: v for p, v in candidates.items() if p in accepted})


def selection(algorithm: Algorithm) -> list[int]:
    """Workers whose leaning in ``result()`` is SELECTED."""
    return [w.arm for w in algorithm.result().workers if w.leaning is Decision.SELECTED]


def _picks(task: Task, rewards: BernoulliRewards) -> list[tuple[int, list[int], int]]:
    """(budget, selection, pulls) at each budget of the task."""
    if task.algorithm in ANYTIME:
        algorithm = build(task.algorithm, task, max(task.budgets))
        size = ASK if task.algorithm == "adaptive-topk" else task.n
        return checkpoints(algorithm, rewards, task.budgets, size)
    algorithm = build(task.algorithm, task, task.budgets[0])
    simulate(algorithm, rewards, batch=task.n)
    return [(task.budgets[0], selection(algorithm), algorithm.n_answered)]


def checkpoints(
    algorithm: Algorithm, rewards: BernoulliRewards, budgets: Sequence[int], size: int
) -> list[tuple[int, list[int], int]]:
    """Asks of up to ``size`` pulls, cut at each budget; (budget, selection, pulls) there."""
    picks: list[tuple[int, list[int], int]] = []
    for budget in budgets:
        while algorithm.n_answered < budget:
            ask = algorithm.ask(min(size, budget - algorithm.n_answered))
            if ask.done:
                break
            algorithm.tell_many(ask.ids, rewards.sample(ask.arms, ask.seqs))
        picks.append((budget, selection(algorithm), algorithm.n_answered))
    return picks


def run_task(task: Task) -> list[Record]:
    means = topk_instance(task.instance, task.n, task.k)
    rewards = BernoulliRewards(means, run_seed(task.instance, task.k, task.run))
    picks, seconds = harness.timed(lambda: _picks(task, rewards))
    seconds /= len(picks)
    records = []
    for budget, chosen, pulls in picks:
        regret = aggregate_regret(chosen, means, task.k)
        records.append(
            {
                "algorithm": task.algorithm,
                "instance": task.instance,
                "k": task.k,
                "run": task.run,
                "budget": budget,
                "pulls": pulls,
                "selected": len(chosen),
                "regret": regret,
                # 1e-12: TWOGROUP's exact ties must not fail on rounding.
                "failed": len(chosen) != task.k or regret > task.eps + 1e-12,
                "seconds": round(seconds, 4),
            }
        )
    return records


def run(plan: Plan, *, progress: bool = True) -> Report:
    """Run every available algorithm's tasks on ``plan.processes`` processes."""
    available = [a for a in ALGORITHM_NAMES if a in ALGORITHMS]
    missing = [a for a in ALGORITHM_NAMES if a not in ALGORITHMS]
    for name in missing:
        print(f"[chen2017] {name!r} is not in the registry yet: skipped", file=sys.stderr)
    batches, seconds = harness.run_in_processes(
        "chen2017", run_task, tasks(plan, available), plan.processes, chunksize=2,
        progress=progress, keep=harness.kept_runs("chen2017", plan),
    )  # fmt: skip
    records: list[Record] = [record for batch in batches for record in batch]
    return harness.new_report(
        "chen2017", plan, seconds, skipped=missing, summary=summarize(records), records=records
    )


def summarize(records: Sequence[Record]) -> list[Record]:
    """Failure probability and mean regret per (instance, K, algorithm, budget)."""
    groups: dict[tuple[str, int, str, int], list[Record]] = defaultdict(list)
    for r in records:
        groups[(r["instance"], r["k"], r["algorithm"], r["budget"])].append(r)
    return [
        {
            "instance": instance,
            "k": k,
            "algorithm": name,
            "budget": budget,
            "runs": len(rows),
            "failure": float(np.mean([r["failed"] for r in rows])),
            "mean_regret": float(np.mean([r["regret"] for r in rows])),
        }
        for (instance, k, name, budget), rows in sorted(
            groups.items(), key=lambda item: (INSTANCES.index(item[0][0]), *item[0][1:])
        )
    ]


# ------------------------------------------------------------------------------ report
def format_report(report: Report) -> str:
    """One table per instance (rows: K and budget; cells: failure probability); claims."""
    plan = report["plan"]
    rows = report["summary"]
    cell = {(r["instance"], r["k"], r["algorithm"], r["budget"]): r for r in rows}
    names = [a for a in ALGORITHM_NAMES if any(r["algorithm"] == a for r in rows)]
    parts = [
        f"Chen et al. 2017, Figures 1-4 ({plan['mode']}): n = {plan['n']}, eps = {plan['eps']}, "
        f"delta = {plan['delta']}; runs per budget: AdaptiveTopK {plan['runs']}, OptMAI "
        f"{plan['other_runs']}, CLUCB-PAC {plan.get('clucb_runs', plan['other_runs'])} "
        f"(the paper: 200); wall time {report['seconds']:.0f} s "
        f"on {plan['processes']} processes. Cells: failure probability (regret > eps), "
        "mean regret in brackets.",
    ]
    if report.get("skipped"):
        parts.append(f"Skipped (not in the registry): {', '.join(report['skipped'])}.")
    parts.append("")
    for instance in INSTANCES:
        keys = sorted({(r["k"], r["budget"]) for r in rows if r["instance"] == instance})
        if not keys:
            continue
        table = []
        for k, budget in keys:
            line: list[object] = [k, f"{budget:,}"]
            for name in names:
                r = cell.get((instance, k, name, budget))
                line.append("-" if r is None else f"{r['failure']:.2f} ({r['mean_regret']:.4f})")
            table.append(line)
        parts += [
            f"Figure {FIGURE[instance]}: {instance.upper()}",
            "",
            markdown_table(["K", "budget", *names], table),
            "",
        ]
    parts += ["Paper's claims beside ours:", "", markdown_table(*_claims(rows, names)), ""]
    return "\n".join(parts).rstrip() + "\n"


def _compare(
    rows: Sequence[Record], other: str, ks: Sequence[int] | None = None, instance: str = ""
) -> str:
    """Cells (instance, K, budget) where AdaptiveTopK's failure is lower / equal / higher."""
    rows = [r for r in rows if not instance or r["instance"] == instance]
    mine = {(r["instance"], r["k"], r["budget"]): r["failure"] for r in rows
            if r["algorithm"] == "adaptive-topk"}  # fmt: skip
    theirs = {(r["instance"], r["k"], r["budget"]): r["failure"] for r in rows
              if r["algorithm"] == other}  # fmt: skip
    shared = [key for key in mine if key in theirs and (ks is None or key[1] in ks)]
    if not shared:
        return f"{other} not run"
    better = sum(mine[key] < theirs[key] for key in shared)
    tied = sum(mine[key] == theirs[key] for key in shared)
    worse = len(shared) - better - tied
    return f"lower in {better}, tied in {tied}, higher in {worse} of {len(shared)} cells"


def _claims(rows: Sequence[Record], names: Sequence[str]) -> tuple[list[str], list[list[object]]]:
    out: list[list[object]] = [
        ["AdaptiveTopK beats CLUCB-PAC", "almost everywhere", _compare(rows, "clucb-pac")],
        ["AdaptiveTopK beats OptMAI for large K", "K = 500 (large K)",
         _compare(rows, "optmai", (500,))],
        ["OptMAI best for small K (ours: AdaptiveTopK vs OptMAI)", "most datasets at K = 100",
         _compare(rows, "optmai", (100,))],
    ]  # fmt: skip
    two = [r for r in rows if r["instance"] == "twogroup" and r["algorithm"] == "adaptive-topk"]
    if two:
        by_k: dict[int, list[Record]] = defaultdict(list)
        for r in two:
            by_k[r["k"]].append(r)
        first = []
        for k, group in sorted(by_k.items()):
            zero = [r["budget"] for r in sorted(group, key=lambda r: r["budget"])
                    if r["failure"] == 0.0]  # fmt: skip
            first.append(f"K = {k}: {f'{zero[0]:,}' if zero else 'never'}")
        others = [n for n in names if n != "adaptive-topk"]
        out.append(
            [
                "TWOGROUP: AdaptiveTopK's advantage is large",
                "large, for all K (Figure 1)",
                "AdaptiveTopK reaches failure 0 at budget "
                + "; ".join(first)
                + "".join(f"; vs {n}: {_compare(rows, n, instance='twogroup')}" for n in others)
                + ("" if others else "; OptMAI / CLUCB-PAC not run"),
            ]
        )
    return ["claim", "paper", "ours"], out


# ------------------------------------------------------------------------------ speed
def speed(n: int = 1000, k: int = 250, per_arm: int = 400, repeat: int = 3) -> str:
    """Pulls per CPU second of AdaptiveTopK (fixed budget) at n workers, UNIFORM."""
    params = {"k": k, "eps": 0.01, "delta": 0.01, "fixed_budget": True, "budget": per_arm * n}

    def adaptive() -> Algorithm:
        return create_algorithm("adaptive-topk", n, params)

    cases = [(f"AdaptiveTopK, n = {n}, K = {k}, batch = {batch:,}", adaptive, batch)
             for batch in (n, ASK)]  # fmt: skip
    return harness.speed_table(cases, topk_instance("uniform", n, k), repeat)


# ------------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    return harness.main(
        argv, __doc__, (QUICK, FULL), run, format_report, quick_help="small subset, under a minute",
        speed=speed,
    )  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
