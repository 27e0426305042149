"""mkdocs hooks for building the docs (mkdocs.yml: ``hooks``).

The command line reference (cli.md) is rendered by mkdocs-click, which prints an option's
``default`` as it finds it. Since click 8.2 an option given no default holds click's
sentinel ``UNSET`` until a command line is parsed, and mkdocs-click prints it as
"Sentinel.UNSET". The reference shows what a command gets instead: ``False`` for an on/off
flag, "None" (mkdocs-click's word for no default) for the rest.
"""

from __future__ import annotations

import copy
from typing import Any

import click
from mkdocs_click import _docs

_format_row = _docs._format_table_option_row


def _shown_default(option: click.Option) -> str:
    """The option's table row with click's sentinel default replaced by what it stands for."""
    if type(option.default).__name__ == "Sentinel":  # click >= 8.2: click._utils.UNSET
        option = copy.copy(option)
        option.default = False if option.is_bool_flag and not option.multiple else None
    return _format_row(option)


def on_config(config: Any) -> Any:
    _docs._format_table_option_row = _shown_default
    return config
