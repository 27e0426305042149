"""Simulation speed: pulls per second of RR and WRR at n = 200, beside a bare numpy loop.

Part 1 ("simulate"): ``screener.simulate`` with batch = n (the fast path) and batch = 1 (for
information), against a reference that implements the same algorithm plainly: pull one arm,
update two numpy arrays, recompute every Agresti-Coull radius, theta, its delta-method radius
and the active set with numpy, after every pull. The reference draws exactly the same rewards
(``BernoulliRewards``' counter-based draws, fetched 4096 at a time per arm), so on the same
instance and seed it must make the same pulls as ``simulate(..., batch=1)``; the script
checks that on a run to termination and on the capped runs.

Rates are pulls per CPU second of this process (``time.process_time``; wall seconds are shown
too), and every ratio divides two rates measured in the same run, one after the other, so other
work on the machine disturbs them less (it still adds noise: rerun to see the spread).

WRR: the reference follows the paper's repeat-until literally (after the regular pull of arm i,
keep pulling i while i is active and m_i < c_i); ``simulate(..., batch=1)`` must match it pull
for pull, like RR.

Part 2 ("orchestrator"): the same algorithms through the journaled asyncio orchestrator with a
zero-latency simulated oracle, at concurrency 16, 64 and 256, beside the bare loop.

Part 3 ("thresholding"): the fixed-budget baselines Opt-KG and Uniform through ``simulate``
beside LSA, measured in the same run (n = 20 and 200, batch 1 and batch n, bar 0.5): the
ratio to LSA is the figure to watch (issue 19 asks Opt-KG for at least half of LSA's speed).

Usage::

    python -m benchmarks.speed [--quick] [--profile] [--section NAME ...]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import math
import pstats
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.harness import (
    Timed,
    clock,
    machine_info,
    markdown_table,
    median_run,
    since,
    write_json,
)
from benchmarks.instances import ksigma_instance
from screener import BernoulliRewards, RoundRobin, WeightedRoundRobin, simulate
from screener.algorithms.ksigma import KSigmaAlgorithm
from screener.algorithms.registry import create_algorithm
from screener.orchestrator import RunOptions
from screener.pool import WorkerPool
from screener.runs.session import RunPlan, start_run

__all__ = [
    "SECTIONS",
    "Section",
    "SpeedConfig",
    "bare_loop",
    "format_report",
    "measure_thresholding",
    "run",
]

FloatArray = NDArray[np.float64]
TARGET = 1_000_000  # pulls per second, simulated (issue "v0.1")
JOURNALED_TARGET = 20_000  # pulls per second through the orchestrator, journaled to SQLite
ALGORITHMS: dict[str, type[KSigmaAlgorithm]] = {"rr": RoundRobin, "wrr": WeightedRoundRobin}


@dataclass(frozen=True, slots=True)
class SpeedConfig:
    n: int = 200
    k: float = 2.0
    instance: int = 0  # ksigma_instance(200, 2, 0): RR needs ~1.8e6 pulls, WRR ~3.4e5
    seed: int = 1
    delta: float = 0.1
    #: Pulls of the capped comparison (the slow paths run ~7k to ~30k pulls/s).
    budget: int = 100_000
    #: Repetitions of the fast (batch = n) measurements; the median is reported.
    repeat: int = 5
    cap: int = 10_000_000
    #: Pulls of each thresholding run with batch 1 (ten times as many with batch n).
    threshold_pulls: int = 5_000


QUICK = SpeedConfig(budget=20_000, repeat=3, threshold_pulls=2_000)


@dataclass(slots=True)
class Section:
    title: str
    header: list[str]
    rows: list[list[object]]
    notes: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------------ the reference
class _Draws:
    """The draws of ``BernoulliRewards(means, seed)``, fetched in chunks per arm."""

    def __init__(self, means: FloatArray, seed: int, chunk: int = 4096) -> None:
        self.model = BernoulliRewards(means, seed)
        self.chunk = chunk
        self.start = [0] * means.size
        self.buffer: list[list[float]] = [[] for _ in range(means.size)]

    def __call__(self, arm: int, seq: int) -> float:
        offset = seq - self.start[arm]
        buffer = self.buffer[arm]
        if offset >= len(buffer):
            seqs = np.arange(seq, seq + self.chunk, dtype=np.int64)
            buffer = self.model.sample(np.full(self.chunk, arm, dtype=np.int64), seqs).tolist()
            self.buffer[arm], self.start[arm], offset = buffer, seq, 0
        return buffer[offset]


def bare_loop(
    algorithm: str,
    means: FloatArray,
    seed: int,
    *,
    k: float,
    delta: float,
    budget: int,
) -> tuple[int, NDArray[np.int64], tuple[int, ...]]:
    """RR or WRR (Zhuang et al. 2017, Algorithms 1 and 2) written as a plain loop.

    Returns (total pulls, pulls per arm, returned outlier set). The radii: Agresti-Coull with
    z = Phi^-1(1 - level / 2), level = 6 delta / (pi^2 (n + 1) T^2); theta's radius by the
    delta method. WRR follows the paper's pseudo-code literally: after the regular pull of
    arm i it keeps pulling i while i is active and m_i < c_i.
    """
    n = means.size
    draw = _Draws(means, seed)
    inverse_cdf = statistics.NormalDist().inv_cdf
    count = np.zeros(n)
    total = np.zeros(n)

    def state() -> tuple[NDArray[np.bool_], FloatArray, float]:
        level = 6.0 * delta / (math.pi**2 * (n + 1) * t * t)
        z = -inverse_cdf(level / 2.0)
        y = total / count
        p = (total + z * z / 2.0) / (count + z * z)
        beta = z * np.sqrt(p * (1.0 - p) / count)
        theta = float(y.mean() + k * y.std())
        centred = y - y.mean()
        sigma = math.sqrt(float(centred @ centred) / n)
        if sigma <= 1e-12:
            squares = float(beta @ beta)
            beta_theta = math.sqrt(squares) / n + k * math.sqrt(squares / n)
        else:
            weighted = (1.0 / n + k * centred / (n * sigma)) * beta
            beta_theta = math.sqrt(float(weighted @ weighted))
        above = y > theta
        active = np.where(above, y - beta < theta + beta_theta, y + beta > theta - beta_theta)
        return active, y, theta

    for arm in range(n):  # initialisation: every arm once
        total[arm] += draw(arm, 0)
        count[arm] = 1
    t = n
    active, y, theta = state()
    arm = -1
    if algorithm == "rr":
        while active.any() and t < budget:
            arm = (arm + 1) % n
            total[arm] += draw(arm, int(count[arm]))
            count[arm] += 1
            t += 1
            active, y, theta = state()
    elif algorithm == "wrr":
        first = math.sqrt((1.0 + k * math.sqrt(n - 1)) ** 2 / n)
        second = math.sqrt(k * k / (2.0 * math.log(math.pi**2 * n**3 / (6.0 * delta))))
        rho = max(1.0, (n - 1) ** (2.0 / 3.0) / ((first + second) ** 2) ** (1.0 / 3.0))
        counters = np.zeros(n)
        while active.any() and t < budget:
            arm = (arm + 1) % n
            counters[arm] += rho
            while True:  # repeat ... until i not active or m_i >= c_i
                total[arm] += draw(arm, int(count[arm]))
                count[arm] += 1
                t += 1
                active, y, theta = state()
                if not active[arm] or count[arm] >= counters[arm] or t >= budget:
                    break
    else:
        raise ValueError(f"unknown algorithm {algorithm!r}")
    outliers = tuple(np.flatnonzero(y > theta).tolist())
    return t, count.astype(np.int64), outliers


# ------------------------------------------------------------------------ measurements
def _ours(
    config: SpeedConfig, name: str, means: FloatArray, batch: int, budget: int
) -> tuple[Timed, KSigmaAlgorithm]:
    algorithm = ALGORITHMS[name](config.n, k=config.k, delta=config.delta, budget=budget)
    start = clock()
    simulate(algorithm, BernoulliRewards(means, config.seed), batch=batch)
    return since(algorithm.n_answered, start), algorithm


def measure_simulate(config: SpeedConfig) -> Section:
    """Part 1: ``simulate`` (batch n and 1) beside the bare numpy loop, per algorithm."""
    n = config.n
    means = ksigma_instance(n, config.k, config.instance)
    rows: list[list[object]] = []
    notes: list[str] = []
    data: dict[str, Any] = {}
    for name in ALGORITHMS:
        label = name.upper()
        budget = config.budget
        # The same first `budget` pulls: the reference, then simulate with batch 1 and n.
        start = clock()
        pulls, ref_counts, _ = bare_loop(
            name, means, config.seed, k=config.k, delta=config.delta, budget=budget
        )
        reference = since(pulls, start)
        one, one_alg = _ours(config, name, means, 1, budget)
        fast = median_run([_ours(config, name, means, n, budget)[0] for _ in range(config.repeat)])
        # And a whole run, to termination (ledger growth and the late, sparse phase included).
        full_runs = [_ours(config, name, means, n, config.cap) for _ in range(config.repeat)]
        full = median_run([t for t, _ in full_runs])
        full_alg = full_runs[0][1]
        same = bool(np.array_equal(one_alg.stats.count, ref_counts)) and one.pulls == pulls
        measured = {
            "reference": reference,
            "batch_1": one,
            f"batch_{n}": fast,
            f"batch_{n}_to_termination": full,
        }
        data[name] = {key: asdict(t) for key, t in measured.items()}
        data[name]["batch_1_matches_reference"] = same
        data[name]["stop_reason_to_termination"] = str(full_alg.stop_reason)
        paths = [
            "bare numpy loop (reference)",
            "simulate, batch = 1",
            f"simulate, batch = {n}",
            f"simulate, batch = {n}, to termination",
        ]
        for path, timed in zip(paths, measured.values(), strict=True):
            ratio = timed.rate / reference.rate
            rows.append(
                [
                    label,
                    path,
                    f"{timed.pulls:,}",
                    f"{timed.cpu:.3f}",
                    f"{timed.wall:.3f}",
                    f"{timed.rate:,.0f}",
                    f"{ratio:.2f}x" if ratio < 10 else f"{ratio:.1f}x",
                ]
            )
        verdict = "meets" if full.rate >= TARGET else "misses"
        notes.append(
            f"{label}: batch = {n} to termination runs {full.rate:,.0f} pulls per CPU second, "
            f"{verdict} the {TARGET:,} pulls/s target; simulate(batch=1) "
            f"{'makes exactly the same pulls as' if same else 'DIFFERS from'} the reference "
            f"over the first {budget:,} pulls."
        )
    notes += _termination_check(config)
    return Section(
        title=(
            f"simulate vs bare numpy loop: n = {n}, k = {config.k:g}, "
            f"ksigma_instance({n}, {config.k:g}, {config.instance}), reward seed {config.seed}; "
            f"first {config.budget:,} pulls, and the full run; pulls/s per CPU second of this "
            f"process; batch-{n} figures are the median of {config.repeat}"
        ),
        header=["alg", "path", "pulls", "CPU s", "wall s", "pulls/s", "ours / reference"],
        rows=rows,
        notes=notes,
        data=data,
    )


def _termination_check(config: SpeedConfig) -> list[str]:
    """Run RR and WRR to termination on a small instance, ours (batch 1) and the reference."""
    n, k, instance = 20, 2.5, 5  # a cheap instance: a few thousand pulls
    means = ksigma_instance(n, k, instance)
    notes = []
    for name, cls in ALGORITHMS.items():
        pulls, counts, outliers = bare_loop(
            name, means, config.seed, k=k, delta=config.delta, budget=config.cap
        )
        algorithm = cls(n, k=k, delta=config.delta, budget=config.cap)
        result = simulate(algorithm, BernoulliRewards(means, config.seed), batch=1)
        same = result.total_pulls == pulls and result.outliers == outliers
        differing = int((counts != algorithm.stats.count).sum())
        verdict = "same pulls and same set" if same else f"DIFFERENT on {differing} arms"
        notes.append(
            f"{name.upper()} to termination on ksigma_instance({n}, {k:g}, {instance}): "
            f"reference {pulls:,} pulls, simulate(batch=1) {result.total_pulls:,} pulls, {verdict}"
        )
    return notes


def _orchestrated(
    config: SpeedConfig, name: str, means: FloatArray, concurrency: int, folder: Path
) -> Timed:
    """One journaled run through the asyncio orchestrator to ``config.budget`` answers."""
    pool = WorkerPool(
        tuple(f"w{i}" for i in range(config.n)), tuple(float(m) for m in means), "benchmark"
    )
    params = {"k": config.k, "delta": config.delta, "budget": config.budget}
    plan = RunPlan(pool, name, params, "simulated", {}, config.seed, RunOptions(concurrency))
    database = folder / f"{name}-{concurrency}.db"
    start = clock()
    _, result = asyncio.run(start_run(plan, str(database)))
    return since(result.total_pulls, start)


def measure_orchestrator(config: SpeedConfig) -> Section:
    """Part 2: the journaled asyncio orchestrator with a zero-latency simulated oracle.

    Every pull is two journal rows (asked, answered) committed to a SQLite file in WAL mode
    before it is sent or told. Rates are per wall second here: the journal's writer thread
    and SQLite's I/O are part of the cost.
    """
    means = ksigma_instance(config.n, config.k, config.instance)
    rows: list[list[object]] = []
    notes: list[str] = []
    data: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in ALGORITHMS:
            start = clock()
            pulls, _, _ = bare_loop(
                name, means, config.seed, k=config.k, delta=config.delta, budget=config.budget
            )
            reference = since(pulls, start)
            base_rate = pulls / reference.wall
            rows.append([name.upper(), "bare numpy loop (reference)", f"{pulls:,}",
                         f"{reference.wall:.2f}", f"{base_rate:,.0f}", "1.00x"])  # fmt: skip
            for concurrency in (16, 64, 256):
                timed = _orchestrated(config, name, means, concurrency, Path(folder))
                rate = timed.pulls / timed.wall
                ratio = rate / base_rate
                data[f"{name}_{concurrency}"] = asdict(timed)
                rows.append([name.upper(), f"orchestrator + SQLite, concurrency {concurrency}",
                             f"{timed.pulls:,}", f"{timed.wall:.2f}", f"{rate:,.0f}",
                             f"{ratio:.2f}x"])  # fmt: skip
                if concurrency == 64:
                    verdict = "meets" if rate >= JOURNALED_TARGET else "misses"
                    notes.append(
                        f"{name.upper()}: {rate:,.0f} journaled pulls per wall second at "
                        f"concurrency 64, {verdict} the {JOURNALED_TARGET:,} pulls/s target."
                    )
    return Section(
        title=(
            f"journaled orchestrator: n = {config.n}, first {config.budget:,} answers, "
            "zero-latency simulated oracle, SQLite WAL; pulls per wall second"
        ),
        header=["alg", "path", "pulls", "wall s", "pulls/s", "ours / reference"],
        rows=rows,
        notes=notes,
        data=data,
    )


#: Thresholding algorithms of part 3; the first is the yardstick of the ratios.
THRESHOLDING = ("lsa", "opt-kg", "uniform-thresholding")


def thresholding_instances() -> dict[int, FloatArray]:
    """n = 20: Tao et al. 2019's setup 2 (0.405 + (i - 1) / 100); n = 200: 0.3 to 0.7."""
    return {20: 0.405 + np.arange(20) / 100.0, 200: np.linspace(0.3, 0.7, 200)}


