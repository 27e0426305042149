"""Commands on the runs a database holds: `report`, `export`, `invalidate`, `runs` and
`upgrade`. What they show is read by screener.runs; this module parses and prints."""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections import Counter
from pathlib import Path
from typing import Any

import click

from screener.algorithms import Result, Verdict
from screener.cli.commands import summary
from screener.cli.console import note
from screener.cli.options import db_option, json_option, output_file_option, output_options
from screener.cli.output import Output, print_report
from screener.errors import ConfigError
from screener.files import is_stdio, write_output
from screener.journal import EventKind, Journal, RunRecord, RunSummary, display_name
from screener.reports import decision_counts, terminal_width
from screener.reports.gate_run import is_gate_run, load_gate_run, render_gate_run
from screener.runs import oracle_name, run_prices, worker_pool
from screener.runs.decisions import block_list, run_decisions, write_block_list
from screener.runs.logged import (
    export_answers,
    export_crowdkit,
    export_kept_labels,
    invalidate_question,
)
from screener.runs.rescoring import changes_as_json, changes_as_text, decision_changes
from screener.runs.results import load_result, load_results
from screener.runs.stored import GATE_ORACLE

__all__ = ["export", "invalidate", "report", "runs", "upgrade"]


@click.command(short_help=summary("report"))
@click.argument("run_id", required=False)
@db_option
@output_options
def report(run_id: str | None, db: str, out: Output) -> None:
    """Report a run (default: the latest): the result a finished run stored, else its journal
    replayed. --json adds how the run was set up (run_spec: algorithm, parameters, seed,
    answer source and run options, as stored).

    When gold questions of the run were invalidated, the report is rebuilt from the
    remaining (or rescored) answers and says which decisions changed.
    """
    if is_gate_run(db, run_id):
        _report_gate(db, run_id, out)
        return
    record, original, rescored = load_results(db, run_id)
    pool, prices, spec = worker_pool(record), run_prices(record), stored_spec(record)
    oracle = oracle_name(record)
    if rescored is None:
        print_report(original, pool, record.id, out, db, prices=prices, spec=spec, oracle=oracle)
        return
    changes = decision_changes(original, rescored, pool)
    print_report(
        rescored, pool, record.id, out, db, changes, prices=prices, spec=spec, oracle=oracle
    )


def _report_gate(db: str, run_id: str | None, out: Output) -> None:
    """A gate run's report: its standing decisions and what it served
    (``screener.reports.gate_run``)."""
    if out.html is not None:
        raise ConfigError(
            "a gate run has no HTML page", "report it as a table, with --json or --format csv"
        )
    run = load_gate_run(db, run_id)
    width = terminal_width() if is_stdio(out.output) else None
    text = render_gate_run(run, out.format, width=width, only=out.only, limit=out.limit)
    write_output(out.output, text, what="report")
    if not is_stdio(out.output):
        note(f"report written to {out.output}")


def stored_spec(record: RunRecord) -> dict[str, Any]:
    """How the run was set up, as its journal keeps it (`report --json`'s ``run_spec``):
    what a run given these settings must hold, value for value."""
    return {
        "algorithm": record.algorithm,
        "params": dict(record.params),
        "seed": record.seed,
        "oracle": dict(record.oracle),
        "options": dict(record.config),
        "screener_version": record.screener_version,
    }


@click.command(short_help=summary("export"))
@click.argument("run_id")
@output_file_option("File to write (- for standard output, but for crowd-kit's answers).")
@click.option(
    "--format", "layout", type=click.Choice(["long", "crowd-kit", "csv", "json"]), default=None,
    help="The answers: long (the default): worker,item,answer,gold,score; crowd-kit: "
    "task,worker,label and their gold (task,true_label) in a second file beside it, "
    "NAME.gold.csv; with --labels, your task labels without the banned workers'. The block "
    "list (--decisions): csv (the default) or json.",
)  # fmt: skip
@click.option(
    "--decisions", "block", is_flag=True,
    help="Write the block list instead: each decided worker's standing decision (worker, "
    "decision, reason, when), the shape of a platform's block or qualify upload.",
)  # fmt: skip
@click.option(
    "--labels", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path), default=None,
    metavar="FILE",
    help="With --format crowd-kit: your task labels (CSV task,worker,label, as crowd-kit "
    "takes them), written without the labels of the workers the run banned.",
)  # fmt: skip
@db_option
@json_option("Say what was written as JSON.")
def export(
    run_id: str,
    output: Path,
    layout: str | None,
    block: bool,
    labels: Path | None,
    db: str,
    as_json: bool,
) -> None:
    """Write the answers of run RUN_ID as CSV (replay it with --oracle dataset -O path=FILE),
    its block list (--decisions), or your task labels without the banned workers' (--labels)."""
    layout = _export_layout(layout, block, labels)
    if is_stdio(output) and as_json:
        raise click.UsageError("--json and the data would both go to standard output: give -o FILE")
    if is_stdio(output) and layout == "crowd-kit" and labels is None:
        raise click.UsageError(
            "--format crowd-kit writes two files (answers and gold): give -o FILE, not -"
        )
    if block:
        written, said = _export_block_list(db, run_id, output, layout)
    elif labels is not None:
        written, said = _export_labels(db, run_id, labels, output)
    elif layout == "long":
        rows = export_answers(db, run_id, output)
        written, said = {"answers": rows, "gold_path": None}, f"{rows:,} answers of run {run_id}"
    else:
        rows, gold_file = export_crowdkit(db, run_id, output)
        written = {"answers": rows, "gold_path": str(gold_file)}
        said = f"{rows:,} answers of run {run_id}"
    if as_json:
        click.echo(json.dumps({"run_id": run_id, **written, "path": str(output)}))
        return
    where = "standard output" if is_stdio(output) else output
    gold_path = written.get("gold_path")
    also = "" if gold_path is None else f", their gold to {gold_path}"
    note(f"{said} written to {where}{also}")


