"""Click commands. Logic lives in screener.runs.session and screener.report; this file parses.

Every user error becomes one line on stderr, ``error: what is wrong (how to fix it)``, and
exit code 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import json
import logging
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn, TextIO

import click
from click.core import ParameterSource
from tqdm.auto import tqdm

from screener._version import DISTRIBUTION
from screener.algorithms import (
    ALGORITHMS,
    Algorithm,
    Result,
    accepted_parameters,
    parameter_choices,
)
from screener.algorithms.registry import HEURISTIC_INTERVALS
from screener.bank import load_bank
from screener.cli.algorithms import algorithms
from screener.cli.serve import serve
from screener.config import RunConfig, load_run_config, parse_value
from screener.errors import ConfigError, ScreenerError
from screener.files import STDIO, is_stdio, write_output
from screener.journal import Journal, RunSummary, display_name
from screener.oracles import available_oracles, load_oracle_class
from screener.orchestrator import Progress, RunOptions
from screener.planning import plan_cost, render_plan
from screener.pool import WorkerPool, load_pool_csv, synthetic_pool
from screener.report import (
    FORMATS,
    ONLY,
    Only,
    decision_counts,
    render_comparison,
    render_csv,
    render_json,
    render_table,
    terminal_width,
)
from screener.report_html import html_report, require_html_support
from screener.runs import observed_accuracies, worker_pool
from screener.runs.logged import (
    export_answers,
    export_crowdkit,
    invalidate_question,
    replay_logged_run,
)
from screener.runs.rescoring import (
    DecisionChange,
    changes_as_json,
    changes_as_text,
    decision_changes,
)
from screener.runs.session import (
    RunPlan,
    default_pool,
    load_result,
    load_results,
    resume_run,
    start_run,
)

__all__ = ["cli", "main"]

DEFAULT_DB = "screener.db"

#: The bar question's algorithm for each kind of error control (``--error``).
_BAR_ALGORITHMS = {
    "fwer": "confident-thresholding",
    "fdr": "fdr-thresholding",
    "bayes": "crowd-prior",
}
#: What may be given beside --resume: where the run is and how to print it.
_RESUME_OPTIONS = frozenset(
    {"resume_id", "db", "as_json", "output_format", "only", "limit", "html", "output"}
)
#: `run`'s exit code when the run ended without its stopping condition (README: exit codes).
EXIT_NOT_COMPLETED = 3
#: The environment variable that sets --db (below a run file's `db`, above the default).
DB_ENV = "SCREENER_DB"
_db_option = click.option(
    "--db", default=DEFAULT_DB, show_default=True, envvar=DB_ENV, show_envvar=True,
    help="Run database: a path or SQLAlchemy URL.",
)  # fmt: skip


def _output_file_option(help_text: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """``-o/--output FILE``: the one meaning of -o in every command (- is standard output)."""
    return click.option(
        "--output", "-o", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
        default=STDIO, show_default=True, metavar="FILE", help=help_text,
    )  # fmt: skip


def _output_options(command: Callable[..., None]) -> Callable[..., None]:
    """The report's options, shared by ``run`` and ``report``."""
    options = (
        click.option(
            "--format", "output_format", type=click.Choice(FORMATS), default="table",
            show_default=True,
            help="table (fitted to the terminal; COLUMNS overrides its width), json, or csv "
            "(one row per worker).",
        ),
        click.option("--json", "as_json", is_flag=True, help="The same as --format json."),
        click.option(
            "--only", type=click.Choice(ONLY), default=None,
            help="List only the decided or only the undecided workers.",
        ),
        click.option(
            "--limit", type=click.IntRange(min=1), default=None, metavar="N",
            help="List only the first N workers by rank.",
        ),
        click.option(
            "--html", type=click.Path(dir_okay=False, path_type=Path), default=None,
            metavar="FILE",
            help="Also write the report as one self-contained HTML page with plots (opens "
            "offline; needs crowd-screener[html]; - for standard output, with -o FILE).",
        ),
        _output_file_option("Write the report to FILE instead of standard output."),
    )  # fmt: skip
    for option in reversed(options):
        command = option(command)
    return command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--debug",
    is_flag=True,
    help="Show tracebacks instead of one-line errors (anywhere on the line).",
)
@click.option(
    "--quiet",
    "-q",
    is_flag=True,
    help="Data only: no progress line and no notes on stderr (anywhere on the line).",
)
@click.option(
    "--verbose", "-v", count=True,
    help="Say more on stderr: what a run is about to do and what it cost; -vv also logs "
    "each service request (anywhere on the line).",
)  # fmt: skip
@click.version_option(package_name=DISTRIBUTION)
@click.pass_context
def cli(ctx: click.Context, debug: bool, quiet: bool, verbose: int) -> None:
    """Screen crowd workers with as few paid gold questions as possible."""
    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose contradict each other: give one")
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    ctx.obj["verbosity"] = -1 if quiet else verbose
    _configure_logging(ctx.obj["verbosity"])


