"""The progress line: what it says, that a real run feeds it, that its decided count never
goes down and its bound on the answers holds, for every algorithm."""

from __future__ import annotations

import io
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from plan_helpers import make_plan

import screener
from screener.algorithms import AlgorithmSetup, create_algorithm
from screener.crowd import synthetic_pool
from screener.orchestrator import Progress, RunOptions
from screener.orchestrator.progress import ProgressBar, ProgressLine
from screener.runs.session import start_run
from screener.testing.algorithm_conformance import TEST_SETUPS

CASES = [
    pytest.param(name, setup, id=f"{name}{setup.label and '-' + setup.label}")
    for name, setups in TEST_SETUPS.items()
    for setup in setups
]


def test_the_line_shows_budget_threshold_and_a_bound_on_the_time_left() -> None:
    line = ProgressLine(asked=420, answered=400, in_flight=20, decided=3, workers=10,
                        budget=1000, unavailable=2, threshold=(0.7, 0.65, 0.75),
                        most_answers=1000)  # fmt: skip
    text = line.text(elapsed=4.0)  # 100 answers/s, 600 to go at most
    assert text == (
        "answers 400 / 1,000  in flight 20  decided 3/10  out 2  "
        "threshold 0.700 [0.650, 0.750]  100/s  4.0s  at most 6.0s left"
    )


def test_without_a_bound_there_is_no_time_left_and_no_threshold_yet() -> None:
    line = ProgressLine(asked=5, answered=0, in_flight=5, decided=0, workers=5,
                        threshold=(float("nan"), 0.0, 1.0))  # fmt: skip
    assert line.text(elapsed=125.0) == "answers 0  in flight 5  decided 0/5  0/s  2m05s"


async def test_a_run_reports_its_budget_and_threshold_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # shutil.get_terminal_size reads it first
    stream = io.StringIO()
    plan = make_plan(synthetic_pool(12, 1, seed=2), "rr", {"budget": 300}, seed=1,
                     oracle_options={"latency": "constant:0.001"},
                     options=RunOptions(concurrency=4))  # fmt: skip
    _, result = await start_run(plan, str(tmp_path / "runs.db"), progress=Progress(stream, 0.01))
    lines = [line for line in stream.getvalue().split("\r") if line.strip()]
    assert len(lines) >= 2
    last = lines[-1]
    assert last.startswith("answers 300 / 300  in flight 0  decided ")
    assert "threshold " in last and "at most 0.0s left" in last
    assert result.total_pulls == 300


def test_the_line_is_cut_to_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    stream = io.StringIO()
    Progress(stream).show(ProgressLine(1, 1, 0, 0, 100_000, budget=10**9, most_answers=10**9))
    assert stream.getvalue() == "\r" + "answers 1 / 1,000,000,000  in flight 0  d"[:39] + "\x1b[K"


def _lines_of_a_run(name: str, setup: AlgorithmSetup, seed: int) -> tuple[list[ProgressLine], Any]:
    """The progress line after every answer batch of a run driven to its end (or 400 asks),
    with the algorithm's results alongside."""
    rng = np.random.default_rng(seed)
    means = np.asarray(setup.means or np.linspace(0.1, 0.95, setup.n_workers))
    algorithm = create_algorithm(name, setup.n_workers, {**setup.params, "seed": seed})
    lines, results = [], []
    for _ in range(400):
        ask = algorithm.ask(int(rng.integers(1, 5)))
        if ask.done:
            break
        algorithm.tell_many(ask.ids, (rng.random(len(ask)) < means[ask.arms]).astype(float))
        lines.append(ProgressLine.of(algorithm))
        results.append(algorithm.result())
    lines.append(ProgressLine.of(algorithm))
    results.append(algorithm.result())
    return lines, (algorithm, results)


@pytest.mark.parametrize(("name", "setup"), CASES)
def test_decided_never_goes_down_and_final_decisions_never_change(
    name: str, setup: AlgorithmSetup
) -> None:
    lines, (algorithm, results) = _lines_of_a_run(name, setup, seed=1)
    decided = [line.decided for line in lines]
    assert decided == sorted(decided), decided
    if algorithm.finished:
        assert decided[-1] == sum(w.decision != "undecided" for w in results[-1].workers)
    if algorithm.decisions_final:  # the declaration itself: a decision, once made, stays
        seen: dict[int, str] = {}
        for result in results:
            for w in result.workers:
                if w.decision != "undecided":
                    assert seen.setdefault(w.arm, w.decision) == w.decision, w
                else:
                    assert w.arm not in seen, w


