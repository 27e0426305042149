"""Reproduction of Figure 1 of Tao, Blanco, Peng, Zhou, NeurIPS 2019 (Section 5): LSA.

Thresholding bandit, theta = 0.5, Bernoulli arms, fixed budget T. Metric: the average aggregate
regret (expected number of misclassified arms, estimated over R runs), plotted as
ln(regret / K) against T. Setups (Section 5, exactly as the paper gives them;
``benchmarks.instances.threshold_setup``):

1. K = 10: 0.2, 0.25, 0.3, 0.35, 0.45, 0.55, 0.65, 0.7, 0.75, 0.8;
2. K = 20: 0.405 + (i - 1) / 100, i = 1..20;
3. K = 10: five arms at 0.45, five at 0.505.

Algorithms: LSA (alpha = 1.35), APT(eps) for eps in {0, .025, .05, .1}, UCBE(b) for b in
{-1, 0, 4} with a = 4^b (T - K) / H and H = sum_i 1 / Delta_i^2 over the instance's *true* gaps
Delta_i = |mu_i - theta| (the paper's H, ``ucbe_exploration``), Opt-KG(1, 1), Opt-KG(.5, .5)
and Uniform. Budget grids follow the figure's axes: 200..1000 (setup 1), 2000..40000 (setup 2),
10000..100000 (setup 3).

Engine (a deviation in *how* runs are computed, not in what): screener's algorithms run at
~10-40k pulls/s through ask/tell, far too slow for thousands of runs of 10^5 pulls. LSA, APT,
UCBE and Uniform therefore run in ``run_engine``: the same index, the same operations in the same
order (so the same floating-point ties), the same lowest-index tie-break and the same reward
draws, vectorised over runs. A cross-check (``check`` tasks) runs screener's own classes with
``simulate``-style batch-1 asks on the same reward streams and requires identical per-arm pull
counts and classifications; the report prints it. Opt-KG (whose index needs the incomplete
beta function per arm) runs through screener's ``OptKG`` itself, on fewer runs (printed).

Anytime: LSA, APT, Uniform and Opt-KG do not depend on T, so one run to the largest budget
records the classification at every grid budget (for Opt-KG ``result()`` at each checkpoint:
each worker's leaning; a worker without answers is UNDECIDED and counted as misclassified).
UCBE depends on T through a, so it has one run per budget (rows of the engine).

Seeds: run r of setup s draws arm i's j-th reward as ``uniforms(seed_s, 0, r K + i, j) <
mu_i`` (``RunRewards``), the same for every algorithm (common random numbers).

Usage::

    python -m benchmarks.tao2019 --quick     # under ~2 minutes on 2 cores
    python -m benchmarks.tao2019             # full (~16-20 minutes on 2 cores)
    python -m benchmarks.tao2019 --speed     # pulls per second of LSA at n = 200
    python -m benchmarks.tao2019 --show benchmarks/results/tao2019-full.json
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from benchmarks import harness
from benchmarks.harness import RESULTS_DIR, Report, markdown_table
from benchmarks.instances import threshold_setup
from screener import BernoulliRewards, simulate
from screener.algorithms import Algorithm
from screener.algorithms.registry import create_algorithm
from screener.algorithms.thresholding import ucbe_exploration
from screener.algorithms.worker_result import Decision
from screener.simulation.hashing import uniforms

__all__ = [
    "FULL",
    "QUICK",
    "Plan",
    "RunRewards",
    "aggregate_regret",
    "format_report",
    "run",
    "run_engine",
    "tasks",
    "ucbe_a",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
THETA = 0.5
ALPHA = 1.35
APT_EPS = (0.0, 0.025, 0.05, 0.1)
UCBE_B = (-1.0, 0.0, 4.0)
OPTKG_PRIORS = ((1.0, 1.0), (0.5, 0.5))
FAMILIES = ("lsa", "apt", "ucbe", "uniform")
Record = dict[str, Any]


def ucbe_a(b: float, budget: int, means: ArrayLike, theta: float = THETA) -> float:
    """UCBE's a = 4^b (T - K) / H with H = sum 1 / Delta_i^2 from the true gaps."""
    return ucbe_exploration(b, budget, np.abs(np.asarray(means, dtype=np.float64) - theta))