def _verbosity() -> int:
    """-1 with --quiet, 0 by default, 1 with -v, 2 with -vv."""
    context = click.get_current_context()
    obj = context.find_root().obj or {}
    return int(obj.get("verbosity", 0))


def _note(message: str, *, level: int = 0) -> None:
    """A note for the person at the terminal, on stderr: shown at ``level`` 0 unless
    --quiet, at level 1 only with -v."""
    if _verbosity() >= level:
        click.echo(message, err=True)


def _configure_logging(verbosity: int) -> None:
    """screener's loggers (the reference service's requests, for one) at -vv; warnings
    otherwise, one line each."""
    level = logging.DEBUG if verbosity >= 2 else logging.INFO if verbosity == 1 else logging.WARNING
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    logger = logging.getLogger("screener")
    logger.handlers[:] = [handler]
    logger.setLevel(level)
    logger.propagate = False


@cli.command()
@click.argument("pool_file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--algorithm",
    "-a",
    type=click.Choice(sorted(ALGORITHMS)),
    default="wrr",
    show_default=True,
    help="Screening algorithm.",
)
@click.option(
    "--k",
    type=float,
    default=None,
    help="k of the k-sigma rule (default: the algorithm's; `screener algorithms NAME`).",
)
@click.option(
    "--delta",
    type=float,
    default=None,
    help="Allowed error probability (default: the algorithm's, e.g. 0.1 for the k-sigma "
    "family, 0.05 for confident-thresholding; `screener algorithms NAME`).",
)
@click.option(
    "--error",
    type=click.Choice(sorted(_BAR_ALGORITHMS)),
    default=None,
    help="Who is below the bar, with which promise: fwer (every decision right at once, "
    "confident-thresholding), fdr (at most a share q of the bans wrong in expectation, "
    "fdr-thresholding) or bayes (the same share, if the crowd prior fits: crowd-prior).",
)
@click.option(
    "--q",
    type=float,
    default=None,
    help="Allowed share of wrong decisions for --error fdr and bayes (default 0.1).",
)
@click.option(
    "--direction",
    type=click.Choice(["low", "high"]),
    default="low",
    show_default=True,
    help="low: abnormally low accuracy (spammers); high: abnormally high.",
)
@click.option(
    "--interval",
    type=click.Choice(parameter_choices("interval")),
    default=None,
    help="Confidence intervals (default: the algorithm's own, a valid bound; each algorithm's "
    "docstring lists the ones it takes). Heuristic, delta not guaranteed: "
    f"{', '.join(HEURISTIC_INTERVALS)} (and --quantile paper).",
)
@click.option(
    "--quantile",
    type=click.Choice(parameter_choices("quantile")),
    default=None,
    help="Normal quantile rule (paper: as printed in Zhuang 2017).",
)
@click.option(
    "--rho",
    type=float,
    default=None,
    help="WRR: rho (default rho*); GOLD: share of normal workers (default 0.9).",
)
@click.option(
    "--threshold",
    type=float,
    default=None,
    help="Accuracy bar of the thresholding algorithms (lsa, confident-thresholding...).",
)
@click.option("--top", type=int, default=None, help="How many workers to select (adaptive-topk).")
@click.option(
    "--param",
    "-p",
    "extra",
    multiple=True,
    metavar="KEY=VALUE",
    help="Any other algorithm parameter, e.g. -p eps=2.5 (repeatable).",
)
@click.option("--budget", type=int, default=None, help="Stop after this many answered pulls.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--workers",
    "n_workers",
    type=int,
    default=None,
    help="Synthetic pool of this many simulated workers (instead of POOL_FILE).",
)
@click.option(
    "--outliers",
    "n_outliers",
    type=int,
    default=2,
    show_default=True,
    help="Spammers in the synthetic pool.",
)
@click.option(
    "--questions",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Gold question bank (CSV id,payload,key[,scoring,tolerance] or JSON).",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Run file (TOML) with workers, questions, algorithm, oracle...; flags win over it.",
)
@click.option("--oracle", default="simulated", show_default=True, help="Answer source.")
@click.option(
    "--oracle-option",
    "-O",
    "oracle_extra",
    multiple=True,
    metavar="KEY=VALUE",
    help="An oracle option, e.g. -O path=answers.csv (repeatable; see `screener oracles`).",
)
@click.option(
    "--rewards",
    type=click.Choice(["bernoulli", "beta"]),
    default="bernoulli",
    show_default=True,
    help="Simulated answers: binary or graded in [0, 1].",
)
@click.option(
    "--latency",
    default="none",
    show_default=True,
    help="Simulated latency: none, constant:S or exponential:S (seconds).",
)
@click.option(
    "--batch-release",
    type=int,
    default=1,
    show_default=True,
    help="Simulated answers are released in groups of this size.",
)
@click.option(
    "--concurrency", type=int, default=16, show_default=True, help="Questions in flight at once."
)
@click.option(
    "--timeout",
    type=float,
    default=60.0,
    show_default=True,
    help="Seconds before an unanswered question is given up and asked again.",
)
@click.option(
    "--resume",
    "resume_id",
    default=None,
    help="Continue the interrupted run with this id, with the settings it started with "
    "(only --db and the report's options may be given beside it).",
)
@_db_option
@_output_options
def run(
    pool_file: Path | None,
    algorithm: str,
    k: float | None,
    delta: float | None,
    error: str | None,
    q: float | None,
    direction: str,
    interval: str | None,
    quantile: str | None,
    rho: float | None,
    threshold: float | None,
    top: int | None,
    extra: tuple[str, ...],
    budget: int | None,
    seed: int,
    n_workers: int | None,
    n_outliers: int,
    questions: Path | None,
    config_file: Path | None,
    oracle: str,
    oracle_extra: tuple[str, ...],
    rewards: str,
    latency: str,
    batch_release: int,
    concurrency: int,
    timeout: float,
    resume_id: str | None,
    db: str,
    output_format: str,
    as_json: bool,
    only: Only | None,
    limit: int | None,
    html: Path | None,
    output: Path,
) -> None:
    """Screen POOL_FILE (CSV: worker[,accuracy]; - reads standard input) or, without it, an
    embedded demo pool.

    The demo pool has 30 simulated workers, two of whom answer at chance: the run finds them.
    """
    out = _output_settings(output_format, as_json, only, limit, html, output)
    _one_standard_input(pool_file, questions, config_file)
    quiet = _verbosity() < 0
    # On stderr whenever it is a terminal, whatever stdout gets (--json included).
    progress = None if quiet or not sys.stderr.isatty() else Progress(sys.stderr)
    if resume_id is not None:
        _refuse_settings_on_resume(resume_id)
        with _resume_hint_on_interrupt([resume_id], db):
            result = asyncio.run(resume_run(resume_id, db, progress=progress))
        record, _ = load_result(db, resume_id)
        _print_report(result, worker_pool(record), resume_id, out, db)
        _exit_unless_completed(result)
        return
    config = load_run_config(config_file) if config_file is not None else RunConfig(Path("."))
    algorithm = _setting("algorithm", algorithm, config.algorithm)
    if error is not None:
        algorithm = _algorithm_for_error(error, algorithm, config.algorithm)
    seed = _setting("seed", seed, config.seed)
    budget = _setting("budget", budget, config.budget)
    db = _setting("db", db, config.db)
    oracle = _setting("oracle", oracle, config.oracle)
    run_settings = {
        "concurrency": _setting("concurrency", concurrency, config.run.get("concurrency")),
        "timeout": _setting("timeout", timeout, config.run.get("timeout")),
    }
    options = RunOptions(**{**config.run, **run_settings})
    if algorithm not in ALGORITHMS:
        raise ConfigError(f"unknown algorithm {algorithm!r}", f"use one of {', '.join(ALGORITHMS)}")
    flags = {
        "k": k, "delta": delta, "q": q, "direction": direction, "interval": interval,
        "quantile": quantile, "rho": rho, "threshold": threshold,
    }  # fmt: skip
    params = {**config.params, **_algorithm_params(algorithm, flags, budget, extra, config.params)}
    if top is not None:
        params["k"] = top
    oracle_options: dict[str, Any] = dict(config.oracle_options)
    if oracle == "simulated":
        simulated = {"rewards": rewards, "latency": latency, "batch_release": batch_release}
        oracle_options = {**simulated, **oracle_options}
    oracle_options.update(_key_values(oracle_extra, "--oracle-option"))
    pool = _choose_pool(
        pool_file or config.workers, n_workers, n_outliers, seed, oracle, oracle_options
    )
    bank_file = questions or config.questions
    if bank_file is not None:
        pool = dataclasses.replace(pool, bank=load_bank(bank_file))
    plan = RunPlan(pool, algorithm, params, oracle, oracle_options, seed, options)
    started: list[str] = []

    def on_start(run_id: str, algorithm: Algorithm) -> None:
        started.append(run_id)
        _announce_bound(algorithm)
        _note(_plan_line(run_id, plan, algorithm, db), level=1)

    began = time.perf_counter()
    with _resume_hint_on_interrupt(started, db):
        run_id, result = asyncio.run(start_run(plan, db, progress=progress, on_start=on_start))
    _note(_cost_line(result, time.perf_counter() - began), level=1)
    if out.format == "table" and is_stdio(out.output):
        shown = display_name(db)
        _note(
            f"run {run_id} saved in {shown} (report again: screener report {run_id} --db {shown})"
        )
    _print_report(result, pool, run_id, out, db)
    _exit_unless_completed(result)


