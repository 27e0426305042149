"""Helpers shared by the benchmark scripts: machine description, result files, tables."""

from __future__ import annotations

import contextlib
import datetime
import json
import multiprocessing
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

import screener

__all__ = ["RESULTS_DIR", "machine_info", "markdown_table", "run_in_processes", "write_json"]

RESULTS_DIR = Path(__file__).resolve().parent / "results"

_Task = TypeVar("_Task")
_Out = TypeVar("_Out")


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


def run_in_processes(
    name: str,
    function: Callable[[_Task], _Out],
    tasks: Sequence[_Task],
    processes: int,
    *,
    chunksize: int = 1,
    progress: bool = True,
) -> tuple[list[_Out], float]:
    """``function`` over ``tasks`` on ``processes`` processes: the results (in completion
    order) and the wall seconds; a progress line on stderr at most every 30 s."""
    started = last_note = time.perf_counter()
    results: list[_Out] = []
    with multiprocessing.Pool(processes) as pool:
        for result in pool.imap_unordered(function, tasks, chunksize=chunksize):
            results.append(result)
            now = time.perf_counter()
            if progress and (now - last_note > 30 or len(results) == len(tasks)):
                last_note = now
                print(
                    f"[{name}] {len(results)}/{len(tasks)} tasks, {now - started:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
    return results, time.perf_counter() - started