def aggregate_regret(estimates: ArrayLike, means: ArrayLike, theta: float = THETA) -> IntArray:
    """Misclassified arms per run: estimate >= theta disagrees with mean >= theta (last axis)."""
    above = np.asarray(estimates) >= theta
    truth = np.asarray(means) >= theta
    return np.asarray(np.count_nonzero(above != truth, axis=-1), dtype=np.int64)


def label(family: str, value: float | tuple[float, float] | None = None) -> str:
    """The figure's legend names: LSA, APT(.025), UCBE(-1), Opt-KG(.5,.5), Uniform."""

    def short(x: float) -> str:
        text = f"{x:g}"
        return text[1:] if text.startswith("0.") else text

    if family == "apt":
        assert isinstance(value, float)
        return f"APT({short(value)})"
    if family == "ucbe":
        assert isinstance(value, float)
        return f"UCBE({value:g})"
    if family == "opt-kg":
        assert isinstance(value, tuple)
        return f"Opt-KG({short(value[0])},{short(value[1])})"
    return {"lsa": "LSA", "uniform": "Uniform"}[family]


LABELS = (
    ["LSA"]
    + [label("apt", e) for e in APT_EPS]
    + [label("ucbe", b) for b in UCBE_B]
    + [label("opt-kg", p) for p in OPTKG_PRIORS]
    + ["Uniform"]
)


def setup_seed(setup: int) -> int:
    return harness.seed_of(2019, setup)


class RunRewards(BernoulliRewards):
    """Run ``run``'s rewards: arm i's j-th draw is ``uniforms(seed, 0, run K + i, j) < mu_i``."""

    def __init__(self, means: ArrayLike, seed: int, run: int) -> None:
        super().__init__(means, seed)
        self.run = run

    def sample(self, arms: ArrayLike, seqs: ArrayLike) -> FloatArray:
        a = np.asarray(arms, dtype=np.int64)
        u = uniforms(self.seed, 0, a + self.run * self.n_arms, seqs)
        return (u < self.means[a]).astype(np.float64)


# ------------------------------------------------------------------------------ engine
Index = Callable[[FloatArray, FloatArray, FloatArray], FloatArray]

#: index(counts, gaps, parameter column) with exactly the package's operations.
INDICES: dict[str, Index] = {
    "lsa": lambda c, g, p: ALPHA * c * g * g + 0.5 * np.log(c),
    "apt": lambda c, g, p: np.sqrt(c) * (g + p),
    "ucbe": lambda c, g, p: g - np.sqrt(p / c),
    "uniform": lambda c, g, p: c.copy(),
}


def run_engine(
    family: str,
    means: FloatArray,
    params: FloatArray,
    runs: IntArray,
    stops: IntArray,
    checkpoints: Sequence[int],
    seed: int,
) -> tuple[FloatArray, FloatArray]:
    """Batch-1 index policy, one row per (run, parameter, stop), vectorised over rows.

    Rows must be sorted by ``stops`` (each row's budget). Returns (errors, counts): errors
    [row, checkpoint] is the number of misclassified arms at that budget (NaN after the row's
    stop), counts the per-arm pulls of each row at its stop.
    """
    k = means.size
    rows = params.size
    counts = np.zeros((rows, k))
    sums = np.zeros((rows, k))
    errors = np.full((rows, len(checkpoints)), np.nan)
    arm_base = runs.astype(np.int64) * k
    index = INDICES[family]
    every = np.arange(rows)

    def pull(lo: int, arms: IntArray) -> None:
        r = every[lo:]
        seqs = counts[r, arms].astype(np.int64)
        rewards = uniforms(seed, 0, arm_base[lo:] + arms, seqs) < means[arms]
        counts[r, arms] += 1.0
        sums[r, arms] += rewards

    for arm in range(k):  # pull each arm once, in worker order (effective count 0 first)
        pull(0, np.full(rows, arm, dtype=np.int64))
    t, lo, cp = k, 0, 0
    column = params[:, None]
    while True:
        while cp < len(checkpoints) and checkpoints[cp] == t:
            errors[lo:, cp] = aggregate_regret(sums[lo:] / counts[lo:], means)
            cp += 1
        while lo < rows and stops[lo] <= t:
            lo += 1
        if lo == rows:
            return errors, counts
        gaps = np.abs(sums[lo:] / counts[lo:] - THETA)
        keys = index(counts[lo:], gaps, column[lo:])
        pull(lo, np.argmin(keys, axis=1).astype(np.int64))
        t += 1


