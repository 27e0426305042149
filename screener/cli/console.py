"""What the commands say besides their data: notes on stderr, as loud as -q / -v ask, and
the exit codes (docs/reliability.md, "Exit codes")."""

from __future__ import annotations

import enum

import click

__all__ = ["ExitCode", "note", "verbosity"]


class ExitCode(enum.IntEnum):
    """`screener`'s exit codes, as docs/reliability.md lists them."""

    DONE = 0
    #: A bug, told in one line; also when the reader of the output goes away.
    INTERNAL_ERROR = 1
    #: Bad input: one line on stderr, nothing written.
    BAD_INPUT = 2
    #: `run` ended without its stopping condition; the report says CONDITION NOT MET.
    NOT_COMPLETED = 3
    #: Ctrl-C.
    INTERRUPTED = 130
    #: SIGTERM (128 + 15), handled as Ctrl-C is.
    TERMINATED = 143


def verbosity() -> int:
    """-1 with --quiet, 0 by default, 1 with -v, 2 with -vv."""
    context = click.get_current_context()
    obj = context.find_root().obj or {}
    return int(obj.get("verbosity", 0))


def note(message: str, *, level: int = 0) -> None:
    """A note for the person at the terminal, on stderr: shown at ``level`` 0 unless
    --quiet, at level 1 only with -v."""
    if verbosity() >= level:
        click.echo(message, err=True)