def _export_layout(layout: str | None, block: bool, labels: Path | None) -> str:
    """The layout asked for, checked against --decisions and --labels; its default."""
    if block and labels is not None:
        raise click.UsageError("--decisions and --labels write different files: give one")
    if block:
        if layout in ("long", "crowd-kit"):
            raise click.UsageError(f"the block list is csv or json, not {layout}")
        return layout or "csv"
    if layout in ("csv", "json"):
        raise click.UsageError(f"--format {layout} is the block list's: add --decisions")
    if labels is not None and layout != "crowd-kit":
        raise click.UsageError("--labels filters crowd-kit's task labels: add --format crowd-kit")
    return layout or "long"


def _export_block_list(
    db: str, run_id: str, output: Path, layout: str
) -> tuple[dict[str, Any], str]:
    standing = block_list(run_decisions(db, run_id))
    write_block_list(standing, output, "json" if layout == "json" else "csv")
    banned = sum(d.decision == Verdict.BANNED for d in standing)
    counts = {"workers": len(standing), "banned": banned, "accepted": len(standing) - banned}
    said = f"the block list of run {run_id} ({banned:,} banned, {counts['accepted']:,} accepted)"
    return counts, said


def _export_labels(db: str, run_id: str, labels: Path, output: Path) -> tuple[dict[str, Any], str]:
    kept = export_kept_labels(db, run_id, labels, output)
    said = (
        f"{kept.kept:,} labels of {labels} ({kept.dropped:,} labels of "
        f"{kept.banned_workers:,} banned workers dropped"
    )
    if kept.unscreened_workers:
        said += f"; {kept.unscreened_workers:,} workers the run never screened kept"
    return dataclasses.asdict(kept), said + ")"


@click.command(short_help=summary("invalidate"))
@click.argument("run_id")
@click.argument("question")
@click.option("--key", default=None, help="The corrected key: rescore instead of dropping.")
@click.option("--reason", default="", help="Why the question is wrong (kept in the journal).")
@db_option
@json_option("Print what changed as JSON.")
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


@click.command(short_help=summary("runs"))
@db_option
@json_option("Print as JSON.")
def runs(db: str, as_json: bool) -> None:
    """List the runs in a database."""
    with Journal(db, read_only=True) as journal:
        summaries = journal.runs()
    rows = [_run_line(db, s) for s in summaries]
    if as_json:
        click.echo(json.dumps([line for line, _ in rows], indent=2))
        return
    if not summaries:
        click.echo(f"no runs in {display_name(db)}")
        return
    lines = [line for line, _ in rows]
    width = max(len("algorithm"), *(len(line["algorithm"]) for line in lines))
    source = max(len("answers from"), *(len(_answers_from(line)) for line in lines))
    click.echo(
        f"{'run':<12}  {'created':<16}  {'algorithm':<{width}}  {'answers from':<{source}}  "
        f"{'workers':>7}  {'answers':>9}  status"
    )
    for line, shown in rows:
        created = line["created"][:16].replace("T", " ")
        click.echo(
            f"{line['id']:<12}  {created:<16}  {line['algorithm']:<{width}}  "
            f"{_answers_from(line):<{source}}  {line['n_workers']:>7}  {line['answered']:>9,}  "
            f"{_run_status(line['status'], shown)}"
        )


def _run_line(db: str, summary: RunSummary) -> tuple[dict[str, Any], dict[str, int] | None]:
    """One run of `screener runs`: the summary, its date, and from the result it stored (a
    finished run's) whether its condition held and the workers per decision (JSON keeps the
    algorithm's words, below, above...); and the workers per decision in the words the table
    shows (``Result.word_counts``: banned, accepted...)."""
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
    if summary.oracle == GATE_ORACLE:
        line.update(_gate_counts(db, summary.id))
        return line, line["decisions"]
    return line, None if result is None else result.word_counts()


def _gate_counts(db: str, run_id: str) -> dict[str, Any]:
    """A gate run's workers, those who asked for work (its pool is open), and its decisions,
    the standing ones of its block list (banned, accepted; the rest undecided)."""
    with Journal(db, read_only=True) as journal:
        asked = {e.worker for e in journal.events(run_id, kinds=(EventKind.REQUESTED,))}
    standing = Counter(d.decision for d in block_list(run_decisions(db, run_id)))
    decided = {verdict.value: standing[verdict] for verdict in (Verdict.BANNED, Verdict.ACCEPTED)}
    undecided = len(asked) - sum(decided.values())
    return {"n_workers": len(asked), "decisions": {**decided, "undecided": undecided}}


def _answers_from(line: dict[str, Any]) -> str:
    return f"{line['oracle']} {line['source']}" if line["source"] else str(line["oracle"])


def _run_status(status: str, shown: dict[str, int] | None) -> str:
    if not shown:
        return status
    return f"{status} · " + ", ".join(f"{n:,} {word}" for word, n in shown.items())


@click.command(short_help=summary("upgrade"))
@db_option
def upgrade(db: str) -> None:
    """Upgrade a run database written by an older screener to this version's schema."""
    with Journal(db, create=False, check_version=False) as journal:
        applied = journal.upgrade()
    click.echo("\n".join(applied) if applied else f"{journal.name} is already up to date")