def engine_rows(
    family: str, setup: int, first: int, n_runs: int, budgets: Sequence[int]
) -> tuple[FloatArray, IntArray, IntArray, list[str]]:
    """(params, runs, stops, row labels), sorted by stop: anytime families stop at max(T)."""
    means = threshold_setup(setup)
    top = max(budgets)
    out: list[tuple[int, float, int, str]] = []
    for r in range(first, first + n_runs):
        if family == "lsa":
            out.append((top, 0.0, r, "LSA"))
        elif family == "uniform":
            out.append((top, 0.0, r, "Uniform"))
        elif family == "apt":
            out += [(top, e, r, label("apt", e)) for e in APT_EPS]
        else:
            out += [(T, ucbe_a(b, T, means), r, label("ucbe", b)) for b in UCBE_B for T in budgets]
    out.sort(key=lambda row: row[0])
    params = np.array([row[1] for row in out])
    runs = np.array([row[2] for row in out], dtype=np.int64)
    stops = np.array([row[0] for row in out], dtype=np.int64)
    return params, runs, stops, [row[3] for row in out]


# ------------------------------------------------------------------------------ plan
@dataclass(frozen=True, slots=True)
class Plan:
    """Runs per setup for the engine families and for Opt-KG, and the budget grids."""

    mode: str
    runs: tuple[int, int, int]
    optkg_runs: tuple[int, int, int]
    budgets: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    chunk: int = 250
    check_runs: int = 2
    processes: int = 2


GRIDS = (
    tuple(range(200, 1001, 100)),
    (2000, *range(5000, 40001, 5000)),
    tuple(range(10000, 100001, 10000)),
)
QUICK = Plan(
    mode="quick",
    runs=(500, 100, 60),
    optkg_runs=(20, 1, 1),
    budgets=(GRIDS[0], (2000, 5000), (10000,)),
    chunk=250,
)
# Opt-KG runs through screener at ~1k pulls/s: 2 priors x (200 x 1e3 + 4 x 4e4 + 2 x 1e5) pulls
# is ~19 CPU minutes, the engine ~12: ~16 minutes on 2 otherwise idle processes.
FULL = Plan(mode="full", runs=(5000, 1000, 1000), optkg_runs=(200, 4, 2), budgets=GRIDS, chunk=500)


@dataclass(frozen=True, slots=True)
class Task:
    kind: str  # "engine", "optkg" or "check"
    setup: int
    family: str
    first: int
    n_runs: int
    budgets: tuple[int, ...]
    prior: tuple[float, float] = (1.0, 1.0)
    cost: float = 0.0


def tasks(plan: Plan) -> list[Task]:
    """Engine chunks, Opt-KG runs and the cross-check, longest first."""
    out: list[Task] = []
    for s in (1, 2, 3):
        budgets, runs = plan.budgets[s - 1], plan.runs[s - 1]
        k = threshold_setup(s).size
        for family in FAMILIES:
            weight = {"lsa": 1, "uniform": 1, "apt": 4, "ucbe": 3 * len(budgets) / 2}[family]
            for first in range(0, runs, plan.chunk):
                n = min(plan.chunk, runs - first)
                cost = max(budgets) * (3e-5 + 4e-8 * n * weight * k)
                out.append(Task("engine", s, family, first, n, budgets, cost=cost))
        for prior in OPTKG_PRIORS:
            for r in range(plan.optkg_runs[s - 1]):
                out.append(Task("optkg", s, "opt-kg", r, 1, budgets, prior, max(budgets) * 4e-4))
        check = (min(*budgets, 2000),)  # screener's classes run at ~5-10k pulls/s
        for family in FAMILIES:
            out.append(Task("check", s, family, 0, plan.check_runs, check, cost=check[0] * 2e-3))
    return sorted(out, key=lambda t: -t.cost)


