"""Simulation speed: pulls per second of RR, WRR, LSA and GOLD beside a compiled reference.

The reference (``benchmarks.compiled``, numba) runs each algorithm one pull at a time, the
papers' order, with the same counter-based reward draws and the same formulas, so on the same
instance and seed it makes exactly the pulls of ``simulate(..., batch=1)``: every section checks
that (pull counts per worker; GOLD's terminal rounds too) and says so loudly when they differ.
Every table prints ``ours / compiled``, the figure to steer by. numba compiles the loops once
before anything is timed (the seconds are reported).

Part 1 ("simulate"): RR and WRR at n = 200 through ``screener.simulate`` with batch = 1 and
batch = n over the first ``budget`` pulls, then to termination, each beside the compiled loop
over the same pulls (to termination: the compiled loop's own stop, which batch 1 reaches
exactly and batch n overshoots by less than a batch); and both to termination on a small
instance, compiled against ``simulate(..., batch=1)``.

Rates are pulls per CPU second of this process (``time.process_time``; wall seconds are shown
too), and every ratio divides two rates measured in the same run, one after the other, so other
work on the machine disturbs them less (it still adds noise: rerun to see the spread).

Part 2 ("orchestrator"): the same algorithms through the journaled asyncio orchestrator with a
zero-latency simulated oracle, at concurrency 16, 64 and 256, beside the compiled loop.

Part 3 ("thresholding"): LSA and the fixed-budget baselines Opt-KG and Uniform through
``simulate`` (n = 20 and 200, batch 1 and batch n, bar 0.5) beside compiled LSA: ``alg / LSA``
is the figure issue 19 watches (Opt-KG at least half of LSA's speed), ``ours / compiled`` the
distance to compiled LSA.

Part 4 ("gold"): GOLD at n = 400 (an upper outlier group, eps 2.5, rho 0.9) with batch 1 and
batch n beside compiled GOLD.

Usage::

    python -m benchmarks.speed [--quick] [--profile] [--section NAME ...]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks import compiled
from benchmarks.harness import (
    Timed,
    clock,
    describe_machine,
    machine_info,
    markdown_table,
    median_run,
    since,
    write_json,
)
from benchmarks.instances import gold_instance, ksigma_instance
from screener import BernoulliRewards, RoundRobin, WeightedRoundRobin, simulate
from screener.algorithms import GOLD, Algorithm
from screener.algorithms.ksigma import KSigmaAlgorithm
from screener.algorithms.registry import create_algorithm
from screener.crowd import WorkerPool
from screener.orchestrator import RunOptions
from screener.runs.run_plan import RunPlan
from screener.runs.session import start_run

__all__ = [
    "SECTIONS",
    "Section",
    "SpeedConfig",
    "format_report",
    "measure_gold",
    "measure_thresholding",
    "run",
]

FloatArray = NDArray[np.float64]
TARGET = 1_000_000  # pulls per second, simulated (issue "v0.1")
JOURNALED_TARGET = 20_000  # pulls per second through the orchestrator, journaled to SQLite
ALGORITHMS: dict[str, type[KSigmaAlgorithm]] = {"rr": RoundRobin, "wrr": WeightedRoundRobin}
COMPILED: dict[str, Callable[..., compiled.Run]] = {
    "rr": compiled.round_robin,
    "wrr": compiled.weighted_round_robin,
}


@dataclass(frozen=True, slots=True)
class SpeedConfig:
    n: int = 200
    k: float = 2.0
    instance: int = 0  # ksigma_instance(200, 2, 0): RR needs ~3.0e6 pulls, WRR ~1.1e6
    seed: int = 1
    delta: float = 0.1
    #: Pulls of the capped comparison (the slow paths run ~7k to ~30k pulls/s).
    budget: int = 100_000
    #: Repetitions of the fast (batch = n) measurements; the median is reported.
    repeat: int = 5
    cap: int = 10_000_000
    #: Pulls of each thresholding run with batch 1 (ten times as many with batch n).
    threshold_pulls: int = 5_000
    gold_n: int = 400
    #: Pulls of GOLD with batch 1 (ten times as many with batch n).
    gold_pulls: int = 10_000


QUICK = SpeedConfig(budget=20_000, repeat=3, threshold_pulls=2_000, gold_pulls=4_000)


@dataclass(slots=True)
class Section:
    title: str
    header: list[str]
    rows: list[list[object]]
    notes: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------------ measurements
def _ours(
    config: SpeedConfig, name: str, means: FloatArray, batch: int, budget: int
) -> tuple[Timed, KSigmaAlgorithm]:
    algorithm = ALGORITHMS[name](config.n, k=config.k, delta=config.delta, budget=budget)
    start = clock()
    simulate(algorithm, BernoulliRewards(means, config.seed), batch=batch)
    return since(algorithm.n_answered, start), algorithm


def _compiled_ksigma(config: SpeedConfig, name: str, means: FloatArray, budget: int) -> Timed:
    """The compiled loop's run, timed like ours (CPU and wall seconds of the call)."""
    start = clock()
    run_ = COMPILED[name](means, config.seed, k=config.k, delta=config.delta, budget=budget)
    return since(run_.pulls, start)


