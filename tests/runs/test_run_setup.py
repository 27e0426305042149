"""One run set-up (screener.runs.setup) behind `screener run` and `screener.run()`: the same
settings, given as flags or as arguments, with or without a run file, store the same run;
flags and arguments win over the run file, the run file over screener's defaults; Python
gets the command line's one-line errors."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_ran

import screener
from screener.algorithms import ALGORITHMS, accepted_parameters
from screener.algorithms.signature import parameters
from screener.errors import ConfigError
from screener.journal import Journal, RunSpec
from screener.orchestrator import RunOptions
from screener.runs.settings import (
    DEFAULT_ALGORITHM,
    DEFAULT_JOB,
    PARAMETER_DEFAULTS,
    AlgorithmSettings,
    OracleSettings,
    RunSettings,
)
from screener.runs.setup import set_up_run

POOL = "worker,accuracy\n" + "".join(f"w{i},0.9\n" for i in range(10)) + "spammer,0.4\n"
RUN_FILE = """\
workers = "pool.csv"
algorithm = "rr"
seed = 5
budget = 400
db = "from-file.db"
[params]
k = 1.5
[oracle]
name = "simulated"
rewards = "beta"
[run]
concurrency = 8
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with a pool and a run file, the current one (so that relative paths, which
    the stored pool keeps, read the same from both sides)."""
    (tmp_path / "pool.csv").write_text(POOL, encoding="utf-8")
    (tmp_path / "run.toml").write_text(RUN_FILE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def screener_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "screener", *args], capture_output=True,
                          text=True, timeout=300, check=False, cwd=cwd)  # fmt: skip


def stored_spec(db: Path) -> RunSpec:
    """The one run ``db`` holds, as its spec (without the id and dates the journal adds)."""
    with Journal(str(db), create=False) as journal:
        [summary] = journal.runs()
        record = journal.get_run(summary.id)
    return RunSpec(**{f.name: getattr(record, f.name) for f in dataclasses.fields(RunSpec)})


# (command-line arguments, screener.run's keyword arguments): the same settings.
SAME_SETTINGS: list[tuple[list[str], dict[str, Any]]] = [
    (["--config", "run.toml"], {"config": "run.toml"}),
    (
        ["--config", "run.toml", "--seed", "9", "-a", "wrr", "--delta", "0.2", "--rewards",
         "bernoulli", "--concurrency", "4", "-O", "duplicates=0.1"],
        {"config": "run.toml", "seed": 9, "algorithm": "wrr", "params": {"delta": 0.2},
         "oracle_options": {"rewards": "bernoulli", "duplicates": 0.1},
         "options": RunOptions(concurrency=4)},
    ),
    (["pool.csv"], {"pool": "pool.csv"}),  # the default job
    (["pool.csv", "-a", "wrr", "--budget", "300"], {"pool": "pool.csv", "algorithm": "wrr",
                                                    "params": {"budget": 300}}),
    (
        ["pool.csv", "-a", "wrr", "--price", "gold=0.1,task=0.02", "--budget-money", "30"],
        {"pool": "pool.csv", "algorithm": "wrr",
         "price": {"gold": 0.1, "task": 0.02, "budget": 30.0}},
    ),
    (
        ["pool.csv", "-a", "adaptive-topk", "--top", "2", "-p", "eps=0.2", "--budget", "500"],
        {"pool": "pool.csv", "algorithm": "adaptive-topk", "top": 2,
         "params": {"eps": 0.2, "budget": 500}},
    ),
]  # fmt: skip


@pytest.mark.subprocess
@pytest.mark.parametrize(("args", "kwargs"), SAME_SETTINGS, ids=lambda v: str(v)[:40])
def test_the_command_line_and_python_store_the_same_run(
    folder: Path, args: list[str], kwargs: dict[str, Any]
) -> None:
    done = screener_cli("run", *args, "--db", "cli.db", "--json", cwd=folder)
    assert_ran(done.returncode, done.stdout, done.stderr)
    screener.run(**kwargs, db="api.db")
    from_cli, from_python = stored_spec(folder / "cli.db"), stored_spec(folder / "api.db")
    assert from_cli == from_python
    if "adaptive-topk" in args:  # --top and top= are the top-K algorithm's k, both ways
        assert from_cli.params["k"] == 2
    if "--price" in args:  # priced alike, and the budget in money is 300 questions both ways
        assert from_cli.config["price"] == {"gold": 0.1, "task": 0.02}
        assert from_cli.params["budget"] == 300
    if "direction" in from_cli.params:  # screening for spammers, both ways
        assert from_cli.params["direction"] == PARAMETER_DEFAULTS["direction"] == "low"


@pytest.mark.subprocess
def test_the_run_files_database_is_used_unless_one_is_given(folder: Path) -> None:
    result = screener.run(config="run.toml")
    assert result.run_id is not None and (folder / "from-file.db").exists()
    assert stored_spec(folder / "from-file.db").seed == 5
    done = screener_cli("run", "--config", "run.toml", "--json", "--db", "given.db", cwd=folder)
    assert_ran(done.returncode, done.stdout, done.stderr)
    assert stored_spec(folder / "given.db").seed == 5


WITH_DIRECTION = sorted(
    n for n, cls in ALGORITHMS.items() if "direction" in accepted_parameters(cls)
)


@pytest.mark.parametrize("name", WITH_DIRECTION)
def test_every_algorithm_with_a_direction_screens_for_low_accuracy_by_default(name: str) -> None:
    """One default for the command line and Python, over the class's own (its paper's)."""
    plan = set_up_run(RunSettings(algorithm=AlgorithmSettings(name=name))).plan
    assert plan.params["direction"] == "low"
    paper = next(p.default for p in parameters(ALGORITHMS[name]) if p.name == "direction")
    assert paper == "high"
    given = AlgorithmSettings(name=name, params={"direction": "high"})
    assert set_up_run(RunSettings(algorithm=given)).plan.params["direction"] == "high"


def test_given_settings_win_over_the_run_file_which_wins_over_the_defaults(folder: Path) -> None:
    from_file = set_up_run(RunSettings(run_file="run.toml"))
    plan = from_file.plan
    assert (plan.algorithm, plan.seed, from_file.db) == ("rr", 5, "from-file.db")
    assert plan.params == {"k": 1.5, "budget": 400, "direction": "low"}
    assert plan.oracle_options == {"rewards": "beta"} and plan.options.concurrency == 8

    given = RunSettings(
        run_file="run.toml", db="mine.db", options={"concurrency": 2},
        algorithm=AlgorithmSettings(name="wrr", params={"k": 3.0}, budget=50, seed=0),
        oracle=OracleSettings(simulated={"rewards": "bernoulli"}),
    )  # fmt: skip
    overridden = set_up_run(given)
    plan = overridden.plan
    assert (plan.algorithm, plan.seed, overridden.db) == ("wrr", 0, "mine.db")
    assert plan.params == {"k": 3.0, "budget": 50, "direction": "low"}
    assert plan.oracle_options == {"rewards": "bernoulli"} and plan.options.concurrency == 2


def test_the_default_job_runs_only_when_nothing_names_an_algorithm(folder: Path) -> None:
    """Without an algorithm (no name, no --error, none in a run file) a run does the default
    job, with what is given on top; an algorithm named, even the same one, runs with its own
    defaults."""
    plan = set_up_run(RunSettings()).plan
    assert (plan.algorithm, plan.params) == (DEFAULT_ALGORITHM, DEFAULT_JOB)
    given = AlgorithmSettings(params={"threshold": 0.7}, budget=90)
    assert set_up_run(RunSettings(algorithm=given)).plan.params == {
        **DEFAULT_JOB, "threshold": 0.7, "budget": 90,
    }  # fmt: skip
    named = AlgorithmSettings(name=DEFAULT_ALGORITHM, params={"threshold": 0.6})
    assert set_up_run(RunSettings(algorithm=named)).plan.params == {"threshold": 0.6}
    by_error = AlgorithmSettings(error="bayes", params={"threshold": 0.6})
    assert set_up_run(RunSettings(algorithm=by_error)).plan.params == {"threshold": 0.6}
    (folder / "params.toml").write_text("[params]\npilot = 10\n", encoding="utf-8")
    from_file = set_up_run(RunSettings(run_file="params.toml")).plan.params
    assert from_file == {**DEFAULT_JOB, "pilot": 10}
    assert set_up_run(RunSettings(run_file="run.toml")).plan.algorithm == "rr"


def test_a_simulated_flag_goes_to_another_oracle_that_takes_it_or_is_refused(
    folder: Path,
) -> None:
    """The dataset oracle delivers with a latency too, and has no reward model: --latency is
    passed on, --rewards refused (both were dropped without a word)."""
    answers = folder / "answers.csv"
    answers.write_text("worker,item,answer,gold\nw0,q1,a,a\nw1,q1,b,a\n", encoding="utf-8")
    latency = OracleSettings(name="dataset", options={"path": str(answers)},
                             simulated={"latency": "constant:0.01"})  # fmt: skip
    options = set_up_run(RunSettings(oracle=latency)).plan.oracle_options
    assert options == {"path": str(answers), "latency": "constant:0.01"}
    rewards = OracleSettings(name="dataset", options={"path": str(answers)},
                             simulated={"rewards": "beta"})  # fmt: skip
    with pytest.raises(ConfigError, match="the dataset oracle takes no rewards"):
        set_up_run(RunSettings(oracle=rewards))


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("run_file", "kwargs", "args"),
    [
        ('algorithm = "nope"\n', {"algorithm": "nope"}, []),
        ("[run]\nconcurrency = 0\n", {"options": None}, ["--concurrency", "0"]),
        ('workers = "pool.csv"\n', {"params": {"budget": 0}}, ["--budget", "0"]),
    ],
)
def test_python_gets_the_command_lines_one_line_errors(
    folder: Path, run_file: str, kwargs: dict[str, Any], args: list[str]
) -> None:
    (folder / "bad.toml").write_text(run_file, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        screener.run(config="bad.toml", **kwargs)
    done = screener_cli("run", "--config", "bad.toml", *args, cwd=folder)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"error: {raised.value}"]
    assert sorted(p.name for p in folder.iterdir()) == ["bad.toml", "pool.csv", "run.toml"]


@pytest.mark.subprocess
def test_plan_and_replay_take_the_same_defaults(folder: Path) -> None:
    planned = screener_cli("plan", "pool.csv", "-a", "wrr", "--budget", "60", "--runs", "2",
                           "--json", cwd=folder)  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    assert json.loads(planned.stdout)["params"] == {"budget": 60, "direction": "low"}

    ran = screener_cli("run", "pool.csv", "-a", "toloka-rule", "--threshold", "0.6",
                       "--db", "r.db", "--json", cwd=folder)  # fmt: skip
    assert_ran(ran.returncode, ran.stdout, ran.stderr)
    run_id = json.loads(ran.stdout)["run_id"]
    replayed = screener_cli("replay", run_id, "-a", "wrr", "--db", "r.db", cwd=folder)
    assert replayed.returncode == 0, replayed.stderr
    with Journal("r.db", create=False) as journal:
        replay = next(s for s in journal.runs() if s.id != run_id)
        assert journal.get_run(replay.id).params["direction"] == "low"
