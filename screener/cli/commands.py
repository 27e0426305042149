"""Every command of `screener`, in one place: a new command group is a module of its own
and one line here. A command's module is imported only when that command runs (or help lists
it): `screener plan` does not pay for the journal's driver nor the HTTP client."""

from __future__ import annotations

import pkgutil

import click

__all__ = ["COMMANDS", "LazyGroup", "every_command"]

#: Each command's name and where it is defined (``module:attribute``).
COMMANDS: dict[str, str] = {
    "run": "screener.cli.run:run",
    "plan": "screener.cli.plan:plan",
    "replay": "screener.cli.run:replay",
    "report": "screener.cli.stored_runs:report",
    "decisions": "screener.cli.decisions:decisions",
    "export": "screener.cli.stored_runs:export",
    "invalidate": "screener.cli.stored_runs:invalidate",
    "runs": "screener.cli.stored_runs:runs",
    "upgrade": "screener.cli.stored_runs:upgrade",
    "oracles": "screener.cli.oracles:oracles",
    "algorithms": "screener.cli.algorithms:algorithms",
    "serve": "screener.cli.serve:serve",
    "gate": "screener.cli.gate:gate",
    "standin": "screener.cli.standin:standin",
}


class LazyGroup(click.Group):
    """A click group whose commands (COMMANDS) are imported when first looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            command = pkgutil.resolve_name(COMMANDS[cmd_name])
            if not isinstance(command, click.Command) or command.name != cmd_name:
                raise TypeError(f"{COMMANDS[cmd_name]} is not the command {cmd_name!r}")
            self.add_command(command)
        return self.commands.get(cmd_name)


def every_command(group: click.Group) -> dict[str, click.Command]:
    """Every command of ``group``, each imported: by name, in the order help lists them."""
    ctx = click.Context(group)
    found = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}
