"""The harness every benchmark runs on: command line, seeds, process pool, timing, reports.

A paper reproduction keeps its grid (a frozen ``Plan`` dataclass with ``mode`` and
``processes`` fields, and the tasks it expands to), its claims and its tables; the rest is
here. Its ``main`` is one call::

    def main(argv: Sequence[str] | None = None) -> int:
        return harness.main(argv, __doc__, (QUICK, FULL), run, format_report, quick_help="...")

which gives it ``--quick``, ``--processes`` and ``--show PATH`` (the tables of a saved result),
writes ``benchmarks/results/<benchmark>-<mode>.json`` and prints the tables, the machine and
the date. Run a benchmark from the repository root as ``python -m benchmarks.NAME``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import multiprocessing
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

import screener
from screener import BernoulliRewards, simulate
from screener.algorithms import Algorithm

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "RESULTS_DIR",
    "Report",
    "Timed",
    "clock",
    "describe_machine",
    "kept_runs",
    "machine_info",
    "main",
    "markdown_table",
    "median_run",
    "new_report",
    "run_in_processes",
    "seed_of",
    "since",
    "speed_table",
    "timed",
    "write_json",
]

#: Where results and figures go: benchmarks/results, or ``SCREENER_RESULTS`` (the tests' runs
#: write there, leaving the committed figures alone).
RESULTS_DIR = Path(
    os.environ.get("SCREENER_RESULTS") or Path(__file__).resolve().parent / "results"
)
#: A benchmark's result: JSON-able, with at least "benchmark", "plan", "machine", "seconds".
Report = dict[str, Any]

_Task = TypeVar("_Task")
_Out = TypeVar("_Out")
_Plan = TypeVar("_Plan", bound="DataclassInstance")


# ----------------------------------------------------------------------------- machine
def _cpu_model() -> str:
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, Any]:
    """What a reader needs to put a timing in context."""
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "screener": screener.__version__,
    }


def describe_machine(machine: dict[str, Any]) -> str:
    """One line: CPU, cores and versions."""
    return (
        f"{machine['cpu']}, {machine['cpus']} CPUs; Python {machine['python']}, "
        f"numpy {machine['numpy']}, screener {machine['screener']}"
    )


# ------------------------------------------------------------------------ files, tables
def write_json(name: str, payload: dict[str, Any]) -> Path:
    """Write ``payload`` to ``benchmarks/results/<name>.json`` and return the path."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(payload, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return path


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub-flavoured markdown table (numbers right-aligned)."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    numeric = [
        all(_looks_numeric(row[i]) for row in cells[1:]) and len(cells) > 1
        for i in range(len(header))
    ]

    def line(row: list[str]) -> str:
        parts = [
            cell.rjust(widths[i]) if numeric[i] else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        return "| " + " | ".join(parts) + " |"

    rule = "|" + "|".join(
        "-" * (widths[i] + 1) + ":" if numeric[i] else "-" * (widths[i] + 2)
        for i in range(len(header))
    )
    return "\n".join([line(cells[0]), rule + "|", *(line(row) for row in cells[1:])])


def _looks_numeric(text: str) -> bool:
    stripped = text.replace(",", "").replace("%", "").replace("x", "").replace("/", "").strip()
    try:
        float(stripped)
    except ValueError:
        return stripped in ("", "-", "n/a")
    return True


# ---------------------------------------------------------------------- seeds, timing
def seed_of(*words: int) -> int:
    """A 32-bit seed that is a fixed function of ``words`` (through numpy's SeedSequence):
    a benchmark derives every seed from what identifies the run, so reruns are identical."""
    return int(np.random.SeedSequence(list(words)).generate_state(1, dtype=np.uint32)[0])


def timed(function: Callable[[], _Out]) -> tuple[_Out, float]:
    """``function()`` and the wall seconds it took."""
    started = time.perf_counter()
    out = function()
    return out, time.perf_counter() - started


@dataclass(frozen=True, slots=True)
class Timed:
    """One measurement: pulls made, CPU seconds of this process, wall seconds."""

    pulls: int
    cpu: float
    wall: float

    @property
    def rate(self) -> float:
        """Pulls per CPU second (other load on the machine affects it less than wall time)."""
        return self.pulls / self.cpu


def clock() -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds): the start of a ``since``."""
    return time.process_time(), time.perf_counter()


def since(pulls: int, start: tuple[float, float]) -> Timed:
    """``pulls`` made since ``start = clock()``."""
    cpu, wall = clock()
    return Timed(pulls, cpu - start[0], wall - start[1])


def median_run(runs: Sequence[Timed]) -> Timed:
    """The run of median CPU time."""
    return sorted(runs, key=lambda t: t.cpu)[len(runs) // 2]


def speed_table(
    cases: Sequence[tuple[str, Callable[[], Algorithm], int]], means: ArrayLike, repeat: int
) -> str:
    """Pulls per CPU second of each (label, fresh algorithm, batch) through ``simulate`` on
    ``BernoulliRewards(means, 1)``, the run of median CPU time of ``repeat``: a table."""
    rows: list[list[object]] = []
    for label, build, batch in cases:
        runs: list[Timed] = []
        for _ in range(repeat):
            algorithm = build()
            start = clock()
            simulate(algorithm, BernoulliRewards(means, 1), batch=batch)
            runs.append(since(algorithm.n_answered, start))
        t = median_run(runs)
        rows.append([label, f"{t.pulls:,}", f"{t.cpu:.3f}", f"{t.rate:,.0f}"])
    return markdown_table(["path", "pulls", "CPU s", "pulls/s"], rows) + "\n"


# -------------------------------------------------------------------------------- pool
def run_in_processes(
    name: str,
    function: Callable[[_Task], _Out],
    tasks: Sequence[_Task],
    processes: int,
    *,
    chunksize: int = 1,
    progress: bool = True,
    keep: Path | None = None,
) -> tuple[list[_Out], float]:
    """``function`` over ``tasks`` on ``processes`` processes: the results (in completion
    order) and the wall seconds; a progress line on stderr at most every 30 s.

    With ``keep`` (a JSON-lines file; tasks must be dataclasses, results JSON-able), each
    result is appended there as it arrives, and a task already in the file is not run again
    but its result is returned, first: a long run that was stopped resumes where it stopped.
    Delete the file to run everything again. The seconds are this call's only.
    """
    started = last_note = time.perf_counter()
    todo, results = list(tasks), []
    if keep is not None:
        done = _kept_results(keep)
        todo = [task for task in tasks if _task_key(task) not in done]
        results = [done[key] for key in map(_task_key, tasks) if key in done]
    if progress and results:
        print(f"[{name}] {len(results)} of {len(tasks)} tasks kept in {keep}", file=sys.stderr)
    with contextlib.ExitStack() as stack:
        sink = None
        if keep is not None:
            cut_short = keep.exists() and keep.stat().st_size > 0 and not _ends_a_line(keep)
            sink = stack.enter_context(keep.open("a", encoding="utf-8"))
            sink.write("\n" if cut_short else "")  # a stopped run's last line stays alone
        pool = stack.enter_context(multiprocessing.Pool(processes))
        work = _Keyed(function, keyed=keep is not None)
        for task, result in pool.imap_unordered(work, todo, chunksize=chunksize):
            results.append(result)
            if sink is not None:
                sink.write(json.dumps({"task": task, "result": result}) + "\n")
                sink.flush()
            now = time.perf_counter()
            if progress and (now - last_note > 30 or len(results) == len(tasks)):
                last_note = now
                print(
                    f"[{name}] {len(results)}/{len(tasks)} tasks, {now - started:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
    return results, time.perf_counter() - started


def kept_runs(name: str, plan: Any) -> Path | None:
    """Where ``run_in_processes`` keeps a plan's runs: ``results/<name>-<mode>.runs.jsonl``
    when the plan says ``resume`` (``--resume``), else nowhere."""
    return RESULTS_DIR / f"{name}-{plan.mode}.runs.jsonl" if plan.resume else None


def _task_key(task: object) -> str:
    return json.dumps(asdict(task), sort_keys=True)  # type: ignore[call-overload]


def _ends_a_line(path: Path) -> bool:
    with path.open("rb") as file:
        file.seek(-1, os.SEEK_END)
        return file.read(1) == b"\n"


def _kept_results(path: Path) -> dict[str, Any]:
    """Results by task key; a line cut short by a stopped run is ignored."""
    kept: dict[str, Any] = {}
    if not path.exists():
        return kept
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            entry = json.loads(line)
            kept[entry["task"]] = entry["result"]
    return kept


@dataclass(frozen=True)
class _Keyed:
    """``function`` that also returns its task's key when ``keyed`` (a picklable wrapper for
    the pool; only kept runs need keys, and only their tasks must be dataclasses)."""

    function: Callable[[Any], Any]
    keyed: bool

    def __call__(self, task: Any) -> tuple[str, Any]:
        return _task_key(task) if self.keyed else "", self.function(task)


# ----------------------------------------------------------------------------- reports
def new_report(name: str, plan: DataclassInstance, seconds: float, **sections: Any) -> Report:
    """A reproduction's result: its name, plan, machine, wall seconds, then ``sections``."""
    return {
        "benchmark": name,
        "plan": asdict(plan),
        "machine": machine_info(),
        "seconds": round(seconds, 1),
        **sections,
    }


