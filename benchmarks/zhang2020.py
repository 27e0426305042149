"""Reproduction of the experiments of Zhang, Zhuang, Zhang, Zhou, AAAI 2020 (ADE), Section 6.

Fig. 2(a): n in {100, 200, 400, 600, 800, 1000}, k = 2.5, Bernoulli means uniform on [0, 1]
whose minimum gap min_i |mu_i - theta| lies in [0.1, 0.2]. Fig. 2(b): n = 900, k = 2, minimum
gap in [0.059, 0.061], [0.089, 0.091], [0.119, 0.121]. Generator
(``benchmarks.instances.ade_instance``): rejection sampling, exactly: draw blocks of 64
candidate instances of n means ~ U[0, 1] from ``default_rng(SeedSequence([seed, n,
round(1000 k), round(1e4 lo), round(1e4 hi)]))`` and return the first candidate whose minimum
gap lies in [lo, hi]. It is fast enough at every size here
(at n = 900 the [0.119, 0.121] window accepts about one candidate in a few thousand). Note that
with k >= 2 the threshold of U[0, 1] means is above 1 (theta ~ 0.5 + k 0.289), so these
instances have no outlier at all: the true outlier set is empty, as in the paper's recipe.

Real data: HyunCatherines (SQUARE ``SQUARE_HCB_trec2010rf.csv`` under ``$SCREENER_DATA``,
skipped with a note when unset). The paper "extracted 722 workers"; the file has exactly 722
workers, so all of them are used. Reward = error = 1 - correct; a worker's true mean is its
error rate over all its rows; each pull draws one of the worker's own answers uniformly WITH
replacement (``ResampledAnswers``, counter-based: reproducible per (seed, worker, pull)).
Truth: ``ksigma_outliers(true means, k)`` for k = 2 and 3.

Algorithms: ADE (``screener.algorithms.ksigma.ade``, ``simulate(batch=n)``), also with
``share_samples=True`` ("ade-share": both kinds of sample feed both estimators, the paper's
remark at the end of its Section 4), RR and WRR with the
bounded-reward (Hoeffding) radii of Zhuang et al. -- the ADE paper says "the termination
conditions of all these algorithms are identical", i.e. confidence intervals valid for any
reward in [0, 1]. RR and WRR run in two modes: "n" asks one cycle of n pulls at a time (the
one-pull-at-a-time run overshot by at most n - 1 pulls; batch 1 itself runs at a few thousand
pulls/s, far too slow for the millions of pulls needed here), and "1000", the paper's speed-up
("pulling an arm 1,000 times at each round"), emulated as ``simulate(batch=1000)``: the stopping
rule is checked every 1000 pulls, but the 1000 pulls go round robin (WRR: by its weights) over
the workers rather than to one worker. At n = 1000 the two modes coincide.

Deviation: every run has a pull cap (``Plan.cap``; ADE ``Plan.ade_cap``); capped runs are
counted and scored on their set at the cap. ADE simulates at ~1.5e5 pulls per CPU second
(~1e5 with shared samples; RR and WRR with Hoeffding radii ~3.5e6) and needs ~10^7 pulls on
these instances, so the full mode takes hours (see the report; ``--resume`` runs it in pieces);
``--instances`` lowers the number of instances. One run per
instance (the paper averages ten simulations), reward seed a function of the task only, shared
by all algorithms.

Usage::

    python -m benchmarks.zhang2020 --quick      # a capped subset, about a minute and a half
    python -m benchmarks.zhang2020 [--instances 10] [--processes 2]
    python -m benchmarks.zhang2020 --instances 1 --parts fig2a hcb --ns 100 400 1000
    python -m benchmarks.zhang2020 --show benchmarks/results/zhang2020-full.json
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from benchmarks import harness
from benchmarks.harness import Report, markdown_table
from benchmarks.instances import ade_instance, min_gap
from screener import BernoulliRewards, StopReason, simulate
from screener.algorithms.registry import create_algorithm
from screener.simulation import RewardModel, ksigma_outliers, uniforms

__all__ = [
    "FIG2B_RANGES",
    "FULL",
    "HCB_FILE",
    "QUICK",
    "Plan",
    "ResampledAnswers",
    "build_tasks",
    "format_report",
    "load_hcb",
    "run",
]

FloatArray = NDArray[np.float64]
Record = dict[str, Any]
HCB_FILE = "gold_answers/SQUARE_HCB_trec2010rf.csv"
FIG2B_RANGES = ((0.059, 0.061), (0.089, 0.091), (0.119, 0.121))
_RESAMPLE_STREAM = 7  # a stream of its own, apart from BernoulliRewards' stream 0


PARTS = ("fig2a", "fig2b", "hcb")


# ---------------------------------------------------------------------------- real data
def load_hcb(path: Path) -> tuple[list[str], list[FloatArray]]:
    """Workers (in order of first appearance) and each worker's errors (1 - correct)."""
    errors: dict[str, list[float]] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            errors.setdefault(row["worker"], []).append(1.0 - float(row["correct"]))
    return list(errors), [np.array(values) for values in errors.values()]


