"""Reproduction of the synthetic experiment of Zhuang, Wang, Wang, NIPS 2017 (Section 5).

Bernoulli arms, n in {20, 50, 100, 200}, k in {2, 2.5, 3}, delta = 0.1, 10 random instances
per configuration (``benchmarks.instances.ksigma_instance``, seeds 0..9), 10 runs per
instance, a cap of 10^7 pulls, for RR, WRR and the NRR baseline (IB is not implemented).

Paper's claims (Section 5.3): RR and WRR are exactly correct in all synthetic cases; NRR never
reaches the desired 1 - delta; WRR saves more than 40% of RR's pulls in 80% of the test cases
and more than 60% in about half of them.

Batching: the paper pulls one arm at a time and checks the stopping condition after every
pull; ``simulate(..., batch=B)`` checks it at every ask, so RR overshoots the sequential
stopping time by at most B - 1 pulls, and WRR also decides a visit's extra pulls on the
activity known at the ask. NRR's rule counts consecutive pulls, so it always runs with B = 1;
RR and WRR run with B = n (B = 1 runs at ~7k pulls/s, far too slow for 10^7-pull caps), and a
separate "batch check" measures B = 1 against B = n on a few instances.

Seeds: instance j of (n, k) is ``ksigma_instance(n, k, j)``; run r draws its rewards from
``BernoulliRewards(means, seed)`` with ``seed`` derived from (n, k, j, r) only (see
``run_seed``), the same for RR, WRR and NRR (common random numbers: the i-th answer of worker
a is the same draw for every algorithm). Reruns are identical.

Usage::

    python -m benchmarks.zhuang2017 --quick      # small subset, well under a minute
    python -m benchmarks.zhuang2017              # the full reproduction (~15 minutes on 2 cores)
    python -m benchmarks.zhuang2017 --show benchmarks/results/zhuang2017-full.json
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from benchmarks import harness
from benchmarks.harness import Report, markdown_table
from benchmarks.instances import DEFAULT_MIN_GAP, ksigma_instance
from screener import (
    BernoulliRewards,
    NaiveRoundRobin,
    RoundRobin,
    StopReason,
    WeightedRoundRobin,
    simulate,
)
from screener.algorithms.ksigma import KSigmaAlgorithm
from screener.simulation import ksigma_outliers

__all__ = ["FULL", "QUICK", "Plan", "format_report", "run", "run_seed"]

ALGORITHMS: dict[str, type[KSigmaAlgorithm]] = {
    "rr": RoundRobin,
    "wrr": WeightedRoundRobin,
    "nrr": NaiveRoundRobin,
}
Record = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Plan:
    """What to run. ``batch = 0`` means one ask per n pulls for RR and WRR (NRR: always 1)."""

    mode: str
    ns: tuple[int, ...]
    ks: tuple[float, ...]
    instances: int
    runs: int
    delta: float = 0.1
    cap: int = 10_000_000
    min_gap: float = DEFAULT_MIN_GAP
    batch: int = 0
    processes: int = 2
    #: (n, k, instance) triples on which RR and WRR also run with batch = 1 (run 0 only).
    batch_check: tuple[tuple[int, float, int], ...] = ()


QUICK = Plan(
    mode="quick",
    ns=(20, 50),
    ks=(2.0, 3.0),
    instances=3,
    runs=2,
    batch_check=((20, 2.0, 0), (20, 3.0, 0)),
)
# The batch check runs at ~7k pulls/s: instances 0-1 of n in {20, 50} x k in {2, 3}, and for
# n = 100 and 200 one instance each (the cheaper of instances 0-1, a few 10^5 pulls).
FULL = Plan(
    mode="full",
    ns=(20, 50, 100, 200),
    ks=(2.0, 2.5, 3.0),
    instances=10,
    runs=10,
    batch_check=(
        *((n, k, j) for n in (20, 50) for k in (2.0, 3.0) for j in (0, 1)),
        (100, 2.0, 1),
        (200, 3.0, 1),
    ),
)


@dataclass(frozen=True, slots=True)
class Task:
    algorithm: str
    n: int
    k: float
    instance: int
    run: int
    batch: int
    delta: float
    cap: int
    min_gap: float
    check: bool  # part of the batch check, not of the main table


def run_seed(n: int, k: float, instance: int, run: int) -> int:
    """The reward seed of run ``run`` on instance ``instance`` of (n, k): a fixed function."""
    return harness.seed_of(2017, n, round(1000 * k), instance, run)


def run_task(task: Task) -> Record:
    """One run of one algorithm on one instance; returns a flat JSON-able record."""
    means = ksigma_instance(task.n, task.k, task.instance, min_gap=task.min_gap)
    truth = ksigma_outliers(means, task.k)
    seed = run_seed(task.n, task.k, task.instance, task.run)
    # The paper's Bernoulli intervals (Agresti-Coull, a heuristic; not the library default).
    algorithm = ALGORITHMS[task.algorithm](
        task.n, k=task.k, delta=task.delta, interval="agresti-coull", budget=task.cap, seed=seed
    )
    result, seconds = harness.timed(
        lambda: simulate(algorithm, BernoulliRewards(means, seed), batch=task.batch)
    )
    return {
        "algorithm": task.algorithm,
        "n": task.n,
        "k": task.k,
        "instance": task.instance,
        "run": task.run,
        "batch": task.batch,
        "check": task.check,
        "seed": seed,
        "pulls": result.total_pulls,
        "correct": result.outliers == truth,
        "capped": result.stop_reason is StopReason.BUDGET_SPENT,
        "stop_reason": None if result.stop_reason is None else result.stop_reason.value,
        "n_true_outliers": len(truth),
        "n_returned": len(result.outliers),
        "seconds": round(seconds, 4),
    }


def _tasks(plan: Plan) -> list[Task]:
    def task(algorithm: str, n: int, k: float, j: int, r: int, batch: int, check: bool) -> Task:
        return Task(algorithm, n, k, j, r, batch, plan.delta, plan.cap, plan.min_gap, check)

    main = [
        task(name, n, k, j, r, 1 if name == "nrr" else (plan.batch or n), False)
        for n in plan.ns
        for k in plan.ks
        for j in range(plan.instances)
        for r in range(plan.runs)
        for name in ALGORITHMS
    ]
    check = [
        task(name, n, k, j, 0, batch, True)
        for n, k, j in plan.batch_check
        for name in ("rr", "wrr")
        for batch in (1, n)
    ]
    # Longest first (batch-1 checks, then large n, RR before WRR before NRR) for load balance.
    order = {"rr": 0, "wrr": 1, "nrr": 2}
    return sorted(
        check + main, key=lambda t: (t.batch != 1 or not t.check, -t.n, order[t.algorithm])
    )


def run(plan: Plan, *, progress: bool = True) -> Report:
    """Run every task of ``plan`` on ``plan.processes`` processes; returns the report dict."""
    records, seconds = harness.run_in_processes(
        "zhuang2017", run_task, _tasks(plan), plan.processes, progress=progress
    )
    records.sort(key=lambda r: (r["check"], r["n"], r["k"], r["instance"], r["run"], r["batch"]))
    return harness.new_report(
        "zhuang2017", plan, seconds, summary=summarize(records), records=records
    )


# ---------------------------------------------------------------------------- summaries
def _mean(values: Iterable[float]) -> float:
    data = list(values)
    return float(np.mean(data)) if data else float("nan")


def summarize(records: Sequence[Record]) -> dict[str, Any]:
    """Per configuration and algorithm, per n, WRR's savings and the batch check."""
    main = [r for r in records if not r["check"]]
    groups: dict[tuple[int, float, str], list[Record]] = defaultdict(list)
    for r in main:
        groups[(r["n"], r["k"], r["algorithm"])].append(r)
    configs = [
        {
            "n": n,
            "k": k,
            "algorithm": name,
            "runs": len(rows),
            "correct_rate": _mean(float(r["correct"]) for r in rows),
            "mean_pulls": _mean(r["pulls"] for r in rows),
            "capped": sum(bool(r["capped"]) for r in rows),
            "instances_all_correct": _instances_all_correct(rows),
            "instances": len({r["instance"] for r in rows}),
        }
        for (n, k, name), rows in sorted(groups.items())
    ]
    # Per instance: RR's and WRR's pulls, paired run by run (same reward seed).
    paired: dict[tuple[int, float, int], dict[int, dict[str, int]]] = defaultdict(dict)
    for r in main:
        if r["algorithm"] in ("rr", "wrr"):
            paired[(r["n"], r["k"], r["instance"])].setdefault(r["run"], {})[r["algorithm"]] = r[
                "pulls"
            ]
    savings = []
    for (n, k, j), runs in sorted(paired.items()):
        both = [p for p in runs.values() if "rr" in p and "wrr" in p]
        if not both:
            continue
        savings.append(
            {
                "n": n,
                "k": k,
                "instance": j,
                "saving": _mean(1.0 - p["wrr"] / p["rr"] for p in both),
                "saving_of_means": (
                    1.0 - _mean(p["wrr"] for p in both) / _mean(p["rr"] for p in both)
                ),
                "rr_mean_pulls": _mean(p["rr"] for p in both),
                "wrr_mean_pulls": _mean(p["wrr"] for p in both),
            }
        )
    values = np.array([s["saving"] for s in savings])
    saving_summary = {
        "cases": int(values.size),
        "above_40": float(np.mean(values > 0.4)) if values.size else float("nan"),
        "above_60": float(np.mean(values > 0.6)) if values.size else float("nan"),
        "median": float(np.median(values)) if values.size else float("nan"),
        "min": float(values.min()) if values.size else float("nan"),
        "max": float(values.max()) if values.size else float("nan"),
    }
    return {
        "configs": configs,
        "by_n": _by_n(main),
        "savings": savings,
        "saving_summary": saving_summary,
        "batch_check": _batch_check([r for r in records if r["check"]]),
    }


