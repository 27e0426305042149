"""`screener run` and `replay`: an algorithm screening a pool live, or replayed on the
answers a logged run received (`plan`, the same set-up simulated, is screener.cli.plan).
The settings are merged and checked by screener.runs.setup, the one set-up that
`screener.run()` uses too."""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from screener.algorithms import ALGORITHMS, Algorithm, Result, accepted_parameters
from screener.cli.commands import summary
from screener.cli.console import ExitCode, note, verbosity
from screener.cli.decisions import check_decisions_file, decision_lines
from screener.cli.options import (
    FILE,
    SyntheticPool,
    algorithm_options,
    db_option,
    given_on_command_line,
    json_option,
    money_options,
    oracle_options,
    output_options,
    refuse_beside_resume,
    run_options,
    synthetic_pool_options,
)
from screener.cli.output import Output, print_report
from screener.cli.signals import Terminated, run_until_terminated
from screener.files import is_stdio
from screener.journal import display_name
from screener.orchestrator import Progress
from screener.reports import render_comparison, render_json
from screener.runs import oracle_name, run_prices, worker_pool
from screener.runs.decisions import run_decisions
from screener.runs.logged import replay_logged_run
from screener.runs.results import load_result
from screener.runs.run_plan import RunPlan
from screener.runs.session import resume_run, start_run
from screener.runs.settings import AlgorithmSettings, MoneySettings, OracleSettings, RunSettings
from screener.runs.setup import algorithm_params, choose_algorithm, set_up_run

__all__ = ["replay", "run"]

#: What may be given beside --resume: where the run is and how to print it.
_RESUME_OPTIONS = frozenset(
    {"resume_id", "db", "as_json", "output_format", "only", "limit", "html", "output",
     "decisions_file"}
)  # fmt: skip


@click.command(short_help=summary("run"))
@click.argument("pool_file", required=False, type=FILE)
@algorithm_options()
@money_options
@synthetic_pool_options("Synthetic pool of this many simulated workers (instead of POOL_FILE).")
@click.option(
    "--questions",
    type=FILE,
    default=None,
    help="Gold question bank (CSV id,payload,key[,scoring,tolerance] or JSON).",
)
@click.option("--config", "config_file", type=FILE, default=None,
              help="Run file (TOML) with workers, questions, algorithm, oracle...; flags win "
              "over it.")  # fmt: skip
@oracle_options
@run_options
@click.option(
    "--resume", "resume_id", default=None,
    help="Continue the interrupted run with this id, with the settings it started with "
    "(only --db and the report's options may be given beside it).",
)  # fmt: skip
@db_option
@output_options
@click.option(
    "--decisions", "decisions_file", type=click.Path(dir_okay=False, allow_dash=True,
    path_type=Path), default=None, metavar="FILE",
    help="Also write each decision as it is made, a JSON line (worker, decision, reason, seq, "
    "at) flushed at once, to FILE (- for standard output, with -o FILE for the report; "
    "a resume appends, first what was journaled after the file's last line).",
)  # fmt: skip
def run(
    pool_file: Path | None,
    algorithm: AlgorithmSettings,
    money: MoneySettings,
    synthetic: SyntheticPool,
    questions: Path | None,
    config_file: Path | None,
    oracle: OracleSettings,
    options: dict[str, Any],
    resume_id: str | None,
    db: str,
    out: Output,
    decisions_file: Path | None,
) -> None:
    """Screen POOL_FILE (CSV: worker[,accuracy]; - reads standard input) or, without it, an
    embedded demo pool.

    The demo pool has 30 simulated workers, two of whom answer at chance. Without --algorithm
    each worker is banned or accepted against a bar of 60% correct, each list with at most a
    tenth of its workers wrong in expectation (fdr-thresholding, q 0.1, eps 0.05); `--algorithm
    wrr` finds the k-sigma outliers instead.
    """
    quiet = verbosity() < 0
    # On stderr whenever it is a terminal, whatever stdout gets (--json included).
    progress = None if quiet or not sys.stderr.isatty() else Progress(sys.stderr)
    check_decisions_file(decisions_file, out)
    if resume_id is not None:
        _resume(resume_id, db, out, progress, decisions_file)
        return
    settings = RunSettings(
        run_file=config_file, pool=pool_file, workers=synthetic.workers,
        outliers=synthetic.outliers, questions=questions, algorithm=algorithm, oracle=oracle,
        options=options, db=db if given_on_command_line("db") else None, money=money,
    )  # fmt: skip
    setup = set_up_run(settings)
    plan, db = setup.plan, setup.db or db
    run_id, result = _start(plan, db, progress, decisions_file)
    if out.format == "table" and is_stdio(out.output):
        shown = display_name(db)
        note(f"run {run_id} saved in {shown} (report again: screener report {run_id} --db {shown})")
    print_report(result, plan.pool, run_id, out, db, prices=plan.prices, oracle=plan.oracle)
    _exit_unless_completed(result)


def _start(
    plan: RunPlan, db: str, progress: Progress | None, decisions_file: Path | None
) -> tuple[str, Result]:
    """Start the run and drive it to its end, saying what it is about to do and cost."""
    started: list[str] = []

    def on_start(run_id: str, algorithm: Algorithm) -> None:
        started.append(run_id)
        if sink is not None:
            sink.open()  # the run is written: now its decisions file may be
        _announce_bound(algorithm)
        note(_plan_line(run_id, plan, algorithm, db), level=1)

    began = time.perf_counter()
    with _resume_hint_on_interrupt(started, db), decision_lines(decisions_file) as sink:
        done = run_until_terminated(
            start_run(plan, db, progress=progress, on_start=on_start, on_decided=sink)
        )
    note(_cost_line(done[1], time.perf_counter() - began), level=1)
    return done