class ResampledAnswers(RewardModel):
    """Each pull of worker i is one of i's recorded rewards, uniformly WITH replacement.

    The true mean is the worker's mean reward; draw (seed, worker, pull) is a pure function.
    """

    kind = "resampled"

    def __init__(self, answers: Sequence[FloatArray], seed: int = 0) -> None:
        super().__init__([float(a.mean()) for a in answers], seed)
        self._lengths = np.array([a.size for a in answers], dtype=np.int64)
        self._offsets = np.concatenate([[0], np.cumsum(self._lengths)[:-1]]).astype(np.int64)
        self._flat = np.concatenate(answers).astype(np.float64)

    def sample(self, arms: ArrayLike, seqs: ArrayLike) -> FloatArray:
        a = np.asarray(arms, dtype=np.int64)
        u = uniforms(self.seed, _RESAMPLE_STREAM, a, seqs)
        index = np.minimum((u * self._lengths[a]).astype(np.int64), self._lengths[a] - 1)
        return self._flat[self._offsets[a] + index]


def data_root() -> Path | None:
    """``$SCREENER_DATA`` when set."""
    root = os.environ.get("SCREENER_DATA")
    return Path(root) if root else None


# -------------------------------------------------------------------------------- plans
@dataclass(frozen=True, slots=True)
class Plan:
    mode: str
    fig2a_ns: tuple[int, ...]
    fig2b_ranges: tuple[tuple[float, float], ...]
    instances: int
    hcb_ks: tuple[float, ...]
    cap: int
    ade_cap: int
    speed_budget: int
    fig2b_n: int = 900
    delta: float = 0.1
    processes: int = 2
    parts: tuple[str, ...] = PARTS
    resume: bool = False  # keep every run in a file and skip those already there


QUICK = Plan(
    mode="quick",
    fig2a_ns=(100, 200),
    fig2b_ranges=((0.119, 0.121),),
    instances=1,
    hcb_ks=(2.0, 3.0),
    cap=3_000_000,
    ade_cap=300_000,
    speed_budget=200_000,
)
FULL = Plan(
    mode="full",
    fig2a_ns=(100, 200, 400, 600, 800, 1000),
    fig2b_ranges=FIG2B_RANGES,
    instances=10,
    hcb_ks=(2.0, 3.0),
    cap=50_000_000,
    ade_cap=30_000_000,
    speed_budget=2_000_000,
)


@dataclass(frozen=True, slots=True)
class Task:
    part: str  # "fig2a", "fig2b" or "hcb"
    algorithm: str
    mode: str  # "n" or "1000" for RR/WRR, "n" or "share" (share_samples) for ADE
    n: int
    k: float
    gap: tuple[float, float] | None
    instance: int
    cap: int
    delta: float


