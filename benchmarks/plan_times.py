"""How long `screener plan` keeps a requester waiting: wall seconds of the command, started
as a user starts it (a fresh interpreter, `python -m screener plan ... --json -q`), for the
cases issue 38 names, optionally beside another checkout of screener (``--against PATH``, e.g.
a worktree of an earlier commit), alternating the two so that both see the same machine.
Each case's output is compared between the two: a speed-up that changed a plan says so.

Usage::

    python -m benchmarks.plan_times [--repeat 3] [--against ../screener-before]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.harness import describe_machine, machine_info, markdown_table

__all__ = ["CASES", "main", "time_case"]

ROOT = Path(__file__).resolve().parent.parent

#: (name, arguments of `screener`).
CASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the default job", ("plan",)),
    ("pool30, crowd-prior", ("plan", "examples/pool30.csv", "-a", "crowd-prior",
                             "-p", "threshold=0.6")),
    ("200 workers, crowd-prior", ("plan", "--workers", "200", "-a", "crowd-prior",
                                  "-p", "threshold=0.6")),
    ("200 workers, wrr, budget 20000", ("plan", "--workers", "200", "-a", "wrr",
                                        "--budget", "20000")),
    ("200 workers, confident-thresholding", ("plan", "--workers", "200",
                                             "-a", "confident-thresholding",
                                             "--threshold", "0.6")),
)  # fmt: skip


def time_case(checkout: Path, arguments: Sequence[str], runs: int) -> tuple[float, str]:
    """Wall seconds of `python -m screener ARGUMENTS --runs RUNS --json -q` run in
    ``checkout`` (its screener package first on the path), and what it printed."""
    command = [sys.executable, "-m", "screener", *arguments, "--runs", str(runs), "--json", "-q"]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=checkout, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, done.stdout


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each case")
    parser.add_argument("--runs", type=int, default=100, help="simulated runs per plan")
    parser.add_argument("--against", type=Path, help="another checkout, timed alternately")
    args = parser.parse_args(argv)
    checkouts = [ROOT] if args.against is None else [args.against.resolve(), ROOT]
    header = ["case", *(f"{c.name or c}, s" for c in checkouts)]
    rows: list[list[object]] = []
    for name, arguments in CASES:
        seconds: list[list[float]] = [[] for _ in checkouts]
        outputs: list[str] = []
        for _ in range(args.repeat):
            for index, checkout in enumerate(checkouts):
                wall, out = time_case(checkout, arguments, args.runs)
                seconds[index].append(wall)
                outputs.append(out)
        same = "" if len(set(outputs)) == 1 else " (plans differ)"
        spans = [f"{min(s):.2f}-{max(s):.2f}" for s in seconds]
        rows.append([name + same, *spans])
        print(f"{name}: {', '.join(spans)}", file=sys.stderr, flush=True)
    print(markdown_table(header, rows))
    print(f"\nRun on {machine_info()['date']}: {describe_machine(machine_info())}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
