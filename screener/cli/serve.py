"""``screener serve``: run the reference gold-question service (docs/live-api.md) locally.

For trying the http oracle end to end, and for testing clients against misbehaving services
(the fault switches). Not from the papers.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from screener.bank import load_bank
from screener.checks import check_seed
from screener.cli.commands import summary
from screener.cli.options import FILE, cannot_listen, listen_options, option_group
from screener.crowd import demo_pool, load_pool_csv
from screener.oracles.latency import Latency

if TYPE_CHECKING:  # the service (aiohttp's server) is imported by `serve` alone
    from screener.service import GoldService

__all__ = ["DEFAULT_BANK_SIZE", "TOKEN_ENV", "serve"]

#: The environment variable holding the bearer token the service requires.
TOKEN_ENV = "SCREENER_SERVICE_TOKEN"
DEFAULT_BANK_SIZE = 200


@click.command(short_help=summary("serve"))
@click.argument("pool_file", required=False, type=FILE)
@click.option(
    "--questions",
    "bank_file",
    type=FILE,
    default=None,
    help=f"Gold question bank (CSV or JSON). Default: {DEFAULT_BANK_SIZE} generated "
    "'What is a + b?' questions.",
)
@listen_options
@click.option(
    "--latency",
    default="constant:0.1",
    show_default=True,
    help="Answer latency: none, constant:S or exponential:MEAN (seconds).",
)
@option_group("faults", dict, [
    (("--error-rate",), dict(type=float, default=0.0, show_default=True,
                             help="Share of 503s.")),
    (("--timeout-rate",), dict(type=float, default=0.0, show_default=True,
                               help="Share of requests whose response is held --timeout-delay "
                               "seconds.")),
    (("--timeout-delay",), dict(type=float, default=30.0, show_default=True)),
    (("--duplicate-rate",), dict(type=float, default=0.0, show_default=True,
                                 help="Share of answers delivered twice.")),
    (("--silence-rate",), dict(type=float, default=0.0, show_default=True,
                               help="Share of assignments never answered (the client must time "
                               "them out).")),
    (("--reorder",), dict(is_flag=True, help="Shuffle the answers within each batch.")),
    (("--slow",), dict(type=float, default=0.0, show_default=True,
                       help="Extra seconds per reply.")),
    (("--rate-limit",), dict(type=float, default=0.0, show_default=True,
                             help="Requests per second before 429 replies (0: no limit).")),
])  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True, help="Answers, bank and faults.")
@click.option("--stop-after", type=float, default=None, hidden=True, help="Exit after S seconds.")
def serve(
    pool_file: Path | None,
    bank_file: Path | None,
    host: str,
    port: int,
    latency: str,
    faults: dict[str, Any],
    seed: int,
    stop_after: float | None,
) -> None:
    """Serve simulated workers from POOL_FILE (CSV: worker,accuracy) or the demo pool.

    Prints the base URL on one line, then runs until Ctrl-C. Requests must carry
    "Authorization: Bearer $SCREENER_SERVICE_TOKEN" when that variable is set; without it
    the service accepts everyone (it listens on 127.0.0.1 unless told otherwise).
    """
    from screener.service import Faults, GoldService, arithmetic_bank

    token = os.environ.get(TOKEN_ENV) or None
    check_seed(seed)
    pool = load_pool_csv(pool_file) if pool_file is not None else demo_pool()
    bank = load_bank(bank_file) if bank_file is not None else arithmetic_bank(DEFAULT_BANK_SIZE)
    service = GoldService(
        pool, bank, token=token, latency=Latency.parse(latency), faults=Faults(**faults),
        seed=seed,
    )  # fmt: skip
    try:
        asyncio.run(_serve(service, host, port, stop_after, warn_open=token is None))
    except KeyboardInterrupt:
        click.echo("stopped", err=True)


async def _serve(
    service: GoldService, host: str, port: int, stop_after: float | None, *, warn_open: bool
) -> None:
    from screener.service import start_service

    try:
        runner, url = await start_service(service, host=host, port=port)
    except OSError as error:
        raise cannot_listen(host, port, error) from None
    click.echo(url)
    if warn_open:  # once listening: a service that failed to start needs no warning
        click.echo(f"warning: {TOKEN_ENV} is not set: the service accepts any request", err=True)
    try:
        if stop_after is None:
            await asyncio.Event().wait()
        else:
            await asyncio.sleep(stop_after)
    finally:
        await runner.cleanup()
