"""Every command of `screener`, in one place: a new command group is a module of its own
and one line here. A command's module is imported only when that command runs: `screener
plan` does not pay for the journal's driver nor the HTTP client, and `screener --help` lists
every command by its summary here, importing none."""

from __future__ import annotations

import pkgutil
from typing import NamedTuple

import click

__all__ = ["COMMANDS", "Entry", "LazyGroup", "every_command", "summary"]


class Entry(NamedTuple):
    """Where a command is defined (``module:attribute``) and the line ``screener --help``
    lists it with (its ``short_help``: help lists every command without importing one)."""

    target: str
    summary: str


#: Each command's name, where it is defined and its one-line summary.
COMMANDS: dict[str, Entry] = {
    "run": Entry("screener.cli.run:run", "Screen a pool of workers (or the demo pool)."),
    "plan": Entry("screener.cli.plan:plan", "How many gold questions a screening may cost."),
    "replay": Entry("screener.cli.run:replay", "Re-run an algorithm on a logged run's answers."),
    "report": Entry("screener.cli.stored_runs:report", "Report a run, finished or not."),
    "decisions": Entry(
        "screener.cli.decisions:decisions", "A run's bans and acceptances, and why."
    ),
    "export": Entry(
        "screener.cli.stored_runs:export", "Write a run's answers, block list or labels."
    ),
    "invalidate": Entry("screener.cli.stored_runs:invalidate", "Mark a gold question as wrong."),
    "runs": Entry("screener.cli.stored_runs:runs", "List the runs in a database."),
    "upgrade": Entry("screener.cli.stored_runs:upgrade", "Upgrade an older run database."),
    "oracles": Entry("screener.cli.oracles:oracles", "List the oracles, or one oracle's options."),
    "algorithms": Entry(
        "screener.cli.algorithms:algorithms", "List the algorithms, or describe one."
    ),
    "serve": Entry("screener.cli.serve:serve", "Serve simulated workers over HTTP."),
    "gate": Entry("screener.cli.gate:gate", "Serve a gate: gold or task for each worker."),
    "labels": Entry("screener.cli.labels:labels", "The final labels of a gate run."),
    "standin": Entry("screener.cli.standin:standin", "Replay a dataset as workers asking a gate."),
}


def summary(name: str) -> str:
    """Command ``name``'s one-line summary, for its ``short_help``."""
    return COMMANDS[name].summary


class LazyGroup(click.Group):
    """A click group whose commands (COMMANDS) are imported when first looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            target = COMMANDS[cmd_name].target
            command = pkgutil.resolve_name(target)
            if not isinstance(command, click.Command) or command.name != cmd_name:
                raise TypeError(f"{target} is not the command {cmd_name!r}")
            self.add_command(command)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from COMMANDS' summaries, importing no command's module (click's
        own imports every command to read its short help)."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, entry.summary) for name, entry in sorted(COMMANDS.items())])


def every_command(group: click.Group) -> dict[str, click.Command]:
    """Every command of ``group``, each imported: by name, in the order help lists them."""
    ctx = click.Context(group)
    found = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}
