"""screener plan: the cost distribution equals what the simulated runs themselves give, and
the command answers in one screen or one clear line."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import numpy as np
import pytest

from screener.algorithms import Decision, create_algorithm
from screener.crowd import demo_pool
from screener.errors import ConfigError
from screener.reports.plan import render_plan
from screener.runs.planning import DEFAULT_CAP_PER_WORKER, plan_cost
from screener.runs.settings import DEFAULT_ALGORITHM, DEFAULT_JOB
from screener.simulation import BernoulliRewards, simulate

ACCURACIES = [0.92, 0.9, 0.85, 0.8, 0.55, 0.5, 0.88, 0.83]
PARAMS = {"threshold": 0.6}


def test_the_plan_is_the_empirical_distribution_of_its_runs() -> None:
    cost = plan_cost("toloka-rule", PARAMS, ACCURACIES, runs=30, seed=5)
    questions, undecided = [], []
    for run in range(30):
        algorithm = create_algorithm("toloka-rule", 8, {**PARAMS, "seed": 5 + run})
        result = simulate(algorithm, BernoulliRewards(ACCURACIES, seed=5 + run))
        by_arm = sorted(result.workers, key=lambda w: w.arm)
        questions.append([w.pulls for w in by_arm])
        undecided.append(any(w.decision is Decision.UNDECIDED for w in by_arm))
    np.testing.assert_array_equal(cost.questions, questions)
    summary = cost.summary()
    per_worker = np.array(questions).ravel()
    assert summary["questions_per_worker"]["median"] == np.median(per_worker)
    assert summary["questions_per_worker"]["p90"] == np.percentile(per_worker, 90)
    assert summary["questions_in_total"]["max"] == max(sum(q) for q in questions)
    assert summary["runs_with_undecided"] == np.mean(undecided)


def test_a_pilot_crowd_is_drawn_afresh_for_every_run() -> None:
    cost = plan_cost("rr", {"budget": 40}, [0.2, 0.9], runs=50, draw=True, n_workers=4)
    assert cost.questions.shape == (50, 4)
    assert cost.questions.sum(axis=1).tolist() == [40] * 50


@pytest.mark.slow
@pytest.mark.parametrize("draw", [False, True])
def test_the_plan_is_the_same_on_any_number_of_processes(draw: bool) -> None:
    def planned(processes: int | None) -> tuple[list[list[int]], tuple[str, ...]]:
        cost = plan_cost("crowd-prior", PARAMS, ACCURACIES, runs=24, seed=2, draw=draw,
                         n_workers=12 if draw else None, processes=processes)  # fmt: skip
        return cost.questions.tolist(), cost.stop_reasons

    here = planned(1)
    assert len({tuple(row) for row in here[0]}) > 1  # the runs differ: their order shows
    assert planned(2) == here
    assert planned(None) == here  # every CPU, or here when the runs are short


def test_a_plan_that_could_not_end_is_refused() -> None:
    with pytest.raises(ConfigError, match="runs must be"):
        plan_cost("rr", {"budget": 10}, ACCURACIES, runs=0)


def test_an_algorithm_that_bounds_no_questions_is_capped_and_says_so() -> None:
    """wrr without a budget could run for ever on a worker at its threshold: the plan gives
    it DEFAULT_CAP_PER_WORKER questions per worker, and the plan's text names that cap."""
    cost = plan_cost("wrr", {}, ACCURACIES, runs=3)
    budget = DEFAULT_CAP_PER_WORKER * len(ACCURACIES)
    assert cost.capped and cost.params["budget"] == budget
    assert (cost.questions.sum(axis=1) <= budget).all()
    shown = render_plan({"algorithm": "wrr", "params": cost.params, "workers": 8, **cost.summary()})
    assert f"capped at {budget:,} in total, {DEFAULT_CAP_PER_WORKER} per worker" in shown
    bounded = plan_cost("wrr", {"budget": 40}, ACCURACIES, runs=3)
    assert not bounded.capped and "capped" not in render_plan(
        {"algorithm": "wrr", "params": bounded.params, "workers": 8, **bounded.summary()}
    )


def _screener(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "screener", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300, check=False)  # fmt: skip


