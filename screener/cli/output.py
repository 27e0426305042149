"""How `run` and `report` print a result: the report's settings (--format or --json, --only,
--limit, --html, -o), checked before a run starts, and the report written where they say."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from screener.cli.console import note
from screener.crowd import WorkerPool
from screener.errors import ConfigError
from screener.files import check_output, check_outputs_differ, is_stdio, write_output
from screener.money import Prices
from screener.reports import (
    Only,
    json_text,
    render_csv,
    render_json,
    render_table,
    terminal_width,
)

if TYPE_CHECKING:
    from screener.runs.rescoring import DecisionChange

__all__ = ["Output", "output_settings", "print_report"]


@dataclass(frozen=True)
class Output:
    """How a report is printed: its format, which rows, and where it goes."""

    format: str
    only: Only | None
    limit: int | None
    html: Path | None
    output: Path


def output_settings(
    output_format: str,
    as_json: bool,
    only: Only | None,
    limit: int | None,
    html: Path | None,
    output: Path,
) -> Output:
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
    check_output(html, "the HTML report")
    check_output(output, "the report")
    check_outputs_differ(("-o", output), ("--html", html))
    if html is not None:
        from screener.reports.html import require_html_support  # a stored run's page

        require_html_support()
        if is_stdio(html) and is_stdio(output):
            raise click.UsageError(
                "--html - and the report would both go to standard output: give -o FILE for "
                "the report, or --html FILE"
            )
    return Output("json" if as_json else output_format, only, limit, html, output)


def print_report(
    result: Any,
    pool: WorkerPool,
    run_id: str,
    out: Output,
    db: str,
    changes: list[DecisionChange] | None = None,
    *,
    prices: Prices | None = None,
    spec: Mapping[str, Any] | None = None,
    oracle: str | None = None,
) -> None:
    """The report in the chosen format on standard output or in -o's file (with the
    decisions an invalidation changed, when given, the money spent at ``prices``, the
    mistakes by the truth where ``oracle``, the answer source's name, makes the pool's
    accuracies one, and in JSON the run's stored ``spec``); with --html, the page too."""
    text = _report_text(result, pool, run_id, out, changes, prices, spec, oracle)
    write_output(out.output, text, what="report")
    if not is_stdio(out.output):
        note(f"report written to {out.output}")
    if out.html is not None:
        from screener.reports.html import html_report  # reads the journal

        page = html_report(db, run_id, result).encode("utf-8")
        write_output(out.html, page, what="HTML report")
        if not is_stdio(out.html):
            note(f"report page written to {out.html} ({len(page):,} bytes)")


def _report_text(
    result: Any,
    pool: WorkerPool,
    run_id: str,
    out: Output,
    changes: list[DecisionChange] | None,
    prices: Prices | None,
    spec: Mapping[str, Any] | None,
    oracle: str | None,
) -> str:
    from screener.runs.rescoring import changes_as_json, changes_as_text

    only, limit = out.only, out.limit
    if out.format == "json":
        data = render_json(
            result, pool, run_id, only=only, limit=limit, prices=prices, oracle=oracle
        )
        if changes is not None:
            data["invalidation_changes"] = changes_as_json(changes)
        if spec is not None:
            data["run_spec"] = dict(spec)
        return json_text(data) + "\n"
    if out.format == "csv":
        return render_csv(result, pool, only=only, limit=limit)
    # A table for a file is not fitted to this terminal.
    width = terminal_width() if is_stdio(out.output) else None
    text = render_table(
        result, pool, run_id, width=width, only=only, limit=limit, prices=prices, oracle=oracle
    )
    text += "\n"
    return text if changes is None else text + changes_as_text(changes) + "\n"