# ------------------------------------------------------------------------------ tasks
def run_task(task: Task) -> list[Record]:
    kinds = {"engine": _engine_task, "optkg": _optkg_task, "check": _check_task}
    records, seconds = harness.timed(lambda: kinds[task.kind](task))
    for record in records:
        record["seconds"] = round(seconds / len(records), 4)
    return records


def _engine_task(task: Task) -> list[Record]:
    means = threshold_setup(task.setup)
    params, runs, stops, names = engine_rows(
        task.family, task.setup, task.first, task.n_runs, task.budgets
    )
    errors, _ = run_engine(
        task.family, means, params, runs, stops, task.budgets, setup_seed(task.setup)
    )
    sums: dict[tuple[str, int], list[float]] = defaultdict(list)
    for row, name in enumerate(names):
        for c, budget in enumerate(task.budgets):
            # UCBE rows count only at their own budget; anytime rows at every budget.
            if task.family == "ucbe" and budget != stops[row]:
                continue
            sums[(name, budget)].append(float(errors[row, c]))
    return [_summary(task.setup, name, budget, values) for (name, budget), values in sums.items()]


def _summary(setup: int, name: str, budget: int, values: Sequence[float]) -> Record:
    data = np.asarray(values)
    return {
        "kind": "regret",
        "setup": setup,
        "algorithm": name,
        "budget": budget,
        "runs": int(data.size),
        "sum": float(data.sum()),
        "sum_sq": float((data * data).sum()),
    }


def _step_to(algorithm: Algorithm, rewards: BernoulliRewards, budget: int) -> None:
    """Batch-1 asks (the paper's sequential loop) until ``budget`` answers are in."""
    while algorithm.n_answered < budget:
        ask = algorithm.ask(1)
        if ask.done:
            return
        algorithm.tell_many(ask.ids, rewards.sample(ask.arms, ask.seqs))


def _misclassified(algorithm: Algorithm, means: FloatArray) -> int:
    """From ``result()``: leaning ABOVE / BELOW per worker; UNDECIDED (no answers) is wrong."""
    wrong = 0
    for worker in algorithm.result().workers:
        above = means[worker.arm] >= THETA
        if worker.leaning is Decision.UNDECIDED or (worker.leaning is Decision.ABOVE) != above:
            wrong += 1
    return wrong


def _optkg_task(task: Task) -> list[Record]:
    means = threshold_setup(task.setup)
    params = {"threshold": THETA, "budget": max(task.budgets)}
    params |= {"prior_a": task.prior[0], "prior_b": task.prior[1]}
    algorithm = create_algorithm("opt-kg", means.size, params)
    rewards = RunRewards(means, setup_seed(task.setup), task.first)
    name = label("opt-kg", task.prior)
    records = []
    for budget in task.budgets:  # anytime: result() at each checkpoint of one run
        _step_to(algorithm, rewards, budget)
        records.append(_summary(task.setup, name, budget, [_misclassified(algorithm, means)]))
    return records


def _package_algorithm(family: str, means: FloatArray, budget: int, value: float) -> Algorithm:
    params: dict[str, Any] = {"threshold": THETA, "budget": budget}
    if family == "lsa":
        return create_algorithm("lsa", means.size, params | {"alpha": ALPHA})
    if family == "apt":
        return create_algorithm("apt", means.size, params | {"epsilon": value})
    if family == "ucbe":
        return create_algorithm("ucbe", means.size, params | {"a": value})
    return create_algorithm("uniform-thresholding", means.size, params)


def _check_task(task: Task) -> list[Record]:
    """screener's classes (batch 1) against the engine: same counts and classification."""
    means = threshold_setup(task.setup)
    seed = setup_seed(task.setup)
    budget = task.budgets[0]
    value = {"lsa": 0.0, "uniform": 0.0, "apt": 0.05, "ucbe": ucbe_a(0.0, budget, means)}
    param = value[task.family]
    runs = np.arange(task.first, task.first + task.n_runs, dtype=np.int64)
    stops = np.full(runs.size, budget, dtype=np.int64)
    errors, counts = run_engine(
        task.family, means, np.full(runs.size, param), runs, stops, (budget,), seed
    )
    same = 0
    for row, r in enumerate(runs.tolist()):
        algorithm = _package_algorithm(task.family, means, budget, param)
        simulate(algorithm, RunRewards(means, seed, r), batch=1)
        ours = np.asarray(algorithm.stats.count, dtype=np.float64)
        wrong = _misclassified(algorithm, means)
        same += bool(np.array_equal(ours, counts[row]) and wrong == errors[row, 0])
    return [
        {
            "kind": "check",
            "setup": task.setup,
            "algorithm": task.family,
            "budget": budget,
            "runs": int(runs.size),
            "identical": same,
        }
    ]