def _ratio(rate: float, reference: float) -> str:
    ratio = rate / reference
    return f"{ratio:.3f}x" if ratio < 0.1 else f"{ratio:.2f}x" if ratio < 10 else f"{ratio:.1f}x"


def same_pulls(ours: NDArray[np.int64], theirs: NDArray[np.int64], label: str) -> bool:
    """Whether two runs made the same pulls per worker; says so on stderr when not."""
    same = bool(np.array_equal(ours, theirs))
    if not same:
        differing = int((ours != theirs).sum())
        print(
            f"!!! {label}: ours and the compiled loop DIFFER on {differing} workers "
            f"({int(ours.sum()):,} against {int(theirs.sum()):,} pulls)",
            file=sys.stderr,
            flush=True,
        )
    return same


def measure_simulate(config: SpeedConfig) -> Section:
    """Part 1: ``simulate`` (batch 1 and n) beside the compiled loop, per algorithm."""
    n = config.n
    means = ksigma_instance(n, config.k, config.instance)
    rows: list[list[object]] = []
    notes: list[str] = []
    data: dict[str, Any] = {}
    for name in ALGORITHMS:
        label = name.upper()
        budget = config.budget
        # The same first `budget` pulls: compiled, then simulate with batch 1 and n.
        reference = median_run(
            [_compiled_ksigma(config, name, means, budget) for _ in range(config.repeat)]
        )
        check = COMPILED[name](means, config.seed, k=config.k, delta=config.delta, budget=budget)
        one, one_alg = _ours(config, name, means, 1, budget)
        fast = median_run([_ours(config, name, means, n, budget)[0] for _ in range(config.repeat)])
        # And whole runs, to termination (ledger growth and the late, sparse phase included).
        whole = COMPILED[name](means, config.seed, k=config.k, delta=config.delta,
                               budget=config.cap)  # fmt: skip
        whole_ref = Timed(whole.pulls, whole.cpu, whole.cpu)
        full_runs = [_ours(config, name, means, n, config.cap) for _ in range(config.repeat)]
        full = median_run([t for t, _ in full_runs])
        full_alg = full_runs[0][1]
        same = same_pulls(one_alg.stats.count, check.counts, f"{label}, first {budget:,} pulls")
        measured = {
            "compiled": (reference, reference),
            "batch_1": (one, reference),
            f"batch_{n}": (fast, reference),
            "compiled_to_termination": (whole_ref, whole_ref),
            f"batch_{n}_to_termination": (full, whole_ref),
        }
        data[name] = {key: asdict(t) for key, (t, _) in measured.items()}
        data[name]["batch_1_matches_compiled"] = same
        data[name]["compiled_full_evaluations_to_termination"] = whole.evaluations
        data[name]["stop_reason_to_termination"] = str(full_alg.stop_reason)
        paths = [
            "compiled (numba), batch = 1",
            "simulate, batch = 1",
            f"simulate, batch = {n}",
            "compiled (numba), batch = 1, to termination",
            f"simulate, batch = {n}, to termination",
        ]
        for path, (timed, yardstick) in zip(paths, measured.values(), strict=True):
            rows.append([label, path, f"{timed.pulls:,}", f"{timed.cpu:.3f}", f"{timed.wall:.3f}",
                         f"{timed.rate:,.0f}", _ratio(timed.rate, yardstick.rate)])  # fmt: skip
        verdict = "meets" if full.rate >= TARGET else "misses"
        notes.append(
            f"{label}: batch = {n} to termination runs {full.rate:,.0f} pulls per CPU second, "
            f"{verdict} the {TARGET:,} pulls/s target, {_ratio(full.rate, whole_ref.rate)} the "
            f"compiled loop's {whole_ref.rate:,.0f}; simulate(batch=1) "
            f"{'makes exactly the same pulls as' if same else 'DIFFERS from'} the compiled "
            f"loop over the first {budget:,} pulls. The compiled run to termination needed "
            f"theta's interval over all workers at {whole.evaluations:,} of its "
            f"{whole.pulls:,} stopping checks (the others were settled in O(1))."
        )
    notes += _termination_check(config)
    return Section(
        title=(
            f"simulate vs the compiled loop: n = {n}, k = {config.k:g}, "
            f"ksigma_instance({n}, {config.k:g}, {config.instance}), reward seed {config.seed}; "
            f"first {config.budget:,} pulls, and the full run; pulls/s per CPU second of this "
            f"process; the compiled and batch-{n} capped figures are the median of "
            f"{config.repeat}"
        ),
        header=["alg", "path", "pulls", "CPU s", "wall s", "pulls/s", "ours / compiled"],
        rows=rows,
        notes=notes,
        data=data,
    )


