"""Concurrency: how well every algorithm keeps a window of C questions in flight (issue 19).

Every registered algorithm (``screener.algorithms.registry.ALGORITHMS``) runs on a small
instance that fits it, driven in VIRTUAL time by a discrete-event loop that does what the
orchestrator does (``screener.orchestrator.runner``): at most C pulls in flight; each answer
arrives after an exponential(1) delay drawn from a seeded generator; answers are told one at a
time in the order they complete, and after each one the window is refilled with
``ask(C - pending)``; when the algorithm says DONE the pulls still in flight are cancelled. No
real sleeping: the clock jumps from one answer to the next.

Reported per algorithm (means over the seeds; 3 by default, 1 with ``--quick``):

* ``pulls C=64``: questions asked (cancelled ones included: a live crowd may answer and be
  paid for them); ``pulls C=1``: the same run one question at a time, so the difference is
  what filling the window costs in extra questions;
* ``wall``: virtual time to DONE, in units of the mean answer delay;
* ``ideal``: ``pulls / C``, the time a window that never has a free slot would take for the
  same pulls (a full window answers C questions per unit of time on average);
* ``ratio = wall / ideal`` (1 is perfect, about C / mean in flight); ``in flight``: the
  time-average of the pulls in flight;
* ``wall C=inf`` (zero-waste algorithms only: toloka-rule, quiz, crowd-prior): the same
  run with no limit on the window (``CAP`` pulls in flight). They ask only pulls that are
  surely needed, so this is the chain of decision points each worker passes through, one
  round trip each, which no schedule can overlap: on their short runs, where ``pulls / C``
  is a few delays, it is the fair yardstick, and ``vs inf`` = ``wall / wall C=inf`` says
  what the window of C costs on top of it. (An algorithm that asks ahead would spend the
  cap at once there: no yardstick.)

``--before DIR`` measures the same cases a second time with the ``screener`` package of DIR
(e.g. a ``git worktree`` of HEAD), in a subprocess, and puts both ratios side by side: one run
of this command gives the before/after table of BENCHMARKS.md.

Usage::

    python -m benchmarks.concurrency [--quick] [--before DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.harness import machine_info, markdown_table
from benchmarks.instances import ksigma_instance, threshold_setup, topk_instance
from screener.algorithms.base import Algorithm
from screener.algorithms.registry import create_algorithm

__all__ = ["CASES", "Case", "Measure", "case_table", "drive_virtual", "main", "measure"]

FloatArray = NDArray[np.float64]
WINDOW = 64
#: Every run stops here at the latest (stop reason BUDGET_SPENT): keeps the script short.
CAP = 10_000


@dataclass(frozen=True, slots=True)
class Case:
    """One algorithm on one instance: ``means`` are Bernoulli success rates per worker."""

    algorithm: str
    instance: str
    means: tuple[float, ...]
    params: tuple[tuple[str, Any], ...] = ()
    #: Asks only surely-needed pulls: the unlimited window's wall is a fair yardstick.
    zero_waste: bool = False

    def build(self, seed: int) -> Algorithm:
        params = {"budget": CAP, "seed": seed, **dict(self.params)}
        return create_algorithm(self.algorithm, len(self.means), params)


@dataclass(frozen=True, slots=True)
class Measure:
    """One driven run: questions asked, virtual wall time, time-average in flight, stop."""

    pulls: int
    wall: float
    in_flight: float
    stop: str


def drive_virtual(
    algorithm: Algorithm, means: FloatArray, window: int, rng: np.random.Generator
) -> Measure:
    """Run ``algorithm`` to DONE with at most ``window`` pulls in flight, each answered
    (Bernoulli(means[arm])) after an exponential(1) delay: the orchestrator's loop, in
    virtual time."""
    now = 0.0
    area = 0.0  # integral of the in-flight count over time
    flight: list[tuple[float, int, float]] = []  # (arrival time, pull id, reward)
    while True:
        room = window - algorithm.n_pending
        if room > 0:
            ask = algorithm.ask(room)
            if ask.done:
                break
            rewards = (rng.random(len(ask)) < means[ask.arms]).astype(np.float64)
            delays = rng.exponential(1.0, len(ask))
            for pull_id, delay, reward in zip(
                ask.ids.tolist(), delays.tolist(), rewards.tolist(), strict=True
            ):
                heapq.heappush(flight, (now + delay, pull_id, reward))
        if not flight:
            raise AssertionError(f"{algorithm.name} waits with nothing in flight")
        arrival, pull_id, reward = heapq.heappop(flight)
        area += (len(flight) + 1) * (arrival - now)
        now = arrival
        algorithm.tell(pull_id, reward)
    stop = algorithm.stop_reason
    return Measure(algorithm.n_asked, now, area / now if now > 0 else 0.0, str(stop))


def _cases() -> list[Case]:
    ksigma = tuple(ksigma_instance(10, 2.0, 0, min_gap=0.15).tolist())
    topk = tuple(topk_instance("synthetic-0.5", 20, 1).tolist())
    setup = tuple(threshold_setup(1).tolist())
    # One worker far below nine spread ones: GOLD (rho = 0.8) isolates it, then a second one.
    gold = (0.02, 0.35, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)
    crowd = tuple(np.concatenate([np.linspace(0.75, 0.95, 16), [0.3, 0.4, 0.5, 0.55]]).tolist())
    bar = (("threshold", 0.5),)
    fixed = (("threshold", 0.5), ("budget", 2_000))
    # The Agresti-Coull interval (an option before and after issue 19) keeps the k-sigma
    # runs cheap: the benchmark is about scheduling, not about the interval.
    ac = (("interval", "agresti-coull"),)
    plan: list[tuple[str, str, tuple[float, ...], tuple[tuple[str, Any], ...]]] = [
        ("rr", "k-sigma n=10", ksigma, ac),
        ("wrr", "k-sigma n=10", ksigma, ac),
        ("nrr", "k-sigma n=10", ksigma, ac),
        ("ib", "k-sigma n=10", ksigma, (*ac, ("epsilon", 0.05))),
        ("ade", "k-sigma n=10", ksigma, ()),
        ("gold", "1 low of 10", gold, (*ac, ("rho", 0.8))),
        ("lsa", "Tao setup 1", setup, fixed),
        ("confident-thresholding", "Tao setup 1", setup, bar),
        ("fdr-thresholding", "Tao setup 1", setup, bar),
        ("uniform-thresholding", "Tao setup 1", setup, fixed),
        ("apt", "Tao setup 1", setup, fixed),
        ("ucbe", "Tao setup 1", setup, fixed),
        ("opt-kg", "Tao setup 1", setup, fixed),
        ("adaptive-topk", "synthetic-0.5 top-1", topk, (("k", 1), ("eps", 0.1))),
        ("optmai", "synthetic-0.5 top-1", topk, (("k", 1), ("eps", 0.1), ("budget", 4_000))),
        ("clucb-pac", "synthetic-0.5 top-1", topk, (("k", 1), ("eps", 0.1))),
        ("clucb-pac", "synthetic-0.5 top-3", topk, (("k", 3), ("eps", 0.1))),
        ("crowd-prior", "16 good, 4 bad", crowd, (("threshold", 0.7),)),
        ("toloka-rule", "16 good, 4 bad", crowd, (("threshold", 0.7),)),
        ("quiz", "16 good, 4 bad", crowd, (("threshold", 0.7),)),
    ]
    zero_waste = {"crowd-prior", "toloka-rule", "quiz"}
    return [
        Case(name, label, means, params, name in zero_waste) for name, label, means, params in plan
    ]


CASES = _cases()


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values))


def measure(case: Case, seeds: Sequence[int], window: int = WINDOW) -> dict[str, Any]:
    """Mean pulls, wall, ideal, ratio and in-flight at ``window`` and pulls at 1, over seeds."""
    means = np.asarray(case.means, dtype=np.float64)
    wide: list[Measure] = []
    single: list[Measure] = []
    unlimited: list[Measure] = []
    for seed in seeds:
        wide.append(drive_virtual(case.build(seed), means, window, np.random.default_rng(seed)))
        single.append(drive_virtual(case.build(seed), means, 1, np.random.default_rng(seed)))
        if case.zero_waste:
            free = drive_virtual(case.build(seed), means, CAP, np.random.default_rng(seed))
            unlimited.append(free)
    pulls = _mean([m.pulls for m in wide])
    wall = _mean([m.wall for m in wide])
    ideal = pulls / window
    return {
        "algorithm": case.algorithm,
        "instance": case.instance,
        "pulls": pulls,
        "pulls_1": _mean([m.pulls for m in single]),
        "wall": wall,
        "ideal": ideal,
        "ratio": wall / ideal,
        "in_flight": _mean([m.in_flight for m in wide]),
        "wall_unlimited": _mean([m.wall for m in unlimited]) if unlimited else None,
        "stops": sorted({m.stop for m in wide + single}),
    }


def run(seeds: Sequence[int], *, progress: bool = True) -> list[dict[str, Any]]:
    rows = []
    for case in CASES:
        started = time.perf_counter()
        rows.append(measure(case, seeds))
        if progress:
            took = time.perf_counter() - started
            print(f"[concurrency] {case.algorithm}: {took:.1f} s", file=sys.stderr, flush=True)
    return rows


def _before(directory: Path, seeds: Sequence[int]) -> list[dict[str, Any]]:
    """The same rows with the ``screener`` package of ``directory``, in a subprocess."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "before.json"
        # screener is imported from DIR first; this repository's root, put ahead of DIR next,
        # then only serves ``benchmarks`` (modules already imported are not looked up again).
        code = (
            "import sys, runpy; sys.path.insert(0, sys.argv[1]); import screener.algorithms; "
            "assert screener.__file__.startswith(sys.argv[1]), screener.__file__; "
            "sys.path.insert(0, sys.argv[2]); "
            "sys.argv = [sys.argv[0], '--rows-only', sys.argv[3], '--seeds', sys.argv[4]]; "
            "runpy.run_module('benchmarks.concurrency', run_name='__main__', alter_sys=True)"
        )
        seed_text = ",".join(str(s) for s in seeds)
        root = str(Path(__file__).resolve().parents[1])
        command = [sys.executable, "-c", code, str(directory), root, str(out), seed_text]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        subprocess.run(command, check=True, env=env)
        rows: list[dict[str, Any]] = json.loads(out.read_text(encoding="utf-8"))
        return rows