def _thresholding_run(name: str, means: FloatArray, seed: int, budget: int, batch: int) -> Timed:
    params = {"threshold": 0.5, "budget": budget}
    algorithm = create_algorithm(name, means.size, params)
    start = clock()
    simulate(algorithm, BernoulliRewards(means, seed), batch=batch)
    return since(algorithm.n_answered, start)


def measure_thresholding(config: SpeedConfig) -> Section:
    """Part 3: Opt-KG and Uniform beside LSA through ``simulate``, in the same run.

    The algorithms take turns within each repetition (LSA, Opt-KG, Uniform, LSA, ...), so a
    slow spell of the machine hits them alike; the median of ``repeat`` runs is reported.
    """
    rows: list[list[object]] = []
    notes: list[str] = []
    data: dict[str, Any] = {}
    for n, means in thresholding_instances().items():
        for batch in (1, n):
            budget = config.threshold_pulls * (1 if batch == 1 else 10)
            runs: dict[str, list[Timed]] = {name: [] for name in THRESHOLDING}
            for _ in range(config.repeat):
                for name in THRESHOLDING:
                    runs[name].append(_thresholding_run(name, means, config.seed, budget, batch))
            timed = {name: median_run(measured) for name, measured in runs.items()}
            yardstick = timed[THRESHOLDING[0]].rate
            for name, measured in timed.items():
                ratio = measured.rate / yardstick
                data[f"{name}_n{n}_batch{batch}"] = asdict(measured)
                rows.append([n, batch, name, f"{measured.pulls:,}", f"{measured.cpu:.3f}",
                             f"{measured.rate:,.0f}", f"{ratio:.2f}x"])  # fmt: skip
            ratio = timed["opt-kg"].rate / yardstick
            verdict = "meets" if ratio >= 0.5 else "misses"
            notes.append(
                f"n = {n}, batch {batch}: Opt-KG runs at {ratio:.2f}x LSA's speed, {verdict} "
                "the 0.5x target."
            )
    return Section(
        title=(
            "fixed-budget thresholding through simulate, bar 0.5, reward seed "
            f"{config.seed}: {config.threshold_pulls:,} pulls with batch 1, "
            f"{10 * config.threshold_pulls:,} with batch n; pulls per CPU second, the median "
            f"of {config.repeat}"
        ),
        header=["n", "batch", "alg", "pulls", "CPU s", "pulls/s", "alg / LSA"],
        rows=rows,
        notes=notes,
        data=data,
    )