# ------------------------------------------------------------------------------ run
def run(plan: Plan, *, progress: bool = True) -> Report:
    """Run every task on ``plan.processes`` processes; returns the report dict."""
    batches, seconds = harness.run_in_processes(
        "tao2019", run_task, tasks(plan), plan.processes, progress=progress
    )
    records: list[Record] = [record for batch in batches for record in batch]
    checks = [r for r in records if r["kind"] == "check"]
    return harness.new_report("tao2019", plan, seconds, summary=summarize(records), checks=checks)


def summarize(records: Sequence[Record]) -> list[Record]:
    """Mean aggregate regret, its standard error and ln(regret / K) per (setup, alg, T)."""
    merged: dict[tuple[int, str, int], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for r in records:
        if r["kind"] == "regret":
            m = merged[(r["setup"], r["algorithm"], r["budget"])]
            m[0] += r["runs"]
            m[1] += r["sum"]
            m[2] += r["sum_sq"]
    out = []
    for (setup, name, budget), (n, total, squares) in sorted(merged.items()):
        mean = total / n
        variance = max(squares / n - mean * mean, 0.0) * n / max(n - 1, 1)
        k = threshold_setup(setup).size
        out.append(
            {
                "setup": setup,
                "algorithm": name,
                "budget": budget,
                "runs": int(n),
                "regret": mean,
                "se": math.sqrt(variance / n),
                "ln_regret_per_arm": math.log(mean / k) if mean > 0 else None,
            }
        )
    return out


# ------------------------------------------------------------------------------ report
def _ln(value: float | None) -> str:
    return "-inf" if value is None else f"{value:.2f}"


#: Algorithms with fewer runs at a budget (Opt-KG in setups 2 and 3) are not ranked.
MIN_RANKED_RUNS = 100


def ranking(rows: Sequence[Record]) -> tuple[str, int, bool]:
    """(lowest algorithm, LSA's rank = 1 + #strictly lower, LSA within 2 SE of the lowest)."""
    rows = [r for r in rows if r["runs"] >= MIN_RANKED_RUNS or r["algorithm"] == "LSA"]
    best = min(rows, key=lambda r: r["regret"])
    lsa = next(r for r in rows if r["algorithm"] == "LSA")
    rank = 1 + sum(r["regret"] < lsa["regret"] for r in rows)
    close = lsa["regret"] - best["regret"] <= 2.0 * math.hypot(lsa["se"], best["se"])
    return best["algorithm"], rank, close


def format_report(report: Report) -> str:
    """Per setup: ln(regret / K) per algorithm and budget, the lowest, LSA's rank; claims."""
    plan = report["plan"]
    by_setup: dict[int, list[Record]] = defaultdict(list)
    for row in report["summary"]:
        by_setup[row["setup"]].append(row)
    parts = [
        f"Tao et al. 2019, Figure 1 ({plan['mode']}): engine runs per setup {plan['runs']}, "
        f"Opt-KG runs per setup {plan['optkg_runs']} (the paper: 5000); wall time "
        f"{report['seconds']:.0f} s on {plan['processes']} processes. Cells: ln(regret / K); "
        f"'lowest' and 'LSA rank' count only algorithms with >= {MIN_RANKED_RUNS} runs; '-inf': "
        "no misclassification in any run.",
        "",
    ]
    claims: list[list[object]] = []
    best_eps: dict[int, str] = {}
    for setup in sorted(by_setup):
        rows = by_setup[setup]
        names = [n for n in LABELS if any(r["algorithm"] == n for r in rows)]
        budgets = sorted({r["budget"] for r in rows})
        cell = {(r["algorithm"], r["budget"]): r for r in rows}
        table = []
        lowest_or_tied = 0
        for budget in budgets:
            present = [cell[(n, budget)] for n in names if (n, budget) in cell]
            best, rank, close = ranking(present)
            lowest_or_tied += rank == 1 or close
            table.append(
                [budget]
                + [_ln(cell[(n, budget)]["ln_regret_per_arm"]) if (n, budget) in cell else "-"
                   for n in names]
                + [best, f"{rank}{' (within 2 SE)' if close and rank > 1 else ''}"]
            )  # fmt: skip
        k = threshold_setup(setup).size
        parts += [
            f"Setup {setup} (K = {k}):",
            "",
            markdown_table(["T", *names, "lowest", "LSA rank"], table),
            "",
        ]
        apt: dict[str, float] = defaultdict(float)
        for r in rows:
            if r["algorithm"].startswith("APT"):
                apt[r["algorithm"]] += r["regret"]
        best_eps[setup] = min(apt, key=lambda n: apt[n])
        claims.append(
            [
                f"Setup {setup}: LSA lowest (or tied)",
                "lowest in all setups and budgets",
                f"lowest or within 2 SE of the lowest at {lowest_or_tied}/{len(budgets)} budgets",
            ]
        )
    claims.append(
        [
            "APT's best eps changes between setups",
            "yes (Setup 2 vs others)",
            "best APT (sum of regret over the grid): "
            + ", ".join(f"setup {s}: {n}" for s, n in sorted(best_eps.items()))
            + f" ({'changes' if len(set(best_eps.values())) > 1 else 'does not change'})",
        ]
    )
    parts += ["Paper's claims beside ours:", "", markdown_table(["claim", "paper", "ours"], claims)]
    checks = report.get("checks", [])
    if checks:
        total = sum(c["runs"] for c in checks)
        same = sum(c["identical"] for c in checks)
        parts += [
            "",
            f"Engine vs screener's classes (batch 1, same rewards): {same}/{total} runs with "
            "identical per-arm pulls and classification ("
            + ", ".join(
                f"setup {c['setup']} {c['algorithm']} T={c['budget']}: {c['identical']}/{c['runs']}"
                for c in checks
            )
            + ").",
        ]
    return "\n".join(parts).rstrip() + "\n"


def plot(report: Report, path: Path) -> Path | None:
    """ln(regret / K) against T per setup, as in the paper's Figure 1 (needs matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: pip install '.[bench]'")
        return None
    setups = sorted({r["setup"] for r in report["summary"]})
    figure, axes = plt.subplots(1, len(setups), figsize=(5 * len(setups), 4), squeeze=False)
    for axis, setup in zip(axes[0], setups, strict=True):
        for name in LABELS:
            rows = [r for r in report["summary"] if r["setup"] == setup and r["algorithm"] == name]
            points = [(r["budget"], r["ln_regret_per_arm"]) for r in rows]
            points = [(t, v) for t, v in points if v is not None]
            if points:
                # 11 curves and 10 default colours: LSA gets its own (black, thick).
                look: dict[str, Any] = {"color": "black", "linewidth": 2.2} if name == "LSA" else {}
                style = "-" if name == "LSA" else "--"
                axis.plot(*zip(*points, strict=True), style, marker=".", label=name, **look)
        axis.set_title(f"Setup {setup}")
        axis.set_xlabel("T")
        axis.set_ylabel("ln(regret/K)")
    axes[0][-1].legend(fontsize=7)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


# ------------------------------------------------------------------------------ speed
def speed(n: int = 200, budget: int = 20_000, repeat: int = 3) -> str:
    """Pulls per CPU second of LSA at n workers, through ``simulate`` (batch 1 and n)."""

    def lsa() -> Algorithm:
        return create_algorithm("lsa", n, {"threshold": THETA, "budget": budget})

    cases = [(f"LSA, n = {n}, batch = {batch}", lsa, batch) for batch in (1, n)]
    return harness.speed_table(cases, np.linspace(0.3, 0.7, n), repeat)


# ------------------------------------------------------------------------------- main
def _figure(report: Report) -> None:
    figure = plot(report, RESULTS_DIR / "tao2019-figure1.png")
    if figure is not None:
        print(f"figure: {figure}")


def main(argv: Sequence[str] | None = None) -> int:
    return harness.main(
        argv, __doc__, (QUICK, FULL), run, format_report,
        quick_help="small subset, under ~2 minutes", speed=speed, after=_figure,
    )  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