def _resume(
    run_id: str, db: str, out: Output, progress: Progress | None, decisions_file: Path | None
) -> None:
    """``run --resume``: continue run ``run_id`` with its own settings and print its report."""
    _refuse_settings_on_resume(run_id)
    journaled = None if decisions_file is None else run_decisions(db, run_id)
    with _resume_hint_on_interrupt([run_id], db), decision_lines(decisions_file, journaled) as sink:
        result = run_until_terminated(resume_run(run_id, db, progress=progress, on_decided=sink))
    record, _ = load_result(db, run_id)
    pool, oracle = worker_pool(record), oracle_name(record)
    print_report(result, pool, run_id, out, db, prices=run_prices(record), oracle=oracle)
    _exit_unless_completed(result)


def _refuse_settings_on_resume(run_id: str) -> None:
    """A resumed run keeps the settings it started with: a setting given beside --resume is
    refused by name rather than silently ignored."""
    refuse_beside_resume(run_id, _RESUME_OPTIONS, "or start a new run")


@click.command(short_help=summary("replay"))
@click.argument("run_id")
@algorithm_options(defaults_from="the logged run")
@db_option
@json_option("Print both results as JSON.")
def replay(run_id: str, algorithm: AlgorithmSettings, db: str, as_json: bool) -> None:
    """Re-run an algorithm offline on the answers logged run RUN_ID received.

    Asking worker w gets w's next logged answer; a worker whose answers are used up is
    exhausted. Prints the new result beside the original and the pulls each used. The
    replay is journaled in the database as a new run (the id shown beside "replay"); a
    run that did not finish (crashed or interrupted) is replayed on the answers it had, and
    stays as it was (`screener run --resume` continues it).
    """
    record, original = load_result(db, run_id)
    name = choose_algorithm(algorithm, default=record.algorithm)
    # The logged run's parameters carry over where the replaying algorithm takes them (its
    # direction above all); the logged budget and seed do not, nor a None, which meant "the
    # logged algorithm's own choice" (wrr's rho) and is no value for another.
    accepted = accepted_parameters(ALGORITHMS[name]) - {"seed", "budget"}
    logged = {
        key: value for key, value in record.params.items() if key in accepted and value is not None
    }
    params = algorithm_params(name, algorithm, logged, algorithm.budget)
    pool = worker_pool(record)
    _, new_id, result = run_until_terminated(
        replay_logged_run(db, run_id, name, params, seed=algorithm.seed)
    )
    if as_json:
        both = {
            "original": render_json(original, pool, run_id),
            "replay": render_json(result, pool, new_id),
        }
        click.echo(json.dumps(both, indent=2))
        return
    click.echo(render_comparison(original, result, pool, (f"run {run_id}", f"replay {new_id}")))


def _exit_unless_completed(result: Result) -> None:
    """A run that stopped short of its condition (a budget, workers out of questions) ends
    with NOT_COMPLETED once its report is out, so that scripts can tell."""
    if not result.completed:
        raise click.exceptions.Exit(ExitCode.NOT_COMPLETED)


@contextlib.contextmanager
def _resume_hint_on_interrupt(started: list[str], db: str) -> Iterator[None]:
    """Ctrl-C or SIGTERM during a run (once it is written: ``started`` holds its id) ends
    the command with exit 130 or 143 and the exact command that continues it."""
    try:
        yield
    except KeyboardInterrupt as stop:
        if not started:
            raise
        run_id, shown = started[0], display_name(db)
        terminated = isinstance(stop, Terminated)
        click.echo(
            f"\n{'terminated' if terminated else 'interrupted'}: run {run_id} is saved; "
            f"continue it with `screener run --resume {run_id} --db {shown}`",
            err=True,
        )
        code = ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED
        raise click.exceptions.Exit(code) from None


def _announce_bound(algorithm: Algorithm) -> None:
    """The worst case per worker, on stderr before the first question, when there is one."""
    bound = algorithm.max_questions_per_worker
    if bound is not None:
        total = bound * algorithm.n_arms
        note(
            f"at most {bound:,} gold questions per worker ({total:,} for all "
            f"{algorithm.n_arms:,} workers)"
        )


def _plan_line(run_id: str, plan: RunPlan, algorithm: Algorithm, db: str) -> str:
    """-v: what the run is about to do, with every parameter (its defaults too)."""
    params = ", ".join(f"{key}={value}" for key, value in algorithm.params().items())
    options = ", ".join(f"{key}={value}" for key, value in plan.oracle_options.items())
    return (
        f"run {run_id}: {plan.algorithm} ({params}) on {len(plan.pool):,} workers; "
        f"answers from {plan.oracle}"
        + (f" ({options})" if options else "")
        + f"; journal {display_name(db)}; {plan.options.concurrency} in flight"
    )


def _cost_line(result: Result, seconds: float) -> str:
    """-v: what the run cost."""
    rate = result.total_pulls / seconds if seconds > 0 else 0.0
    return (
        f"{result.total_pulls:,} gold questions answered in {seconds:.2f} s "
        f"({rate:,.0f} per second); stopped: {result.stop_reason}"
    )