@cli.command()
@click.argument("run_id", required=False)
@_db_option
@_output_options
def report(
    run_id: str | None,
    db: str,
    output_format: str,
    as_json: bool,
    only: Only | None,
    limit: int | None,
    html: Path | None,
    output: Path,
) -> None:
    """Report a run (default: the latest): the result a finished run stored, else its journal
    replayed.

    When gold questions of the run were invalidated, the report is rebuilt from the
    remaining (or rescored) answers and says which decisions changed.
    """
    out = _output_settings(output_format, as_json, only, limit, html, output)
    record, original, rescored = load_results(db, run_id)
    pool = worker_pool(record)
    if rescored is None:
        _print_report(original, pool, record.id, out, db)
        return
    changes = decision_changes(original, rescored, pool)
    _print_report(rescored, pool, record.id, out, db, changes)


@cli.command()
@click.argument("pool_file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--algorithm", "-a", type=click.Choice(sorted(ALGORITHMS)), default="wrr",
              show_default=True, help="Algorithm to plan.")  # fmt: skip
@click.option("--param", "-p", "extra", multiple=True, metavar="KEY=VALUE",
              help="An algorithm parameter (repeatable).")  # fmt: skip
@click.option("--budget", type=int, default=None, help="Stop each run after this many answers.")
@click.option("--workers", "n_workers", type=int, default=None,
              help="Plan for this many workers (synthetic, or drawn as --like).")  # fmt: skip
