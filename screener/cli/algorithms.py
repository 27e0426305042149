"""`screener algorithms [NAME]`: what each algorithm answers and the parameters it takes.

Everything shown is read from the algorithms themselves (their docstrings and constructor
signatures, screener.algorithms.registry), so the listing cannot drift from the code.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import click

from screener.algorithms import ALGORITHMS
from screener.algorithms.base import Algorithm
from screener.algorithms.signature import Parameter, parameters
from screener.cli.commands import summary
from screener.cli.options import json_option
from screener.errors import ConfigError
from screener.runs.settings import PARAMETER_DEFAULTS

__all__ = ["algorithms"]

#: Parameters a run sets from its own options, and the CLI flags that set them.
_RUN_OPTIONS = {"budget": "--budget", "seed": "--seed", "lower": None, "upper": None}


@click.command(short_help=summary("algorithms"))
@click.argument("name", required=False)
@json_option("Print as JSON.")
def algorithms(name: str | None, as_json: bool) -> None:
    """List the algorithms, or show NAME's description, promise and parameters."""
    if name is None:
        listing = {key: _summary(cls) for key, cls in sorted(ALGORITHMS.items())}
        if as_json:
            click.echo(json.dumps(listing, indent=2))
            return
        width = max(map(len, listing))
        for key, summary in listing.items():
            click.echo(f"{key:<{width}}  {summary}")
        return
    cls = _algorithm(name)
    if as_json:
        click.echo(json.dumps(_describe(name, cls), indent=2, default=str))
        return
    click.echo(_render(name, cls))


def _algorithm(name: str) -> type[Algorithm]:
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise ConfigError(
            f"unknown algorithm {name!r}", f"choose one of: {', '.join(sorted(ALGORITHMS))}"
        ) from None


def _summary(cls: type[Algorithm]) -> str:
    """The docstring's first paragraph, on one line."""
    return " ".join((inspect.getdoc(cls) or "").split("\n\n")[0].split())


def _details(cls: type[Algorithm]) -> str:
    """The docstring after its first paragraph: the promise, the paper, the options."""
    parts = (inspect.getdoc(cls) or "").split("\n\n", 1)
    return parts[1] if len(parts) > 1 else ""


def _describe(name: str, cls: type[Algorithm]) -> dict[str, Any]:
    return {
        "name": name,
        "summary": _summary(cls),
        "description": inspect.getdoc(cls) or "",
        "parameters": [_parameter_dict(p) for p in parameters(cls)],
    }


def _parameter_dict(p: Parameter) -> dict[str, Any]:
    line: dict[str, Any] = {"name": p.name, "type": p.kind, "required": p.required}
    if not p.required:
        line["default"] = p.default
    if p.choices:
        line["choices"] = list(p.choices)
    return line


def _render(name: str, cls: type[Algorithm]) -> str:
    rows = [_parameter_row(p) for p in parameters(cls)]
    width = max(len(row[0]) for row in rows)
    table = [f"  {flag:<{width}}  {text}" for flag, text in rows]
    return "\n".join(
        [
            f"{name}: {_summary(cls)}",
            "",
            "parameters (`screener run -a NAME -p KEY=VALUE`; some have flags, "
            "`screener run --help`):",
            *table,
            "",
            _details(cls),
        ]
    )


def _parameter_row(p: Parameter) -> tuple[str, str]:
    values = " | ".join(p.choices) if p.choices else p.kind
    setting = "required" if p.required else f"default {p.default!r}"
    if p.name in PARAMETER_DEFAULTS:  # screener's own, over the class's
        setting += f" (in a run {PARAMETER_DEFAULTS[p.name]!r})"
    if p.name in _RUN_OPTIONS:
        flag = _RUN_OPTIONS[p.name]
        setting += f"; set by the run ({flag})" if flag else "; the reward range"
    return p.name, f"{values}, {setting}"
