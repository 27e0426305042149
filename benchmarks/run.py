"""Run every benchmark and print its tables.

    python -m benchmarks.run --quick              # every quick mode, about 5 minutes
    python -m benchmarks.run                      # every full mode, about 1.5 hours on 2 cores
    python -m benchmarks.run --only tao2019 live  # some of them

Results are also written as JSON into ``benchmarks/results/`` (gitignored). The benchmarks run
one after another, so they never compete for the cores. In the full mode the ADE reproduction
runs its one-instance subset (Fig. 2(a) at n = 100 and 1000, HyunCatherines when
SCREENER_DATA is set; ~23 minutes): its whole grid takes about 7 hours, run it on its own
with ``python -m benchmarks.zhang2020``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import replace
from types import ModuleType

from benchmarks import (
    ban2020,
    chen2017,
    confident,
    live,
    report,
    speed,
    tao2019,
    zhang2020,
    zhuang2017,
)
from benchmarks.harness import describe_machine, machine_info, write_json

#: The paper reproductions with a ``main(argv)``: (name, module, quick argv, full argv).
SCRIPTS: tuple[tuple[str, ModuleType, list[str], list[str]], ...] = (
    ("zhang2020", zhang2020, ["--quick"], ["--instances", "1", "--parts", "fig2a", "hcb",
                                            "--ns", "100", "1000"]),
    ("ban2020", ban2020, ["--quick"], []),
    ("tao2019", tao2019, ["--quick"], []),
    ("chen2017", chen2017, ["--quick"], []),
    ("confident", confident, ["--quick"], []),
    ("live", live, ["--quick"], []),
    ("report", report, ["--quick"], []),
)  # fmt: skip
NAMES = ("zhuang2017", "speed", *(name for name, *_ in SCRIPTS))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run all benchmarks.")
    parser.add_argument("--quick", action="store_true", help="small subsets of everything")
    parser.add_argument("--processes", type=int, default=2, help="for the reproduction")
    parser.add_argument("--profile", action="store_true", help="cProfile the fast path too")
    parser.add_argument("--only", nargs="+", choices=NAMES, help="run only these benchmarks")
    args = parser.parse_args(argv)
    chosen = set(args.only or NAMES)
    mode = "quick" if args.quick else "full"
    started = time.perf_counter()
    info = machine_info()
    print(f"# screener benchmarks ({mode}), {info['date']}\n\n{describe_machine(info)}\n")

    if "zhuang2017" in chosen:
        plan = replace(
            zhuang2017.QUICK if args.quick else zhuang2017.FULL, processes=args.processes
        )
        reproduction = zhuang2017.run(plan)
        path = write_json(f"zhuang2017-{mode}", reproduction)
        print("## Zhuang et al. 2017 reproduction\n")
        print(zhuang2017.format_report(reproduction))
        print(f"results: {path}\n")

    if "speed" in chosen:
        config = speed.QUICK if args.quick else speed.SpeedConfig()
        timing = speed.run(config)
        path = write_json("speed-quick" if args.quick else "speed", timing)
        print("## Speed\n")
        print(speed.format_report(timing))
        if args.profile:
            print(speed.profile(config))
        print(f"results: {path}\n")

    for name, module, quick, full in SCRIPTS:
        if name not in chosen:
            continue
        print(f"## {name}\n", flush=True)
        extra = [] if name == "live" else ["--processes", str(args.processes)]
        module.main([*(quick if args.quick else full), *extra])
        print()
    print(f"total: {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