@click.option("--outliers", "n_outliers", type=int, default=2, show_default=True,
              help="Low-accuracy workers in the synthetic pool.")  # fmt: skip
@click.option("--like", "pilot", metavar="RUN_ID", default=None,
              help="Draw workers from the accuracies seen in this pilot run.")  # fmt: skip
@_db_option
@click.option("--runs", type=int, default=100, show_default=True,
              help="Simulated runs (seeds SEED, SEED+1, ...).")  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--processes", type=click.IntRange(min=1), default=None,
              help="Processes for the runs (the plan is the same on any number).  "
                   "[default: every CPU, unless the runs take under a second]")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan(
    pool_file: Path | None,
    algorithm: str,
    extra: tuple[str, ...],
    budget: int | None,
    n_workers: int | None,
    n_outliers: int,
    pilot: str | None,
    db: str,
    runs: int,
    seed: int,
    processes: int | None,
    as_json: bool,
) -> None:
    """How many gold questions a screening may cost, before paying for any: the algorithm
    runs on simulated workers (POOL_FILE's accuracies, a synthetic pool, or a crowd like
    a pilot run's) RUNS times, and the distribution of its questions is printed."""
    params = _key_values(extra, "--param")
    if budget is not None:
        params["budget"] = budget
    if pilot is not None:
        if pool_file is not None:
            raise click.UsageError("give either POOL_FILE or --like, not both")
        accuracies, draw = observed_accuracies(db, pilot), True
    else:
        pool = _choose_pool(pool_file, n_workers, n_outliers, seed, "simulated", {})
        accuracies, draw = list(pool.require_accuracies()), False
    size = n_workers if draw and n_workers else len(accuracies)
    quiet = _verbosity() < 0 or not sys.stderr.isatty()
    with tqdm(total=runs, desc="plan", unit="run", leave=False, disable=quiet,
              file=sys.stderr) as bar:  # fmt: skip
        cost = plan_cost(algorithm, params, accuracies, runs=runs, seed=seed, draw=draw,
                         n_workers=size, processes=processes, progress=bar.update)  # fmt: skip
    summary = {"algorithm": algorithm, "params": params, "workers": size, "seed": seed}
    summary |= cost.summary()
    click.echo(json.dumps(summary, indent=2) if as_json else render_plan(summary))


@cli.command()
@click.argument("run_id")
@click.option(
    "--algorithm", "-a", type=click.Choice(sorted(ALGORITHMS)), default=None,
    help="Algorithm to replay with (default: the logged run's, with its parameters).",
)  # fmt: skip
@click.option("--param", "-p", "extra", multiple=True, metavar="KEY=VALUE",
              help="An algorithm parameter (repeatable).")  # fmt: skip
