"""``screener gate``: serve a gate over HTTP (docs/gate-api.md), every call journaled in a
run of the run database before its reply; ``--resume`` rebuilds it from that journal."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import click

from screener.bank import GoldBank, load_bank
from screener.cli.commands import summary
from screener.cli.console import ExitCode, note
from screener.cli.gate_pool import MAX_SHARDS, open_pool
from screener.cli.options import (
    FILE,
    Spec,
    algorithm_spec,
    cannot_listen,
    db_option,
    key_values,
    listen_options,
    option_group,
    param_spec,
    price_spec,
    refuse_beside_resume,
    seed_spec,
)
from screener.errors import ConfigError
from screener.gate import (
    DEFAULT_PARAMS,
    GOLD_POLICIES,
    BanRule,
    FirstGold,
    Gate,
    GateSettings,
    GoldPolicy,
    GoldShare,
    OnChange,
    ValueOfGold,
)
from screener.gate.item_file import ItemRow, load_items
from screener.gate_service import TOKEN_ENV, GateSession, ItemEntry, listen, serve_gate
from screener.gate_service.app import serve_app
from screener.gate_service.pool import PoolProcess
from screener.gate_service.pool_app import pool_app
from screener.journal import display_name
from screener.journal.pools import PoolRecord
from screener.money import Prices
from screener.runs.stops import TERMINATED

__all__ = ["gate"]

_DEFAULTS = GateSettings()
_PRICES = f"gold={_DEFAULTS.prices.gold:g},task={_DEFAULTS.prices.task:g}"
#: What may be given beside --resume: where the run is and where to listen.
_RESUME_OPTIONS = frozenset({"resume_id", "db", "host", "port", "items_file"})
#: How a signal stops a gate: journaled as a run's stop is (runs/stops.py), and its exit code.
STOPS = {
    signal.SIGINT: ("interrupted", ExitCode.INTERRUPTED),
    signal.SIGTERM: (f"interrupted: {TERMINATED}", ExitCode.TERMINATED),
}


def _setting(flag: str, help_text: str, **attrs: Any) -> Spec:
    """An option setting the GateSettings field of the same name, its default the field's."""
    name = flag.partition("/")[0].removeprefix("--").replace("-", "_")
    default = getattr(_DEFAULTS, name)
    return (flag,), {"default": default, "show_default": default is not None, "help": help_text,
                     **attrs}  # fmt: skip


#: The gold policy's options: the policy, and the parameters of two of them, which
#: ``_policy`` turns into one policy object.
_POLICY_OPTIONS: list[Spec] = [
    (("--policy",), dict(
        type=click.Choice(list(GOLD_POLICIES)), default=_DEFAULTS.policy.name, show_default=True,
        help="When a worker being screened gets gold: value (worth its price, crowd-prior), "
        "first (every request until decided), share (one in --gold-every).")),
    (("--gold-every",), dict(type=int, default=None, help="share policy: one gold question in "
                             f"N requests (default {GoldShare().every}).")),
    (("--tenure/--no-tenure",), dict(
        default=ValueOfGold().tenure, show_default=True,
        help="value policy, a heuristic: judge a worker against the workers who made as many "
        "requests.")),
    (("--bans",), dict(
        type=click.Choice(get_args(BanRule)), default=None,
        help="value policy, a heuristic: the gate bans on its own at P(below) >= 1 - q "
        "(promise; the default with --tenure) or where keeping costs more (cost).")),
]  # fmt: skip