#: Sections of the speed report, run in this order.
SECTIONS: dict[str, Callable[[SpeedConfig], Section]] = {
    "simulate": measure_simulate,
    "orchestrator": measure_orchestrator,
    "thresholding": measure_thresholding,
}


# ------------------------------------------------------------------------------ profile
def profile(config: SpeedConfig, top: int = 25) -> str:
    """cProfile of ``simulate`` (batch = n) to termination, RR and WRR."""
    means = ksigma_instance(config.n, config.k, config.instance)
    out = io.StringIO()
    for name, cls in ALGORITHMS.items():
        algorithm = cls(config.n, k=config.k, delta=config.delta, budget=config.cap)
        profiler = cProfile.Profile()
        profiler.enable()
        simulate(algorithm, BernoulliRewards(means, config.seed), batch=config.n)
        profiler.disable()
        out.write(f"\n### {name.upper()}: {algorithm.n_answered:,} pulls, batch = {config.n}\n")
        for key in ("tottime", "cumulative"):
            stats = pstats.Stats(profiler, stream=out)
            stats.strip_dirs().sort_stats(key).print_stats(top)
    return out.getvalue()


# --------------------------------------------------------------------------------- main
def run(config: SpeedConfig, sections: Sequence[str] | None = None) -> dict[str, Any]:
    chosen = list(SECTIONS) if sections is None else list(sections)
    results = {}
    started = time.perf_counter()
    for name in chosen:
        section = SECTIONS[name](config)
        results[name] = asdict(section)
    return {
        "benchmark": "speed",
        "config": asdict(config),
        "machine": machine_info(),
        "seconds": round(time.perf_counter() - started, 1),
        "sections": results,
    }


def format_report(report: dict[str, Any]) -> str:
    parts = []
    for section in report["sections"].values():
        parts += [section["title"] + ":", "", markdown_table(section["header"], section["rows"])]
        if section["notes"]:
            parts += ["", *(f"- {note}" for note in section["notes"])]
        parts.append("")
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Pulls per second: RR and WRR at n = 200; thresholding baselines beside LSA."
    )
    parser.add_argument("--quick", action="store_true", help="smaller capped runs")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile summary")
    parser.add_argument(
        "--section", action="append", choices=list(SECTIONS), help="run only this part (repeatable)"
    )
    args = parser.parse_args(argv)
    config = QUICK if args.quick else SpeedConfig()
    report = run(config, args.section)
    name = "speed-quick" if args.quick else "speed"
    if args.section:  # a partial report does not overwrite the full one
        name += "-" + "-".join(args.section)
    path = write_json(name, report)
    print(format_report(report), end="")
    if args.profile:
        print(profile(config))
    print(f"\nresults: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