def _instances_all_correct(rows: Sequence[Record]) -> int:
    by_instance: dict[int, bool] = defaultdict(lambda: True)
    for r in rows:
        by_instance[r["instance"]] &= bool(r["correct"])
    return sum(by_instance.values())


def _by_n(main: Sequence[Record]) -> list[dict[str, Any]]:
    groups: dict[tuple[int, str], list[Record]] = defaultdict(list)
    for r in main:
        groups[(r["n"], r["algorithm"])].append(r)
    return [
        {
            "n": n,
            "algorithm": name,
            "runs": len(rows),
            "correct_rate": _mean(float(r["correct"]) for r in rows),
            "mean_pulls": _mean(r["pulls"] for r in rows),
            "capped": sum(bool(r["capped"]) for r in rows),
        }
        for (n, name), rows in sorted(groups.items())
    ]


def _batch_check(rows: Sequence[Record]) -> list[dict[str, Any]]:
    found: dict[tuple[int, float, int, str], dict[str, Record]] = defaultdict(dict)
    for r in rows:
        which = "one" if r["batch"] == 1 else "n"
        found[(r["n"], r["k"], r["instance"], r["algorithm"])][which] = r
    out = []
    for (n, k, j, name), pair in sorted(found.items()):
        if len(pair) < 2:
            continue
        one, many = pair["one"], pair["n"]
        out.append(
            {
                "n": n,
                "k": k,
                "instance": j,
                "algorithm": name,
                "pulls_batch_1": one["pulls"],
                "pulls_batch_n": many["pulls"],
                "relative_change": many["pulls"] / one["pulls"] - 1.0,
                "same_answer": one["correct"] == many["correct"],
                "seconds_batch_1": one["seconds"],
                "seconds_batch_n": many["seconds"],
            }
        )
    return out