def task_seed(task: Task) -> int:
    """The reward seed: a function of the instance only (shared by all algorithms)."""
    gap = task.gap or (0.0, 0.0)
    part = PARTS.index(task.part)
    return harness.seed_of(
        2020, part, task.n, round(1000 * task.k), round(1e4 * gap[0]), task.instance
    )


def _rewards(task: Task, seed: int) -> RewardModel:
    if task.part == "hcb":
        root = data_root()
        assert root is not None  # tasks of this part exist only when it is set
        return ResampledAnswers(load_hcb(root / HCB_FILE)[1], seed)
    assert task.gap is not None
    return BernoulliRewards(ade_instance(task.n, task.k, task.instance, task.gap), seed)


def run_task(task: Task) -> Record:
    """One run of one algorithm; a flat JSON-able record."""
    seed = task_seed(task)
    rewards = _rewards(task, seed)
    truth = ksigma_outliers(rewards.means, task.k)
    params: dict[str, Any] = {"k": task.k, "delta": task.delta, "budget": task.cap, "seed": seed}
    if task.algorithm != "ade":
        params["interval"] = "hoeffding"
    elif task.mode == "share":
        params["share_samples"] = True
    algorithm = create_algorithm(task.algorithm, rewards.n_arms, params)
    batch = int(task.mode) if task.mode.isdigit() else rewards.n_arms
    result, seconds = harness.timed(lambda: simulate(algorithm, rewards, batch=batch))
    return {
        **asdict(task),
        "seed": seed,
        "min_gap": min_gap(rewards.means, task.k),
        "pulls": result.total_pulls,
        "correct": result.outliers == truth,
        "capped": result.stop_reason is StopReason.BUDGET_SPENT,
        "n_true_outliers": len(truth),
        "seconds": round(seconds, 3),
    }


def build_tasks(plan: Plan, *, with_hcb: bool) -> list[Task]:
    """Every run of the plan, ADE first (the long runs) for load balance; Fig. 2(b) one
    window after the other, the widest gap (fewest pulls) first, so that a run stopped part
    way (``--resume``) holds whole windows, every algorithm in them."""
    setups: list[tuple[str, int, float, tuple[float, float] | None, int]] = []
    if "fig2a" in plan.parts:
        for n in plan.fig2a_ns:
            setups += [("fig2a", n, 2.5, (0.1, 0.2), j) for j in range(plan.instances)]
    windows = sorted(plan.fig2b_ranges, reverse=True)
    if "fig2b" in plan.parts:
        for window in windows:
            setups += [("fig2b", plan.fig2b_n, 2.0, window, j) for j in range(plan.instances)]
    if with_hcb and "hcb" in plan.parts:
        setups += [("hcb", 722, k, None, 0) for k in plan.hcb_ks]
    tasks = []
    for part, n, k, gap, j in setups:
        for mode in ("n", "share"):
            tasks.append(Task(part, "ade", mode, n, k, gap, j, plan.ade_cap, plan.delta))
        for name in ("rr", "wrr"):
            for mode in ("n", "1000"):
                tasks.append(Task(part, name, mode, n, k, gap, j, plan.cap, plan.delta))
    stage: dict[tuple[float, float] | None, int] = {w: rank for rank, w in enumerate(windows)}
    return sorted(
        tasks,
        key=lambda t: (stage.get(t.gap, 0) if t.part == "fig2b" else 0, t.algorithm != "ade", -t.n),
    )