def _termination_check(config: SpeedConfig) -> list[str]:
    """RR and WRR to termination on a small instance: ours (batch 1) and the compiled loop."""
    n, k, instance = 20, 2.5, 5  # a cheap instance: a few thousand pulls
    means = ksigma_instance(n, k, instance)
    notes = []
    for name, cls in ALGORITHMS.items():
        run_ = COMPILED[name](means, config.seed, k=k, delta=config.delta, budget=config.cap)
        algorithm = cls(n, k=k, delta=config.delta, budget=config.cap)
        result = simulate(algorithm, BernoulliRewards(means, config.seed), batch=1)
        label = f"{name.upper()} to termination on ksigma_instance({n}, {k:g}, {instance})"
        same = same_pulls(algorithm.stats.count, run_.counts, label)
        verdict = "the same pulls per worker" if same else "DIFFERENT pulls"
        notes.append(
            f"{label}: compiled {run_.pulls:,} pulls, simulate(batch=1) "
            f"{result.total_pulls:,} pulls, {verdict}"
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
            reference = _compiled_ksigma(config, name, means, config.budget)
            base_rate = reference.pulls / reference.wall
            rows.append([name.upper(), "compiled (numba), batch = 1", f"{reference.pulls:,}",
                         f"{reference.wall:.2f}", f"{base_rate:,.0f}", "1.00x"])  # fmt: skip
            for concurrency in (16, 64, 256):
                timed = _orchestrated(config, name, means, concurrency, Path(folder))
                rate = timed.pulls / timed.wall
                data[f"{name}_{concurrency}"] = asdict(timed)
                rows.append([name.upper(), f"orchestrator + SQLite, concurrency {concurrency}",
                             f"{timed.pulls:,}", f"{timed.wall:.2f}", f"{rate:,.0f}",
                             _ratio(rate, base_rate)])  # fmt: skip
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
        header=["alg", "path", "pulls", "wall s", "pulls/s", "ours / compiled"],
        rows=rows,
        notes=notes,
        data=data,
    )


#: Thresholding algorithms of part 3; the first is the yardstick of the ratios.
THRESHOLDING = ("lsa", "opt-kg", "uniform-thresholding")
COMPILED_LSA = "lsa, compiled (numba)"


def thresholding_instances() -> dict[int, FloatArray]:
    """n = 20: Tao et al. 2019's setup 2 (0.405 + (i - 1) / 100); n = 200: 0.3 to 0.7."""
    return {20: 0.405 + np.arange(20) / 100.0, 200: np.linspace(0.3, 0.7, 200)}


