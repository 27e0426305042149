"""`screener oracles [NAME]`: the installed answer sources, or one's options."""

from __future__ import annotations

import dataclasses
import json

import click

from screener.cli.commands import summary
from screener.cli.options import json_option
from screener.errors import ConfigError
from screener.oracles import available_oracles, load_oracle_class

__all__ = ["oracles"]


@click.command(short_help=summary("oracles"))
@click.argument("name", required=False)
@json_option("Print as JSON.")
def oracles(name: str | None, as_json: bool) -> None:
    """List the installed oracles (entry-point group screener.oracles), or one oracle's
    options (-O NAME=VALUE) with their defaults."""
    found = available_oracles()
    if name is None:
        if as_json:
            click.echo(json.dumps([dataclasses.asdict(info) for info in found], indent=2))
            return
        for info in found:
            click.echo(f"{info.name:<16} {info.package} {info.version}  ({info.target})")
        return
    chosen = next((info for info in found if info.name == name), None)
    if chosen is None:
        known = ", ".join(info.name for info in found)
        raise ConfigError(f"no oracle named {name!r}", f"installed: {known}")
    options = load_oracle_class(name).OPTIONS
    if as_json:
        listed = [dataclasses.asdict(option) for option in options]
        click.echo(json.dumps({**dataclasses.asdict(chosen), "options": listed}, indent=2))
        return
    click.echo(f"{chosen.name}: {chosen.package} {chosen.version} ({chosen.target})")
    if not options:
        click.echo("it declares no options")
        return
    width = max(len(option.name) for option in options)
    for option in options:
        default = (
            "required" if option.required
            else "" if option.default is None
            else f"default {json.dumps(option.default)}"
        )  # fmt: skip
        extra = f" ({default})" if default else ""
        click.echo(f"  -O {option.name:<{width}}  {option.help}{extra}")
