"""The `screener` command: its global flags (--debug, -q, -v, typed anywhere on the line),
and how it ends: every user error one line on stderr, ``error: what is wrong (how to fix
it)``, with its exit code (console.ExitCode); ``--debug`` shows the traceback instead.

The commands themselves are listed in screener.cli.commands, each imported when it runs.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from pathlib import Path
from typing import NoReturn, TextIO

import click

from screener._version import DISTRIBUTION
from screener.cli.commands import LazyGroup
from screener.cli.console import ExitCode
from screener.cli.signals import Terminated, terminate_like_interrupt
from screener.errors import ScreenerError, one_line

__all__ = ["cli", "main"]


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--debug",
    is_flag=True,
    help="Show tracebacks instead of one-line errors (anywhere on the line).",
)
@click.option(
    "--quiet",
    "-q",
    is_flag=True,
    help="Data only: no progress line and no notes on stderr (anywhere on the line).",
)
@click.option(
    "--verbose", "-v", count=True,
    help="Say more on stderr: what a run is about to do and what it cost; -vv also logs "
    "each service request (anywhere on the line).",
)  # fmt: skip
@click.version_option(package_name=DISTRIBUTION)
@click.pass_context
def cli(ctx: click.Context, debug: bool, quiet: bool, verbose: int) -> None:
    """Screen crowd workers with as few paid gold questions as possible."""
    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose contradict each other: give one")
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    ctx.obj["verbosity"] = -1 if quiet else verbose
    _configure_logging(ctx.obj["verbosity"])


def _configure_logging(verbosity: int) -> None:
    """screener's loggers (the reference service's requests, for one) at -vv; warnings
    otherwise, one line each."""
    level = logging.DEBUG if verbosity >= 2 else logging.INFO if verbosity == 1 else logging.WARNING
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    logger = logging.getLogger("screener")
    logger.handlers[:] = [handler]
    logger.setLevel(level)
    logger.propagate = False


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point: run the CLI, turning user errors into one line and exit code 2."""
    args = _hoist_global_flags(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    _route_warnings()
    try:
        # Outside standalone mode click returns an Exit's code instead of raising it.
        with terminate_like_interrupt():
            code = cli.main(args=args, prog_name="screener", standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.Abort:
        click.echo("aborted", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except click.ClickException as error:  # a usage error: one line even with --debug
        context = getattr(error, "ctx", None)
        command = context.command_path if isinstance(context, click.Context) else "screener"
        click.echo(f"error: {one_line(error.format_message())} (see `{command} --help`)", err=True)
        sys.exit(ExitCode.BAD_INPUT)
    except ScreenerError as error:
        if debug:
            raise
        click.echo(f"error: {one_line(error)}", err=True)
        sys.exit(ExitCode.BAD_INPUT)
    except KeyboardInterrupt as stop:
        # A run that was already written said how to resume it (screener.cli.run).
        terminated = isinstance(stop, Terminated)
        click.echo("\nterminated" if terminated else "\ninterrupted", err=True)
        sys.exit(ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED)
    except BrokenPipeError:
        # The reader went away (`screener runs | head -1`): not an error worth a message.
        # Point stdout at devnull so that the interpreter's final flush cannot raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(ExitCode.INTERNAL_ERROR)
    except Exception as error:  # a bug, not bad input: say so in one line unless --debug
        if debug:
            raise
        click.echo(
            f"internal error: {type(error).__name__}: {one_line(str(error))} "
            "(run again with --debug for the traceback, and please report it)",
            err=True,
        )
        sys.exit(ExitCode.INTERNAL_ERROR)
    sys.exit(code if isinstance(code, int) else 0)


def _hoist_global_flags(args: list[str]) -> list[str]:
    """--debug, -q and -v work wherever they are typed: click takes a group's options before
    the command name only, so they are moved there. Their names come from the group itself;
    a token that is the value of another option (``--reason -q``) is left where it is."""
    flags = {name for param in cli.params if isinstance(param, click.Option) for name in param.opts}
    front: list[str] = []
    rest: list[str] = []
    command: click.Command | None = None
    tokens = iter(args)
    for token in tokens:
        if token == "--":
            rest += [token, *tokens]
            break
        if token in flags or (token.startswith("-v") and set(token[1:]) == {"v"}):
            front.append(token)
            continue
        rest.append(token)
        if command is None and not token.startswith("-"):
            command = cli.get_command(None, token)
        elif command is not None and token in _value_options(command):
            rest.append(next(tokens, ""))
    return [*front, *rest] if front else args


def _value_options(command: click.Command) -> set[str]:
    """The option names of ``command`` that take a value (the next token)."""
    return {
        name
        for param in command.params
        if isinstance(param, click.Option) and not param.is_flag and not param.count
        for name in param.opts + param.secondary_opts
    }


def _route_warnings() -> None:
    """No raw warning reaches the terminal. Numeric trouble in screener's own code (numpy's
    overflow and invalid-value RuntimeWarnings; the expected ones are silenced where they
    arise) stops the command as the bug it is; any other warning is one line on stderr."""
    warnings.showwarning = _warning_line
    warnings.filterwarnings("error", category=RuntimeWarning, module=r"screener\.")


def _warning_line(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    where = f"{Path(filename).name}:{lineno}"
    click.echo(f"warning: {one_line(str(message))} ({category.__name__} at {where})", err=True)