def _thresholding_run(
    name: str, means: FloatArray, seed: int, budget: int, batch: int
) -> tuple[Timed, Algorithm]:
    params = {"threshold": 0.5, "budget": budget}
    algorithm = create_algorithm(name, means.size, params)
    start = clock()
    simulate(algorithm, BernoulliRewards(means, seed), batch=batch)
    return since(algorithm.n_answered, start), algorithm


def _compiled_lsa(means: FloatArray, seed: int, budget: int) -> tuple[Timed, compiled.Run]:
    start = clock()
    run_ = compiled.lsa(means, seed, threshold=0.5, budget=budget)
    return since(run_.pulls, start), run_


def measure_thresholding(config: SpeedConfig) -> Section:
    """Part 3: LSA, Opt-KG and Uniform through ``simulate`` beside compiled LSA, in the
    same run.

    The algorithms take turns within each repetition (compiled LSA, LSA, Opt-KG, Uniform,
    compiled LSA, ...), so a slow spell of the machine hits them alike; the median of
    ``repeat`` runs is reported. With batch 1, LSA's pulls are checked against the compiled
    loop's.
    """
    rows: list[list[object]] = []
    notes: list[str] = []
    data: dict[str, Any] = {}
    for n, means in thresholding_instances().items():
        for batch in (1, n):
            budget = config.threshold_pulls * (1 if batch == 1 else 10)
            runs: dict[str, list[Timed]] = {name: [] for name in (COMPILED_LSA, *THRESHOLDING)}
            last: dict[str, Algorithm] = {}
            for _ in range(config.repeat):
                reference, check = _compiled_lsa(means, config.seed, budget)
                runs[COMPILED_LSA].append(reference)
                for name in THRESHOLDING:
                    measured, last[name] = _thresholding_run(
                        name, means, config.seed, budget, batch
                    )
                    runs[name].append(measured)
            same = None
            if batch == 1:  # the last repetition's LSA against the compiled loop
                same = same_pulls(last["lsa"].stats.count, check.counts, f"LSA, n = {n}")
            timed = {name: median_run(measured) for name, measured in runs.items()}
            compiled_rate = timed[COMPILED_LSA].rate
            yardstick = timed[THRESHOLDING[0]].rate
            for name, measured in timed.items():
                data[f"{name}_n{n}_batch{batch}"] = asdict(measured)
                rows.append([n, 1 if name == COMPILED_LSA else batch, name, f"{measured.pulls:,}",
                             f"{measured.cpu:.4f}", f"{measured.rate:,.0f}",
                             _ratio(measured.rate, yardstick),
                             _ratio(measured.rate, compiled_rate)])  # fmt: skip
            data[f"lsa_n{n}_batch{batch}_matches_compiled"] = same
            ratio = timed["opt-kg"].rate / yardstick
            verdict = "meets" if ratio >= 0.5 else "misses"
            check_note = ""
            if same is not None:
                check_note = (
                    " LSA (batch 1) makes "
                    + ("exactly the same pulls as" if same else "DIFFERENT pulls from")
                    + " the compiled loop."
                )
            notes.append(
                f"n = {n}, batch {batch}: Opt-KG runs at {ratio:.2f}x LSA's speed, {verdict} "
                f"the 0.5x target; LSA at {_ratio(yardstick, compiled_rate)} compiled "
                f"LSA's.{check_note}"
            )
    return Section(
        title=(
            "fixed-budget thresholding through simulate, bar 0.5, reward seed "
            f"{config.seed}: {config.threshold_pulls:,} pulls with batch 1, "
            f"{10 * config.threshold_pulls:,} with batch n; compiled LSA (one pull at a time) "
            f"over the same pulls; pulls per CPU second, the median of {config.repeat}"
        ),
        header=[
            "n",
            "batch",
            "alg",
            "pulls",
            "CPU s",
            "pulls/s",
            "alg / LSA",
            "ours / compiled LSA",
        ],
        rows=rows,
        notes=notes,
        data=data,
    )


def _gold_run(
    config: SpeedConfig, means: FloatArray, batch: int, budget: int
) -> tuple[Timed, GOLD]:
    algorithm = GOLD(config.gold_n, eps=2.5, rho=0.9, delta=config.delta, budget=budget)
    start = clock()
    simulate(algorithm, BernoulliRewards(means, config.seed), batch=batch)
    return since(algorithm.n_answered, start), algorithm


