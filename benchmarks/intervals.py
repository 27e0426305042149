"""The default intervals of the outlier algorithms against the papers' (issue 19, item 1).

RR, WRR, IB and GOLD default to ``interval="mixture"``: each worker's Beta-mixture confidence
sequence at ``delta / n`` (for GOLD its data-free radius), and for the k-sigma rule theta's
interval the range of ``mean + k std`` over the workers' box (see ``KSigmaAlgorithm``). This
measures what that costs in pulls beside the paper's Agresti-Coull heuristic and Hoeffding
bounds, with the error rate of each, on paired runs (run r of every interval sees the same
answers):

* k-sigma: ``benchmarks.instances.ksigma_instance(n, k, j)``, the Zhuang et al. 2017
  reproduction's instances, delta = 0.1, n answers per ask (as ``benchmarks.zhuang2017``);
  correct = the exact outlier set. IB runs once per instance, capped at ``Plan.ib_cap`` pulls
  (its LUCB stage can need millions to separate two near-equal normal arms); Hoeffding runs
  only where ``Plan.hoeffding_ns`` says (about 10x the pulls; not in the default plans).
  Two candidates measured but not chosen can run beside them (``Plan.candidates``; RR only
  in the table of candidates): ``kl-union``, per-worker KL intervals with a union
  bound over the worker's counts (``6 delta / (pi^2 n t^2)`` per count, two-sided) and theta's
  box range; ``mixture+mcdiarmid``, the workers' mixture sequences at ``delta / (n + 2)`` and
  theta's McDiarmid interval at ``6 delta / (pi^2 (n + 2) T^2)`` per end (valid for RR's fixed
  counts only).
* GOLD: the Ban & He 2020 reproduction's paper-setup instances
  (``benchmarks.instances.gold_instance(..., boundary=True)``, inclusive GOLD, rho = 0.9,
  delta = 0.1); correct = the exact outlier set.
* theta's interval on its own: its half-width on each k-sigma instance with every worker at
  the same count, for the box range, the Lipschitz bound ``mean(r) + k rms(r)`` on the same
  box, McDiarmid's and the delta method's (Agresti-Coull).

Usage::

    python -m benchmarks.intervals --quick    # about a minute
    python -m benchmarks.intervals            # the tables of BENCHMARKS.md (~10 min, 1 core)
    python -m benchmarks.intervals --show benchmarks/results/intervals-full.json
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.harness import machine_info, markdown_table, run_in_processes, write_json
from benchmarks.instances import gold_instance, ksigma_instance
from screener import BernoulliRewards, StopReason, simulate
from screener.algorithms import IteratedBestArm, RoundRobin, WeightedRoundRobin
from screener.algorithms.ksigma import GOLD, KSigmaAlgorithm
from screener.simulation import ksigma_outliers
from screener.stats import (
    agresti_coull_radius,
    delta_method_threshold_radius,
    kl_bounds,
    ksigma_bounded_threshold_radius,
    ksigma_lk,
    ksigma_threshold_bounds,
    mixture_bounds,
    normal_quantile,
    round_level,
)

__all__ = ["FULL", "QUICK", "Plan", "format_report", "main", "run"]

FloatArray = NDArray[np.float64]
Record = dict[str, Any]
DELTA = 0.1
INTERVALS = ("mixture", "agresti-coull", "hoeffding")
CANDIDATES = ("kl-union", "mixture+mcdiarmid")


# ------------------------------------------------------------------ the two candidates
class _KLUnion:
    """Per-worker KL intervals, union over each worker's counts; theta's box range."""

    def interval_level(self: Any, total_pulls: int) -> float:
        return float(self.delta / self.n_arms)

    def _worker_bounds(self: Any, total_pulls: int) -> tuple[FloatArray, FloatArray]:
        counts = self.stats.count.astype(np.float64)
        sums = np.clip((self.stats.total - self.lower * counts) / self.width, 0.0, counts)
        with np.errstate(divide="ignore", invalid="ignore"):
            means = np.where(counts > 0, sums / np.maximum(counts, 1.0), 0.5)
            # Two-sided 6 (delta / n) / (pi^2 t^2) at count t: per end half of it.
            budget = np.log(math.pi**2 * self.n_arms * counts**2 / (3.0 * self.delta))
        low, high = kl_bounds(means, counts, np.where(counts > 0, budget, 0.0))
        return self.lower + self.width * low, self.lower + self.width * high


class _MixtureMcDiarmid:
    """Workers' mixture sequences at delta / (n + 2); theta's McDiarmid interval at
    ``round_level(delta, n + 1, T)`` per end: n + 2 shares of delta (RR's fixed counts)."""

    def interval_level(self: Any, total_pulls: int) -> float:
        return float(self.delta / (self.n_arms + 2))

    def _threshold_bounds(self: Any, total_pulls: int, sampled: Any) -> tuple[float, float]:
        level = round_level(self.delta, self.n_arms + 1, total_pulls)
        counts = self.stats.count[sampled]
        radius = ksigma_bounded_threshold_radius(counts, level, self.lk, self.width)
        return self.theta - radius, self.theta + radius


class KLUnionRR(_KLUnion, RoundRobin):
    """RR with the KL union-bound intervals: a valid candidate measured beside the default."""


class KLUnionWRR(_KLUnion, WeightedRoundRobin):
    """WRR with the KL union-bound intervals: a valid candidate measured beside the default."""


class MixtureMcDiarmidRR(_MixtureMcDiarmid, RoundRobin):
    """RR with mixture workers and theta's McDiarmid interval: a valid candidate measured."""


# --------------------------------------------------------------------------------- plan
@dataclass(frozen=True, slots=True)
class Plan:
    mode: str
    ns: tuple[int, ...]
    ks: tuple[float, ...]
    instances: int
    runs: int
    ib_ns: tuple[int, ...]
    gold_ns: tuple[int, ...]
    gold_eps: tuple[float, ...]
    gold_kinds: tuple[str, ...]
    gold_runs: int
    #: Interval options run on every instance (Hoeffding needs ~10x the pulls: its own ns).
    intervals: tuple[str, ...] = ("mixture", "agresti-coull")
    hoeffding_ns: tuple[int, ...] = ()
    candidates: bool = True
    cap: int = 20_000_000
    #: IB's LUCB stage can take millions of pulls to separate two near-equal normal arms
    #: (the paper capped it too): capped runs are counted in the table.
    ib_cap: int = 200_000
    processes: int = 1
    #: Answers per worker at which theta's half-widths are compared.
    theta_count: int = 1000


QUICK = Plan(
    "quick", (20,), (2.0,), 2, 1, (20,), (20,), (5.0,), ("upper",), 1,
    candidates=False, ib_cap=100_000,
)  # fmt: skip
#: About 10 minutes on one core (2026-11-23, a shared 2-vCPU machine).
FULL = Plan(
    "full", (20, 50), (2.0, 3.0), 3, 2, (20,), (20,), (2.5, 5.0), ("upper", "intermediate"), 2,
    candidates=False, ib_cap=100_000,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Task:
    family: str  # "ksigma" or "gold"
    algorithm: str
    interval: str
    n: int
    k: float  # eps for GOLD
    instance: int  # 0 for GOLD
    kind: str  # "" for k-sigma
    run: int
    cap: int


def _build(task: Task) -> tuple[Any, FloatArray, set[int]]:
    if task.family == "gold":
        inst = gold_instance(task.n, task.k, task.kind, 0.9, boundary=True)
        gold = GOLD(
            task.n, eps=task.k, rho=0.9, delta=DELTA, interval=task.interval,  # type: ignore[arg-type]
            inclusive=True, budget=task.cap,
        )  # fmt: skip
        return gold, inst.means, set(inst.outliers)
    means = ksigma_instance(task.n, task.k, task.instance)
    truth = set(ksigma_outliers(means, task.k))
    params: dict[str, Any] = {"k": task.k, "delta": DELTA, "budget": task.cap}
    classes: dict[tuple[str, str], type[KSigmaAlgorithm]] = {
        ("rr", "kl-union"): KLUnionRR,
        ("wrr", "kl-union"): KLUnionWRR,
        ("rr", "mixture+mcdiarmid"): MixtureMcDiarmidRR,
    }
    special = classes.get((task.algorithm, task.interval))
    if special is not None:
        return special(task.n, **params), means, truth
    plain: dict[str, type[KSigmaAlgorithm]] = {
        "rr": RoundRobin,
        "wrr": WeightedRoundRobin,
        "ib": IteratedBestArm,
    }
    params["interval"] = task.interval
    return plain[task.algorithm](task.n, **params), means, truth


def run_task(task: Task) -> Record:
    algorithm, means, truth = _build(task)
    key = [19, task.n, round(1000 * task.k), task.instance, len(task.kind), task.run]
    seed = int(np.random.SeedSequence(key).generate_state(1)[0])
    started = time.perf_counter()
    result = simulate(algorithm, BernoulliRewards(means, seed), batch=task.n)
    return {
        **asdict(task),
        "pulls": result.total_pulls,
        "correct": set(result.outliers) == truth,
        "capped": result.stop_reason is StopReason.BUDGET_SPENT,
        "seconds": round(time.perf_counter() - started, 3),
    }


def build_tasks(plan: Plan) -> list[Task]:
    tasks = []
    for n in plan.ns:
        for k in plan.ks:
            for j in range(plan.instances):
                for r in range(plan.runs):
                    intervals = _intervals(plan, n)
                    for name in ("rr", "wrr"):
                        for interval in intervals:
                            tasks.append(Task("ksigma", name, interval, n, k, j, "", r, plan.cap))
                    if plan.candidates:
                        for interval in CANDIDATES:
                            tasks.append(Task("ksigma", "rr", interval, n, k, j, "", r, plan.cap))
                        tasks.append(Task("ksigma", "wrr", "kl-union", n, k, j, "", r, plan.cap))
                    if n in plan.ib_ns and r == 0:  # one run: IB is slow
                        for interval in intervals:
                            tasks.append(
                                Task("ksigma", "ib", interval, n, k, j, "", r, plan.ib_cap)
                            )
    for n in plan.gold_ns:
        for eps in plan.gold_eps:
            for kind in plan.gold_kinds:
                for r in range(plan.gold_runs):
                    for interval in _intervals(plan, n):
                        tasks.append(Task("gold", "gold", interval, n, eps, 0, kind, r, plan.cap))
    # Longest first for load balance: hoeffding, large n, GOLD and IB.
    weight = {"hoeffding": 10, "ib": 5, "gold": 3}
    return sorted(
        tasks,
        key=lambda t: -t.n * weight.get(t.interval, 1) * weight.get(t.algorithm, 1),
    )


def _intervals(plan: Plan, n: int) -> tuple[str, ...]:
    return (*plan.intervals, "hoeffding") if n in plan.hoeffding_ns else plan.intervals


# ----------------------------------------------------------------- theta's half-widths
def theta_widths(plan: Plan) -> list[Record]:
    """theta's half-width (average of its two sides) on each k-sigma instance with every
    worker at ``plan.theta_count`` answers, its means the true ones (sums rounded)."""
    rows = []
    m = plan.theta_count
    for n in plan.ns:
        for k in plan.ks:
            widths: dict[str, list[float]] = defaultdict(list)
            for j in range(plan.instances):
                means = ksigma_instance(n, k, j)
                sums = np.round(means * m)
                y = sums / m
                counts = np.full(n, float(m))
                low, high = mixture_bounds(sums, counts, DELTA / n)
                box = ksigma_threshold_bounds(low, high, k)
                widths["box range"].append((float(box[1]) - float(box[0])) / 2)
                half = (high - low) / 2
                widths["Lipschitz"].append(float(half.mean() + k * np.sqrt(np.mean(half**2))))
                total = n * m
                mcd = round_level(DELTA, n + 1, total)
                lk = ksigma_lk(k, n, DELTA)
                widths["McDiarmid"].append(ksigma_bounded_threshold_radius(counts, mcd, lk))
                level = round_level(DELTA, n, total)
                radii = agresti_coull_radius(sums, counts, normal_quantile(level))
                widths["delta method (AC)"].append(delta_method_threshold_radius(y, radii, k))
                widths["worker (mixture)"].append(float(half.mean()))
            rows.append({"n": n, "k": k, **{key: float(np.mean(v)) for key, v in widths.items()}})
    return rows


# ------------------------------------------------------------------------------ report
def run(plan: Plan, *, progress: bool = True) -> dict[str, Any]:
    tasks = build_tasks(plan)
    records, seconds = run_in_processes(
        "intervals", run_task, tasks, plan.processes, progress=progress
    )
    records.sort(
        key=lambda r: (
            r["family"],
            r["algorithm"],
            r["n"],
            r["k"],
            r["kind"],
            r["instance"],
            r["run"],
            r["interval"],
        )
    )
    return {
        "benchmark": "intervals",
        "plan": asdict(plan),
        "machine": machine_info(),
        "seconds": round(seconds, 1),
        "theta": theta_widths(plan),
        "records": records,
    }


def _groups(records: Sequence[Record]) -> dict[tuple[Any, ...], dict[str, list[Record]]]:
    groups: dict[tuple[Any, ...], dict[str, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        groups[(r["family"], r["algorithm"], r["n"], r["k"], r["kind"])][r["interval"]].append(r)
    return groups


def _cell(rows: list[Record], reference: list[Record] | None) -> tuple[str, str]:
    if not rows:
        return "-", "-"
    pulls = float(np.mean([r["pulls"] for r in rows]))
    errors = sum(not r["correct"] for r in rows)
    capped = sum(r["capped"] for r in rows)
    text = f"{pulls:,.0f}"
    if reference:
        text += f" ({pulls / float(np.mean([r['pulls'] for r in reference])):.2f}x)"
    if capped:
        text += f" [{capped} capped]"
    return text, f"{errors}/{len(rows)}"


def format_report(report: dict[str, Any]) -> str:
    groups = _groups(report["records"])
    header = ["family", "algorithm", "n", "k / eps", "group", "runs"]
    for interval in INTERVALS:
        header += [f"{interval} pulls (x AC)", f"{interval} wrong"]
    rows = []
    ratios: list[float] = []
    for (family, name, n, k, kind), by in sorted(groups.items()):
        reference = by.get("agresti-coull")
        row: list[object] = [family, name, n, f"{k:g}", kind or "-", len(by.get("mixture", []))]
        for interval in INTERVALS:
            row += list(
                _cell(by.get(interval, []), reference if interval != "agresti-coull" else None)
            )
        rows.append(row)
        if reference and by.get("mixture"):
            ratios.append(
                np.mean([r["pulls"] for r in by["mixture"]])
                / np.mean([r["pulls"] for r in reference])
            )
    out = [markdown_table(header, rows)]
    if ratios:
        out.append(
            f"\nmixture / Agresti-Coull pulls over the {len(ratios)} rows: "
            f"mean {np.mean(ratios):.2f}x, median {np.median(ratios):.2f}x, "
            f"range {min(ratios):.2f}x to {max(ratios):.2f}x"
        )
    candidate_rows = []
    for (_, name, n, k, _), by in sorted(groups.items()):
        if not any(c in by for c in CANDIDATES):
            continue
        reference = by.get("mixture")
        row = [name, n, f"{k:g}"]
        for interval in ("mixture", *CANDIDATES):
            row += list(_cell(by.get(interval, []), reference if interval != "mixture" else None))
        candidate_rows.append(row)
    if candidate_rows:
        header = ["algorithm", "n", "k"]
        for interval in ("mixture", *CANDIDATES):
            header += [f"{interval} pulls (x mixture)", f"{interval} wrong"]
        out += ["\nCandidates (not chosen):\n", markdown_table(header, candidate_rows)]
    theta = report.get("theta", [])
    if theta:
        keys = [key for key in theta[0] if key not in ("n", "k")]
        out += [
            f"\ntheta's half-width, every worker at {report['plan']['theta_count']} answers "
            "(mean over the instances):\n",
            markdown_table(
                ["n", "k", *keys],
                [[t["n"], f"{t['k']:g}", *(f"{t[key]:.4f}" for key in keys)] for t in theta],
            ),
        ]
    machine = report["machine"]
    out.append(
        f"\n{report['plan']['mode']} mode, {len(report['records'])} runs, "
        f"{report['seconds']} s wall on {report['plan']['processes']} processes; "
        f"{machine['cpu']} ({machine['cpus']} CPUs), "
        f"Python {machine['python']}, numpy {machine['numpy']}, {machine['date']}"
    )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a small subset, about a minute")
    parser.add_argument("--processes", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--show", type=Path, help="print the tables of a saved JSON result")
    args = parser.parse_args(argv)
    if args.show:
        print(format_report(json.loads(args.show.read_text(encoding="utf-8"))))
        return 0
    plan = QUICK if args.quick else FULL
    plan = Plan(**{**asdict(plan), "processes": args.processes})
    report = run(plan)
    path = write_json(f"intervals-{plan.mode}", report)
    print(format_report(report))
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
