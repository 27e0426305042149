"""`screener plan`: what a screening may cost before any gold question is paid for, the
algorithm run on simulated workers (screener.runs.planning). Its imports stay light (no
journal, no HTTP client) so that a plan starts in a fraction of a second; a pilot run read
with --like loads the journal then."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from tqdm.auto import tqdm

from screener.cli.commands import summary
from screener.cli.console import note, verbosity
from screener.cli.options import (
    FILE,
    SyntheticPool,
    algorithm_options,
    db_option,
    json_option,
    money_options,
    synthetic_pool_options,
)
from screener.reports.plan import render_plan
from screener.runs.planning import plan_cost
from screener.runs.settings import DEFAULT_SEED, AlgorithmSettings, MoneySettings
from screener.runs.setup import (
    algorithm_params,
    choose_algorithm,
    choose_pool,
    choose_prices,
    default_job,
    question_budget,
)
from screener.simulation.many import usable_cpus  # map_seeds' own count

__all__ = ["plan"]


@click.command(short_help=summary("plan"))
@click.argument("pool_file", required=False, type=FILE)
@algorithm_options()
@money_options
@synthetic_pool_options("Plan for this many workers (synthetic, or drawn as --like).")
@click.option("--like", "pilot", metavar="RUN_ID", default=None,
              help="Draw workers from the accuracies seen in this pilot run.")  # fmt: skip
@db_option
@click.option("--runs", type=int, default=100, show_default=True,
              help="Simulated runs (seeds SEED, SEED+1, ...).")  # fmt: skip
@click.option("--processes", type=click.IntRange(min=1), default=None,
              help="Processes for the runs (the plan is the same on any number; more than "
                   "the CPUs or the runs only cost start-ups, so they are capped there).  "
                   "[default: every CPU, unless the runs take under a second]")  # fmt: skip
@json_option("Print the plan as JSON.")
def plan(
    pool_file: Path | None,
    algorithm: AlgorithmSettings,
    money: MoneySettings,
    synthetic: SyntheticPool,
    pilot: str | None,
    db: str,
    runs: int,
    processes: int | None,
    as_json: bool,
) -> None:
    """How many gold questions a screening may cost, before paying for any: the algorithm
    runs on simulated workers (POOL_FILE's accuracies, a synthetic pool, or a crowd like
    a pilot run's) RUNS times, and the distribution of its questions is printed."""
    name = choose_algorithm(algorithm)
    prices = choose_prices(money.price)
    budget = question_budget(algorithm.budget, money.budget, prices)
    params = algorithm_params(name, algorithm, default_job(algorithm), budget)
    seed = DEFAULT_SEED if algorithm.seed is None else algorithm.seed
    if pilot is not None:
        if pool_file is not None:
            raise click.UsageError("give either POOL_FILE or --like, not both")
        from screener.runs import observed_accuracies  # the journal, only for a pilot

        accuracies, draw = observed_accuracies(db, pilot), True
    else:
        pool = choose_pool(pool_file, *synthetic, seed, "simulated", {})
        accuracies, draw = list(pool.require_accuracies()), False
    size = synthetic.workers if draw and synthetic.workers else len(accuracies)
    processes = _useful_processes(processes, runs)
    quiet = verbosity() < 0 or not sys.stderr.isatty()
    with tqdm(total=runs, desc="plan", unit="run", leave=False, disable=quiet,
              file=sys.stderr) as bar:  # fmt: skip
        cost = plan_cost(name, params, accuracies, runs=runs, seed=seed, draw=draw,
                         n_workers=size, processes=processes, progress=bar.update)  # fmt: skip
    summary = {"algorithm": name, "params": cost.params, "workers": size, "seed": seed}
    summary |= cost.summary(prices)
    click.echo(json.dumps(summary, indent=2) if as_json else render_plan(summary))


def _useful_processes(asked: int | None, runs: int) -> int | None:
    """--processes capped at what helps: a process more than the CPUs this process may use,
    or than the runs, only costs its start-up (a second or so each); the cap is said."""
    if asked is None:
        return None
    useful = max(1, min(usable_cpus(), runs))
    if asked > useful:
        note(f"--processes {asked:,}: using {useful:,} (the CPUs here, at most one per run)")
        return useful
    return asked