@click.option("--budget", type=int, default=None, help="Stop after this many answered pulls.")
@click.option("--seed", type=int, default=None, help="Seed (default: the logged run's).")
@_db_option
@click.option("--json", "as_json", is_flag=True, help="Print both results as JSON.")
def replay(
    run_id: str,
    algorithm: str | None,
    extra: tuple[str, ...],
    budget: int | None,
    seed: int | None,
    db: str,
    as_json: bool,
) -> None:
    """Re-run an algorithm offline on the answers logged run RUN_ID received.

    Asking worker w gets w's next logged answer; a worker whose answers are used up is
    exhausted. Prints the new result beside the original and the pulls each used.
    """
    record, original = load_result(db, run_id)
    # The logged run's parameters carry over where the replaying algorithm takes them (its
    # direction above all); the logged budget and seed do not.
    algorithm = algorithm or record.algorithm
    accepted = accepted_parameters(ALGORITHMS[algorithm]) - {"seed", "budget"}
    params = {key: value for key, value in record.params.items() if key in accepted}
    params.update(_key_values(extra, "--param"))
    if budget is not None:
        params["budget"] = budget
    pool = worker_pool(record)
    _, new_id, result = asyncio.run(replay_logged_run(db, run_id, algorithm, params, seed=seed))
    if as_json:
        both = {
            "original": render_json(original, pool, run_id),
            "replay": render_json(result, pool, new_id),
        }
        click.echo(json.dumps(both, indent=2))
        return
    click.echo(render_comparison(original, result, pool, (f"run {run_id}", f"replay {new_id}")))


@cli.command()
@click.argument("run_id")
@_output_file_option("CSV file to write (- for standard output, the long layout only).")
@click.option(
    "--format", "layout", type=click.Choice(["long", "crowd-kit"]), default="long",
    show_default=True,
    help="long: worker,item,answer,gold,score. crowd-kit: task,worker,label, and the gold "
    "answers (task,true_label) in a second file beside it, NAME.gold.csv.",
)  # fmt: skip
@_db_option
@click.option("--json", "as_json", is_flag=True, help="Say what was written as JSON.")
def export(run_id: str, output: Path, layout: str, db: str, as_json: bool) -> None:
    """Write the answers of run RUN_ID as CSV (replay it with --oracle dataset -O path=FILE)."""
    if is_stdio(output) and as_json:
        raise click.UsageError("--json and the CSV would both go to standard output: give -o FILE")
    if is_stdio(output) and layout == "crowd-kit":
        raise click.UsageError(
            "--format crowd-kit writes two files (answers and gold): give -o FILE, not -"
        )
    if layout == "long":
        rows, gold = export_answers(db, run_id, output), None
    else:
        rows, gold = export_crowdkit(db, run_id, output)
    if as_json:
        written = {"run_id": run_id, "answers": rows, "path": str(output)}
        click.echo(json.dumps({**written, "gold_path": None if gold is None else str(gold)}))
        return
    also = "" if gold is None else f", their gold to {gold}"
    where = "standard output" if is_stdio(output) else output
    _note(f"{rows:,} answers of run {run_id} written to {where}{also}")


@cli.command()
@click.argument("run_id")
@click.argument("question")
@click.option("--key", default=None, help="The corrected key: rescore instead of dropping.")
@click.option("--reason", default="", help="Why the question is wrong (kept in the journal).")
@_db_option
@click.option("--json", "as_json", is_flag=True, help="Print what changed as JSON.")
def invalidate(
    run_id: str, question: str, key: str | None, reason: str, db: str, as_json: bool
) -> None:
    """Mark gold QUESTION of run RUN_ID as wrong; its answers are rescored or dropped."""
    record, before = load_result(db, run_id)
    bank = worker_pool(record).bank
    if key is not None and bank is not None and question in bank:
        bank.get(question).with_key(key)  # a key its scoring cannot use is refused here
    answers = invalidate_question(db, run_id, question, key=key, reason=reason)
    record, _, after = load_results(db, run_id)
    assert after is not None
    changes = decision_changes(before, after, worker_pool(record))
    if as_json:
        done = {"run_id": run_id, "question": question, "answers": answers, "key": key}
        click.echo(json.dumps({**done, "decision_changes": changes_as_json(changes)}, indent=2))
        return
    action = "rescored against key " + repr(key) if key is not None else "dropped"
    click.echo(
        f"question {question} of run {run_id} invalidated; its {answers:,} answer(s) are {action}"
    )
    click.echo(changes_as_text(changes))


@cli.command()
@_db_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def runs(db: str, as_json: bool) -> None:
    """List the runs in a database."""
    with Journal(db, create=False) as journal:
        summaries = journal.runs()
    if as_json:
        click.echo(json.dumps([_run_line(s) for s in summaries], indent=2))
        return
    if not summaries:
        click.echo(f"no runs in {display_name(db)}")
        return
    lines = [_run_line(s) for s in summaries]
    width = max(len("algorithm"), *(len(line["algorithm"]) for line in lines))
    source = max(len("answers from"), *(len(_answers_from(line)) for line in lines))
    click.echo(
        f"{'run':<12}  {'created':<16}  {'algorithm':<{width}}  {'answers from':<{source}}  "
        f"{'workers':>7}  {'answers':>9}  status"
    )
    for line in lines:
        created = line["created"][:16].replace("T", " ")
        click.echo(
            f"{line['id']:<12}  {created:<16}  {line['algorithm']:<{width}}  "
            f"{_answers_from(line):<{source}}  {line['n_workers']:>7}  {line['answered']:>9,}  "
            f"{_run_status(line)}"
        )