def _print_report(report: Report, format_report: Callable[[Report], str]) -> None:
    print(format_report(report), end="")
    machine = report.get("machine")
    if machine:
        print(f"\nRun on {machine['date']}: {describe_machine(machine)}.")


def main(
    argv: Sequence[str] | None,
    doc: str | None,
    plans: tuple[_Plan, _Plan],
    run: Callable[[_Plan], Report],
    format_report: Callable[[Report], str],
    *,
    quick_help: str,
    options: Callable[[argparse.ArgumentParser], None] | None = None,
    adjust: Callable[[_Plan, argparse.Namespace], _Plan] | None = None,
    result_name: Callable[[_Plan], str] | None = None,
    speed: Callable[[], str] | None = None,
    after: Callable[[Report], None] | None = None,
) -> int:
    """A reproduction's command line.

    ``plans`` is (quick, full); ``options`` adds the benchmark's own flags and ``adjust``
    applies them to the chosen plan; ``result_name`` names the result file (default
    ``<benchmark>-<mode>``); ``speed``, when given, is what ``--speed`` prints instead of a
    run; ``after`` runs once the tables are printed (a figure, say).
    """
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0] if doc else None)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--processes", type=int, default=2, help="worker processes (default 2)")
    if speed is not None:
        parser.add_argument(
            "--speed", action="store_true", help="only the pulls-per-second section"
        )
    parser.add_argument("--show", type=Path, help="print the tables of a saved JSON result")
    resumable = any(field.name == "resume" for field in fields(plans[1]))
    if resumable:
        parser.add_argument(
            "--resume",
            action="store_true",
            help="keep each run in results/NAME-MODE.runs.jsonl as it ends and skip the runs "
            "already there (a stopped run goes on where it stopped)",
        )
    if options is not None:
        options(parser)
    args = parser.parse_args(argv)
    if speed is not None and args.speed:
        print(speed(), end="")
        return 0
    if args.show is not None:
        _print_report(json.loads(args.show.read_text(encoding="utf-8")), format_report)
        return 0
    plan = replace(plans[0] if args.quick else plans[1], processes=args.processes)
    if resumable and args.resume:
        plan = replace(plan, resume=True)
    if adjust is not None:
        plan = adjust(plan, args)
    report = run(plan)
    name = f"{report['benchmark']}-{report['plan']['mode']}"
    path = write_json(name if result_name is None else result_name(plan), report)
    _print_report(report, format_report)
    if after is not None:
        after(report)
    print(f"\nresults: {path}")
    return 0