# ------------------------------------------------------------------------------ tables
def _pct(value: float) -> str:
    return f"{100 * value:.0f}%" if np.isfinite(value) else "n/a"


def _pulls(value: float) -> str:
    return f"{value:,.0f}" if np.isfinite(value) else "n/a"


def format_report(report: Report) -> str:
    """The markdown tables: per configuration, per n, the claims, and the batch check."""
    summary = report["summary"]
    plan = report["plan"]
    configs = {(c["n"], c["k"], c["algorithm"]): c for c in summary["configs"]}
    names = [name for name in ALGORITHMS if any(key[2] == name for key in configs)]
    keys = sorted({(n, k) for n, k, _ in configs})
    savings_by_config: dict[tuple[int, float], list[float]] = defaultdict(list)
    for s in summary["savings"]:
        savings_by_config[(s["n"], s["k"])].append(s["saving"])
    header = ["n", "k"]
    for name in names:
        header += [f"{name.upper()} correct", f"{name.upper()} mean pulls", f"{name.upper()} cap"]
    header += ["WRR saving (median)"]
    rows = []
    for n, k in keys:
        row: list[object] = [n, f"{k:g}"]
        for name in names:
            c = configs.get((n, k, name))
            if c is None:
                row += ["-", "-", "-"]
            else:
                row += [_pct(c["correct_rate"]), _pulls(c["mean_pulls"]), c["capped"]]
        values = savings_by_config.get((n, k), [])
        row.append(_pct(float(np.median(values))) if values else "-")
        rows.append(row)
    parts = [
        f"Zhuang et al. 2017, synthetic ({plan['mode']}): {plan['instances']} instances x "
        f"{plan['runs']} runs per configuration, delta = {plan['delta']}, cap = {plan['cap']:,} "
        f"pulls, min gap {plan['min_gap']}; wall time {report['seconds']:.0f} s on "
        f"{plan['processes']} processes.",
        "",
        markdown_table(header, rows),
        "",
    ]
    by_n_header = ["n"]
    for name in names:
        by_n_header += [f"{name.upper()} correct", f"{name.upper()} mean pulls"]
    by_n = {(b["n"], b["algorithm"]): b for b in summary["by_n"]}
    by_n_rows = []
    for n in sorted({key[0] for key in by_n}):
        row = [n]
        for name in names:
            b = by_n.get((n, name))
            row += ["-", "-"] if b is None else [_pct(b["correct_rate"]), _pulls(b["mean_pulls"])]
        by_n_rows.append(row)
    parts += ["Per n (Figure 1(a), 1(b)):", "", markdown_table(by_n_header, by_n_rows), ""]
    parts += ["Paper's claims beside ours:", "", markdown_table(*_claims(report)), ""]
    check = summary["batch_check"]
    if check:
        check_rows = [
            [
                c["n"],
                f"{c['k']:g}",
                c["instance"],
                c["algorithm"].upper(),
                _pulls(c["pulls_batch_1"]),
                _pulls(c["pulls_batch_n"]),
                f"{100 * c['relative_change']:+.1f}%",
            ]
            for c in check
        ]
        parts += [
            "Batch check (run 0; the main table uses batch = n for RR and WRR):",
            "",
            markdown_table(
                ["n", "k", "instance", "alg", "pulls, batch 1", "pulls, batch n", "change"],
                check_rows,
            ),
            "",
        ]
        for name in ("rr", "wrr"):
            changes = [c["relative_change"] for c in check if c["algorithm"] == name]
            if changes:
                parts.append(
                    f"{name.upper()}: batch n vs batch 1, mean change "
                    f"{100 * float(np.mean(changes)):+.2f}% (range {100 * min(changes):+.2f}% "
                    f"to {100 * max(changes):+.2f}%) over {len(changes)} instances."
                )
    return "\n".join(parts).rstrip() + "\n"