@pytest.mark.subprocess
def test_plan_from_the_command_line(tmp_path: Path) -> None:
    pool = tmp_path / "pool.csv"
    pool.write_text("worker,accuracy\n" + "".join(f"w{i},{a}\n" for i, a in enumerate(ACCURACIES)))
    shown = _screener("plan", str(pool), "-a", "toloka-rule", "-p", "threshold=0.6", "--runs",
                      "20", cwd=tmp_path)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "questions per worker" in shown.stdout and "8 simulated workers, 20 runs" in shown.stdout
    as_json = _screener("plan", str(pool), "-a", "toloka-rule", "-p", "threshold=0.6",
                        "--runs", "20", "--json", cwd=tmp_path)  # fmt: skip
    planned = json.loads(as_json.stdout)
    expected = plan_cost("toloka-rule", PARAMS, ACCURACIES, runs=20).summary()
    assert planned["questions_per_worker"] == expected["questions_per_worker"]
    on_two = _screener("plan", str(pool), "-a", "toloka-rule", "-p", "threshold=0.6",
                       "--runs", "20", "--processes", "2", "--json", cwd=tmp_path)  # fmt: skip
    assert json.loads(on_two.stdout) == planned
    capped = _screener("plan", "--workers", "20", "-a", "wrr", "--runs", "2", cwd=tmp_path)
    assert capped.returncode == 0, capped.stderr
    assert "wrr bounds no worker's questions: capped at 1,200 in total" in capped.stdout