def _run_line(summary: RunSummary) -> dict[str, Any]:
    """One run of `screener runs`: the summary, its date, and from the result it stored (a
    finished run's) whether its condition held and the workers per decision."""
    line = dataclasses.asdict(summary)
    stored = line.pop("stored_result")
    result = None if stored is None else Result.from_json(stored)
    line["created"] = (
        datetime.datetime.fromtimestamp(summary.created_at)
        .astimezone()
        .isoformat(timespec="seconds")
    )
    line["condition_met"] = None if result is None else result.condition_met
    line["completed"] = None if result is None else result.completed
    line["decisions"] = None if result is None else decision_counts(result)
    return line


def _answers_from(line: dict[str, Any]) -> str:
    return f"{line['oracle']} {line['source']}" if line["source"] else str(line["oracle"])


def _run_status(line: dict[str, Any]) -> str:
    counts = line["decisions"]
    if not counts:
        return str(line["status"])
    return f"{line['status']} · " + ", ".join(f"{n:,} {name}" for name, n in counts.items())


@cli.command()
@_db_option
def upgrade(db: str) -> None:
    """Upgrade a run database written by an older screener to this version's schema."""
    with Journal(db, create=False, check_version=False) as journal:
        applied = journal.upgrade()
    click.echo("\n".join(applied) if applied else f"{db} is already up to date")


@cli.command()
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def oracles(name: str | None, as_json: bool) -> None:
    """List the installed oracles (entry-point group screener.oracles), or one oracle's
    options (-O NAME=VALUE) with their defaults."""
    found = available_oracles()
    if name is None:
        if as_json:
            click.echo(json.dumps([dataclasses.asdict(info) for info in found], indent=2))
            return
        for info in found:
            click.echo(f"{info.name:<16} {info.package} {info.version}  ({info.target})")
        return
    chosen = next((info for info in found if info.name == name), None)
    if chosen is None:
        known = ", ".join(info.name for info in found)
        raise ConfigError(f"no oracle named {name!r}", f"installed: {known}")
    options = load_oracle_class(name).OPTIONS
    if as_json:
        listed = [dataclasses.asdict(option) for option in options]
        click.echo(json.dumps({**dataclasses.asdict(chosen), "options": listed}, indent=2))
        return
    click.echo(f"{chosen.name}: {chosen.package} {chosen.version} ({chosen.target})")
    if not options:
        click.echo("it declares no options")
        return
    width = max(len(option.name) for option in options)
    for option in options:
        default = (
            "required" if option.required
            else "" if option.default is None
            else f"default {json.dumps(option.default)}"
        )  # fmt: skip
        extra = f" ({default})" if default else ""
        click.echo(f"  -O {option.name:<{width}}  {option.help}{extra}")


def _algorithm_params(
    algorithm: str,
    flags: dict[str, Any],
    budget: int | None,
    extra: tuple[str, ...],
    configured: dict[str, Any],
) -> dict[str, Any]:
    """Flags the user set, the CLI's direction default where it applies, then -p KEY=VALUE.

    Unset flags are left to each algorithm's own defaults, except the direction: the CLI
    screens for spammers ("low") by default, the Python API for the paper's high side. A
    direction in the run file's ``[params]`` (``configured``) wins over that default.
    """
    context = click.get_current_context()
    accepted = accepted_parameters(ALGORITHMS[algorithm])
    params: dict[str, Any] = {"budget": budget}
    for name, value in flags.items():
        explicit = context.get_parameter_source(name) is not ParameterSource.DEFAULT
        if explicit or (name == "direction" and name in accepted and name not in configured):
            params[name] = value
    params.update(_key_values(extra, "--param"))
    return params


def _refuse_settings_on_resume(run_id: str) -> None:
    """A resumed run keeps the settings it started with: a setting given beside --resume is
    refused by name rather than silently ignored."""
    context = click.get_current_context()
    given = [
        param.opts[0] if isinstance(param, click.Option) else param.human_readable_name
        for param in context.command.params
        if param.name not in _RESUME_OPTIONS
        and context.get_parameter_source(param.name or "") is ParameterSource.COMMANDLINE
    ]
    if given:
        names = ", ".join(given)
        raise ConfigError(
            f"--resume continues run {run_id} with the settings it started with, so {names} "
            "cannot be given",
            f"drop {names}, or start a new run",
        )