def _compiled_gold(
    config: SpeedConfig, means: FloatArray, budget: int
) -> tuple[Timed, compiled.Run, NDArray[np.int64]]:
    start = clock()
    run_, rounds = compiled.gold(means, config.seed, eps=2.5, rho=0.9, delta=config.delta,
                                 budget=budget)  # fmt: skip
    return since(run_.pulls, start), run_, rounds


def measure_gold(config: SpeedConfig) -> Section:
    """Part 4: GOLD through ``simulate`` (batch 1 and n) beside compiled GOLD; with batch 1
    the pulls and every worker's terminal round are checked against the compiled loop's."""
    n = config.gold_n
    means = gold_instance(n, 2.5, "upper", 0.9).means
    rows: list[list[object]] = []
    notes: list[str] = []
    data: dict[str, Any] = {}
    for batch in (1, n):
        budget = config.gold_pulls * (1 if batch == 1 else 10)
        references = [_compiled_gold(config, means, budget) for _ in range(config.repeat)]
        reference = median_run([timed for timed, _, _ in references])
        ours, algorithm = _gold_run(config, means, batch, budget)
        data[f"compiled_{budget}"] = asdict(reference)
        data[f"batch_{batch}"] = asdict(ours)
        label = f"compiled (numba), batch = 1, {budget:,} pulls"
        rows.append(["GOLD", label, f"{reference.pulls:,}", f"{reference.cpu:.4f}",
                     f"{reference.rate:,.0f}", "1.00x"])  # fmt: skip
        rows.append(["GOLD", f"simulate, batch = {batch}", f"{ours.pulls:,}", f"{ours.cpu:.3f}",
                     f"{ours.rate:,.0f}", _ratio(ours.rate, reference.rate)])  # fmt: skip
        if batch == 1:
            _, run_, rounds = references[0]
            same = same_pulls(algorithm.stats.count, run_.counts, f"GOLD, n = {n}")
            same = same and bool(np.array_equal(algorithm.rounds, rounds))
            data["batch_1_matches_compiled"] = same
            notes.append(
                f"GOLD, batch 1: {'exactly the same' if same else 'DIFFERENT'} pulls and "
                f"terminal rounds as the compiled loop over {budget:,} pulls "
                f"({int(algorithm.terminal.sum())} workers terminal, stop: "
                f"{algorithm.stop_reason})."
            )
    return Section(
        title=(
            f"GOLD through simulate vs the compiled loop: n = {n}, gold_instance({n}, 2.5, "
            f"'upper', 0.9), eps 2.5, rho 0.9, mixture radii, reward seed {config.seed}; "
            f"pulls per CPU second; compiled figures the median of {config.repeat}"
        ),
        header=["alg", "path", "pulls", "CPU s", "pulls/s", "ours / compiled"],
        rows=rows,
        notes=notes,
        data=data,
    )


#: Sections of the speed report, run in this order.
SECTIONS: dict[str, Callable[[SpeedConfig], Section]] = {
    "simulate": measure_simulate,
    "orchestrator": measure_orchestrator,
    "thresholding": measure_thresholding,
    "gold": measure_gold,
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
    compile_seconds = compiled.warm_up()  # numba compiles here, not inside a timing
    for name in chosen:
        section = SECTIONS[name](config)
        results[name] = asdict(section)
    return {
        "benchmark": "speed",
        "config": asdict(config),
        "machine": machine_info(),
        "seconds": round(time.perf_counter() - started, 1),
        "compile_seconds": round(compile_seconds, 1),
        "sections": results,
    }


def format_report(report: dict[str, Any]) -> str:
    parts = []
    for section in report["sections"].values():
        parts += [section["title"] + ":", "", markdown_table(section["header"], section["rows"])]
        if section["notes"]:
            parts += ["", *(f"- {note}" for note in section["notes"])]
        parts.append("")
    machine = report["machine"]
    parts.append(
        f"numba compiled the reference loops in {report.get('compile_seconds', 0.0):.1f} s "
        f"(before any timing). Run on {machine['date']}: {describe_machine(machine)}."
    )
    return "\n".join(parts) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Pulls per second of RR, WRR, LSA and GOLD beside compiled reference loops."
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