def case_table(rows: Sequence[dict[str, Any]], before: Sequence[dict[str, Any]] | None) -> str:
    """The markdown table: one line per case, the ratio before beside it when measured."""
    header = ["algorithm", "instance", "pulls C=1", "pulls C=64", "wall", "ideal", "ratio"]
    header += ["in flight", "wall C=inf", "vs inf"]
    if before is not None:
        header = [*header[:2], "pulls C=64 before", *header[2:], "ratio before"]
        header.append("vs inf before")
    lines = []
    for index, row in enumerate(rows):
        cells: list[object] = [
            row["algorithm"], row["instance"], f"{row['pulls_1']:,.0f}", f"{row['pulls']:,.0f}",
            f"{row['wall']:.1f}", f"{row['ideal']:.1f}", f"{row['ratio']:.2f}",
            f"{row['in_flight']:.1f}", *_versus_unlimited(row),
        ]  # fmt: skip
        if before is not None:
            old = before[index]
            assert (old["algorithm"], old["instance"]) == (row["algorithm"], row["instance"])
            cells = [*cells[:2], f"{old['pulls']:,.0f}", *cells[2:], f"{old['ratio']:.2f}"]
            cells.append(_versus_unlimited(old)[1])
        lines.append(cells)
    return markdown_table(header, lines)