def _claims(report: Report) -> tuple[list[str], list[list[object]]]:
    summary = report["summary"]
    delta = report["plan"]["delta"]
    configs = summary["configs"]
    rows: list[list[object]] = []
    for name, label in (("rr", "RR"), ("wrr", "WRR")):
        mine = [c for c in configs if c["algorithm"] == name]
        if not mine:
            continue
        runs = sum(c["runs"] for c in mine)
        wrong = sum(round(c["runs"] * (1 - c["correct_rate"])) for c in mine)
        instances = sum(c["instances"] for c in mine)
        perfect = sum(c["instances_all_correct"] for c in mine)
        capped = sum(c["capped"] for c in mine)
        rows.append(
            [
                f"{label} exactly correct in all synthetic cases",
                "100% in every configuration",
                f"{runs - wrong}/{runs} runs correct; {perfect}/{instances} instances with all "
                f"runs correct; {capped} runs hit the cap",
            ]
        )
    nrr = [c for c in configs if c["algorithm"] == "nrr"]
    if nrr:
        reached = sum(c["correct_rate"] >= 1 - delta for c in nrr)
        best = max(c["correct_rate"] for c in nrr)
        mean_pulls = _mean(c["mean_pulls"] for c in nrr)
        rows.append(
            [
                f"NRR never reaches 1 - delta = {1 - delta:.0%} correct",
                "never (Fig. 1(a))",
                f"{reached}/{len(nrr)} configurations reach it; best {_pct(best)}; "
                f"stops after {mean_pulls:,.0f} pulls on average",
            ]
        )
    s = summary["saving_summary"]
    if s["cases"]:
        rows.append(
            [
                "WRR saves > 40% of RR's pulls",
                "in 80% of test cases",
                f"in {_pct(s['above_40'])} of {s['cases']} instances",
            ]
        )
        rows.append(
            [
                "WRR saves > 60% of RR's pulls",
                "in about half of test cases",
                f"in {_pct(s['above_60'])} of {s['cases']} instances "
                f"(median saving {_pct(s['median'])}, range {_pct(s['min'])} to {_pct(s['max'])})",
            ]
        )
    return ["claim", "paper", "ours"], rows


# ---------------------------------------------------------------------------------- main
def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--batch", type=int, default=0, help="pulls per ask for RR and WRR (default: n)"
    )
    parser.add_argument("--no-batch-check", action="store_true", help="skip the batch check")


def _adjust(plan: Plan, args: argparse.Namespace) -> Plan:
    plan = replace(plan, batch=args.batch)
    return replace(plan, batch_check=()) if args.no_batch_check else plan


def _result_name(plan: Plan) -> str:
    return f"zhuang2017-{plan.mode}" + (f"-batch{plan.batch}" if plan.batch else "")


def main(argv: Sequence[str] | None = None) -> int:
    return harness.main(
        argv, __doc__, (QUICK, FULL), run, format_report,
        quick_help="small subset, under a minute", options=_options, adjust=_adjust,
        result_name=_result_name,
    )  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
