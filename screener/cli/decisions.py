"""`screener decisions`: a run's decisions in the order they were made, as they are made."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

import click

from screener.cli.commands import summary
from screener.cli.console import ExitCode, note
from screener.cli.options import db_option, json_option
from screener.cli.output import Output
from screener.errors import ConfigError, JournalError
from screener.files import check_output, check_outputs_differ, is_stdio
from screener.journal import Event, Journal, display_name
from screener.runs.decisions import DecisionFollower, DecisionLines, RunDecision, run_decisions

__all__ = ["DecisionFile", "check_decisions_file", "decision_lines", "decisions"]


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
    chosen = _latest(db) if run_id is None else run_id  # '' is no run id, not the latest
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
    with Journal(db, read_only=True) as journal:
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
    if is_stdio(path) and (is_stdio(out.output) or (out.html is not None and is_stdio(out.html))):
        raise click.UsageError(
            "--decisions - and the report would both go to standard output: give -o FILE "
            "for the report, or --decisions FILE"
        )
    check_output(path, "the decisions")
    check_outputs_differ(("--decisions", path), ("-o", out.output), ("--html", out.html))


class DecisionFile:
    """The sink of `run --decisions FILE`: the file is opened (and ``journaled`` decisions
    written) only once the run is under way, by ``open`` (``on_start``), the first decision,
    or the run's end, so that a run refused before it starts writes nothing; each line is
    flushed as its decision is journaled; - is standard output.

    A new run (``journaled`` None) starts the file afresh. A resume appends, and first
    writes the ``journaled`` decisions that come after the file's last line: those a killed
    process journaled but never wrote, or all of them on standard output."""

    def __init__(self, path: Path, journaled: Sequence[RunDecision] | None) -> None:
        self.path = path
        self.journaled = journaled
        self._lines: DecisionLines | None = None
        self._stream: TextIO | None = None

    def __call__(self, events: Sequence[Event]) -> None:
        self.open()(events)

    def open(self) -> DecisionLines:
        if self._lines is not None:
            return self._lines
        if is_stdio(self.path):
            self._lines = DecisionLines(sys.stdout)
            self._lines.write(self.journaled or ())
            return self._lines
        last = -1 if self.journaled is None else _last_seq(self.path)
        try:
            self._stream = self.path.open("w" if self.journaled is None else "a", encoding="utf-8")
        except OSError as error:
            raise ConfigError(
                f"cannot write the decisions to {self.path}: {error.strerror or error}",
                "check the directory, or pass another path",
            ) from None
        self._lines = DecisionLines(self._stream)
        self._lines.write([d for d in self.journaled or () if d.seq > last])
        return self._lines

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()


@contextmanager
def decision_lines(
    path: Path | None, journaled: Sequence[RunDecision] | None = None
) -> Iterator[DecisionFile | None]:
    """`run --decisions FILE`'s DecisionFile (None without it), opened by the run's end at
    the latest, closed after."""
    if path is None:
        yield None
        return
    sink = DecisionFile(path, journaled)
    try:
        yield sink
        sink.open()  # a run that made no decision (a resume none new) has its file too
    finally:
        sink.close()


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
