"""The benchmark harness: runs kept in a file are not run again."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.harness import run_in_processes


@dataclass(frozen=True)
class Square:
    x: int


def square(task: Square) -> dict[str, Any]:
    return {"x": task.x, "square": task.x**2, "at": time.time_ns()}


def by_x(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(results, key=lambda result: result["x"])


def test_kept_runs_are_returned_not_run_again(tmp_path: Path) -> None:
    keep = tmp_path / "runs.jsonl"
    first, _ = run_in_processes(
        "t", square, [Square(i) for i in range(3)], 2, progress=False, keep=keep
    )
    with keep.open("a", encoding="utf-8") as file:
        file.write('{"task": "{\\"x\\": 4}", "res')  # the last line of a stopped run, cut short
    tasks = [Square(i) for i in range(5)]
    second, _ = run_in_processes("t", square, tasks, 2, progress=False, keep=keep)
    assert sorted(r["square"] for r in second) == [0, 1, 4, 9, 16]
    assert second[:3] == by_x(first)  # the same results: not re-run
    lines = keep.read_text(encoding="utf-8").splitlines()
    parsed = []
    for line in lines:
        try:
            parsed.append(json.loads(line)["result"]["x"])
        except json.JSONDecodeError:
            continue
    assert sorted(parsed) == [0, 1, 2, 3, 4] and len(lines) == 6  # the cut line stays alone
    third, _ = run_in_processes("t", square, tasks, 2, progress=False, keep=keep)
    assert by_x(third) == by_x(second)  # everything kept now (new runs come in completion order)


def test_runs_without_a_file_take_any_task() -> None:
    results, _ = run_in_processes("t", abs, [-3, 2, -1], 2, progress=False)
    assert sorted(results) == [1, 2, 3]