@pytest.mark.parametrize(("name", "setup"), CASES)
def test_the_most_answers_bound_the_run_at_every_step(name: str, setup: AlgorithmSetup) -> None:
    lines, (algorithm, _) = _lines_of_a_run(name, setup, seed=2)
    bounds = [line.most_answers for line in lines if line.most_answers is not None]
    assert all(bound >= algorithm.n_answered for bound in bounds), (bounds, algorithm.n_answered)


def test_a_per_worker_bound_gives_a_time_left_that_shrinks_as_workers_are_decided() -> None:
    algorithm = create_algorithm("toloka-rule", 2, {"threshold": 0.6})
    assert ProgressLine.of(algorithm).most_answers == 2 * 20  # accept_after = 20 each
    for _ in range(5):  # wrong answers, one at a time: the first worker is banned at its 3rd
        algorithm.tell(int(algorithm.ask(1).ids[0]), 0.0)
    line = ProgressLine.of(algorithm)
    assert (line.decided, line.answered, line.most_answers) == (1, 5, 5 + 20 - 2)
    assert line.text(elapsed=1.0).endswith("at most 3.6s left")  # 18 more at 5 per second


def test_provisional_decisions_are_shown_apart_from_final_ones() -> None:
    line = ProgressLine(asked=9, answered=9, in_flight=0, decided=0, workers=6, provisional=4)
    assert "decided 0/6 (4 provisional)" in line.text(elapsed=1.0)


async def test_a_run_draws_a_progress_bar_up_to_its_last_answer(tmp_path: Path) -> None:
    stream = io.StringIO()
    plan = make_plan(synthetic_pool(6, 1, seed=2), "toloka-rule", {"threshold": 0.6}, seed=1,
                     options=RunOptions(concurrency=4))  # fmt: skip
    _, result = await start_run(plan, str(tmp_path / "runs.db"), progress=ProgressBar(stream))
    last = stream.getvalue().rsplit("\r", 1)[-1]
    assert f"{result.total_pulls}/{result.total_pulls}" in last  # the bound shrank to the end
    assert "decided 6/6" in last


def test_screener_run_in_a_notebook_draws_a_bar_by_default(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))  # a kernel
    result = screener.run(synthetic_pool(6, 1, seed=2), algorithm="toloka-rule",
                          params={"threshold": 0.6})  # fmt: skip
    bar = capsys.readouterr().err.rsplit("\r", 1)[-1]
    assert f"{result.total_pulls}/{result.total_pulls}" in bar and "decided 6/6" in bar
    monkeypatch.delitem(sys.modules, "ipykernel")
    screener.run(synthetic_pool(6, 1, seed=2), algorithm="toloka-rule", params={"threshold": 0.6})
    assert capsys.readouterr().err == ""  # a script writing to a file or pipe: no bar


def _a_jupyter_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """sys.modules as inside a Jupyter kernel (what tqdm.auto and auto_progress look for),
    with ipywidgets not importable, and tqdm's automatic choice not made yet."""

    # the kernel's shell, by the class name tqdm reads
    ZMQInteractiveShell = type("ZMQInteractiveShell", (), {})
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = ZMQInteractiveShell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    for name in ("ipykernel", "ipykernel.zmqshell"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import ipywidgets: ImportError
    for name in ("tqdm.auto", "tqdm.autonotebook", "tqdm.notebook"):
        monkeypatch.delitem(sys.modules, name, raising=False)


def test_a_notebook_without_ipywidgets_gets_the_text_bar_and_no_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _a_jupyter_kernel(monkeypatch)
    stream = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bar = ProgressBar(stream)
        bar.show(ProgressLine(12, 10, 2, 1, 6, most_answers=60))
        bar.close()
    assert [str(w.message) for w in caught] == []
    assert "10/60" in stream.getvalue()
    assert "tqdm.notebook" not in sys.modules  # the widget path was not taken
