"""Every command of `screener`, in one place: a new command group is a module of its own
and one line here."""

from __future__ import annotations

import click

from screener.cli.algorithms import algorithms
from screener.cli.gate import gate
from screener.cli.oracles import oracles
from screener.cli.run import plan, replay, run
from screener.cli.serve import serve
from screener.cli.standin import standin
from screener.cli.stored_runs import export, invalidate, report, runs, upgrade

__all__ = ["COMMANDS"]

COMMANDS: tuple[click.Command, ...] = (
    run,
    plan,
    replay,
    report,
    export,
    invalidate,
    runs,
    upgrade,
    oracles,
    algorithms,
    serve,
    gate,
    standin,
)
