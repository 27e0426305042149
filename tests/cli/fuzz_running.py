"""Running a fuzzed command line and checking its outcome (tests/cli/test_fuzz.py).

Every outcome must be exit 0 with valid output (a `run` also 3, a run short of its condition),
or exit 2 with exactly one line on stderr (``error: ...``, never "internal error") and the
folder it ran in, run database included, byte for byte as it was. A run that started and
then failed (its answer service went away) is the one exit 2 that writes: the run it
journaled must say "failed". An accepted run must have stored every value given, exactly
(fuzz_spec), wherever its output went (-o FILE, --decisions FILE or -); JSON output must be
JSON (no Infinity or NaN), and money in it what was given. A raw warning, a password in the
output, or a command still running after WATCHDOG seconds fails.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from cli_helpers import NOT_COMPLETED, assert_ran
from click.testing import CliRunner
from fuzz_spec import check_money, check_spec, pairs
from hypothesis import event, note

from screener.cli.main import main

DB = "runs.db"
WATCHDOG = 60.0
RAW_WARNING = r"\.py:\d+: \w*Warning: "
#: The password of every database URL the fuzz gives: no output may hold it.
PASSWORD = "PASSWORDX"
DECISIONS = {"outlier", "normal", "above", "below", "selected", "rejected", "undecided"}


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str


class Hung(Exception):
    """The command did not end in time: main() reports it as an internal error (exit 1), so
    the case fails like any other, with its arguments shown."""


@contextlib.contextmanager
def watchdog(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: FrameType | None) -> None:
        raise Hung(f"no exit within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def in_process(args: Sequence[str], folder: Path) -> Outcome:
    """``screener ARGS`` through main() in this process, in ``folder``."""
    code: int | str | None = None
    runner = CliRunner()
    with (
        contextlib.chdir(folder),
        warnings.catch_warnings(),  # main() routes warnings; put the filters back after
        runner.isolation() as (out, err, _),
        watchdog(WATCHDOG),
    ):
        try:
            main(list(args))
        except SystemExit as done:
            code = done.code
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
    assert isinstance(code, int), f"exit code {code!r}"
    return Outcome(code, out.getvalue().decode(), err.getvalue().decode())


def as_subprocess(args: Sequence[str], folder: Path) -> Outcome:
    done = subprocess.run(
        [sys.executable, "-m", "screener", *args],
        capture_output=True, text=True, timeout=WATCHDOG * 5, cwd=folder,
    )  # fmt: skip
    return Outcome(done.returncode, done.stdout, done.stderr)


Runner = Callable[[Sequence[str], Path], Outcome]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@contextlib.contextmanager
def copy_of(template: Path, files: Mapping[str, bytes]) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(dir=template.parent) as name:
        folder = Path(name) / "case"
        shutil.copytree(template, folder)
        for file, content in files.items():
            (folder / file).write_bytes(content)
        yield folder


def fuzz_once(
    template: Path,
    args: Sequence[str],
    files: Mapping[str, bytes] | None = None,
    run: Runner = in_process,
) -> None:
    with copy_of(template, files or {}) as folder:
        before = snapshot(folder)
        check(args, run(args, folder), before, folder)


def check(args: Sequence[str], outcome: Outcome, before: Mapping[str, bytes], folder: Path) -> None:
    """The property (module docstring)."""
    note(f"screener {' '.join(args)}\nexit {outcome.code}\nstderr: {outcome.stderr!r}")
    event(f"{args[0]}: exit {outcome.code}")  # pytest --hypothesis-show-statistics
    assert not re.search(RAW_WARNING, outcome.stderr), outcome.stderr
    assert PASSWORD not in outcome.stdout + outcome.stderr
    if args[0] == "run" and outcome.code in (0, NOT_COMPLETED):
        report = report_text(args, outcome.stdout, folder)
        assert_ran(outcome.code, report, outcome.stderr)
        check_output(args, report, folder)
        return
    if outcome.code == 0:
        check_output(args, report_text(args, outcome.stdout, folder), folder)
        return
    assert outcome.code == 2, outcome
    lines = outcome.stderr.splitlines()
    assert len(lines) == 1, outcome.stderr
    assert lines[0].startswith("error: ") and "internal error" not in lines[0], lines[0]
    if snapshot(folder) != before:
        check_failed_run(args, lines[0], folder)


def check_failed_run(args: Sequence[str], line: str, folder: Path) -> None:
    """A refused command changed the folder: only a run that started, then failed, may."""
    assert args[0] == "run" and "--resume" not in args, "a refused command changed the folder"
    listed = in_process(["runs", "--db", db_of(args), "--json"], folder)
    last = json.loads(listed.stdout)[-1]
    assert last["state"] == "failed", ("a refused command changed the folder", last)
    assert last["status"].removeprefix("failed: ")[:40] in line, (last, line)


def report_text(args: Sequence[str], stdout: str, folder: Path) -> str:
    """What a command printed as its report: -o's file when one was given, else standard
    output (less `run --decisions -`'s lines there); every decision line is checked."""
    given = dict(pairs(args))
    output = given.get("-o", given.get("--output", "-"))
    decisions = given.get("--decisions")
    if decisions is not None:
        lines = stdout if decisions == "-" else (folder / decisions).read_text(encoding="utf-8")
        for line in lines.splitlines():
            assert set(strict_json(line)) >= {"worker", "decision", "reason", "seq", "at"}, line
    if output == "-":
        return "" if decisions == "-" else stdout
    assert decisions == "-" or stdout == "", "a report written to -o went to standard output too"
    return (folder / output).read_text(encoding="utf-8")


def strict_json(text: str) -> Any:
    """``json.loads`` refusing Infinity and NaN, which JSON does not have."""

    def refuse(constant: str) -> Any:
        raise AssertionError(f"{constant} in JSON output")

    return json.loads(text, parse_constant=refuse)


def db_of(args: Sequence[str]) -> str:
    return dict(pairs(args)).get("--db", "screener.db")


def check_output(args: Sequence[str], stdout: str, folder: Path) -> None:
    if args[0] == "serve":
        assert stdout.startswith("http://127.0.0.1:") or stdout.startswith("http://[::1]:")
        return
    if "--json" not in args or args[0] == "decisions":
        return
    data = strict_json(stdout)
    if args[0] in ("run", "report"):
        check_report(data)
    if args[0] == "run":
        check_money(args, data.get("money"))
    elif args[0] == "replay":
        check_report(data["original"])
        check_report(data["replay"])
    elif args[0] == "plan":
        check_plan(args, data)
    if args[0] == "run" and "--resume" not in args and "--db" in args:
        report = in_process(["report", data["run_id"], "--db", db_of(args), "--json"], folder)
        assert report.code == 0, report.stderr
        check_spec(args, json.loads(report.stdout)["run_spec"])


def check_report(report: dict[str, Any]) -> None:
    workers = report["workers"]
    assert len(workers) >= 2 and isinstance(report["run_id"], str)
    assert {line["decision"] for line in workers} <= DECISIONS
    assert sum(line["pulls"] for line in workers) == report["total_pulls"]


def check_plan(args: Sequence[str], summary: dict[str, Any]) -> None:
    """The plan ran with the values given (its parameters and seed), and adds up."""
    spec = {"algorithm": summary["algorithm"], "params": summary["params"], "seed": summary["seed"]}
    check_spec(args, spec, kept=lambda path: path[0] != "params" or path[1] != "seed")
    assert summary["workers"] >= 1
    check_money(args, summary.get("money"), shows_budget=False)
    quantiles = summary["questions_in_total"]
    assert 0 <= quantiles["median"] <= quantiles["max"]