@pytest.mark.subprocess
def test_plan_prices_the_default_job_without_a_budget(tmp_path: Path) -> None:
    """`screener plan` with nothing given plans what `screener run` does: the default job on
    the demo pool. fdr-thresholding bounds no worker's questions, so the plan caps it as every
    such method (and says so); on the demo no run comes near the cap."""
    shown = _screener("plan", "--runs", "5", "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    planned = json.loads(shown.stdout)
    cap = DEFAULT_CAP_PER_WORKER * len(demo_pool())
    assert planned["algorithm"] == DEFAULT_ALGORITHM
    assert planned["params"] == {**DEFAULT_JOB, "budget": cap} and planned["capped"]
    assert planned["workers"] == len(demo_pool())
    assert planned["questions_in_total"]["max"] < cap
    assert planned["stop_reasons"] == {"condition met": 5}


@pytest.mark.subprocess
def test_plan_like_a_pilot_run(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    pilot = _screener("run", "--workers", "10", "--budget", "100", "--db", db, "--json",
                      cwd=tmp_path)  # fmt: skip
    run_id = json.loads(pilot.stdout)["run_id"]
    planned = _screener("plan", "--like", run_id, "--db", db, "--workers", "30", "-a", "rr",
                        "--budget", "90", "--runs", "5", "--json", cwd=tmp_path)  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    summary = json.loads(planned.stdout)
    assert summary["workers"] == 30 and summary["questions_in_total"]["median"] == 90


@pytest.mark.parametrize("processes", [1, 2])
def test_a_plan_reports_its_runs_as_they_finish(processes: int) -> None:
    finished: list[int] = []
    cost = plan_cost("toloka-rule", PARAMS, ACCURACIES, runs=12, processes=processes,
                     progress=finished.append)  # fmt: skip
    assert sum(finished) == 12 and len(finished) >= (12 if processes == 1 else 2)
    assert cost.questions.shape == (12, 8)


@pytest.mark.slow
def test_plan_draws_a_progress_bar_on_a_terminal_only(tmp_path: Path) -> None:
    pool = tmp_path / "pool.csv"
    pool.write_text("worker,accuracy\n" + "".join(f"w{i},{a}\n" for i, a in enumerate(ACCURACIES)))
    args = [sys.executable, "-m", "screener", "plan", str(pool), "-a", "toloka-rule", "-p",
            "threshold=0.6", "--runs", "30"]  # fmt: skip

    def on_a_terminal(*extra: str) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
        leader, follower = pty.openpty()  # stderr is a real terminal, 100 columns wide
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        try:
            shown = subprocess.run([*args, *extra], stdout=subprocess.PIPE, stderr=follower,
                                   cwd=tmp_path, timeout=300, check=False)  # fmt: skip
            drawn = b""
            while select.select([leader], [], [], 0.5)[0]:
                drawn += os.read(leader, 4096)
        finally:
            os.close(follower)
            os.close(leader)
        return shown, drawn

    shown, drawn = on_a_terminal()
    assert shown.returncode == 0 and b"30 runs" in shown.stdout
    assert b"plan:" in drawn and b"/30 [" in drawn  # the bar (cleared when done)
    assert on_a_terminal("-q")[1] == b""  # -q: data only
    piped = _screener("plan", str(pool), "-a", "toloka-rule", "-p", "threshold=0.6",
                      "--runs", "30", cwd=tmp_path)  # fmt: skip
    assert piped.returncode == 0 and piped.stderr == ""  # no bar into a file or a pipe


@pytest.mark.parametrize(
    ("algorithm", "params"),
    [
        ("confident-thresholding", {"threshold": 0.6, "eps": 0.1}),
        ("confident-thresholding", {"threshold": 0.6, "budget": 300, "min_answers": 3}),
        ("crowd-prior", {"threshold": 0.6}),
        ("wrr", {"budget": 400}),
    ],
)
def test_a_run_counts_its_undecided_workers_as_its_result_shows_them(
    algorithm: str, params: dict[str, object]
) -> None:
    for seed in range(3):
        built = create_algorithm(algorithm, 8, {**params, "seed": seed})
        result = simulate(built, BernoulliRewards(ACCURACIES, seed=seed))
        shown = sum(w.decision is Decision.UNDECIDED for w in result.workers)
        assert built.n_undecided() == shown


@pytest.mark.parametrize(
    ("algorithm", "params"),
    [
        ("confident-thresholding", {"threshold": 0.6, "eps": 0.1, "max_workers": 20}),
        ("crowd-prior", {"threshold": 0.6}),
    ],
)
def test_undecided_workers_counted_as_shown_on_an_open_roster(
    algorithm: str, params: dict[str, object]
) -> None:
    built = create_algorithm(algorithm, 8, {**params, "seed": 1})
    accuracies = [*ACCURACIES, 0.95, 0.4, 0.7]
    rng = np.random.default_rng(1)
    checked = 0
    for step in range(1, 1_001):
        if step in (100, 200) and built.n_arms < len(accuracies):
            built.add_workers(1)
        ask = built.ask(1)
        if ask.done:  # a worker joins a finished run: it goes on
            if built.n_arms == len(accuracies):
                break
            built.add_workers(1)
            continue
        if step == 250:
            built.set_unavailable(8, "worker left")
        if ask.arms.size:
            built.tell(ask.first_id, float(rng.random() < accuracies[int(ask.arms[0])]))
        if step % 25 == 0 or built.finished:
            shown = sum(w.decision is Decision.UNDECIDED for w in built.result().workers)
            assert built.n_undecided() == shown, step
            checked += 1
    assert built.n_arms == len(accuracies) and checked >= 8


def test_a_plan_without_a_bar_says_why_it_counts_no_mistakes() -> None:
    cost = plan_cost("rr", {"budget": 80}, ACCURACIES, runs=5)
    summary = {"algorithm": "rr", "params": cost.params, "workers": len(ACCURACIES)}
    text = render_plan({**summary, **cost.summary()})
    mistakes = [line for line in text.splitlines() if line.startswith("mistakes")]
    assert mistakes == ["mistakes: not simulated (a question against no bar)"]


def test_a_lockstep_plan_counts_the_mistakes_of_its_runs_one_by_one() -> None:
    """confident-thresholding's runs go in lockstep (screener.simulation.lockstep);
    the plan's mistakes are those of the same runs made one by one with ``simulate``."""
    runs = 6
    cost = plan_cost("confident-thresholding", PARAMS, ACCURACIES, runs=runs)
    assert cost.mistakes is not None
    bad = np.asarray(ACCURACIES) < PARAMS["threshold"]
    false_bans, missed = [], []
    for seed in range(runs):
        algorithm = create_algorithm(
            "confident-thresholding", len(ACCURACIES), {**cost.params, "seed": seed}
        )
        banned = np.zeros(len(ACCURACIES), dtype=bool)
        banned[list(simulate(algorithm, BernoulliRewards(ACCURACIES, seed=seed)).banned)] = True
        false_bans.append(int((banned & ~bad).sum()))
        missed.append(int((bad & ~banned).sum()))
    assert cost.mistakes.false_bans.tolist() == false_bans
    assert cost.mistakes.missed_bad.tolist() == missed