def run(plan: Plan, *, progress: bool = True) -> Report:
    """Run the plan on ``plan.processes`` processes, then ADE's speed at n = 1000."""
    root = data_root()
    with_hcb = root is not None and (root / HCB_FILE).exists()
    notes = [] if with_hcb else ["HCB skipped: SCREENER_DATA is unset or lacks " + HCB_FILE]
    tasks = build_tasks(plan, with_hcb=with_hcb)
    records, seconds = harness.run_in_processes(
        "zhang2020", run_task, tasks, plan.processes, progress=progress,
        keep=harness.kept_runs("zhang2020", plan),
    )  # fmt: skip
    records.sort(key=lambda r: (r["part"], r["n"], r["k"], str(r["gap"]), r["instance"]))
    return harness.new_report(
        "zhang2020", plan, seconds, notes=notes, summary=summarize(records),
        speed=measure_speed(plan), records=records,
    )  # fmt: skip


def summarize(records: Sequence[Record]) -> list[dict[str, Any]]:
    """Per (part, n, k, gap range) and algorithm/mode: correct rate, mean pulls, capped."""
    groups: dict[tuple[str, int, float, str, str], list[Record]] = defaultdict(list)
    for r in records:
        label = (
            "ade"
            if r["algorithm"] == "ade" and r["mode"] == "n"
            else f"{r['algorithm']}-{r['mode']}"
        )
        gap = "" if r["gap"] is None else f"[{r['gap'][0]:g}, {r['gap'][1]:g}]"
        groups[(r["part"], r["n"], r["k"], gap, label)].append(r)
    return [
        {
            "part": part,
            "n": n,
            "k": k,
            "gap": gap,
            "label": label,
            "runs": len(rows),
            "correct_rate": float(np.mean([r["correct"] for r in rows])),
            "mean_pulls": float(np.mean([r["pulls"] for r in rows])),
            "capped": sum(bool(r["capped"]) for r in rows),
            "min_gap": float(np.mean([r["min_gap"] for r in rows])),
        }
        for (part, n, k, gap, label), rows in sorted(groups.items())
    ]


def measure_speed(plan: Plan) -> dict[str, Any]:
    """ADE's pulls per CPU second at n = 1000 over its first ``speed_budget`` pulls."""
    means = ade_instance(1000, 2.5, 0, (0.1, 0.2))
    algorithm = create_algorithm("ade", 1000, {"k": 2.5, "budget": plan.speed_budget})
    cpu, wall = time.process_time(), time.perf_counter()
    simulate(algorithm, BernoulliRewards(means, 1), batch=1000)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    pulls = algorithm.n_answered
    return {"n": 1000, "pulls": pulls, "cpu": cpu, "wall": wall, "rate": pulls / cpu}


# ------------------------------------------------------------------------------ tables
LABELS = ("ade", "ade-share", "rr-n", "rr-1000", "wrr-n", "wrr-1000")
CLAIMS = {
    "fig2a": "ADE fewest pulls for n >= 200, gap growing with n; RR/WRR fewer at n = 100",
    "fig2b": "pulls fall as the gap grows; ADE fewest at every gap",
    "hcb": "ADE needs considerably fewer pulls than RR and WRR; fewer at k = 3 than k = 2",
}