@click.command(short_help=summary("gate"))
@option_group("given", dict, [
    algorithm_spec(_DEFAULTS.algorithm, "Screening algorithm (one whose workers may join: "
                   "crowd-prior, toloka-rule, quiz, lsa, confident- / fdr-thresholding with -p "
                   "max_workers=N)."),
    param_spec("A parameter of the algorithm (repeatable). crowd-prior starts from "
               + ", ".join(f"{k}={v}" for k, v in DEFAULT_PARAMS.items()) + "."),
    *_POLICY_OPTIONS,
    _setting("--max-unscreened", "Real tasks a worker may do before its first gold question.",
             type=int),
    _setting("--gold-share", "Most gold questions may be of all replies (default: no cap).",
             type=float),
    _setting("--gold-budget", "Most gold questions in all (default: no cap).", type=int),
    _setting("--audit-rate", "Share of a decided worker's requests that get a gold question.",
             type=float),
    _setting("--alpha", "False-alarm level of the change detector, per audit answer.",
             type=float),
    _setting("--on-change", "What the change detector's alarm does to a qualified worker.",
             type=click.Choice(get_args(OnChange))),
    price_spec(_PRICES, "What a gold question and a real task cost; a price left out of the "
               "list costs its default."),
    _setting("--expected-tasks", "Real tasks a worker does, before the stream says (value "
             "policy).", type=float),
    _setting("--bad-label", "What a label from a worker under the bar costs (default: twice "
             "the task price).", type=float),
    _setting("--agreement", "Ban on task labels (POST /v1/labels) at this error level, when "
             "a worker's labels agree with those of workers whose gold puts them above the bar "
             "less than a worker at the bar would (default: labels decide nothing).",
             type=float),
    _setting("--binary-labels/--any-labels", "The task labels have two classes: agreement "
             "counts two wrong labels as one (a sharper test)."),
    _setting("--confidence", "A registered item is done when its label is this likely right "
             "(under the workers' accuracies from gold).", type=float),
    seed_spec(_DEFAULTS.seed, "Seed of the audits' draws and the bank's question orders."),
    (("--questions",), dict(type=FILE, default=None,
                            help="Gold question bank (CSV or JSON): replies name the question "
                            "and raw answers are scored against its key.")),
])  # fmt: skip
@click.option(
    "--items", "items_file", type=FILE, default=None,
    help="Task items to register at start (CSV with header item[,cap][,priority], or JSON "
    "Lines): task replies name the item to label. With --resume, only new items are added.",
)  # fmt: skip
@listen_options
@click.option(
    "--resume", "resume_id", default=None, metavar="RUN_ID",
    help="Serve gate run RUN_ID again, rebuilt from its journal, with its own settings.",
)  # fmt: skip
@click.option(
    "--pool", "pool_name", default=None, metavar="NAME",
    help="Serve a share of the shards of pool NAME beside the other processes naming it "
    "(docs/gate.md): the first starts it with --shards and these settings; a later one joins "
    "it, giving only --pool, --db and where to listen.",
)  # fmt: skip
@click.option(
    "--shards", type=click.IntRange(1, MAX_SHARDS), default=None,
    help="Shards of a pool being started: each an own gate run, its workers by hash.",
)  # fmt: skip
@db_option
def gate(
    given: dict[str, Any],
    items_file: Path | None,
    host: str,
    port: int,
    resume_id: str | None,
    pool_name: str | None,
    shards: int | None,
    db: str,
) -> None:
    """Serve a gate over HTTP: for each worker who asks for work, a gold question or a real
    task; gold answers back; decisions streamed as they are made (docs/gate-api.md).

    Prints the base URL on one line, then serves until Ctrl-C. Requests must carry
    "Authorization: Bearer $SCREENER_GATE_TOKEN" when that variable is set; without it the
    gate accepts everyone and listens on this machine only.
    """
    token = os.environ.get(TOKEN_ENV) or None
    if pool_name is not None:
        raise click.exceptions.Exit(_pool(pool_name, shards, given, items_file, host, port,
                                          resume_id, db, token))  # fmt: skip
    if shards is not None:
        raise ConfigError("--shards is the size of a pool", "add --pool NAME, or drop --shards")
    if resume_id is not None:
        refuse_beside_resume(resume_id, _RESUME_OPTIONS, "or serve a new gate")
        settings, bank = None, None
    else:
        settings, bank = _settings(given)
        Gate(settings, bank)  # the algorithm's parameters are checked where it is built
    items = None if items_file is None else load_items(items_file)  # before anything is written
    _check_exposure(host, token)
    try:
        sock = listen(host, port)
    except OSError as error:
        raise cannot_listen(host, port, error) from None
    with sock:
        code = asyncio.run(_serve(sock, token, db, resume_id, settings, bank, items))
    raise click.exceptions.Exit(code)


def _pool(
    name: str, shards: int | None, given: dict[str, Any], items_file: Path | None, host: str,
    port: int, resume_id: str | None, db: str, token: str | None,
) -> int:  # fmt: skip
    """Serve this process's share of pool ``name`` (screener.cli.gate_pool); its exit code."""
    if resume_id is not None or items_file is not None:
        flag = "--resume" if resume_id is not None else "--items"
        raise ConfigError(
            f"{flag} is not taken with --pool: a pool's processes resume its shards themselves, "
            "and items are registered with POST /v1/items (each goes to its shard)",
            f"drop {flag}",
        )
    _check_exposure(host, token)

    def settings_given() -> tuple[GateSettings, GoldBank | None]:
        settings, bank = _settings(given)
        Gate(settings, bank)  # the algorithm's parameters are checked where it is built
        return settings, bank

    record = open_pool(name, shards, settings_given, db)
    try:
        sock = listen(host, port)
    except OSError as error:
        raise cannot_listen(host, port, error) from None
    with sock:
        return asyncio.run(_serve_pool(sock, token, db, record))


async def _serve_pool(sock: socket.socket, token: str | None, db: str, record: PoolRecord) -> int:
    pool = PoolProcess(db, record)
    with _stop_signals() as asked:
        runner, url = await serve_app(pool_app(pool, token), sock)
        pool.start(url)
        click.echo(url)
        note(f"pool {record.name} of {record.shards} shards in {display_name(db)}: this "
             "process serves its share")  # fmt: skip
        stop = await _until_stopped(pool.stopped, asked)
    await runner.cleanup()
    await pool.close("interrupted" if stop is None else STOPS[stop][0])
    note(f"stopped: this process's shards of pool {record.name} are saved; the pool's other "
         "processes take them over, or one started with the same --pool and --db")  # fmt: skip
    return STOPS[stop][1] if stop is not None else ExitCode.INTERRUPTED


