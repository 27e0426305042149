"""``screener labels``: the final labels of a gate run, rebuilt from its journal."""

from __future__ import annotations

from pathlib import Path

import click

from screener.cli.commands import summary
from screener.cli.console import note
from screener.cli.options import db_option, output_file_option
from screener.files import check_output, is_stdio, write_output
from screener.reports.final_labels import (
    CAVEAT,
    FORMATS,
    LabelsFormat,
    load_final_labels,
    render_final_labels,
)

__all__ = ["labels"]


@click.command(short_help=summary("labels"))
@click.argument("run_id")
@db_option
@click.option(
    "--format", "layout", type=click.Choice(FORMATS), default="csv", show_default=True,
    help="csv: every column; json; crowd-kit: task,agg_label of the done items.",
)  # fmt: skip
@output_file_option("Write the labels to FILE instead of standard output.")
def labels(run_id: str, db: str, layout: LabelsFormat, output: Path) -> None:
    """The final labels of gate run RUN_ID, its journal replayed: one row per registered item,
    its last final label (item, label, confidence, labels counted, labels given, money spent
    on it, state settled or capped), and the items not done yet with state open and their
    current top label and confidence.
    """
    check_output(output, "the labels")
    rows, checked = load_final_labels(db, run_id)
    write_output(output, render_final_labels(rows, layout, run_id), what="the labels")
    if not is_stdio(output):
        done = sum(row.state != "open" for row in rows)
        note(f"{len(rows):,} items ({done:,} done) written to {output}")
    note(f"note: {checked}; {CAVEAT}")