def _table(cells: Sequence[dict[str, Any]]) -> tuple[list[str], list[list[object]]]:
    by_key: dict[tuple[int, float, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    for c in cells:
        by_key[(c["n"], c["k"], c["gap"])][c["label"]] = c
    header = ["n", "k", "gap range", "mean min gap"]
    for label in LABELS:
        header += [f"{label} pulls", f"{label} correct", f"{label} cap"]
    header.append("fewest pulls (uncapped)")
    rows = []
    for (n, k, gap), found in sorted(by_key.items()):
        any_cell = next(iter(found.values()))
        row: list[object] = [n, f"{k:g}", gap or "-", f"{any_cell['min_gap']:.3f}"]
        for label in LABELS:
            cell = found.get(label)
            row += (
                ["-"] * 3
                if cell is None
                else [
                    f"{cell['mean_pulls']:,.0f}",
                    f"{100 * cell['correct_rate']:.0f}%",
                    cell["capped"],
                ]
            )
        finished = [name for name in found if found[name]["capped"] == 0]
        fewest = min(finished, key=lambda name: found[name]["mean_pulls"], default=None)
        row.append(fewest or "none finished")
        rows.append(row)
    return header, rows


def format_report(report: Report) -> str:
    """Markdown: one table per part with the paper's claim, then ADE's speed."""
    plan = report["plan"]
    parts = [
        f"Zhang et al. 2020 ({plan['mode']}): {plan['instances']} instance(s) per setting, one "
        f"run each, delta = {plan['delta']}, caps: ADE {plan['ade_cap']:,}, RR/WRR "
        f"{plan['cap']:,} pulls; RR/WRR with Hoeffding radii, asking n or 1000 pulls at a time; "
        f"wall time {report['seconds']:.0f} s on {plan['processes']} processes.",
        *report.get("notes", []),
        "",
    ]
    titles = {"fig2a": "Fig. 2(a)", "fig2b": "Fig. 2(b)", "hcb": "HyunCatherines (722 workers)"}
    for part, title in titles.items():
        cells = [c for c in report["summary"] if c["part"] == part]
        if not cells:
            continue
        parts += [f"{title}. Paper: {CLAIMS[part]}.", "", markdown_table(*_table(cells)), ""]
    parts += _sharing_lines(report["summary"])
    s = report["speed"]
    parts.append(
        f"Speed: ADE at n = {s['n']}, first {s['pulls']:,} pulls (batch n): {s['rate']:,.0f} "
        f"pulls per CPU second ({s['cpu']:.2f} CPU s, {s['wall']:.2f} wall s)."
    )
    return "\n".join(parts).rstrip() + "\n"


def _sharing_lines(cells: Sequence[dict[str, Any]]) -> list[str]:
    """ADE with shared samples against ADE, where neither hit its cap."""
    by_key: dict[tuple[str, int, float, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    for c in cells:
        by_key[(c["part"], c["n"], c["k"], c["gap"])][c["label"]] = c
    rows = []
    for (part, n, k, gap), found in sorted(by_key.items()):
        plain, shared = found.get("ade"), found.get("ade-share")
        if plain is None or shared is None:
            continue
        both = plain["capped"] == 0 and shared["capped"] == 0
        ratio = f"{shared['mean_pulls'] / plain['mean_pulls']:.2f}" if both else "(capped)"
        rows.append([
            part, n, f"{k:g}", gap or "-", f"{plain['mean_pulls']:,.0f}",
            f"{shared['mean_pulls']:,.0f}", ratio,
            f"{100 * plain['correct_rate']:.0f}% / {100 * shared['correct_rate']:.0f}%",
        ])  # fmt: skip
    if not rows:
        return []
    header = ["part", "n", "k", "gap range", "ADE pulls", "ADE-share pulls", "share / plain",
              "correct (plain / share)"]  # fmt: skip
    title = "ADE with shared samples (share_samples=True) against ADE (paper: up to half)."
    return [title, "", markdown_table(header, rows), ""]


# ---------------------------------------------------------------------------------- main
def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--instances", type=int, help="instances per synthetic setting")
    parser.add_argument("--parts", nargs="+", choices=PARTS, help="only these parts")
    parser.add_argument("--ns", nargs="+", type=int, help="Fig. 2(a) sizes (default: the paper's)")


def _adjust(plan: Plan, args: argparse.Namespace) -> Plan:
    if args.instances is not None:
        plan = replace(plan, instances=args.instances)
    if args.parts:
        plan = replace(plan, parts=tuple(args.parts))
    if args.ns:
        plan = replace(plan, fig2a_ns=tuple(args.ns))
    if data_root() is None:
        print("note: SCREENER_DATA is unset: the HyunCatherines part is skipped", file=sys.stderr)
    return plan


def main(argv: Sequence[str] | None = None) -> int:
    return harness.main(
        argv, __doc__, (QUICK, FULL), run, format_report, quick_help="capped subset, ~1.5 minutes",
        options=_options, adjust=_adjust,
    )  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
