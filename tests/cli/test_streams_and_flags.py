"""`-` as standard input and output, `-o` with one meaning, and -q / -v / --debug anywhere on
the line: real subprocess runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import NOT_COMPLETED

from screener.cli.main import _hoist_global_flags
from screener.oracles import load_oracle_class

POOL = "worker,accuracy\n" + "".join(f"w{i},0.9\n" for i in range(8)) + "spammer,0.3\n"
RUN = ["-a", "wrr", "--k", "1.5", "--seed", "4", "--budget", "3000"]


def screener(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "screener", *args],
        capture_output=True, text=True, timeout=300, check=False, cwd=cwd, input=stdin,
    )  # fmt: skip


def ok(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    done = screener(*args, cwd=cwd, stdin=stdin)
    assert done.returncode == 0, done.stderr
    return done


def refused(*args: str, cwd: Path, stdin: str | None = None) -> str:
    before = sorted(p.name for p in cwd.iterdir())
    done = screener(*args, cwd=cwd, stdin=stdin)
    assert done.returncode == 2, (done.stdout, done.stderr)
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: ")
    assert sorted(p.name for p in cwd.iterdir()) == before, "a refused command wrote a file"
    return line


def workers_of(report_json: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(report_json)
    return {line["worker"]: line["decision"] for line in report["workers"]}


@pytest.mark.parametrize(
    ("args", "hoisted"),
    [
        (["run", "-q"], ["-q", "run"]),
        (["run", "--db", "x.db", "-vv", "--debug"], ["-vv", "--debug", "run", "--db", "x.db"]),
        (["report", "--verbose", "R"], ["--verbose", "report", "R"]),
        # Values of options stay where they are, whatever they look like.
        (["invalidate", "R", "Q", "--reason", "-q"], ["invalidate", "R", "Q", "--reason", "-q"]),
        (["run", "--db", "-v", "-q"], ["-q", "run", "--db", "-v"]),
        (["run", "--", "-q"], ["run", "--", "-q"]),
        (["runs"], ["runs"]),
    ],
)
def test_global_flags_are_moved_before_the_command(args: list[str], hoisted: list[str]) -> None:
    assert _hoist_global_flags(args) == hoisted


@pytest.mark.subprocess
def test_quiet_anywhere_leaves_only_the_data(tmp_path: Path) -> None:
    (tmp_path / "pool.csv").write_text(POOL, encoding="utf-8")
    outputs: list[str] = []
    for where in (["-q", "run"], ["run", "-q"]):
        args = [*where, "pool.csv", *RUN, "--db", f"{len(outputs)}.db", "--format", "table"]
        done = ok(*args, cwd=tmp_path)
        assert done.stderr == ""
        outputs.append(done.stdout.split("\n", 1)[1])  # past the headline with the run id
    assert outputs[0] == outputs[1]
    noisy = ok("run", "pool.csv", *RUN, "--db", "2.db", cwd=tmp_path)
    assert "saved in 2.db" in noisy.stderr


@pytest.mark.subprocess
def test_verbose_says_what_the_run_does_and_costs(tmp_path: Path) -> None:
    (tmp_path / "pool.csv").write_text(POOL, encoding="utf-8")
    done = ok("run", "pool.csv", *RUN, "--json", "-v", cwd=tmp_path)
    plan, cost = done.stderr.strip().splitlines()[:2]
    assert "wrr (" in plan and "k=1.5" in plan and "delta=0.1" in plan  # the default too
    assert "answers from simulated" in plan and "on 9 workers" in plan
    report = json.loads(done.stdout)
    assert f"{report['total_pulls']:,} gold questions answered in " in cost
    refused("-q", "run", "-v", cwd=tmp_path)


@pytest.mark.subprocess
def test_a_pool_a_bank_and_a_run_file_from_standard_input(tmp_path: Path) -> None:
    (tmp_path / "pool.csv").write_text(POOL, encoding="utf-8")
    from_file = ok("run", "pool.csv", *RUN, "--json", "--db", "a.db", cwd=tmp_path)
    from_stdin = ok("run", "-", *RUN, "--json", "--db", "b.db", cwd=tmp_path, stdin=POOL)
    assert workers_of(from_stdin.stdout) == workers_of(from_file.stdout)
    assert workers_of(from_stdin.stdout)["spammer"] == "outlier"

    bank = json.dumps(
        [{"id": f"q{i}", "payload": f"{i}+{i}", "key": str(2 * i)} for i in range(50)]
    )
    banked = screener("run", "pool.csv", *RUN, "--questions", "-", "--json", "--db", "c.db",
                      cwd=tmp_path, stdin=bank)  # fmt: skip
    assert banked.returncode == NOT_COMPLETED, banked.stderr  # 50 questions each: exhausted
    assert 0 < json.loads(banked.stdout)["total_pulls"] <= 9 * 50

    run_file = (
        'workers = "pool.csv"\nalgorithm = "wrr"\nseed = 4\nbudget = 3000\n[params]\nk = 1.5\n'
    )
    configured = ok("run", "--config", "-", "--json", "--db", "d.db", cwd=tmp_path, stdin=run_file)
    assert workers_of(configured.stdout) == workers_of(from_file.stdout)

    line = refused("run", "-", "--questions", "-", "--db", "e.db", cwd=tmp_path, stdin=POOL)
    assert "only one of POOL_FILE, --questions and --config can be -" in line


@pytest.mark.subprocess
def test_outputs_to_files_and_to_standard_output(tmp_path: Path) -> None:
    (tmp_path / "pool.csv").write_text(POOL, encoding="utf-8")
    shown = ok("run", "pool.csv", *RUN, "--json", cwd=tmp_path)
    written = ok("report", "--json", "-o", "report.json", cwd=tmp_path)
    assert written.stdout == ""
    assert "report written to report.json" in written.stderr
    reported = json.loads((tmp_path / "report.json").read_text())
    assert reported.pop("run_spec")["algorithm"] == "wrr"  # the report adds how it was set up
    assert reported == json.loads(shown.stdout)

    run_id = json.loads(shown.stdout)["run_id"]
    ok("export", run_id, "-o", "answers.csv", cwd=tmp_path)
    to_stdout = ok("export", run_id, cwd=tmp_path)
    assert to_stdout.stdout == (tmp_path / "answers.csv").read_text()
    assert to_stdout.stdout.startswith("worker,item,answer,gold,score\n")

    page = ok("report", "--html", "-", "-o", "table.txt", cwd=tmp_path)
    assert page.stdout.lstrip().lower().startswith("<!doctype html")
    assert run_id in (tmp_path / "table.txt").read_text()


@pytest.mark.subprocess
def test_bad_outputs_are_refused_in_one_line_before_anything_is_written(tmp_path: Path) -> None:
    (tmp_path / "pool.csv").write_text(POOL, encoding="utf-8")
    ok("run", "pool.csv", *RUN, "--json", cwd=tmp_path)
    assert "-O KEY=VALUE" in refused("run", "-o", "path=answers.csv", cwd=tmp_path)
    assert "no directory missing" in refused("report", "-o", "missing/r.txt", cwd=tmp_path)
    assert "both go to standard output" in refused("report", "--html", "-", cwd=tmp_path)
    run_id = json.loads(ok("runs", "--json", cwd=tmp_path).stdout)[0]["id"]
    assert "give -o FILE" in refused("export", run_id, "--json", cwd=tmp_path)
    assert "two files" in refused("export", run_id, "--format", "crowd-kit", cwd=tmp_path)


@pytest.mark.subprocess
@pytest.mark.parametrize("name", ["simulated", "dataset", "log", "http"])
def test_each_oracle_lists_the_options_it_declares(name: str, tmp_path: Path) -> None:
    declared = load_oracle_class(name).OPTIONS
    listed = json.loads(ok("oracles", name, "--json", cwd=tmp_path).stdout)
    assert [option["name"] for option in listed["options"]] == [o.name for o in declared]
    table = ok("oracles", name, cwd=tmp_path).stdout
    for option in declared:
        assert f"-O {option.name} " in table
    if any(option.required for option in declared):
        assert "(required)" in table
    assert "no oracle named 'nope'" in refused("oracles", "nope", cwd=tmp_path)