def _settings(given: dict[str, Any]) -> tuple[GateSettings, GoldBank | None]:
    values = dict(given)
    algorithm = values.pop("algorithm")
    extra = key_values(values.pop("extra"), "--param")
    params = {**(DEFAULT_PARAMS if algorithm == _DEFAULTS.algorithm else {}), **extra}
    questions = values.pop("questions")
    prices = Prices.parse(values.pop("price"))
    policy = _policy(*(values.pop(name) for name in ("policy", "gold_every", "tenure", "bans")))
    settings = GateSettings(
        algorithm=algorithm, params=params, policy=policy, prices=prices, **values
    )
    return settings, None if questions is None else load_bank(questions)


def _policy(name: str, gold_every: int | None, tenure: bool, bans: BanRule | None) -> GoldPolicy:
    """The gold policy ``--policy`` names, with its own options; each type checks its own
    values, and an option of a policy not chosen is refused (it would change nothing)."""
    if name != ValueOfGold.name and (tenure or bans is not None):
        raise ConfigError(
            f"tenure and bans are the value policy's, and this gate's policy is {name}",
            "use --policy value, or leave them out",
        )
    if name == GoldShare.name:
        return GoldShare() if gold_every is None else GoldShare(every=gold_every)
    if gold_every is not None:
        raise ConfigError(
            f"gold_every={gold_every} paces the share policy only, and this gate's policy is "
            f"{name}",
            "add --policy share, or drop --gold-every",
        )
    return FirstGold() if name == FirstGold.name else ValueOfGold(tenure=tenure, bans=bans)


def _check_exposure(host: str, token: str | None) -> None:
    """Without a token the gate serves this machine only."""
    if token is not None or host == "localhost":
        return
    with contextlib.suppress(ValueError):
        if ipaddress.ip_address(host).is_loopback:
            return
    raise ConfigError(
        f"--host {host} lets other machines in, and {TOKEN_ENV} is not set",
        f"set {TOKEN_ENV} to a secret token, or listen on 127.0.0.1",
    )


async def _serve(
    sock: socket.socket,
    token: str | None,
    db: str,
    resume_id: str | None,
    settings: GateSettings | None,
    bank: GoldBank | None,
    items: list[ItemRow] | None,
) -> int:
    if resume_id is not None:
        session = await GateSession.resume(resume_id, db)
    else:
        assert settings is not None
        session = await GateSession.create(settings, bank, db)
    if items is not None:  # journaled as POST /v1/items is; those registered already stay
        added = await _register(session, items)
        note(f"{added['registered']:,} items registered ({added['items']:,} in all)")
    with _stop_signals() as asked:  # before the URL is out: a stop may follow it at once
        try:
            runner, url = await serve_gate(session, token, sock)
        except BaseException:
            await session.close("failed: could not serve")
            raise
        click.echo(url)
        shown, run_id = display_name(db), session.run_id
        note(f"gate run {run_id} in {shown}")
        if token is None:
            note(f"warning: {TOKEN_ENV} is not set: the gate accepts any request from this "
                 "machine")  # fmt: skip
        stop = await _until_stopped(session.stopped, asked)
    await runner.cleanup()
    await session.close("interrupted" if stop is None else STOPS[stop][0])
    if session.failure is not None:
        resume = f"continue it with `screener gate --resume {run_id} --db {shown}`"
        raise ConfigError(
            f"gate run {run_id} stopped: {session.failure}",
            "its run database is gone: nothing of the run is kept" if session.lost else resume,
        )
    assert stop is not None
    note(f"stopped: gate run {run_id} is saved; continue it with "
         f"`screener gate --resume {run_id} --db {shown}`")  # fmt: skip
    return STOPS[stop][1]


async def _register(session: GateSession, items: list[ItemRow]) -> dict[str, Any]:
    try:
        return await session.add_items([ItemEntry(*row) for row in items])
    except BaseException:
        await session.close("failed: could not register the items")
        raise


@contextlib.contextmanager
def _stop_signals() -> Iterator[_Asked]:
    """Within the block, Ctrl-C and SIGTERM are noted (which came first) instead of raised."""
    loop = asyncio.get_running_loop()
    asked = _Asked([], asyncio.Event())
    for signum in STOPS:
        loop.add_signal_handler(signum, asked.note, signum)
    try:
        yield asked
    finally:
        for signum in STOPS:
            loop.remove_signal_handler(signum)


@dataclasses.dataclass(frozen=True)
class _Asked:
    signals: list[signal.Signals]
    arrived: asyncio.Event

    def note(self, signum: signal.Signals) -> None:
        self.signals.append(signum)
        self.arrived.set()


async def _until_stopped(stopped: asyncio.Event, asked: _Asked) -> signal.Signals | None:
    """Serve until Ctrl-C or SIGTERM (the first of them) or ``stopped`` is set (the session
    stopped by itself)."""
    waits = [asyncio.create_task(asked.arrived.wait()),
             asyncio.create_task(stopped.wait())]  # fmt: skip
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in waits:
            task.cancel()
    return asked.signals[0] if asked.signals else None