def _algorithm_for_error(error: str, algorithm: str, configured: str | None) -> str:
    """The bar algorithm that gives ``--error``'s promise; an algorithm chosen explicitly
    (flag or run file) must be that one."""
    wanted = _BAR_ALGORITHMS[error]
    chosen = click.get_current_context().get_parameter_source("algorithm")
    if algorithm != wanted and (chosen is not ParameterSource.DEFAULT or configured):
        raise click.UsageError(
            f"--error {error} screens against a bar with {wanted}, not {algorithm}: "
            f"drop --algorithm or use --algorithm {wanted}"
        )
    return wanted


def _key_values(items: tuple[str, ...], flag: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise click.UsageError(f"{flag} takes KEY=VALUE, got {item!r}")
        values[key.strip().replace("-", "_")] = parse_value(text.strip())
    return values


def _setting(name: str, flag_value: Any, config_value: Any) -> Any:
    """The flag when given on the command line, else the config file's value, else the
    flag's environment variable or default."""
    context = click.get_current_context()
    source = context.get_parameter_source(name)
    if source not in (ParameterSource.DEFAULT, ParameterSource.ENVIRONMENT):
        return flag_value
    return flag_value if config_value is None else config_value


def _choose_pool(
    pool_file: Path | None,
    n_workers: int | None,
    n_outliers: int,
    seed: int,
    oracle: str,
    oracle_options: dict[str, Any],
) -> WorkerPool:
    """POOL_FILE, else a synthetic pool, else the oracle's own workers (the simulated
    oracle's: the demo pool)."""
    if pool_file is not None and n_workers is not None:
        raise click.UsageError("give either POOL_FILE or --workers, not both")
    if pool_file is not None:
        return load_pool_csv(pool_file)
    if n_workers is not None:
        return synthetic_pool(n_workers, n_outliers, seed=seed)
    return default_pool(oracle, oracle_options)


def _exit_unless_completed(result: Result) -> None:
    """A run that stopped short of its condition (a budget, workers out of questions) ends
    with EXIT_NOT_COMPLETED once its report is out, so that scripts can tell."""
    if not result.completed:
        raise click.exceptions.Exit(EXIT_NOT_COMPLETED)


@contextlib.contextmanager
def _resume_hint_on_interrupt(started: list[str], db: str) -> Iterator[None]:
    """Ctrl-C during a run (once it is written: ``started`` holds its id) ends the command
    with exit 130 and the exact command that continues it."""
    try:
        yield
    except KeyboardInterrupt:
        if not started:
            raise
        run_id, shown = started[0], display_name(db)
        click.echo(
            f"\ninterrupted: run {run_id} is saved; continue it with "
            f"`screener run --resume {run_id} --db {shown}`",
            err=True,
        )
        raise click.exceptions.Exit(130) from None


def _announce_bound(algorithm: Algorithm) -> None:
    """The worst case per worker, on stderr before the first question, when there is one."""
    bound = algorithm.max_questions_per_worker
    if bound is not None:
        total = bound * algorithm.n_arms
        _note(
            f"at most {bound:,} gold questions per worker ({total:,} for all "
            f"{algorithm.n_arms:,} workers)"
        )


@dataclasses.dataclass(frozen=True)
class _Output:
    """How ``run`` and ``report`` print a result (--format or --json, --only, --limit, --html,
    -o)."""

    format: str
    only: Only | None
    limit: int | None
    html: Path | None
    output: Path


def _output_settings(
    output_format: str,
    as_json: bool,
    only: Only | None,
    limit: int | None,
    html: Path | None,
    output: Path,
) -> _Output:
    """The report's settings, checked before a run starts rather than after it ends."""
    chosen = click.get_current_context().get_parameter_source("output_format")
    if as_json and chosen is ParameterSource.COMMANDLINE and output_format != "json":
        raise click.UsageError(
            f"--json means --format json: drop --json or --format {output_format}"
        )
    if "=" in output.name:
        raise ConfigError(
            f"-o {output} names the report's file (-o is --output in every command)",
            "give oracle options with -O KEY=VALUE, the short form of --oracle-option",
        )
    for target, what in ((html, "HTML report"), (output, "report")):
        if target is not None and not is_stdio(target) and not target.parent.is_dir():
            raise ConfigError(
                f"cannot write the {what} to {target}: no directory {target.parent}",
                "create it or pass another path",
            )
    if html is not None:
        require_html_support()
        if is_stdio(html) and is_stdio(output):
            raise click.UsageError(
                "--html - and the report would both go to standard output: give -o FILE for "
                "the report, or --html FILE"
            )
    return _Output("json" if as_json else output_format, only, limit, html, output)


def _one_standard_input(*inputs: Path | None) -> None:
    """Standard input can be read once: at most one input may be -."""
    if sum(is_stdio(path) for path in inputs) > 1:
        raise click.UsageError(
            "only one of POOL_FILE, --questions and --config can be - (standard input)"
        )


def _print_report(
    result: Any,
    pool: WorkerPool,
    run_id: str,
    out: _Output,
    db: str,
    changes: list[DecisionChange] | None = None,
) -> None:
    """The report in the chosen format on standard output or in -o's file (with the
    decisions an invalidation changed, when given); with --html, the page too."""
    write_output(out.output, _report_text(result, pool, run_id, out, changes), what="report")
    if not is_stdio(out.output):
        _note(f"report written to {out.output}")
    if out.html is not None:
        page = html_report(db, run_id, result).encode("utf-8")
        write_output(out.html, page, what="HTML report")
        if not is_stdio(out.html):
            _note(f"report page written to {out.html} ({len(page):,} bytes)")


def _report_text(
    result: Any,
    pool: WorkerPool,
    run_id: str,
    out: _Output,
    changes: list[DecisionChange] | None,
) -> str:
    only, limit = out.only, out.limit
    if out.format == "json":
        data = render_json(result, pool, run_id, only=only, limit=limit)
        if changes is not None:
            data["invalidation_changes"] = changes_as_json(changes)
        return json.dumps(data, indent=2) + "\n"
    if out.format == "csv":
        return render_csv(result, pool, only=only, limit=limit)
    # A table for a file is not fitted to this terminal.
    width = terminal_width() if is_stdio(out.output) else None
    text = render_table(result, pool, run_id, width=width, only=only, limit=limit) + "\n"
    return text if changes is None else text + changes_as_text(changes) + "\n"


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


cli.add_command(serve)
cli.add_command(algorithms)


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point: run the CLI, turning user errors into one line and exit code 2."""
    args = _hoist_global_flags(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    _route_warnings()
    try:
        # Outside standalone mode click returns an Exit's code instead of raising it.
        code = cli.main(args=args, prog_name="screener", standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as error:  # a usage error: one line even with --debug
        context = getattr(error, "ctx", None)
        command = context.command_path if isinstance(context, click.Context) else "screener"
        click.echo(f"error: {_one_line(error.format_message())} (see `{command} --help`)", err=True)
        sys.exit(2)
    except ScreenerError as error:
        if debug:
            raise
        click.echo(f"error: {_one_line(str(error))}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        # A run that was already written said how to resume it (_resume_hint_on_interrupt).
        click.echo("\ninterrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        # The reader went away (`screener runs | head -1`): not an error worth a message.
        # Point stdout at devnull so that the interpreter's final flush cannot raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except Exception as error:  # a bug, not bad input: say so in one line unless --debug
        if debug:
            raise
        click.echo(
            f"internal error: {type(error).__name__}: {_one_line(str(error))} "
            "(run again with --debug for the traceback, and please report it)",
            err=True,
        )
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


def _hoist_global_flags(args: list[str]) -> list[str]:
    """--debug, -q and -v work wherever they are typed: click takes a group's options before
    the command name only, so they are moved there. Their names come from the group itself;
    a token that is the value of another option (``--reason -q``) is left where it is."""
    flags = {name for param in cli.params if isinstance(param, click.Option) for name in param.opts}
    front: list[str] = []
    rest: list[str] = []
    command: click.Command | None = None
    tokens = iter(args)
    for token in tokens:
        if token == "--":
            rest += [token, *tokens]
            break
        if token in flags or (token.startswith("-v") and set(token[1:]) == {"v"}):
            front.append(token)
            continue
        rest.append(token)
        if command is None and not token.startswith("-"):
            command = cli.commands.get(token)
        elif command is not None and token in _value_options(command):
            rest.append(next(tokens, ""))
    return [*front, *rest] if front else args


def _value_options(command: click.Command) -> set[str]:
    """The option names of ``command`` that take a value (the next token)."""
    return {
        name
        for param in command.params
        if isinstance(param, click.Option) and not param.is_flag and not param.count
        for name in param.opts + param.secondary_opts
    }


def _one_line(text: str) -> str:
    """Errors are one line on stderr, whatever a path, a value or a library's message holds:
    a multi-line message is joined, other control characters are shown escaped."""
    joined = " ".join(line.strip() for line in text.strip().split("\n"))
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in joined)


def _route_warnings() -> None:
    """No raw warning reaches the terminal. Numeric trouble in screener's own code (numpy's
    overflow and invalid-value RuntimeWarnings; the expected ones are silenced where they
    arise) stops the command as the bug it is; any other warning is one line on stderr."""
    warnings.showwarning = _warning_line
    warnings.filterwarnings("error", category=RuntimeWarning, module=r"screener\.")


def _warning_line(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    where = f"{Path(filename).name}:{lineno}"
    click.echo(f"warning: {_one_line(str(message))} ({category.__name__} at {where})", err=True)