def _versus_unlimited(row: dict[str, Any]) -> tuple[str, str]:
    """``wall C=inf`` and ``wall / wall C=inf``, or dashes where there is no yardstick."""
    unlimited = row.get("wall_unlimited")
    if unlimited is None:
        return "-", "-"
    return f"{unlimited:.1f}", f"{row['wall'] / unlimited:.2f}"


def _stops_note(rows: Sequence[dict[str, Any]]) -> str:
    """Why the runs ended (a capped run ends ``budget spent``)."""
    return "stop reasons: " + "; ".join(f"{r['algorithm']} {'/'.join(r['stops'])}" for r in rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="1 seed instead of 3")
    parser.add_argument("--before", type=Path, help="also measure the screener package of DIR")
    parser.add_argument("--json", type=Path, help="write the rows and machine info here")
    parser.add_argument("--seeds", help=argparse.SUPPRESS)
    parser.add_argument("--rows-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    count = 1 if args.quick else 3
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else list(range(count))
    if args.rows_only is not None:  # the subprocess of --before
        args.rows_only.write_text(json.dumps(run(seeds, progress=False)), encoding="utf-8")
        return 0
    started = time.perf_counter()
    rows = run(seeds)
    before = None if args.before is None else _before(args.before.resolve(), seeds)
    machine = machine_info()
    print(f"# Concurrency, C = {WINDOW}, exponential(1) answer delays, {len(seeds)} seed(s)")
    print(f"{machine['date']}; {machine['cpu']}, {machine['cpus']} CPUs; numpy {machine['numpy']}")
    print()
    print(case_table(rows, before))
    print()
    print(_stops_note(rows))
    print(f"took {time.perf_counter() - started:.0f} s")
    if args.json is not None:
        payload = {"machine": machine, "seeds": seeds, "rows": rows, "before": before}
        args.json.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
