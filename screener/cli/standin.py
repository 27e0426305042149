"""``screener standin``: a platform stand-in that replays a real dataset as arriving workers who
ask a running gate (``screener gate``) for work, and reports what was bought."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import urllib.parse
from http import HTTPStatus
from pathlib import Path
from typing import Any, get_args

import click

from screener.cli.commands import summary
from screener.cli.console import note
from screener.cli.options import FILE, option_group, output_file_option
from screener.errors import ConfigError
from screener.files import check_output, write_output
from screener.gate_service import TOKEN_ENV
from screener.gate_service.client import GateClient
from screener.gate_service.protocol import GateApiError
from screener.oracles.answer_file import load_answers
from screener.testing.doubles.arrivals import Overlap, StandInSettings
from screener.testing.doubles.standin import StandInReport, run_standin

__all__ = ["standin"]

_DEFAULTS = StandInSettings()


def _setting(flag: str, help_text: str, kind: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
    """An option setting the StandInSettings field of the same name, its default the field's."""
    default = getattr(_DEFAULTS, flag.removeprefix("--").replace("-", "_"))
    return (flag,), {"type": kind, "default": default, "show_default": True, "help": help_text}


@click.command(short_help=summary("standin"))
@click.argument("dataset", type=FILE)
@click.option("--gate", "gate_url", required=True, metavar="URL",
              help="The gate's base URL, as `screener gate` printed it.")  # fmt: skip
@click.option("--gold", "gold_file", type=FILE, default=None,
              help="The items' truth (task,true_label) for a crowd-kit DATASET.")  # fmt: skip
@option_group("given", dict, [
    _setting("--gold-share", "Share of the items used as gold questions.", float),
    _setting("--overlap", "Labels each task item needs: as recorded, or until its top answer "
             "leads by two.", click.Choice(get_args(Overlap))),
    _setting("--session", "Share of the stream one worker's requests spread over.", float),
    _setting("--seed", "Every draw: items, orders, arrivals, the workers chosen below.", int),
    _setting("--late", "Workers who arrive only after --late-from of the requests.", int),
    _setting("--late-from", "Where the late joiners come in (share of the requests).", float),
    _setting("--leavers", "Workers who leave for good halfway through their requests.", int),
    _setting("--turn", "Good workers who turn to spam part way (those with the most answers).",
             int),
    _setting("--turn-after", "... from their Nth request on ...", int),
    _setting("--turn-wrong", "... answering wrongly with this probability.", float),
    _setting("--concurrency", "Workers served at once (1: one request at a time, in order: "
             "the same decisions every time).", int),
    (("--register-items",), dict(
        is_flag=True, help="Register the task items with the gate first (each capped at its "
        "recorded labels): the gate chooses each worker's item and settles the items.")),
])  # fmt: skip
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port of the stand-in's own report (GET /v1/report) on 127.0.0.1.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@output_file_option("Write the report to FILE instead of standard output.")
def standin(
    dataset: Path,
    gate_url: str,
    gold_file: Path | None,
    given: dict[str, Any],
    port: int,
    as_json: bool,
    output: Path,
) -> None:
    """Replay DATASET (long format worker,item,answer,gold, as the dataset oracle reads it)
    as workers who arrive, ask the gate at URL for work, answer its gold questions from their
    recorded answers and label real tasks; act on its decisions as they stream out; report
    the money spent, the labels bought and their accuracy by majority vote.

    Sends "Authorization: Bearer $SCREENER_GATE_TOKEN" when that variable is set.
    """
    _check_gate_url(gate_url)
    check_output(output, "the stand-in's report")
    settings = StandInSettings(**given)
    answers = load_answers(dataset, gold_file)
    token = os.environ.get(TOKEN_ENV) or None
    asyncio.run(_reach_gate(gate_url, token))
    report = asyncio.run(
        run_standin(answers, gate_url, settings, token=token, port=port,
                    on_url=lambda url: note(f"stand-in report at {url}", level=1),
                    on_retry=note)
    )  # fmt: skip
    text = json.dumps(report.to_dict(), indent=2) if as_json else render(report)
    write_output(output, text + "\n", what="the stand-in's report")


