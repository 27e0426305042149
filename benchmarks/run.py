"""Run every benchmark and print its tables.

    python benchmarks/run.py --quick    # well under a minute and a half
    python benchmarks/run.py            # full reproduction (~15 min on 2 cores) + speed (~1 min)

Results are also written as JSON into ``benchmarks/results/`` (gitignored). The speed
benchmark runs after the reproduction, so the two never compete for the cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import speed, zhuang2017
from benchmarks.common import machine_info, write_json


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run all benchmarks.")
    parser.add_argument("--quick", action="store_true", help="small subsets of everything")
    parser.add_argument("--processes", type=int, default=2, help="for the reproduction")
    parser.add_argument("--profile", action="store_true", help="cProfile the fast path too")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    started = time.perf_counter()
    info = machine_info()
    print(
        f"# screener benchmarks ({mode}), {info['date']}\n\n"
        f"{info['cpu']}, {info['cpus']} CPUs; Python {info['python']}, numpy {info['numpy']}, "
        f"screener {info['screener']}\n"
    )

    plan = replace(zhuang2017.QUICK if args.quick else zhuang2017.FULL, processes=args.processes)
    reproduction = zhuang2017.run(plan)
    path = write_json(f"zhuang2017-{mode}", reproduction)
    print("## Zhuang et al. 2017 reproduction\n")
    print(zhuang2017.format_report(reproduction))
    print(f"results: {path}\n")

    config = speed.QUICK if args.quick else speed.SpeedConfig()
    timing = speed.run(config)
    path = write_json("speed-quick" if args.quick else "speed", timing)
    print("## Speed\n")
    print(speed.format_report(timing))
    if args.profile:
        print(speed.profile(config))
    print(f"results: {path}\n")
    print(f"total: {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
