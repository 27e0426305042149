"""`screener decisions`: a run's decisions in the order they were made, as they are made."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import click

from screener.cli.console import ExitCode, note
from screener.cli.options import db_option, json_option
from screener.cli.output import Output
from screener.errors import ConfigError, JournalError
from screener.files import is_stdio
from screener.journal import Journal, display_name
from screener.runs.decisions import DecisionFollower, DecisionLines, RunDecision, run_decisions

__all__ = ["check_decisions_file", "decision_lines", "decisions"]


@click.command()
@click.argument("run_id", required=False)
@click.option(
    "--follow", "-f", is_flag=True,
    help="Wait for new decisions and print each as it is made, until the run ends (Ctrl-C "
    "stops following).",
)  # fmt: skip
@json_option(
    "One JSON object a line (worker, decision, reason, seq, at), as `run --decisions` writes them."
)
@db_option
def decisions(run_id: str | None, follow: bool, as_json: bool, db: str) -> None:
    """The decisions of run RUN_ID (default: the latest), `screener run`'s and the gate's,
    in the order they were made: banned or accepted (reopened: screened again), with why.

    `screener export RUN_ID --decisions` writes each worker's standing decision as a block
    list for the platform.
    """
    chosen = run_id or _latest(db)
    if not follow:
        for decision in run_decisions(db, chosen):
            click.echo(_line(decision, as_json))
        return
    follower = DecisionFollower(db, chosen)
    shown = 0
    try:
        for decision in follower:
            click.echo(_line(decision, as_json))
            shown += 1
    except KeyboardInterrupt:
        note(f"stopped following run {chosen} ({shown:,} decisions shown)")
        raise click.exceptions.Exit(ExitCode.INTERRUPTED) from None
    note(f"run {chosen} ended ({follower.ended}): {shown:,} decisions shown")


def _latest(db: str) -> str:
    with Journal(db, create=False) as journal:
        latest = journal.latest_run_id()
    if latest is None:
        raise JournalError(f"{display_name(db)} holds no runs", "start one with `screener run`")
    return latest


def _line(decision: RunDecision, as_json: bool) -> str:
    if as_json:
        return json.dumps(decision.to_dict())
    return f"{decision.seq:>5}  {decision.when}  {decision.decision:<8}  {decision.worker}  " + (
        decision.reason
    )


# ------------------------------------------------------------------ run --decisions FILE
def check_decisions_file(path: Path | None, out: Output) -> None:
    """`run --decisions FILE`, checked before the run starts."""
    if path is None:
        return
    if is_stdio(path):
        if is_stdio(out.output) or (out.html is not None and is_stdio(out.html)):
            raise click.UsageError(
                "--decisions - and the report would both go to standard output: give -o FILE "
                "for the report, or --decisions FILE"
            )
    elif not path.parent.is_dir():
        raise ConfigError(
            f"cannot write the decisions to {path}: no directory {path.parent}",
            "create it or pass another path",
        )


@contextmanager
def decision_lines(path: Path | None, mode: Literal["w", "a"]) -> Iterator[DecisionLines | None]:
    """The sink of `run --decisions FILE` (None without it): the file is opened (``mode``
    "w" for a new run, "a" for a resume) before the run is written, and each line is
    flushed as the decision is journaled; - is standard output."""
    if path is None:
        yield None
        return
    if is_stdio(path):
        yield DecisionLines(sys.stdout)
        return
    try:
        stream = path.open(mode, encoding="utf-8")
    except OSError as error:
        raise ConfigError(
            f"cannot write the decisions to {path}: {error.strerror or error}",
            "check the directory, or pass another path",
        ) from None
    with stream:
        yield DecisionLines(stream)