def _check_gate_url(url: str) -> None:
    """The gate's base URL, http(s) with a host: anything else is refused here, where the
    client would retry it as a gate that is down."""
    try:
        parts = urllib.parse.urlsplit(url)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 (raises ValueError for a port that is no number)
    except ValueError:
        usable = False
    if not usable:
        raise ConfigError(
            f"--gate {url} is not a gate's URL",
            "give the base URL `screener gate` printed, e.g. http://127.0.0.1:8080",
        )


#: How long the gate may take to answer before the first request: a gate that is down (a
#: refused connection is known at once) is one line within seconds, before anything is paid,
#: rather than the replay's own retries, which wait out a gate that restarts.
_REACH_SECONDS = 3.0


async def _reach_gate(url: str, token: str | None) -> None:
    """The gate answers its status, or the stand-in stops before its first request."""
    wait = _REACH_SECONDS
    async with GateClient(url, token=token, retry_for=wait, timeout=wait) as client:
        try:
            await client.status()
        except GateApiError as error:
            if error.status != HTTPStatus.SERVICE_UNAVAILABLE:  # a refusal: its own line
                raise
            raise ConfigError(
                str(error), "start the gate with `screener gate` and give the URL it printed"
            ) from None


def render(report: StandInReport) -> str:
    """The report in a few lines."""
    lags = [d["received"] - d["at"] for d in report.decisions]
    during = sum(d["during"] for d in report.decisions)
    kinds = {k: sum(d["decision"] == k for d in report.decisions)
             for k in ("banned", "accepted", "reopened")}  # fmt: skip
    accuracy = "n/a" if report.accuracy is None else f"{report.accuracy:.3f}"
    limit = report.gate.get("settings", {}).get("max_unscreened", "?")
    lines = [
        f"dataset {Path(report.dataset).name}: {report.workers:,} workers, "
        f"{report.requests:,} requests to the gate",
        f"bought: {report.gold_answers:,} gold answers and {report.task_labels:,} task labels "
        f"({report.replacements:,} replacements, {report.discarded:,} discarded after bans) "
        f"for {report.money.get('total', 0.0):,.2f}",
        _beside_the_gate(report),
        f"label accuracy (majority vote): {accuracy}",
        f"decisions: {len(report.decisions):,} ({', '.join(f'{n} {k}' for k, n in kinds.items())});"
        f" {during:,} read while workers were still served"
        + (f", median {statistics.median(lags):.3f} s after made" if lags else ""),
        f"banned: {', '.join(report.banned) or 'none'}",
        f"screening: no worker did more than {report.tasks_before_gold} real tasks before its "
        f"first gold question (the gate's limit: {limit}); {len(report.unscreened)} left after "
        "real tasks without one",
    ]
    if report.late or report.leavers:
        lines.append(f"late joiners: {', '.join(report.late) or 'none'}; "
                     f"leavers: {', '.join(report.leavers) or 'none'}")  # fmt: skip
    for worker, after in report.turned.items():
        ban = next((d for d in report.decisions
                    if d["worker"] == worker and d["decision"] == "banned"), None)  # fmt: skip
        fate = "not banned" if ban is None else f"banned at gate request {ban['request']:,}"
        lines.append(f"turned to spam from its request {after}: {worker}, {fate}")
    return "\n".join(lines)


def _beside_the_gate(report: StandInReport) -> str:
    """Why the stand-in's money is not the gate's: each says what it counts."""
    gate = report.gate
    handed_out = gate.get("money", {}).get("total", 0.0)
    return (
        f"  of which {report.money.get('replacements', 0.0):,.2f} for the replacements, bought "
        f"outside the gate; the gate's status says {handed_out:,.2f}: the "
        f"{gate.get('gold', 0):,} gold questions and {gate.get('tasks', 0):,} tasks it handed out"
    )
