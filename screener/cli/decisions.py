"""`screener decisions`: a run's decisions in the order they were made, as they are made."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import click

from screener.cli.commands import summary
from screener.cli.console import ExitCode, note
from screener.cli.options import db_option, json_option
from screener.cli.output import Output
from screener.errors import ConfigError, JournalError
from screener.files import is_stdio
from screener.journal import Journal, display_name
from screener.runs.decisions import DecisionFollower, DecisionLines, RunDecision, run_decisions

__all__ = ["check_decisions_file", "decision_lines", "decisions"]


@click.command(short_help=summary("decisions"))
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
    with Journal.open_existing(db) as journal:
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
def decision_lines(
    path: Path | None, journaled: Sequence[RunDecision] | None = None
) -> Iterator[DecisionLines | None]:
    """The sink of `run --decisions FILE` (None without it), opened before the run is
    written; each line is flushed as its decision is journaled; - is standard output.

    A new run (``journaled`` None) starts the file afresh. A resume appends, and first
    writes the ``journaled`` decisions that come after the file's last line: those a killed
    process journaled but never wrote, or all of them on standard output."""
    if path is None:
        yield None
        return
    if is_stdio(path):
        lines = DecisionLines(sys.stdout)
        lines.write(journaled or ())
        yield lines
        return
    last = -1 if journaled is None else _last_seq(path)
    try:
        stream = path.open("w" if journaled is None else "a", encoding="utf-8")
    except OSError as error:
        raise ConfigError(
            f"cannot write the decisions to {path}: {error.strerror or error}",
            "check the directory, or pass another path",
        ) from None
    with stream:
        lines = DecisionLines(stream)
        lines.write([decision for decision in journaled or () if decision.seq > last])
        yield lines


def _last_seq(path: Path) -> int:
    """The ``seq`` of the last whole line of a decisions file (-1: none, or unreadable); a
    last line a kill cut short is cut off, so that appending starts a line of its own."""
    try:
        data = path.read_bytes()
    except OSError:
        return -1
    whole = data[: data.rfind(b"\n") + 1]
    if len(whole) < len(data):
        with path.open("r+b") as file:
            file.truncate(len(whole))
    try:
        return int(json.loads(whole.splitlines()[-1])["seq"]) if whole else -1
    except (ValueError, KeyError, TypeError):
        return -1
